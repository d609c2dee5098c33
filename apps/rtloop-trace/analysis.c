// SPDX-License-Identifier: MIT
/*
 * analysis: from events to per-stage latencies, worst frames and losses.
 *
 * Every per-frame event of the rtloop provider carries the frame's seq, so
 * a frame is the set of events with one (vpid, seq). The events arrive in
 * time order but frames interleave (the rx thread is already reading frame
 * n + 1 while the worker steps frame n), so the analysis cannot close a
 * frame on its last event: it keeps a table of every frame, keyed by
 * (vpid, seq) in an open-addressing hash (linear probing, grown at half
 * load, never deleted from), and measures them all in one pass at the end.
 * At about 80 bytes a frame, an hour at 500 Hz costs 150 MB, less than the
 * trace it was read from.
 *
 * A stage is the first event of its kind for the frame; a repeat is counted
 * as a duplicate, except a second frame_received, which means the seq was
 * reused (a restarted counter), so it starts a new frame. Several packages
 * per frame are normal (one per input recipe): the first one ends the
 * frame, the rest are counted. An interval is measured only when both of
 * its stages were seen; otherwise it is counted as missing, so a trace with
 * gaps (lost events, a session started mid-run) still gives the figures of
 * the frames it holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/time.h>

#include "benchmark.h"
#include "trace.h"

#define ALL_STAGES ((1u << RTT_NSTAGES) - 1)

static const char *const interval_names[RTT_NINTERVALS] = {
	"received->decoded",  "decoded->committed",	     "committed->woke",
	"woke->step_started", "step_started->step_finished", "step_finished->sent",
	"received->sent",
};

static const char *const stage_events[RTT_NSTAGES] = {
	"frame_received", "frame_decoded", "frame_committed",	      "worker_woke",
	"step_started",	  "step_finished", "package_sent/suppressed",
};

static const char *const skip_names[RTT_SKIP_NREASONS] = { "controller", "worker", "ring_full" };

const char *rtt_interval_name(int i)
{
	return i >= 0 && i < RTT_NINTERVALS ? interval_names[i] : "?";
}

const char *rtt_stage_event(int stage)
{
	return stage >= 0 && stage < RTT_NSTAGES ? stage_events[stage] : "?";
}

int rtt_analysis_init(struct rtt_analysis *a, int64_t pid_filter)
{
	memset(a, 0, sizeof(*a));
	a->pid_filter = pid_filter;
	for (int i = 0; i < RTT_NINTERVALS; i++) {
		/* calloc: an all-zero rtl_hist is a valid empty one */
		a->hist[i] = calloc(1, sizeof(*a->hist[i]));
		if (!a->hist[i]) {
			rtt_analysis_free(a);
			return -ENOMEM;
		}
	}
	return 0;
}

void rtt_analysis_free(struct rtt_analysis *a)
{
	for (int i = 0; i < RTT_NINTERVALS; i++)
		free(a->hist[i]);
	free(a->frames);
	free(a->slots);
	free(a->procs);
	free(a->worst);
	memset(a, 0, sizeof(*a));
}

/* ---- the frame table ----------------------------------------------------- */

static size_t hash(int64_t vpid, uint64_t seq)
{
	/* splitmix64 finaliser: consecutive seqs spread over the table */
	uint64_t x = seq ^ ((uint64_t)vpid * UINT64_C(0x9e3779b97f4a7c15));

	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return (size_t)(x ^ (x >> 31));
}

/* The slot holding (vpid, seq), or the empty slot where it would go. */
static uint32_t *find_slot(uint32_t *slots, size_t nslots, const struct rtt_frame *frames,
			   int64_t vpid, uint64_t seq)
{
	size_t mask = nslots - 1;

	for (size_t i = hash(vpid, seq) & mask;; i = (i + 1) & mask) {
		const struct rtt_frame *f;

		if (!slots[i])
			return &slots[i];
		f = &frames[slots[i] - 1];
		if (f->seq == seq && f->vpid == vpid)
			return &slots[i];
	}
}

static int grow_slots(struct rtt_analysis *a)
{
	size_t n = a->nslots ? 2 * a->nslots : 1024;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	/* Re-insert in frame order, so a reused seq maps to its newest frame. */
	for (size_t i = 0; i < a->nframes; i++)
		*find_slot(s, n, a->frames, a->frames[i].vpid, a->frames[i].seq) =
			(uint32_t)(i + 1);
	free(a->slots);
	a->slots = s;
	a->nslots = n;
	return 0;
}

static struct rtt_frame *new_frame(struct rtt_analysis *a, int64_t vpid, uint64_t seq)
{
	struct rtt_frame *f;

	if (a->nframes >= UINT32_MAX - 1)
		return NULL;
	if (2 * (a->nframes + 1) > a->nslots && grow_slots(a))
		return NULL;
	if (a->nframes == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 1024;
		struct rtt_frame *fr = realloc(a->frames, cap * sizeof(*fr));

		if (!fr)
			return NULL;
		a->frames = fr;
		a->cap = cap;
	}
	f = &a->frames[a->nframes++];
	memset(f, 0, sizeof(*f));
	f->vpid = vpid;
	f->seq = seq;
	*find_slot(a->slots, a->nslots, a->frames, vpid, seq) = (uint32_t)a->nframes;
	return f;
}

static int add_stage(struct rtt_analysis *a, const struct rtt_event *ev)
{
	int stage = ev->kind < RTT_OUT ? ev->kind : RTT_OUT;
	struct rtt_frame *f = NULL;
	uint32_t *slot;

	if (stage == RTT_OUT) {
		if (ev->kind == RTT_EV_SENT)
			a->sent++;
		else
			a->suppressed++;
	}
	if (a->nslots) {
		slot = find_slot(a->slots, a->nslots, a->frames, ev->vpid, ev->seq);
		if (*slot)
			f = &a->frames[*slot - 1];
	}
	if (f && stage == RTT_RECEIVED && (f->have & (1u << RTT_RECEIVED))) {
		a->loss.reused_seq++;
		f = NULL;
	}
	if (!f) {
		f = new_frame(a, ev->vpid, ev->seq);
		if (!f)
			return -ENOMEM;
	}
	if (f->have & (1u << stage)) {
		if (stage == RTT_OUT)
			a->extra_out++;
		else
			a->loss.duplicates++;
		return 0;
	}
	f->have |= (uint8_t)(1u << stage);
	f->ts[stage] = ev->ts_ns;
	if (stage == RTT_OUT)
		f->sent = ev->kind == RTT_EV_SENT;
	return 0;
}

int rtt_analysis_add(struct rtt_analysis *a, const struct rtt_event *ev)
{
	if (a->pid_filter >= 0 && ev->vpid != a->pid_filter)
		return 0;
	if (!a->events || ev->ts_ns < a->first_ns)
		a->first_ns = ev->ts_ns;
	if (!a->events || ev->ts_ns > a->last_ns)
		a->last_ns = ev->ts_ns;
	a->events++;

	if (ev->kind < RTT_OUT || ev->kind == RTT_EV_SENT || ev->kind == RTT_EV_SUPPRESSED)
		return add_stage(a, ev);
	switch (ev->kind) {
	case RTT_EV_SKIPPED:
		a->loss.skip_events++;
		if (ev->value >= 0 && ev->value < RTT_SKIP_NREASONS)
			a->loss.skip_frames[ev->value] += ev->count;
		else
			a->loss.skip_unknown += ev->count;
		break;
	case RTT_EV_WATCHDOG:
		a->loss.watchdog++;
		a->loss.watchdog_periods += ev->count;
		break;
	case RTT_EV_RECONNECT:
		a->loss.reconnects++;
		if (ev->value != 0)
			a->loss.reconnects_failed++;
		break;
	case RTT_EV_TEXT:
		a->texts++;
		break;
	default:
		a->other_events++;
		break;
	}
	return 0;
}

void rtt_analysis_discarded(struct rtt_analysis *a, uint64_t n, bool packets)
{
	if (packets)
		a->loss.discarded_packets += n;
	else
		a->loss.discarded += n;
}

/* ---- measuring ------------------------------------------------------------- */

static struct rtt_process *process(struct rtt_analysis *a, int64_t vpid)
{
	struct rtt_process *p;

	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].vpid == vpid)
			return &a->procs[i];
	p = realloc(a->procs, (a->nprocs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	a->procs = p;
	p = &a->procs[a->nprocs++];
	memset(p, 0, sizeof(*p));
	p->vpid = vpid;
	return p;
}

struct ranked {
	int64_t e2e;
	size_t idx;
};

static int by_e2e_desc(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->e2e != b->e2e)
		return a->e2e < b->e2e ? 1 : -1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

int rtt_analysis_finish(struct rtt_analysis *a, size_t worst_n)
{
	struct ranked *rank = NULL;
	size_t nrank = 0;

	if (worst_n && a->nframes) {
		rank = malloc(a->nframes * sizeof(*rank));
		if (!rank)
			return -ENOMEM;
	}
	for (size_t i = 0; i < a->nframes; i++) {
		const struct rtt_frame *f = &a->frames[i];
		struct rtt_process *p = process(a, f->vpid);

		if (!p) {
			free(rank);
			return -ENOMEM;
		}
		if (!p->frames || f->seq < p->seq_min)
			p->seq_min = f->seq;
		if (!p->frames || f->seq > p->seq_max)
			p->seq_max = f->seq;
		p->frames++;

		if (f->have != ALL_STAGES)
			a->loss.incomplete++;
		for (int s = 0; s < RTT_NSTAGES; s++)
			if (!(f->have & (1u << s)))
				a->stage_missing[s]++;
		for (int s = 0; s + 1 < RTT_NSTAGES; s++) {
			unsigned both = (1u << s) | (1u << (s + 1));

			if ((f->have & both) == both)
				rtl_hist_record(a->hist[s], f->ts[s + 1] - f->ts[s]);
			else
				a->missing[s]++;
		}
		if ((f->have & 1u << RTT_RECEIVED) && (f->have & 1u << RTT_OUT)) {
			int64_t e2e = f->ts[RTT_OUT] - f->ts[RTT_RECEIVED];

			rtl_hist_record(a->hist[RTT_E2E], e2e);
			if (rank)
				rank[nrank++] = (struct ranked){ e2e, i };
		} else {
			a->missing[RTT_E2E]++;
		}
	}
	/* Seq numbers between a process's first and last that never appeared:
	 * frames that left no event at all. A reused seq makes frames exceed
	 * the span; then nothing can be said, and 0 is reported. */
	for (size_t i = 0; i < a->nprocs; i++) {
		struct rtt_process *p = &a->procs[i];
		uint64_t span = p->seq_max - p->seq_min + 1;

		p->absent = span > p->frames ? span - p->frames : 0;
		a->loss.absent += p->absent;
	}
	if (rank) {
		qsort(rank, nrank, sizeof(*rank), by_e2e_desc);
		a->nworst = nrank < worst_n ? nrank : worst_n;
		a->worst = malloc((a->nworst ? a->nworst : 1) * sizeof(*a->worst));
		if (!a->worst) {
			free(rank);
			return -ENOMEM;
		}
		for (size_t i = 0; i < a->nworst; i++)
			a->worst[i] = rank[i].idx;
		free(rank);
	}
	return 0;
}

/* ---- text ------------------------------------------------------------------ */

static double us(int64_t ns)
{
	return (double)ns / (double)RTL_NS_PER_US;
}

/* Interval @i of frame @f in ns; false when one of its stages is missing. */
static bool interval(const struct rtt_frame *f, int i, int64_t *ns)
{
	int from = i == RTT_E2E ? RTT_RECEIVED : i, to = i == RTT_E2E ? RTT_OUT : i + 1;

	if (!(f->have & (1u << from)) || !(f->have & (1u << to)))
		return false;
	*ns = f->ts[to] - f->ts[from];
	return true;
}

int rtt_report_text(const struct rtt_analysis *a, FILE *f, const char *dir)
{
	static const char *const short_names[RTT_NINTERVALS] = {
		"rcv>dec", "dec>com", "com>woke", "woke>start", "start>fin", "fin>sent", "total",
	};
	const struct rtt_losses *l = &a->loss;

	fprintf(f, RTT_PROG " report: %s\n", dir);
	fprintf(f,
		"%zu process%s, %zu frames (%" PRIu64 " sent, %" PRIu64 " suppressed), %" PRIu64
		" events over %.3f ms\n",
		a->nprocs, a->nprocs == 1 ? "" : "es", a->nframes, a->sent, a->suppressed,
		a->events, a->events ? us(a->last_ns - a->first_ns) / 1000.0 : 0.0);
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct rtt_process *p = &a->procs[i];

		if (p->vpid >= 0)
			fprintf(f, "  pid %" PRId64 ":", p->vpid);
		else
			fprintf(f, "  (no vpid context):");
		fprintf(f, " %" PRIu64 " frames, seq %" PRIu64 "..%" PRIu64 "\n", p->frames,
			p->seq_min, p->seq_max);
	}

	fprintf(f, "\n%-29s %8s %8s %10s %10s %10s %10s\n", "Stage latency [us]", "count",
		"missing", "p50", "p99", "p99.9", "max");
	for (int i = 0; i < RTT_NINTERVALS; i++) {
		const struct rtl_hist *h = a->hist[i];
		uint64_t n = rtl_hist_count(h);

		fprintf(f, "  %-27s %8" PRIu64 " %8" PRIu64, rtt_interval_name(i), n,
			a->missing[i]);
		if (n)
			fprintf(f, " %10.3f %10.3f %10.3f %10.3f", us(rtl_hist_percentile(h, 50)),
				us(rtl_hist_percentile(h, 99)), us(rtl_hist_percentile(h, 99.9)),
				us(rtl_hist_max(h)));
		else
			fprintf(f, " %10s %10s %10s %10s", "-", "-", "-", "-");
		fprintf(f, "%s\n", i == RTT_E2E ? "  (end to end)" : "");
	}
	fprintf(f, "  sent: package_sent or package_suppressed, whichever came first;\n"
		   "  missing: frames where a stage of the pair was not traced\n");

	fprintf(f, "\nWorst %zu frame%s by end to end [us]:\n", a->nworst,
		a->nworst == 1 ? "" : "s");
	if (a->nworst) {
		fprintf(f, "  %10s %8s", "seq", "pid");
		/* total first, then the six stages in loop order */
		fprintf(f, " %10s", short_names[RTT_E2E]);
		for (int i = 0; i < RTT_E2E; i++)
			fprintf(f, " %10s", short_names[i]);
		fprintf(f, "  out\n");
	}
	for (size_t w = 0; w < a->nworst; w++) {
		const struct rtt_frame *fr = &a->frames[a->worst[w]];

		fprintf(f, "  %10" PRIu64 " %8" PRId64, fr->seq, fr->vpid);
		for (int k = 0; k < RTT_NINTERVALS; k++) {
			int i = k == 0 ? RTT_E2E : k - 1;
			int64_t ns;

			if (interval(fr, i, &ns))
				fprintf(f, " %10.3f", us(ns));
			else
				fprintf(f, " %10s", "-");
		}
		fprintf(f, "  %s\n", fr->sent ? "sent" : "suppressed");
	}

	fprintf(f, "\nLosses:\n");
	fprintf(f,
		"  skipped frames     %8" PRIu64 " in %" PRIu64 " events (controller %" PRIu64
		", worker %" PRIu64 ", ring_full %" PRIu64,
		l->skip_frames[0] + l->skip_frames[1] + l->skip_frames[2] + l->skip_unknown,
		l->skip_events, l->skip_frames[0], l->skip_frames[1], l->skip_frames[2]);
	if (l->skip_unknown)
		fprintf(f, ", unknown reason %" PRIu64, l->skip_unknown);
	fprintf(f, ")\n");
	fprintf(f, "  watchdog fired     %8" PRIu64 " (%" PRIu64 " periods missed)\n", l->watchdog,
		l->watchdog_periods);
	fprintf(f, "  reconnects         %8" PRIu64 " (%" PRIu64 " failed)\n", l->reconnects,
		l->reconnects_failed);
	fprintf(f, "  incomplete frames  %8" PRIu64, l->incomplete);
	if (l->incomplete) {
		const char *sep = " (missing:";

		for (int s = 0; s < RTT_NSTAGES; s++) {
			if (!a->stage_missing[s])
				continue;
			fprintf(f, "%s %s %" PRIu64, sep, rtt_stage_event(s), a->stage_missing[s]);
			sep = ",";
		}
		fprintf(f, ")");
	}
	fprintf(f, "\n");
	fprintf(f, "  absent frames      %8" PRIu64 " (seq never traced between first and last)\n",
		l->absent);
	fprintf(f, "  duplicate events   %8" PRIu64 " (reused seq %" PRIu64 ")\n", l->duplicates,
		l->reused_seq);
	fprintf(f, "  tracer discarded   %8" PRIu64 " events, %" PRIu64 " packets%s\n",
		l->discarded, l->discarded_packets,
		l->discarded || l->discarded_packets
			? " (record with larger buffers: --subbuf-size)"
			: "");
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ------------------------------------------------------------------ */

int rtt_report_json(const struct rtt_analysis *a, FILE *f, const char *dir)
{
	const struct rtt_losses *l = &a->loss;
	int err = 0;

	fprintf(f, "{\"trace\":");
	rtl_json_string(f, dir);
	fprintf(f,
		",\"frames\":%zu,\"events\":%" PRIu64 ",\"span_ns\":%" PRId64 ",\"sent\":%" PRIu64
		",\"suppressed\":%" PRIu64 ",\"extra_packages\":%" PRIu64 ",\"processes\":[",
		a->nframes, a->events, a->events ? a->last_ns - a->first_ns : 0, a->sent,
		a->suppressed, a->extra_out);
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct rtt_process *p = &a->procs[i];

		fprintf(f,
			"%s{\"pid\":%" PRId64 ",\"frames\":%" PRIu64 ",\"seq_min\":%" PRIu64
			",\"seq_max\":%" PRIu64 ",\"absent\":%" PRIu64 "}",
			i ? "," : "", p->vpid, p->frames, p->seq_min, p->seq_max, p->absent);
	}
	fprintf(f, "],\"stages\":[");
	for (int i = 0; i < RTT_NINTERVALS; i++) {
		const struct rtl_hist *h = a->hist[i];

		fprintf(f, "%s\n{\"name\":", i ? "," : "");
		rtl_json_string(f, rtt_interval_name(i));
		fprintf(f,
			",\"from\":\"%s\",\"to\":\"%s\",\"count\":%" PRIu64 ",\"missing\":%" PRIu64
			",\"p50_ns\":%" PRId64 ",\"p99_ns\":%" PRId64 ",\"p999_ns\":%" PRId64
			",\"max_ns\":%" PRId64 ",\"histogram\":",
			rtt_stage_event(i == RTT_E2E ? RTT_RECEIVED : i),
			rtt_stage_event(i == RTT_E2E ? RTT_OUT : i + 1), rtl_hist_count(h),
			a->missing[i], rtl_hist_percentile(h, 50), rtl_hist_percentile(h, 99),
			rtl_hist_percentile(h, 99.9), rtl_hist_max(h));
		if (!err)
			err = rtl_hist_write_json(h, f);
		fprintf(f, "}");
	}
	fprintf(f, "],\n\"worst\":[");
	for (size_t w = 0; w < a->nworst; w++) {
		const struct rtt_frame *fr = &a->frames[a->worst[w]];
		int64_t ns = 0;

		interval(fr, RTT_E2E, &ns); /* ranked frames all have it */
		fprintf(f,
			"%s{\"seq\":%" PRIu64 ",\"pid\":%" PRId64 ",\"end_to_end_ns\":%" PRId64
			",\"out\":\"%s\",\"stages_ns\":{",
			w ? "," : "", fr->seq, fr->vpid, ns, fr->sent ? "sent" : "suppressed");
		for (int i = 0; i < RTT_E2E; i++) {
			fprintf(f, "%s\"%s\":", i ? "," : "", rtt_interval_name(i));
			if (interval(fr, i, &ns))
				fprintf(f, "%" PRId64, ns);
			else
				fprintf(f, "null");
		}
		fprintf(f, "}}");
	}
	fprintf(f, "],\n\"losses\":{\"skipped\":{\"events\":%" PRIu64 ",\"frames\":%" PRIu64,
		l->skip_events,
		l->skip_frames[0] + l->skip_frames[1] + l->skip_frames[2] + l->skip_unknown);
	for (int r = 0; r < RTT_SKIP_NREASONS; r++)
		fprintf(f, ",\"%s\":%" PRIu64, skip_names[r], l->skip_frames[r]);
	fprintf(f,
		",\"unknown\":%" PRIu64 "},\"watchdog\":%" PRIu64 ",\"watchdog_periods\":%" PRIu64
		",\"reconnects\":%" PRIu64 ",\"reconnects_failed\":%" PRIu64
		",\"incomplete_frames\":%" PRIu64 ",\"missing_stages\":{",
		l->skip_unknown, l->watchdog, l->watchdog_periods, l->reconnects,
		l->reconnects_failed, l->incomplete);
	for (int s = 0; s < RTT_NSTAGES; s++)
		fprintf(f, "%s\"%s\":%" PRIu64, s ? "," : "",
			s == RTT_OUT ? "package" : rtt_stage_event(s), a->stage_missing[s]);
	fprintf(f,
		"},\"absent_frames\":%" PRIu64 ",\"duplicate_events\":%" PRIu64
		",\"reused_seq\":%" PRIu64 ",\"discarded_events\":%" PRIu64
		",\"discarded_packets\":%" PRIu64 "}}\n",
		l->absent, l->duplicates, l->reused_seq, l->discarded, l->discarded_packets);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}
