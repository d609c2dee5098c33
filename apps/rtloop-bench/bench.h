/* SPDX-License-Identifier: MIT */
/*
 * rtloop-bench: shared types of the driver (main.c), the measured phases
 * (phases.c) and the report (report.c).
 *
 * A run is --reps repetitions of three phases, one at a time, each measured
 * for the same window (phase_ns) after a warm-up (warmup_ns):
 *   P_FLOOR  a bare ping-pong over loopback between two threads, paced by an
 *            absolute-deadline timer at the loop's rate: TCP with the RTDE
 *            data package's and the echo input package's sizes, or
 *            (--transport udp) UDP with the state and command datagrams'
 *            sizes;
 *   P_OURS   the simulator (its own thread) and the loop (rx + worker) in
 *            this process, and the simulator's echo histogram is the round
 *            trip. RTDE: the step echoes `timestamp` into
 *            input_double_register_47. UDP (rtde-sim's UDP mode, the UDP
 *            transport): the step answers every state with a command
 *            datagram whose echo fields carry the state's sequence number
 *            and send time;
 *   P_TIMER  a cyclictest-style absolute-deadline timer loop at the worker's
 *            priority on the worker's CPU: the floor of the worker's wake-up.
 * The phase that goes first rotates with the repetition, so slow drifts of
 * the shared host hit every phase alike.
 */
#ifndef RTLOOP_BENCH_H
#define RTLOOP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/hist.h>

#include "sim.h"

#define BENCH_PROG "rtloop-bench"
#define BENCH_MAX_REPS 51
#define BENCH_TARGET_P99 1.5
/* Samples at the start of each phase that are not measured. */
#define BENCH_WARMUP_NS (100 * INT64_C(1000000))

/* P_TEL (--telemetry): P_OURS again with the loop's telemetry on (every
 * step published: the state, the command, the counters, the histograms)
 * and a reader polling it as rtloop-view does; its figures against
 * P_OURS's of the same repetition show what telemetry costs the loop. */
enum bench_phase { P_FLOOR = 0, P_OURS, P_TIMER, P_TEL, P_COUNT };

/* What the loop talks: RTDE over TCP (500 Hz) or rtloop's UDP stream (1 kHz). */
enum bench_transport { BENCH_RTDE = 0, BENCH_UDP };

/* The histograms one repetition fills (ns). */
enum bench_hist {
	H_RT_OURS = 0, /* simulator send -> echo arrival (sim's echo histogram) */
	H_RT_FLOOR,    /* bare TCP (UDP) ping-pong round trip */
	H_WAKE_OURS,   /* loop: ring commit -> worker running (RTL_LOOP_H_WAKE) */
	H_WAKE_FLOOR,  /* timer loop lateness */
	H_RX_TO_STEP,  /* loop stages (RTL_LOOP_H_*) */
	H_STEP,
	H_STEP_TO_SEND,
	H_INTERARRIVAL,
	H_SIM_WAKE, /* the simulator's own cycle lateness: its noise floor */
	/* P_TEL: the round trip and the stages with telemetry on. */
	H_RT_TEL,
	H_RX_TO_STEP_TEL,
	H_STEP_TEL,
	H_STEP_TO_SEND_TEL,
	H_COUNT,
};

enum bench_mode {
	BENCH_MODE_AUTO = 0, /* inline when rx and worker share a CPU and no spin is asked */
	BENCH_MODE_THREADS,  /* rx thread -> ring -> worker */
	BENCH_MODE_INLINE,   /* the rx thread runs the step (rtl_loop_config.inline_step) */
};

struct bench_cfg {
	enum bench_transport transport;
	double duration_s;
	unsigned reps;
	double rate_hz;		     /* requested output rate */
	enum sim_profile_id profile; /* RTDE only */
	const char *outputs;	     /* RTDE output recipe (has `timestamp`) */
	int cpu_sim, cpu_rx, cpu_worker;
	int prio_worker;      /* worker and timer floor */
	int prio_rx;	      /* rx, simulator and ping-pong threads */
	enum bench_mode mode; /* how the loop steps (--mode) */
	int64_t spin_ns;      /* the worker's spin budget */
	int64_t spin_lead_ns; /* ...placed this long before the frame is due */
	const char *json;
	const char *plot;
	bool telemetry;	   /* also P_TEL */
	char tel_name[48]; /* P_TEL's telemetry: rtloop-bench-PID */
	/* Derived. */
	unsigned divisor;
	double eff_hz;
	int64_t period_ns;
	int64_t phase_ns;
	size_t out_size; /* RTDE data package / UDP state datagram, header included */
	size_t in_size;	 /* RTDE input package of the echo recipe / UDP command datagram */
};

/* --rig (rig.c): the scaling of a loop over several sources, against the
 * one-source loop; @cfg's duration, reps and json. Returns the exit status. */
int bench_rig(const struct bench_cfg *cfg, FILE *out);

/* "rtde" or "udp"; the floor's protocol, "TCP" or "UDP". */
const char *bench_transport_name(enum bench_transport t);
const char *bench_floor_proto(enum bench_transport t);

/* What one repetition measured. */
struct bench_rep {
	struct rtl_hist *h[H_COUNT];
	/* Counters over the measured window of P_OURS. */
	uint64_t sim_sent, echoes, echo_unmatched, sim_overruns;
	uint64_t frames, steps, worker_skipped, ring_full, would_block, ctrl_skipped;
	/* P_FLOOR. */
	uint64_t floor_sent, floor_bad;
	/* P_TEL: records published over the window, copied by the reader, and
	 * those it missed (overwritten before it came). */
	uint64_t tel_records, tel_read, tel_missed;
};

/* What was applied, for the report. */
struct bench_rt {
	bool mlocked;
	char mlock_note[256];
	/* /dev/cpu_dma_latency held at 0 for the whole run (every phase), as
	 * the loop holds it while it runs; else why not. */
	bool cpu_latency_held;
	char cpu_latency_note[256];
	bool fifo_permitted;
	char fifo_note[1024];
	bool fifo_degraded; /* some thread fell back to SCHED_OTHER */
	char degraded_note[1024];
	double probe_ns; /* core-to-core, one way; NaN when not measured */
};

/* Progress callback of the phases: called from the main thread about twice
 * a second while a phase runs. */
typedef void (*bench_progress_fn)(void *ctx, enum bench_phase p, int64_t left_ns);

/* ---- phases.c ---- */

/* Run phase @p of one repetition into @rep. Returns 0 or -errno with a
 * message in @why. */
int bench_run_phase(const struct bench_cfg *cfg, enum bench_phase p, struct bench_rep *rep,
		    struct bench_rt *rt, bench_progress_fn progress, void *pctx, char *why,
		    size_t why_len);

/* The core-to-core probe between @a and @b: ns for one cache-line transfer
 * (median of a few runs), NaN when a == b or it could not run. */
double bench_probe(int a, int b);

/* The wire size of a v2 data package of output recipe @names (header and
 * recipe id included), or -errno. */
int bench_package_size(const char *names, bool output, size_t *out);

/* ---- report.c ---- */

/* @d = the samples of @end that are not in @start (both snapshots of one
 * histogram, @start taken earlier). Counts are exact; min and max are
 * exact when they fall in the bucket of the whole run's min or max, else
 * the bucket's representative value. */
void bench_hist_diff(struct rtl_hist *d, const struct rtl_hist *end, const struct rtl_hist *start);

/* The text report to @f. */
void bench_report_text(FILE *f, const struct bench_cfg *cfg, struct bench_rep *reps,
		       struct rtl_hist *const *total);

/* The JSON report; the findings' JSON of the doctor is embedded. Returns 0
 * or -errno. */
int bench_report_json(FILE *f, const struct bench_cfg *cfg, const struct bench_rt *rt,
		      const char *machine, const char *cpu_model, const char *doctor_json,
		      struct bench_rep *reps, struct rtl_hist *const *total);

/* Draw the round-trip and wake-up histograms with gnuplot into PNG @path.
 * Returns 0, -ENOENT (no gnuplot) or -errno; @why says what failed. */
int bench_plot(const char *path, const struct bench_cfg *cfg, struct rtl_hist *const *total,
	       char *why, size_t why_len);

/* Name of a histogram of enum bench_hist. */
const char *bench_hist_name(enum bench_hist h);

#endif /* RTLOOP_BENCH_H */
