/* SPDX-License-Identifier: MIT */
/*
 * rtloop-trace: the pieces main.c drives, one file each.
 *
 *   record.c    "record": a session daemon, an LTTng session, the command
 *   ctf.c       reads a CTF trace with libbabeltrace2 into rtt_event values
 *   analysis.c  pairs the events of each frame and measures the stages
 *   plot.c      histograms with gnuplot
 *
 * The analysis knows nothing about babeltrace2: it takes plain events with
 * explicit timestamps (a step function, as docs/style.md asks), so the reader
 * can change without touching the arithmetic, and the arithmetic could be
 * tested from a list of events. Nothing here is a library API: the rtt_
 * prefix keeps the app's cross-file names apart from librtloop's rtl_.
 *
 * Functions that can fail return 0 or -errno and, where a caller must tell
 * the user more than strerror(), fill a message buffer.
 */
#ifndef RTLOOP_TRACE_APP_H
#define RTLOOP_TRACE_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/hist.h>

#define RTT_PROG "rtloop-trace"

/* Exit codes shared by the subcommands (record passes the command's own). */
enum { RTT_EXIT_OK = 0, RTT_EXIT_FAIL = 1, RTT_EXIT_USAGE = 2, RTT_EXIT_RECORD_FAIL = 125 };

/* ---- child processes (proc.c) ------------------------------------------- */

struct rtt_child {
	int stdout_fd, stderr_fd; /* dup2'ed onto 1 and 2 when >= 0 */
	bool own_pgrp;		  /* own process group: the terminal's ^C misses it */
	int timeout_ms;		  /* > 0: SIGKILL after that long */
};

/*
 * Start @argv (PATH search) and return its pid, or -errno when it could not
 * be started (-ENOENT: not found; reported through a close-on-exec pipe, so
 * the error is the exec's, not a guess from exit status 127).
 */
int rtt_spawn(char *const argv[], const struct rtt_child *c);
/* Wait for @pid; EINTR is retried. Returns 0 with the wait status, -errno,
 * or -ETIMEDOUT after killing it when @timeout_ms > 0 passed. */
int rtt_wait(int pid, int timeout_ms, int *status);
/* rtt_spawn + rtt_wait: 0 and the exit code (128 + signal), or -errno. */
int rtt_run(char *const argv[], const struct rtt_child *c, int *code);

/* ---- record ------------------------------------------------------------- */

struct rtt_record_opts {
	const char *output;	      /* trace directory; NULL: ./rtloop-trace-<time> */
	const char *subbuf_size;      /* lttng --subbuf-size, e.g. "4M" */
	unsigned num_subbuf;	      /* lttng --num-subbuf, a power of two */
	const char *register_timeout; /* LTTNG_UST_REGISTER_TIMEOUT; NULL: keep/3000 */
	char **argv;		      /* the command, NULL-terminated */
};

/* Record @o->argv; returns the exit status for main() (see docs). */
int rtt_record(const struct rtt_record_opts *o);

/* ---- events and their analysis ------------------------------------------ */

/* Stages a frame goes through, in loop order. RTT_OUT is package_sent or
 * package_suppressed, whichever came first. */
enum rtt_stage {
	RTT_RECEIVED,
	RTT_DECODED,
	RTT_COMMITTED,
	RTT_WOKE,
	RTT_STEP_STARTED,
	RTT_STEP_FINISHED,
	RTT_OUT,
	RTT_NSTAGES
};

/* Measured intervals: the six between consecutive stages, then end to end
 * (received -> out). */
#define RTT_E2E (RTT_NSTAGES - 1)
#define RTT_NINTERVALS RTT_NSTAGES

enum rtt_kind {
	/* 0 .. RTT_NSTAGES - 2: the per-frame stages before RTT_OUT */
	RTT_EV_SENT = RTT_NSTAGES,
	RTT_EV_SUPPRESSED,
	RTT_EV_SKIPPED,
	RTT_EV_WATCHDOG,
	RTT_EV_RECONNECT,
	RTT_EV_TEXT,
	RTT_EV_OTHER /* another rtloop event or another provider's */
};

enum { RTT_SKIP_CONTROLLER, RTT_SKIP_WORKER, RTT_SKIP_RING_FULL, RTT_SKIP_NREASONS };

/* One event as the analysis needs it. */
struct rtt_event {
	int kind;	/* enum rtt_stage (< RTT_OUT) or enum rtt_kind */
	int64_t ts_ns;	/* clock snapshot, ns from the clock's origin */
	int64_t vpid;	/* -1 when the trace has no vpid context */
	uint64_t seq;	/* per-frame events and skipped */
	uint64_t count; /* skipped: frames lost; watchdog: periods missed */
	int64_t value;	/* skipped: reason; reconnect: result */
};

struct rtt_frame {
	int64_t vpid;
	uint64_t seq;
	int64_t ts[RTT_NSTAGES];
	uint8_t have; /* bit per stage */
	uint8_t sent; /* RTT_OUT was package_sent (else suppressed) */
};

struct rtt_process {
	int64_t vpid;
	uint64_t frames, seq_min, seq_max, absent;
};

struct rtt_losses {
	uint64_t skip_events, skip_frames[RTT_SKIP_NREASONS], skip_unknown;
	uint64_t watchdog, watchdog_periods;
	uint64_t reconnects, reconnects_failed;
	uint64_t incomplete; /* frames missing at least one stage */
	uint64_t absent;     /* seq numbers never seen between a pid's first and last */
	uint64_t duplicates; /* a stage seen twice for one (pid, seq) */
	uint64_t reused_seq; /* frame_received again for a known (pid, seq) */
	uint64_t discarded;  /* events the tracer dropped (full buffers) */
	uint64_t discarded_packets;
};

struct rtt_analysis {
	struct rtt_frame *frames;
	size_t nframes, cap;
	uint32_t *slots; /* open addressing on (vpid, seq): frame index + 1 */
	size_t nslots;
	struct rtl_hist *hist[RTT_NINTERVALS];
	uint64_t missing[RTT_NINTERVALS]; /* frames where the interval is unmeasurable */
	uint64_t stage_missing[RTT_NSTAGES];
	struct rtt_process *procs;
	size_t nprocs;
	struct rtt_losses loss;
	uint64_t events, other_events, texts, sent, suppressed, extra_out;
	int64_t first_ns, last_ns;
	int64_t pid_filter; /* keep only this vpid; -1: all */
	size_t *worst;	    /* frame indices, slowest end to end first */
	size_t nworst;
};

/* Names: "received->decoded", ...; "received->sent" for RTT_E2E. */
const char *rtt_interval_name(int i);
/* Event names without the provider: "frame_received", ... */
const char *rtt_stage_event(int stage);

int rtt_analysis_init(struct rtt_analysis *a, int64_t pid_filter);
void rtt_analysis_free(struct rtt_analysis *a);
/* Feed one event (any order of frames; stages in time order). -ENOMEM. */
int rtt_analysis_add(struct rtt_analysis *a, const struct rtt_event *ev);
/* The tracer discarded @n events (or packets) of some stream. */
void rtt_analysis_discarded(struct rtt_analysis *a, uint64_t n, bool packets);
/* Measure every frame; keep the @worst_n slowest end to end. -ENOMEM. */
int rtt_analysis_finish(struct rtt_analysis *a, size_t worst_n);

int rtt_report_text(const struct rtt_analysis *a, FILE *f, const char *dir);
int rtt_report_json(const struct rtt_analysis *a, FILE *f, const char *dir);

/* ---- reading and plotting ----------------------------------------------- */

/* Read every CTF trace below @dir into @a. On failure returns -errno and
 * leaves a message (naming @dir and the fix) in @msg. */
int rtt_ctf_read(const char *dir, struct rtt_analysis *a, char *msg, size_t len);

/* Write the histograms of @a to the PNG @png with gnuplot. -errno + @msg. */
int rtt_plot(const struct rtt_analysis *a, const char *png, const char *title, char *msg,
	     size_t len);

#endif /* RTLOOP_TRACE_APP_H */
