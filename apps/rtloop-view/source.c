// SPDX-License-Identifier: MIT
/*
 * The sampler: a loop's telemetry, copied out of shared memory into what
 * the page and PlotJuggler read (view.h has the design).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/motion.h>
#include <rtloop/time.h>
#include <rtloop/udp.h>
#include <rtloop/ur_dashboard.h>

#include "view.h"

/* Records copied per read; a poll reads until none is left. */
#define BATCH 256
/* How often the sampler looks for a (new) producer while it has none, or
 * its producer has ended; and how often it checks that one still lives. */
#define ATTACH_MS 200
#define ALIVE_MS 500
/* The histogram mirrors, copied this often (each is 28 KiB). */
#define HISTS_MS 100

const char *view_state_name(enum view_state s)
{
	static const char *const names[] = { "waiting", "running", "ended", "gone" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const struct view_rec *view_source_record(const struct view_source *s, uint64_t k)
{
	return (const struct view_rec *)(const void *)(s->hist_rec +
						       (size_t)(k % HISTORY_CAP) * s->rec_stride);
}

/* ---- the robot's state, named --------------------------------------------------------- */

/* RTDE's runtime_state: the program's state. */
static const char *runtime_state_name(long v)
{
	static const char *const names[] = { "STOPPING", "STOPPED", "PLAYING",
					     "PAUSING",	 "PAUSED",  "RESUMING" };

	return v >= 0 && v < 6 ? names[v] : "?";
}

/* Doosan's ROBOT_STATE (docs/udp.md). */
static const char *doosan_state_name(long v)
{
	static const char *const names[] = { "INITIALIZING",   "STANDBY",  "MOVING",
					     "SAFE_OFF",       "TEACHING", "SAFE_STOP",
					     "EMERGENCY_STOP", "HOMMING",  "RECOVERY",
					     "SAFE_STOP2",     "SAFE_OFF2" };

	if (v == 15)
		return "NOT_READY";
	return v >= 0 && v < 11 ? names[v] : "?";
}

static int signal_index(const struct view_source *s, const char *name)
{
	for (unsigned i = 0; i < s->n_signals; i++)
		if (strcmp(s->sig[i].name, name) == 0)
			return (int)i;
	return -1;
}

void view_robot_state(const struct view_source *s, const double *values,
		      void (*fn)(void *user, const char *signal, double value, const char *text),
		      void *user)
{
	/* Doosan's stream has robot_state; UR's RTDE safety_mode. Their
	 * robot_mode differ: Doosan's is manual or autonomous. */
	bool doosan = signal_index(s, "robot_state") >= 0;
	static const char *const names[] = { "robot_mode",  "safety_mode", "runtime_state",
					     "robot_state", "motion_mode", "cmd_mode" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		int i = signal_index(s, names[k]);
		double v;
		long l;
		const char *text;

		if (i < 0)
			continue;
		v = values[s->sig[i].first];
		if (!isfinite(v)) {
			fn(user, names[k], v, NULL);
			continue;
		}
		l = lround(v);
		switch (k) {
		case 0:
			text = doosan ? (l == 0	  ? "MANUAL"
					 : l == 1 ? "AUTONOMOUS"
						  : "?")
				      : rtl_ur_robot_mode_name((enum rtl_ur_robot_mode)l);
			break;
		case 1:
			text = rtl_ur_safety_status_name((enum rtl_ur_safety_status)l);
			break;
		case 2:
			text = runtime_state_name(l);
			break;
		case 3:
			text = doosan_state_name(l);
			break;
		case 4:
			text = l >= 0 ? rtl_motion_mode_name((enum rtl_motion_mode)l) : "?";
			break;
		default:
			text = l >= 0 ? rtl_udp_mode_name((enum rtl_udp_mode)l) : "?";
			break;
		}
		fn(user, names[k], v, text);
	}
}

/* ---- attaching ------------------------------------------------------------------------- */

/* What an attach allocates, made before the swap under the lock. */
struct layout {
	char (*counter_names)[RTL_TELEMETRY_COUNTER_NAME];
	char (*hist_names)[RTL_TELEMETRY_HIST_NAME];
	uint64_t *counters;
	struct rtl_hist *hists;
	unsigned char *hist_rec;
	struct rtl_telemetry_record *last;
};

static void free_layout(struct layout *l)
{
	free(l->counter_names);
	free(l->hist_names);
	free(l->counters);
	free(l->hists);
	free(l->hist_rec);
	free(l->last);
}

static void set_error(struct view_source *s, const char *msg)
{
	pthread_mutex_lock(&s->mu);
	snprintf(s->error, sizeof(s->error), "%s", msg);
	pthread_mutex_unlock(&s->mu);
}

/* The producer of @info is one the source shows already. */
static bool same_producer(const struct view_source *s, const struct rtl_telemetry_info *info)
{
	return s->generation && s->info.pid == info->pid && s->info.created_ns == info->created_ns;
}

/* Try to map the object; on a new producer, take it (the old mapping
 * goes). */
static void try_attach(struct view_source *s)
{
	struct rtl_telemetry_reader *r = NULL;
	struct rtl_telemetry_info info;
	struct rtl_error err = { 0 };
	struct layout nl = { 0 }, old;
	size_t stride;
	int ret = rtl_telemetry_reader_create(&r, s->name, &err);

	if (ret < 0) {
		if (!s->reader) /* the page says why it waits */
			set_error(s, err.msg);
		return;
	}
	rtl_telemetry_reader_info(r, &info);
	if (same_producer(s, &info)) {
		rtl_telemetry_reader_destroy(r);
		return;
	}
	stride = sizeof(struct view_rec) + info.n_values * sizeof(double);
	nl.counter_names = calloc(info.n_counters + 1, sizeof(*nl.counter_names));
	nl.hist_names = calloc(info.n_hists + 1, sizeof(*nl.hist_names));
	nl.counters = calloc(info.n_counters + 1, sizeof(*nl.counters));
	nl.hists = calloc(info.n_hists + 1, sizeof(*nl.hists));
	nl.hist_rec = calloc(HISTORY_CAP, stride);
	nl.last = calloc(1, sizeof(*nl.last));
	if (!nl.counter_names || !nl.hist_names || !nl.counters || !nl.hists || !nl.hist_rec ||
	    !nl.last) {
		free_layout(&nl);
		rtl_telemetry_reader_destroy(r);
		set_error(s, "out of memory for the history");
		return;
	}
	for (unsigned i = 0; i < info.n_counters; i++)
		snprintf(nl.counter_names[i], sizeof(nl.counter_names[i]), "%s",
			 rtl_telemetry_reader_counter_name(r, i));
	for (unsigned i = 0; i < info.n_hists; i++)
		snprintf(nl.hist_names[i], sizeof(nl.hist_names[i]), "%s",
			 rtl_telemetry_reader_hist_name(r, i));

	pthread_mutex_lock(&s->mu);
	old = (struct layout){ s->counter_names, s->hist_names, s->counters,
			       s->hists,	 s->hist_rec,	s->last };
	s->counter_names = nl.counter_names;
	s->hist_names = nl.hist_names;
	s->counters = nl.counters;
	s->hists = nl.hists;
	s->hist_rec = nl.hist_rec;
	s->last = nl.last;
	s->rec_stride = stride;
	s->info = info;
	s->n_signals = info.n_signals;
	s->n_counters = info.n_counters;
	s->n_hists = info.n_hists;
	for (unsigned i = 0; i < info.n_signals; i++)
		s->sig[i] = *rtl_telemetry_reader_signal(r, i);
	s->generation++;
	s->state = info.state == RTL_TELEMETRY_ENDED ? VIEW_ENDED : VIEW_RUNNING;
	s->missed = s->seen = 0;
	s->hist_head = 0;
	s->hist_last_ns = 0;
	s->have_last = false;
	s->error[0] = '\0';
	pthread_mutex_unlock(&s->mu);

	free_layout(&old);
	rtl_telemetry_reader_destroy(s->reader);
	s->reader = r;
	/* The page shows the last HISTORY_S of it: start there. */
	rtl_telemetry_reader_seek(r, 0);
	s->next_hists_ns = 0;
}

/* ---- polling -------------------------------------------------------------------------- */

static void keep(struct view_source *s, const struct rtl_telemetry_record *r)
{
	struct view_rec *h;

	if (s->hist_head && r->t_ns - s->hist_last_ns < RTL_NS_PER_SEC / HISTORY_HZ)
		return;
	h = (struct view_rec *)(void *)(s->hist_rec +
					(size_t)(s->hist_head % HISTORY_CAP) * s->rec_stride);
	h->index = r->index;
	h->t_ns = r->t_ns;
	h->frame = r->frame;
	h->ctrl_time = r->ctrl_time;
	memcpy(h->v, r->values, s->info.n_values * sizeof(double));
	s->hist_head++;
	s->hist_last_ns = r->t_ns;
}

/* Copy what is new: records, counters, now and then the histograms. */
static void poll_once(struct view_source *s, int64_t now)
{
	struct rtl_telemetry_info info;
	uint64_t counters[RTL_TELEMETRY_MAX_COUNTERS];
	bool hists = now >= s->next_hists_ns;
	enum view_state state;
	int n, nc;

	rtl_telemetry_reader_info(s->reader, &info);
	/* Read the state first: an ENDED seen here means the records and
	 * figures read after it are the final ones. */
	state = info.state == RTL_TELEMETRY_ENDED ? VIEW_ENDED : VIEW_RUNNING;
	if (state == VIEW_ENDED)
		hists = true;
	do {
		n = rtl_telemetry_reader_read(s->reader, s->batch, BATCH);
		if (n <= 0)
			break;
		pthread_mutex_lock(&s->mu);
		for (int i = 0; i < n; i++)
			keep(s, &s->batch[i]);
		memcpy(s->last, &s->batch[n - 1], sizeof(*s->last));
		s->have_last = true;
		s->seen += (uint64_t)n;
		pthread_mutex_unlock(&s->mu);
		/* PlotJuggler reads only what this thread writes: no lock. */
		for (int i = 0; s->pj && i < n; i++)
			view_pj_record(s->pj, s, &s->batch[i]);
	} while (n == BATCH);
	nc = rtl_telemetry_reader_counters(s->reader, counters, RTL_TELEMETRY_MAX_COUNTERS);

	pthread_mutex_lock(&s->mu);
	if (nc > 0)
		memcpy(s->counters, counters, (size_t)nc * sizeof(uint64_t));
	if (hists) {
		for (unsigned i = 0; i < s->n_hists; i++)
			rtl_telemetry_reader_hist(s->reader, i, &s->hists[i]);
		s->next_hists_ns = now + HISTS_MS * RTL_NS_PER_MS;
	}
	s->missed = rtl_telemetry_reader_missed(s->reader);
	s->info = info;
	/* A producer killed without ending leaves its state RUNNING. */
	if (state == VIEW_RUNNING && s->state == VIEW_GONE)
		state = VIEW_GONE;
	s->state = state;
	pthread_mutex_unlock(&s->mu);
	if (s->pj)
		view_pj_counters(s->pj, s, now);
}

static bool pid_alive(int64_t pid)
{
	return pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

static void *sampler(void *arg)
{
	struct view_source *s = arg;
	int64_t next_attach = 0, next_alive = 0;

	while (!atomic_load_explicit(&s->quit, memory_order_relaxed)) {
		int64_t now = rtl_time_now();
		enum view_state st;

		pthread_mutex_lock(&s->mu);
		st = s->state;
		pthread_mutex_unlock(&s->mu);
		/* No producer, or one that ended: look for the next. */
		if ((st != VIEW_RUNNING || !s->reader) && now >= next_attach) {
			try_attach(s);
			next_attach = now + ATTACH_MS * RTL_NS_PER_MS;
		}
		if (s->reader)
			poll_once(s, now);
		if (s->reader && now >= next_alive) {
			pthread_mutex_lock(&s->mu);
			if (s->state == VIEW_RUNNING && !pid_alive(s->info.pid))
				s->state = VIEW_GONE;
			pthread_mutex_unlock(&s->mu);
			next_alive = now + ALIVE_MS * RTL_NS_PER_MS;
		}
		rtl_time_sleep_until(now + SAMPLE_MS * RTL_NS_PER_MS);
	}
	return NULL;
}

int view_source_start(struct view_source *s)
{
	int ret;

	s->batch = calloc(BATCH, sizeof(*s->batch));
	if (!s->batch)
		return -ENOMEM;
	ret = pthread_mutex_init(&s->mu, NULL);
	if (ret) {
		free(s->batch);
		return -ret;
	}
	s->state = VIEW_WAITING;
	snprintf(s->error, sizeof(s->error), "not looked for yet");
	ret = pthread_create(&s->thread, NULL, sampler, s);
	if (ret) {
		pthread_mutex_destroy(&s->mu);
		free(s->batch);
		return -ret;
	}
	s->started = true;
	return 0;
}

void view_source_stop(struct view_source *s)
{
	struct layout l;

	if (!s->started)
		return;
	atomic_store(&s->quit, true);
	pthread_join(s->thread, NULL);
	l = (struct layout){ s->counter_names, s->hist_names, s->counters,
			     s->hists,	       s->hist_rec,   s->last };
	free_layout(&l);
	rtl_telemetry_reader_destroy(s->reader);
	free(s->batch);
	pthread_mutex_destroy(&s->mu);
	s->started = false;
}
