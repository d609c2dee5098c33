/* SPDX-License-Identifier: MIT */
/*
 * The rig's insides, shared by rig.c (create, start, the worker, the
 * policy, join) and rig_report.c (counters, histograms, the report). Who
 * owns what is written once, in <rtloop/rig.h>.
 */
#ifndef RTLOOP_RIG_PRIVATE_H
#define RTLOOP_RIG_PRIVATE_H

#include <stdatomic.h>

#include <rtloop/hist.h>
#include <rtloop/rig.h>

struct rig_source_counters {
	RTL_RIG_SOURCE_COUNTERS(RTL_STAT_ATOMIC)
};

struct rig_counters {
	RTL_RIG_COUNTERS(RTL_STAT_ATOMIC)
};

/* Arm requests, from any thread to the worker. */
enum { ARM_NONE = 0, ARM_ON, ARM_OFF };

struct rig_src {
	struct rtl_rig_source cfg;
	char name[32];
	struct rtl_loop *loop;
	/* The worker's: the newest frame (a copy of the ring's slot, which
	 * the next read releases), its storage size, the stamp estimator. */
	struct rtl_loop_frame *frame;
	size_t frame_cap;
	bool have;
	uint64_t last_seq;
	struct rtl_rig_stamp stamp;
	int64_t stale_ns;
	int64_t period_ns;
	/* The worker's view of its health: an episode is open (faulty), it
	 * was stopped by the policy or disarmed (stopped), its loop ended
	 * (ended), its last frame was refused (bad). */
	bool faulty, stopped, ended, bad;
	/* The worker's: inside this source's loop step for the current
	 * cycle (a frame read, or the step entered: no reconnect can take
	 * the transport until the write), and its reconnects seen so far. */
	bool held;
	uint64_t reconnects;
	_Atomic int arm_req;
	struct rig_source_counters c;
};

/* The counters the telemetry mirrors: the rig's, then each source's, as
 * one snapshot (rig_report.c builds the table). */
#define RIG_N_COUNTERS (sizeof(struct rig_counters) / sizeof(uint64_t))
#define RIG_N_SOURCE_COUNTERS (sizeof(struct rig_source_counters) / sizeof(uint64_t))
#define RIG_TEL_COUNTERS (RIG_N_COUNTERS + RTL_RIG_MAX_SOURCES * RIG_N_SOURCE_COUNTERS)

struct rig_tel {
	struct rtl_stat_field fields[RIG_TEL_COUNTERS];
	char names[RIG_TEL_COUNTERS][48];
	size_t n;
	int age[RTL_RIG_MAX_SOURCES], live[RTL_RIG_MAX_SOURCES];
};

struct rtl_rig {
	struct rtl_rig_config cfg;
	unsigned n;
	struct rig_src src[RTL_RIG_MAX_SOURCES];
	struct rtl_rig_input in[RTL_RIG_MAX_SOURCES];
	int64_t period_ns; /* the step's: the timer's, or the clock source's */
	int64_t started_ns;
	struct rtl_thread *worker;
	bool started, joined;
	bool in_step; /* the worker's: the step runs */
	_Atomic int stop;
	_Atomic uint32_t bell; /* bumped by rtl_rig_stop(): the timer's sleep */
	_Atomic int result;
	_Atomic int ended_by; /* the source whose end ended the rig, or -1 */
	struct rig_counters c;
	struct rtl_hist *hist; /* RTL_RIG_H_COUNT */
	struct rig_tel *tel;   /* with cfg.telemetry */
};

/* The worker's pieces that depend on nothing but their arguments (rig.c),
 * tested on a fake clock (tests/rt/test-rig.c):
 * - rtl__rig_take(): source @s's newest frame @f, its values @finite or
 *   not: copied, its stamp taken; returns the frames before it the step
 *   did not see (0 for the first, or a refused frame, which is counted);
 * - rtl__rig_judge(): source @i at @now, reconnecting (@parked) or its loop
 *   ended (@stopping): an episode opens (counted against it, the policy
 *   applied) or closes;
 * - rtl__rig_fill(): the step's inputs at @now, with each source's
 *   @fresh and @gap of this step;
 * - rtl__rig_over(): whether the sources' ends end the rig. */
uint32_t rtl__rig_take(struct rig_src *s, const struct rtl_loop_frame *f, bool finite);
void rtl__rig_judge(struct rtl_rig *rig, unsigned i, int64_t now, bool parked, bool stopping);
void rtl__rig_fill(struct rtl_rig *rig, int64_t now, const bool *fresh, const uint32_t *gap);
bool rtl__rig_over(struct rtl_rig *rig);

/* rig_report.c: the rig's counters and histograms in cfg.telemetry. */
int rtl__rig_telemetry_add(struct rtl_rig *rig, struct rtl_error *err);
/* The step's signals and the record, after the writes. */
void rtl__rig_telemetry_publish(struct rtl_rig *rig, int64_t now, double ctrl_time);

#endif /* RTLOOP_RIG_PRIVATE_H */
