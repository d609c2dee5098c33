// SPDX-License-Identifier: MIT
/*
 * The report of rtloop-bench: the table (p50/p99/p99.9/max of ours and of
 * the floor, and the median of the per-repetition ratios with their range),
 * the JSON with every figure, and the gnuplot histograms.
 *
 * Ratios are taken per repetition (ours and the floor of the same
 * repetition, measured minutes apart at most) and summarised by their
 * median, min and max, as docs/benchmarks.md asks: a ratio of medians over
 * the whole run would let a slow minute of the host favour one side. The
 * absolute percentiles are those of all repetitions merged.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "bench.h"
#include "benchmark.h"

_Static_assert(BENCH_MAX_REPS <= BENCH_MAX_VALUES, "bench_stat3() would drop repetitions");

static const char *const hist_names[H_COUNT] = {
	[H_RT_OURS] = "round_trip_ours",
	[H_RT_FLOOR] = "round_trip_floor",
	[H_WAKE_OURS] = "wake_ours",
	[H_WAKE_FLOOR] = "wake_floor",
	[H_RX_TO_STEP] = "rx_to_step",
	[H_STEP] = "step",
	[H_STEP_TO_SEND] = "step_to_send",
	[H_INTERARRIVAL] = "interarrival",
	[H_SIM_WAKE] = "sim_wake",
	[H_RT_TEL] = "round_trip_telemetry",
	[H_RX_TO_STEP_TEL] = "rx_to_step_telemetry",
	[H_STEP_TEL] = "step_telemetry",
	[H_STEP_TO_SEND_TEL] = "step_to_send_telemetry",
};

const char *bench_hist_name(enum bench_hist h)
{
	return (unsigned)h < H_COUNT ? hist_names[h] : "unknown";
}

const char *bench_transport_name(enum bench_transport t)
{
	return t == BENCH_UDP ? "udp" : "rtde";
}

const char *bench_floor_proto(enum bench_transport t)
{
	return t == BENCH_UDP ? "UDP" : "TCP";
}

/* The four figures of the table. */
#define NQ 4
static const double quantiles[NQ] = { 50.0, 99.0, 99.9, 100.0 };
static const char *const q_names[NQ] = { "p50", "p99", "p99.9", "max" };
static const char *const q_keys[NQ] = { "p50", "p99", "p999", "max" };

static double q_of(const struct rtl_hist *h, int q)
{
	if (!rtl_hist_count(h))
		return NAN;
	return q == NQ - 1 ? (double)rtl_hist_max(h) : (double)rtl_hist_percentile(h, quantiles[q]);
}

/* ---- window of a live histogram ---------------------------------------------------------- */

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static void st(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, v, memory_order_relaxed);
}

void bench_hist_diff(struct rtl_hist *d, const struct rtl_hist *end, const struct rtl_hist *start)
{
	int first = -1, last = -1;
	struct rtl_hist_bucket b;
	int64_t min = 0, max = 0;

	rtl_hist_reset(d);
	for (int i = 0; i < RTL_HIST_BUCKETS; i++) {
		uint64_t n = ld(&end->buckets[i]) - ld(&start->buckets[i]);

		st(&d->buckets[i], n);
		if (n) {
			if (first < 0)
				first = i;
			last = i;
		}
	}
	st(&d->count, ld(&end->count) - ld(&start->count));
	st(&d->sum, ld(&end->sum) - ld(&start->sum));
	st(&d->overflow, ld(&end->overflow) - ld(&start->overflow));
	st(&d->underflow, ld(&end->underflow) - ld(&start->underflow));
	if (!ld(&d->count))
		return;
	/* The window's extremes are the run's when they fall in the window's
	 * first and last buckets (they cannot be smaller / larger); else the
	 * bucket's value, within 0.4 %. */
	if (first >= 0) {
		rtl_hist_bucket_bounds(&b, first);
		min = rtl_hist_min(end) >= b.lower && rtl_hist_min(end) < b.upper
			      ? rtl_hist_min(end)
			      : b.value;
		rtl_hist_bucket_bounds(&b, last);
		max = rtl_hist_max(end) >= b.lower && rtl_hist_max(end) < b.upper
			      ? rtl_hist_max(end)
			      : b.value;
	}
	if (ld(&d->overflow))
		max = rtl_hist_max(end);
	st(&d->min_inv, (uint64_t)INT64_MAX + 1 - (uint64_t)min);
	st(&d->max, (uint64_t)max);
}

/* ---- text ------------------------------------------------------------------------------------ */

/* Ratios ours / floor of quantile @q in each repetition. */
static struct bench_stat3 ratio(struct bench_rep *reps, unsigned n, int ours, int floor, int q,
				double *per_rep)
{
	double v[BENCH_MAX_REPS];

	for (unsigned r = 0; r < n; r++) {
		double a = q_of(reps[r].h[ours], q), b = q_of(reps[r].h[floor], q);

		v[r] = b > 0 ? a / b : NAN;
		if (per_rep)
			per_rep[r] = v[r];
	}
	return bench_stat3(v, n);
}

static void row_us(FILE *f, const char *label, const struct rtl_hist *h)
{
	fprintf(f, "  %-22s", label);
	for (int q = 0; q < NQ; q++) {
		double v = q_of(h, q);

		if (isnan(v))
			fprintf(f, " %21s", "-");
		else
			fprintf(f, " %21.1f", v / 1e3);
	}
	fprintf(f, "  n=%" PRIu64 "\n", rtl_hist_count(h));
}

static void row_ratio(FILE *f, const char *label, struct bench_rep *reps, unsigned n, int ours,
		      int floor)
{
	fprintf(f, "  %-22s", label);
	for (int q = 0; q < NQ; q++) {
		struct bench_stat3 s = ratio(reps, n, ours, floor, q, NULL);
		char cell[64];

		if (!s.n)
			snprintf(cell, sizeof(cell), "-");
		else
			snprintf(cell, sizeof(cell), "%.2f [%.2f, %.2f]", s.med, s.min, s.max);
		fprintf(f, " %21s", cell);
	}
	fputc('\n', f);
}

static void header(FILE *f, const char *title)
{
	fprintf(f, "%-24s", title);
	for (int q = 0; q < NQ; q++)
		fprintf(f, " %21s", q_names[q]);
	fputc('\n', f);
}

/* The pairs on / off of --telemetry. */
static const int tel_on[] = { H_RT_TEL, H_RX_TO_STEP_TEL, H_STEP_TEL, H_STEP_TO_SEND_TEL };
static const int tel_off[] = { H_RT_OURS, H_RX_TO_STEP, H_STEP, H_STEP_TO_SEND };
static const char *const tel_names[] = { "round_trip", "rx_to_step", "step", "step_to_send" };
#define N_TEL (sizeof(tel_on) / sizeof(tel_on[0]))

static void telemetry_text(FILE *f, struct bench_rep *reps, unsigned n,
			   struct rtl_hist *const *total)
{
	uint64_t rec = 0, got = 0, missed = 0;

	for (unsigned r = 0; r < n; r++) {
		rec += reps[r].tel_records;
		got += reps[r].tel_read;
		missed += reps[r].tel_missed;
	}
	fprintf(f, "\ntelemetry: the same loop with --telemetry on (each step published, a reader\n"
		   "polling every 10 ms), interleaved with it off; ratio = on / off, median of\n"
		   "the per-repetition ratios [min, max]\n");
	for (size_t i = 0; i < N_TEL; i++) {
		fputc('\n', f);
		header(f, tel_names[i]);
		row_us(f, "on", total[tel_on[i]]);
		row_us(f, "off", total[tel_off[i]]);
		row_ratio(f, "ratio on/off", reps, n, tel_on[i], tel_off[i]);
	}
	fprintf(f,
		"\ntelemetry counts: %" PRIu64 " records published in the windows, %" PRIu64
		" copied by the reader, %" PRIu64 " missed\n",
		rec, got, missed);
}

void bench_report_text(FILE *f, const struct bench_cfg *cfg, struct bench_rep *reps,
		       struct rtl_hist *const *total)
{
	unsigned n = cfg->reps;
	uint64_t sent = 0, echoes = 0, unmatched = 0, frames = 0, wskip = 0, full = 0, wb = 0;
	uint64_t cskip = 0, over = 0, fsent = 0, fbad = 0;
	struct bench_stat3 p99 = ratio(reps, n, H_RT_OURS, H_RT_FLOOR, 1, NULL);
	const char *proto = bench_floor_proto(cfg->transport);
	char label[32];

	for (unsigned r = 0; r < n; r++) {
		sent += reps[r].sim_sent;
		echoes += reps[r].echoes;
		unmatched += reps[r].echo_unmatched;
		frames += reps[r].frames;
		wskip += reps[r].worker_skipped;
		full += reps[r].ring_full;
		wb += reps[r].would_block;
		cskip += reps[r].ctrl_skipped;
		over += reps[r].sim_overruns;
		fsent += reps[r].floor_sent;
		fbad += reps[r].floor_bad;
	}
	fprintf(f,
		"\nAll times in us; absolute figures over all %u repetitions merged; ratio = "
		"ours / floor,\nmedian of the per-repetition ratios [min, max].\n\n",
		n);
	header(f, "round trip");
	row_us(f, "ours (loop + sim)", total[H_RT_OURS]);
	snprintf(label, sizeof(label), "floor (bare %s)", proto);
	row_us(f, label, total[H_RT_FLOOR]);
	row_ratio(f, "ratio", reps, n, H_RT_OURS, H_RT_FLOOR);
	fputc('\n', f);
	header(f, "worker wake-up");
	/* Inline mode has no wake-up: the rx thread turns to the step. */
	row_us(f,
	       cfg->mode == BENCH_MODE_INLINE ? "ours (commit->step, inline)"
					      : "ours (commit->worker)",
	       total[H_WAKE_OURS]);
	row_us(f, "floor (timer loop)", total[H_WAKE_FLOOR]);
	row_ratio(f, "ratio", reps, n, H_WAKE_OURS, H_WAKE_FLOOR);
	fputc('\n', f);
	header(f, "loop stages (ours)");
	row_us(f, "rx_to_step", total[H_RX_TO_STEP]);
	row_us(f, "step", total[H_STEP]);
	row_us(f, "step_to_send", total[H_STEP_TO_SEND]);
	row_us(f, "interarrival", total[H_INTERARRIVAL]);
	if (cfg->transport != BENCH_UDP) /* the UDP mode keeps no such histogram */
		row_us(f, "simulator cycle late", total[H_SIM_WAKE]);
	fprintf(f,
		"\ncounts: simulator sent %" PRIu64 ", echoes %" PRIu64 " (unmatched %" PRIu64
		"), loop frames %" PRIu64 " (controller skipped %" PRIu64
		", worker skipped %" PRIu64 ", ring full %" PRIu64 ", sends would block %" PRIu64
		"), simulator overruns %" PRIu64 "; ping-pongs %" PRIu64 " (%" PRIu64
		" out of order)\n",
		sent, echoes, unmatched, frames, cskip, wskip, full, wb, over, fsent, fbad);
	if (cfg->telemetry)
		telemetry_text(f, reps, n, total);
	if (p99.n)
		fprintf(f,
			"target: round-trip p99 within %.1fx of the bare %s ping-pong: %s "
			"(median ratio %.2f, range %.2f..%.2f over %u repetitions)\n",
			BENCH_TARGET_P99, proto, p99.med <= BENCH_TARGET_P99 ? "MET" : "MISSED",
			p99.med, p99.min, p99.max, p99.n);
	else
		fprintf(f, "target: round-trip p99 within %.1fx: no data\n", BENCH_TARGET_P99);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void json_quantiles(FILE *f, const struct rtl_hist *h)
{
	fprintf(f, "{\"count\":%" PRIu64, rtl_hist_count(h));
	for (int q = 0; q < NQ; q++) {
		fprintf(f, ",\"%s_ns\":", q_keys[q]);
		json_num(f, q_of(h, q));
	}
	fputc('}', f);
}

/* {"p50":{"median":..,"min":..,"max":..,"per_rep":[..]},...} */
static void json_ratios(FILE *f, struct bench_rep *reps, unsigned n, int ours, int floor)
{
	fputc('{', f);
	for (int q = 0; q < NQ; q++) {
		double per[BENCH_MAX_REPS];
		struct bench_stat3 s = ratio(reps, n, ours, floor, q, per);

		fprintf(f, "%s\"%s\":{\"median\":", q ? "," : "", q_keys[q]);
		json_num(f, s.med);
		fputs(",\"min\":", f);
		json_num(f, s.min);
		fputs(",\"max\":", f);
		json_num(f, s.max);
		fputs(",\"per_rep\":[", f);
		for (unsigned r = 0; r < n; r++) {
			if (r)
				fputc(',', f);
			json_num(f, per[r]);
		}
		fputs("]}", f);
	}
	fputc('}', f);
}

static void json_pair(FILE *f, const char *key, struct bench_rep *reps, unsigned n,
		      struct rtl_hist *const *total, int ours, int floor)
{
	fprintf(f, ",\"%s\":{\"ours\":", key);
	rtl_hist_write_json(total[ours], f);
	fputs(",\"floor\":", f);
	rtl_hist_write_json(total[floor], f);
	fputs(",\"ratio\":", f);
	json_ratios(f, reps, n, ours, floor);
	fputc('}', f);
}

int bench_report_json(FILE *f, const struct bench_cfg *cfg, const struct bench_rt *rt,
		      const char *machine, const char *cpu_model, const char *doctor_json,
		      struct bench_rep *reps, struct rtl_hist *const *total)
{
	static const int stages[] = { H_RX_TO_STEP, H_STEP, H_STEP_TO_SEND, H_INTERARRIVAL,
				      H_SIM_WAKE };
	const struct sim_profile *prof = sim_profile(cfg->profile);
	struct bench_stat3 p99 = ratio(reps, cfg->reps, H_RT_OURS, H_RT_FLOOR, 1, NULL);

	fputs("{\"tool\":\"" BENCH_PROG "\",\"machine\":{\"system\":", f);
	rtl_json_string(f, machine);
	fputs(",\"cpu_model\":", f);
	rtl_json_string(f, cpu_model);
	fputs(",\"probe_ns\":", f);
	json_num(f, rt->probe_ns);
	fprintf(f, ",\"mlockall\":%s,\"cpu_latency_held\":%s,\"sched_fifo\":%s,\"notes\":",
		rt->mlocked ? "true" : "false", rt->cpu_latency_held ? "true" : "false",
		rt->fifo_permitted && !rt->fifo_degraded ? "true" : "false");
	rtl_json_string(f, rt->fifo_degraded
				   ? rt->degraded_note
				   : (rt->fifo_permitted ? rt->mlock_note : rt->fifo_note));
	fputs(",\"doctor\":", f);
	fputs(doctor_json && *doctor_json ? doctor_json : "null", f);
	fprintf(f, "},\"config\":{\"transport\":\"%s\",\"profile\":",
		bench_transport_name(cfg->transport));
	if (cfg->transport == BENCH_UDP)
		fputs("null", f); /* rtloop's UDP stream has no RTDE profile */
	else
		rtl_json_string(f, prof ? prof->name : "?");
	fprintf(f,
		",\"duration_s\":%.3f,\"reps\":%u,\"phase_s\":%.3f,\"warmup_s\":%.3f,"
		"\"rate_hz\":%.3f,\"effective_hz\":%.3f,\"period_ns\":%" PRId64
		",\"cpus\":{\"sim\":%d,\"rx\":%d,\"worker\":%d},"
		"\"priority\":{\"worker\":%d,\"rx\":%d,\"sim\":%d},\"mode\":\"%s\",\"spin_ns\":"
		"%" PRId64 ",\"spin_lead_ns\":%" PRId64 ",\"outputs\":",
		cfg->duration_s, cfg->reps, (double)cfg->phase_ns / 1e9,
		(double)BENCH_WARMUP_NS / 1e9, cfg->rate_hz, cfg->eff_hz, cfg->period_ns,
		cfg->cpu_sim, cfg->cpu_rx, cfg->cpu_worker, cfg->prio_worker, cfg->prio_rx,
		cfg->prio_rx, cfg->mode == BENCH_MODE_INLINE ? "inline" : "threads", cfg->spin_ns,
		cfg->spin_lead_ns);
	rtl_json_string(f, cfg->outputs);
	fprintf(f,
		",\"data_package_bytes\":%zu,\"input_package_bytes\":%zu,\"floor\":\"bare %s "
		"ping-pong\"}",
		cfg->out_size, cfg->in_size, bench_floor_proto(cfg->transport));

	json_pair(f, "round_trip", reps, cfg->reps, total, H_RT_OURS, H_RT_FLOOR);
	json_pair(f, "wake", reps, cfg->reps, total, H_WAKE_OURS, H_WAKE_FLOOR);
	fputs(",\"stages\":{", f);
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", hist_names[stages[i]]);
		rtl_hist_write_json(total[stages[i]], f);
	}
	if (cfg->telemetry) {
		uint64_t rec = 0, got = 0, missed = 0;

		fputs("},\"telemetry\":{", f);
		for (size_t i = 0; i < N_TEL; i++) {
			fprintf(f, "%s\"%s\":{\"on\":", i ? "," : "", tel_names[i]);
			rtl_hist_write_json(total[tel_on[i]], f);
			fputs(",\"off\":", f);
			rtl_hist_write_json(total[tel_off[i]], f);
			fputs(",\"ratio\":", f);
			json_ratios(f, reps, cfg->reps, tel_on[i], tel_off[i]);
			fputc('}', f);
		}
		for (unsigned r = 0; r < cfg->reps; r++) {
			rec += reps[r].tel_records;
			got += reps[r].tel_read;
			missed += reps[r].tel_missed;
		}
		fprintf(f, ",\"records\":%" PRIu64 ",\"read\":%" PRIu64 ",\"missed\":%" PRIu64, rec,
			got, missed);
	}
	fputs("},\"target\":{\"round_trip_p99_ratio_max\":", f);
	json_num(f, BENCH_TARGET_P99);
	fputs(",\"p99_ratio_median\":", f);
	json_num(f, p99.med);
	fprintf(f, ",\"met\":%s},\"reps\":[",
		p99.n && p99.med <= BENCH_TARGET_P99 ? "true" : "false");
	for (unsigned r = 0; r < cfg->reps; r++) {
		const struct bench_rep *rp = &reps[r];

		fprintf(f, "%s{", r ? "," : "");
		for (int h = 0; h < H_COUNT; h++) {
			fprintf(f, "%s\"%s\":", h ? "," : "", hist_names[h]);
			json_quantiles(f, rp->h[h]);
		}
		fprintf(f,
			",\"counts\":{\"sim_sent\":%" PRIu64 ",\"echoes\":%" PRIu64
			",\"echo_unmatched\":%" PRIu64 ",\"sim_overruns\":%" PRIu64
			",\"frames\":%" PRIu64 ",\"steps\":%" PRIu64 ",\"worker_skipped\":%" PRIu64
			",\"ring_full\":%" PRIu64 ",\"would_block\":%" PRIu64
			",\"ctrl_skipped\":%" PRIu64 ",\"floor_sent\":%" PRIu64
			",\"floor_out_of_order\":%" PRIu64 "}}",
			rp->sim_sent, rp->echoes, rp->echo_unmatched, rp->sim_overruns, rp->frames,
			rp->steps, rp->worker_skipped, rp->ring_full, rp->would_block,
			rp->ctrl_skipped, rp->floor_sent, rp->floor_bad);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- plot --------------------------------------------------------------------------------------
 */

/* Re-binned to BINS_PER_DECADE log-spaced bins from 100 ns to 1 s, so that
 * the bars have equal widths on the log x axis (rtl_hist's own buckets do
 * not). */
#define BINS_PER_DECADE 20
#define DECADES 7
#define NBINS (BINS_PER_DECADE * DECADES)

static void rebin(const struct rtl_hist *h, double *bins)
{
	struct rtl_hist_bucket b;

	memset(bins, 0, sizeof(double) * NBINS);
	for (int i = rtl_hist_next_bucket(h, &b, 0); i >= 0;
	     i = rtl_hist_next_bucket(h, &b, i + 1)) {
		double x = log10((double)(b.value > 0 ? b.value : 1) / 100.0) * BINS_PER_DECADE;
		int k = x < 0 ? 0 : (x >= NBINS ? NBINS - 1 : (int)x);

		bins[k] += (double)b.count;
	}
}

static void datablock(FILE *p, const char *name, const struct rtl_hist *a, const struct rtl_hist *b)
{
	double ba[NBINS], bb[NBINS];

	rebin(a, ba);
	rebin(b, bb);
	fprintf(p, "$%s << EOD\n", name);
	for (int k = 0; k < NBINS; k++) {
		double lo = 0.1 * pow(10.0, (double)k / BINS_PER_DECADE);

		/* x in us: the bin's lower edge. The plot draws empty bins at
		 * 0.5, below the y range, so that a lone sample in the tail
		 * still gets its step. */
		fprintf(p, "%.6g %.0f %.0f\n", lo, ba[k], bb[k]);
	}
	fputs("EOD\n", p);
}

/* An x range in us, whole decades around the samples of @a and @b. */
static void xrange(FILE *p, const struct rtl_hist *a, const struct rtl_hist *b)
{
	int64_t lo = INT64_MAX, hi = 0;

	if (rtl_hist_count(a)) {
		lo = rtl_hist_min(a);
		hi = rtl_hist_max(a);
	}
	if (rtl_hist_count(b)) {
		lo = rtl_hist_min(b) < lo ? rtl_hist_min(b) : lo;
		hi = rtl_hist_max(b) > hi ? rtl_hist_max(b) : hi;
	}
	if (hi <= 0) {
		fputs("set autoscale x\n", p);
		return;
	}
	fprintf(p, "set xrange [%g:%g]\n",
		pow(10.0, floor(log10((double)(lo > 100 ? lo : 100) / 1e3))),
		pow(10.0, ceil(log10((double)hi / 1e3 * 1.01))));
}

int bench_plot(const char *path, const struct bench_cfg *cfg, struct rtl_hist *const *total,
	       char *why, size_t why_len)
{
	const struct sim_profile *prof = sim_profile(cfg->profile);
	int fds[2], status;
	pid_t pid;
	FILE *p;

	if (pipe(fds) < 0) {
		snprintf(why, why_len, "pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		snprintf(why, why_len, "fork: %s", strerror(-err));
		return err;
	}
	if (pid == 0) {
		char *const argv[] = { (char *)"gnuplot", NULL };

		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp("gnuplot", argv);
		_exit(127);
	}
	close(fds[0]);
	p = fdopen(fds[1], "w");
	if (!p) {
		close(fds[1]);
		waitpid(pid, &status, 0);
		snprintf(why, why_len, "fdopen: %s", strerror(errno));
		return -EIO;
	}
	/* gnuplot may exit early (a bad terminal): do not die of SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	fputs("set terminal pngcairo size 1200,520 font ',10'\n", p);
	fputs("set output '", p);
	for (const char *s = path; *s; s++) {
		if (*s == '\'')
			fputc('\'', p);
		fputc(*s, p);
	}
	fputs("'\n", p);
	datablock(p, "rt", total[H_RT_OURS], total[H_RT_FLOOR]);
	datablock(p, "wake", total[H_WAKE_OURS], total[H_WAKE_FLOOR]);
	fputs("set logscale xy\nset grid\nset key top right\n"
	      "set ylabel 'samples per bin (20 bins per decade)'\nset yrange [0.8:*]\n"
	      "set multiplot layout 1,2\n",
	      p);
	xrange(p, total[H_RT_OURS], total[H_RT_FLOOR]);
	fprintf(p,
		"set title 'round trip over loopback, %s %.0f Hz, %u reps'\n"
		"set xlabel 'us (simulator send -> echo received)'\n"
		"plot $rt using 1:($2>0?$2:0.5) with steps lw 2 title 'ours (sim + loop)', "
		"$rt using 1:($3>0?$3:0.5) with steps lw 2 title 'floor (bare %s ping-pong)'\n",
		cfg->transport == BENCH_UDP ? "UDP" : (prof ? prof->name : "?"), cfg->eff_hz,
		cfg->reps, bench_floor_proto(cfg->transport));
	xrange(p, total[H_WAKE_OURS], total[H_WAKE_FLOOR]);
	fputs("set title 'worker wake-up'\n"
	      "set xlabel 'us (ours: ring commit -> worker runs; floor: timer lateness)'\n"
	      "plot $wake using 1:($2>0?$2:0.5) with steps lw 2 title 'ours (loop worker)', "
	      "$wake using 1:($3>0?$3:0.5) with steps lw 2 title 'floor (timer loop)'\n"
	      "unset multiplot\n",
	      p);
	fclose(p);
	if (waitpid(pid, &status, 0) < 0) {
		snprintf(why, why_len, "waitpid: %s", strerror(errno));
		return -ECHILD;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(why, why_len, "gnuplot not found in PATH (install gnuplot)");
		return -ENOENT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, why_len, "gnuplot failed (status %d)", status);
		return -EIO;
	}
	return 0;
}
