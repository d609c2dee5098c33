// SPDX-License-Identifier: MIT
/*
 * rtloop-view: a loop's telemetry (docs/telemetry.md) as a live page in the
 * browser, and as PlotJuggler's JSON over UDP.
 *
 * Design
 * ------
 * Three parts, one process, no real-time thread of its own: the loop it
 * watches runs elsewhere and never waits for it.
 *
 *   source.c  the sampler: a thread that polls the shared-memory object
 *             every SAMPLE_MS, copies the new records (counting those the
 *             writer overwrote first), keeps a history of them decimated
 *             to at most HISTORY_HZ, and follows the producer: it waits for
 *             the object to appear, keeps the last figures when the
 *             producer ends (or dies: its pid is gone), and attaches anew
 *             when a producer starts again under the name (a new
 *             "generation" the page starts over with).
 *   http.c    libmicrohttpd's own thread: the page (index.html, app.js,
 *             app.css, embedded at build time), Debian's Chart.js read from
 *             disk at start, and the JSON the page polls (/api/info,
 *             /api/data, /api/hists), built from the sampler's state under
 *             its mutex.
 *   pj.c      PlotJuggler: the sampler hands it each new record; it sends
 *             at most --pj-rate datagrams a second, and the counters every
 *             PJ_COUNTERS_MS.
 *
 * Who owns what: struct view_source is the sampler's; every field the
 * HTTP thread reads is read under ->mu, and the sampler writes them under
 * it. The reader object (rtl_telemetry_reader) is the sampler thread's
 * alone.
 */
#ifndef RTLOOP_VIEW_H
#define RTLOOP_VIEW_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/hist.h>
#include <rtloop/telemetry.h>

#define PROG "rtloop-view"

/* The sampler's poll period, and the history it keeps for the page. */
#define SAMPLE_MS 10
#define HISTORY_HZ 100
#define HISTORY_S 60
#define HISTORY_CAP (HISTORY_HZ * HISTORY_S)

/* PlotJuggler's UDP server's default port, and the counters' period. */
#define PJ_DEFAULT_PORT 9870
#define PJ_DEFAULT_RATE 100
#define PJ_COUNTERS_MS 100

/* What the page shows of the producer. */
enum view_state {
	VIEW_WAITING, /* no object of the name yet */
	VIEW_RUNNING, /* records come */
	VIEW_ENDED,   /* the producer ended: its last figures stay */
	VIEW_GONE,    /* the producer's process is gone without ending */
};

const char *view_state_name(enum view_state s);

struct view_pj;

/* A record of the history: the fixed part, then the producer's n_values
 * values (the slot's stride is the source's rec_stride). */
struct view_rec {
	uint64_t index;
	int64_t t_ns;
	uint64_t frame;
	double ctrl_time;
	double v[];
};

struct view_source {
	/* Set before view_source_start(); read-only after. */
	const char *name;
	struct view_pj *pj; /* NULL: no PlotJuggler */

	pthread_mutex_t mu;
	/* Under mu: what the HTTP thread reads. */
	enum view_state state;
	uint64_t generation; /* +1 at each attach */
	struct rtl_telemetry_info info;
	char error[1024]; /* why it is not attached, for the page (an rtl_error message) */
	unsigned n_signals, n_counters, n_hists;
	struct rtl_telemetry_signal_info sig[RTL_TELEMETRY_MAX_SIGNALS];
	char (*counter_names)[RTL_TELEMETRY_COUNTER_NAME];
	char (*hist_names)[RTL_TELEMETRY_HIST_NAME];
	uint64_t *counters;		   /* n_counters, the newest copy */
	struct rtl_hist *hists;		   /* n_hists, the newest copies */
	uint64_t missed;		   /* records overwritten before the sampler copied them */
	uint64_t seen;			   /* records copied */
	struct rtl_telemetry_record *last; /* the newest record copied */
	bool have_last;
	/* The decimated history: slot k % HISTORY_CAP holds history record k. */
	unsigned char *hist_rec; /* HISTORY_CAP slots of rec_stride bytes */
	size_t rec_stride;
	uint64_t hist_head; /* history records kept so far */
	int64_t hist_last_ns;

	/* The sampler thread's own. */
	pthread_t thread;
	bool started;
	_Atomic bool quit;
	struct rtl_telemetry_reader *reader;
	struct rtl_telemetry_record *batch; /* a read's worth of records */
	int64_t next_hists_ns;
};

/* Start the sampler thread on @s (name, pj set). Returns 0 or -errno. */
int view_source_start(struct view_source *s);
/* Stop and join it, free what it holds. */
void view_source_stop(struct view_source *s);
/* History record @k (under ->mu; @k within the kept window: the last
 * HISTORY_CAP before hist_head). */
const struct view_rec *view_source_record(const struct view_source *s, uint64_t k);

/* The robot's state a record shows, from the signals it has by name
 * (UR: robot_mode, safety_mode, runtime_state; Doosan: robot_state,
 * robot_mode; the motion API's motion_mode). Calls @fn for each known one
 * with its value and name (NULL: a value without a name). Under ->mu. */
void view_robot_state(const struct view_source *s, const double *values,
		      void (*fn)(void *user, const char *signal, double value, const char *text),
		      void *user);

/* ---- the HTTP server (http.c) ---------------------------------------------------------- */

struct view_http;

struct view_http_config {
	struct view_source *src;
	const char *chartjs; /* the path of chart.min.js */
	const struct sockaddr *addr;
	unsigned addr_len;
	bool ipv6;
};

/* Read Chart.js and start serving. Returns 0 and sets *@out, or -errno
 * with the reason printed. */
int view_http_start(struct view_http **out, const struct view_http_config *cfg);
/* The port it listens on (the one chosen for port 0). */
unsigned view_http_port(const struct view_http *h);
void view_http_stop(struct view_http *h);

/* ---- JSON helpers (http.c) -------------------------------------------------------------- */

/* A double as JSON: %.10g, NaN and infinities as null. */
void view_json_double(FILE *f, double v);

/* ---- PlotJuggler (pj.c) ---------------------------------------------------------------- */

struct view_pj_config {
	const struct sockaddr *addr;
	unsigned addr_len;
	double rate_hz;	  /* records a second at most */
	const char *name; /* the top-level key */
};

/* Open the UDP socket. Returns 0 and sets *@out, or -errno with the reason
 * printed. */
int view_pj_open(struct view_pj **out, const struct view_pj_config *cfg);
/* From the sampler thread (it reads only what that thread writes): a
 * record (sent unless the rate limit says not yet), and the counters
 * (sent every PJ_COUNTERS_MS). */
void view_pj_record(struct view_pj *p, const struct view_source *s,
		    const struct rtl_telemetry_record *r);
void view_pj_counters(struct view_pj *p, const struct view_source *s, int64_t now_ns);
/* Datagrams sent and failed, for the exit line. */
void view_pj_stats(const struct view_pj *p, uint64_t *sent, uint64_t *failed);
void view_pj_close(struct view_pj *p);

#endif /* RTLOOP_VIEW_H */
