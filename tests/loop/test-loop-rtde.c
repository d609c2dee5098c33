// SPDX-License-Identifier: MIT
/*
 * The whole chain over loopback: rtde-sim's server (in this process, on an
 * ephemeral port) streams at 500 Hz; the loop receives through the RTDE
 * transport, the worker steps, the coalescer sends the command registers
 * back, and the simulated UR5e moves. Each test runs a few seconds at most.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "modes.h"
#include "server.h"

#define OUTPUTS "timestamp,actual_q,actual_qd," RTL_RTDE_CMD_STATUS_OUTPUTS

struct rig {
	struct rtl_sim_server *srv;
	struct rtl_rtde_transport tr;
	struct rtl_loop *loop;
	/* Handles, resolved on connect. */
	struct rtl_rtde_handle ts, q, qd, out_mode;
	struct rtl_rtde_handle mode, seq, wd, p0, acc;
	/* What the step does. */
	double qd0;	/* joint 0 velocity to command */
	bool heartbeat; /* change the heartbeat every step */
	int stall_at;	/* stall the step once at this step number */
	_Atomic int64_t steps;
	uint64_t skipped_sum; /* ctrl_skipped of the frames stepped after the first */
	double first_ts, last_ts;
	double q0_first, q0_last;
	int last_out_mode;
};

static struct rig R;

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct rig *r = user;

	r->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	r->q = rtl_rtde_transport_output_handle(t, "actual_q");
	r->qd = rtl_rtde_transport_output_handle(t, "actual_qd");
	r->out_mode = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_MODE);
	r->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	r->seq = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_SEQ);
	r->wd = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_WATCHDOG_MS);
	r->p0 = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
	r->acc = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
}

static void on_safe(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user)
{
	struct rig *r = user;
	struct rtl_rtde_frame *f = rtl_rtde_coalesce_frame(c, 0);

	rtl_rtde_frame_set_int(f, r->mode, RTL_RTDE_CMD_STOP);
	rtl_rtde_frame_set_double(f, r->acc, 2.0);
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	struct rig *r = user;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(fr);
	struct rtl_rtde_frame *cmd = rtl_rtde_coalesce_frame(rtl_loop_commands(loop), 0);
	int64_t n = atomic_load_explicit(&r->steps, memory_order_relaxed) + 1;
	double q[6];

	atomic_store_explicit(&r->steps, n, memory_order_relaxed);
	rtl_rtde_frame_get_vec6(&st, r->q, q);
	if (n == 1) {
		r->first_ts = rtl_rtde_frame_get_double(&st, r->ts);
		r->q0_first = q[0];
	} else
		r->skipped_sum += fr->ctrl_skipped;
	r->last_ts = rtl_rtde_frame_get_double(&st, r->ts);
	r->q0_last = q[0];
	r->last_out_mode = rtl_rtde_frame_get_int(&st, r->out_mode);
	if (r->stall_at && n == r->stall_at)
		rtl_time_sleep_until(rtl_time_now() + 120 * RTL_NS_PER_MS);
	rtl_rtde_frame_set_int(cmd, r->mode, RTL_RTDE_CMD_SPEEDJ);
	rtl_rtde_frame_set_int(cmd, r->wd, r->heartbeat ? 0 : -1);
	if (r->heartbeat)
		rtl_rtde_frame_set_int(cmd, r->seq, (int32_t)n);
	rtl_rtde_frame_set_double(cmd, r->p0, r->qd0);
	rtl_rtde_frame_set_double(cmd, r->acc, 5.0);
	return 0;
}

/* Step on the rx thread (rtl_loop_config.inline_step): the tests that
 * run in both modes set it. */
static bool rig_inline;

static void rig_start(const struct rtl_sim_faults *faults, int watchdog_periods, int reconnects)
{
	struct rtl_sim_opts so;
	struct rtl_sim_server_opts sv = { 0 };
	struct rtl_rtde_transport_config tc = { 0 };
	struct rtl_loop_config lc = { 0 };
	struct rtl_rt_error err = { 0 };

	memset(&R, 0, sizeof(R));
	rtl_sim_opts_default(&so);
	if (faults)
		so.faults = *faults;
	cr_assert_eq(rtl_sim_server_create(&R.srv, &so, &sv), 0);
	cr_assert_eq(rtl_sim_server_start(R.srv), 0);

	tc.host = "127.0.0.1";
	tc.port = rtl_sim_server_port(R.srv);
	tc.client.outputs = OUTPUTS;
	tc.client.inputs[0] = RTL_RTDE_CMD_RECIPE;
	tc.connected = on_connected;
	tc.safe = on_safe;
	tc.user = &R;
	cr_assert_eq(rtl_rtde_transport_init(&R.tr, &tc, &err), 0, "%s", err.msg);

	lc.transport = rtl_rtde_transport_base(&R.tr);
	lc.step = step;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.rx_cpu = lc.worker_cpu = -1;
	lc.every_frame = true;
	lc.inline_step = rig_inline;
	lc.watchdog_periods = watchdog_periods;
	lc.reconnect_attempts = reconnects;
	lc.reconnect_backoff_ns = 20 * RTL_NS_PER_MS;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(R.loop, &err), 0, "%s", err.msg);
}

/* Run until @steps steps (bounded by 8 s), then stop the loop and the sim. */
static void rig_run(int64_t steps, struct rtl_loop_stats *s, struct rtl_sim_stats *ss)
{
	int64_t end = rtl_time_now() + 8 * RTL_NS_PER_SEC;

	while (atomic_load(&R.steps) < steps && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 5 * RTL_NS_PER_MS);
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	rtl_loop_stats(R.loop, s);
	rtl_sim_server_stop(R.srv);
	rtl_sim_server_join(R.srv);
	rtl_sim_server_stats(R.srv, ss);
}

static void rig_free(void)
{
	rtl_loop_destroy(R.loop);
	rtl_rtde_transport_fini(&R.tr);
	rtl_sim_server_destroy(R.srv);
}

static void skipped_packages_counted_exactly(void)
{
	struct rtl_sim_faults f = { .skip_every = 50 };
	struct rtl_loop_stats s;
	struct rtl_sim_stats ss;
	double cycles;

	rig_start(&f, -1, 0);
	R.heartbeat = true;
	rig_run(1200, &s, &ss);
	/* Every control cycle between the first and the last frame stepped is
	 * a frame stepped or a skip that a stepped frame carried. (A frame the
	 * rx thread took in while the stop was on its way is counted as
	 * received but never stepped, so the identity is the step's view.) */
	cycles = round((R.last_ts - R.first_ts) / 0.002) + 1;
	cr_expect_eq((double)(s.steps + R.skipped_sum), cycles,
		     "steps %llu + skipped %llu vs %g cycles", (unsigned long long)s.steps,
		     (unsigned long long)R.skipped_sum, cycles);
	cr_expect_gt(R.skipped_sum, 0);
	cr_expect_geq(s.ctrl_skipped, R.skipped_sum, "the loop counts what the frames say");
	/* The simulator skipped at most one more at each end of the window. */
	cr_expect_geq(ss.skipped_packages, s.ctrl_skipped);
	cr_expect_leq(ss.skipped_packages, s.ctrl_skipped + 2);
	/* every_frame: no frame skipped or dropped; only the stop leaves
	 * frames unstepped, at most a ring's worth. */
	cr_expect_eq(s.worker_skipped + s.ring_full, 0);
	cr_expect(s.frames >= s.steps && s.frames - s.steps <= 64,
		  "frames %llu, steps %llu: every frame stepped but those in flight at the stop",
		  (unsigned long long)s.frames, (unsigned long long)s.steps);
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, skipped_packages_counted_exactly, rig_inline)

Test(loop_rtde, commands_move_the_robot)
{
	struct rtl_loop_stats s;
	struct rtl_sim_stats ss;
	double moved, expect;

	rig_start(NULL, -1, 0);
	R.heartbeat = true;
	R.qd0 = 0.2;
	rig_run(600, &s, &ss);
	/* 0.2 rad/s reached after 0.04 s at 5 rad/s^2; over the window the
	 * joint moves 0.2 rad/s times the time, less the ramp and the lag. */
	expect = 0.2 * (R.last_ts - R.first_ts);
	moved = R.q0_last - R.q0_first;
	cr_expect(fabs(moved - expect) < 0.02, "joint 0 moved %g rad, expected about %g", moved,
		  expect);
	cr_expect_eq(R.last_out_mode, RTL_RTDE_CMD_SPEEDJ, "the executor runs speedj");
	cr_expect_gt(s.sends, 500, "the heartbeat changes: every step sends");
	rig_free();
}

Test(loop_rtde, unchanged_commands_are_not_sent)
{
	struct rtl_loop_stats s;
	struct rtl_sim_stats ss;

	rig_start(NULL, -1, 0);
	R.heartbeat = false;
	rig_run(300, &s, &ss);
	cr_expect_eq(s.sends, 1, "the first command goes out, then nothing changes");
	cr_expect_eq(s.suppressed + s.sends, s.steps);
	cr_expect_eq(ss.inputs_applied, 1, "the controller received one input package");
	rig_free();
}

static void watchdog_stops_the_robot_when_the_step_stalls(void)
{
	struct rtl_loop_stats s;
	struct rtl_sim_stats ss;

	rig_start(NULL, 10, 0);
	R.heartbeat = true;
	R.qd0 = 0.1;
	R.stall_at = 100;
	rig_run(150, &s, &ss);
	cr_expect_geq(s.watchdog, 1, "a 120 ms stall is more than 10 periods");
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, watchdog_stops_the_robot_when_the_step_stalls,
		    rig_inline)

static void reset_connection_reconnects_disarmed(void)
{
	struct rtl_sim_faults f = { .reset_after = 200 };
	struct rtl_loop_stats s;
	struct rtl_sim_stats ss;

	rig_start(&f, -1, 5);
	R.heartbeat = true;
	rig_run(500, &s, &ss);
	cr_expect_geq(s.reconnects, 1);
	cr_expect_geq(ss.resets, 1);
	cr_expect(!rtl_loop_armed(R.loop), "commands stay off after the reconnect");
	cr_expect_geq(s.frames, 400, "frames flow again after the reconnect");
	rig_free();
}

RTL_TEST_BOTH_MODES(loop_rtde, loop_rtde_inline, reset_connection_reconnects_disarmed, rig_inline)

Test(loop_rtde, refused_connection_names_the_fix)
{
	struct rtl_rtde_transport_config tc = { 0 };
	struct rtl_rtde_transport tr;
	struct rtl_loop_config lc = { 0 };
	struct rtl_loop *loop;
	struct rtl_rt_error err = { 0 };
	uint16_t port;

	/* A port that nothing listens on: a server made and destroyed. */
	cr_assert_eq(rtl_sim_server_create(&R.srv, NULL, &(struct rtl_sim_server_opts){ 0 }), 0);
	port = rtl_sim_server_port(R.srv);
	rtl_sim_server_destroy(R.srv);

	tc.port = port;
	tc.client.outputs = "timestamp";
	cr_assert_eq(rtl_rtde_transport_init(&tr, &tc, &err), 0);
	lc.transport = rtl_rtde_transport_base(&tr);
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.rx_cpu = lc.worker_cpu = -1;
	cr_assert_eq(rtl_loop_create(&loop, &lc, &err), 0);
	cr_expect_eq(rtl_loop_start(loop, &err), -ECONNREFUSED);
	cr_expect(strstr(err.msg, "rtde-sim") != NULL, "message: %s", err.msg);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_fini(&tr);
}

/* ---- steady state: no allocation, no page fault, over 5,000 cycles ---------------------- */

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rtloop/mem.h>

#include "alloc-count.h"

/*
 * The rx thread marks itself for the malloc count from inside the RTDE
 * transport: its ops, copied, with recv() and next() (rx thread only)
 * wrapped. The worker marks itself in step_counting().
 */
static struct rtl_transport_ops counting_ops;
static int (*rtde_recv)(struct rtl_transport *t);
static int (*rtde_next)(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap);
static _Atomic bool hot_seen[2]; /* rx thread, worker */

static void note_hot_thread(int which)
{
	rtl_test_alloc_mark_thread();
	atomic_store(&hot_seen[which], true);
}

static int counting_recv(struct rtl_transport *t)
{
	note_hot_thread(0);
	return rtde_recv(t);
}

static int counting_next(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap)
{
	note_hot_thread(0);
	return rtde_next(t, f, cap);
}

static void count_rx_thread(struct rtl_transport *t)
{
	counting_ops = *t->ops;
	rtde_recv = counting_ops.recv;
	rtde_next = counting_ops.next;
	counting_ops.recv = counting_recv;
	counting_ops.next = counting_next;
	t->ops = &counting_ops;
}

/* The thread of this process named @name: its tid, and minor faults. */
static pid_t find_thread(const char *name, long *minflt)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "", stat[512];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strncmp(comm, name, strlen(name)) == 0)
			found = atoi(e->d_name);
		fclose(f);
		if (!found)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (f && fgets(stat, sizeof(stat), f)) {
			/* Field 10 is minflt; the comm field (2) may hold blanks,
			 * so count from the closing parenthesis. */
			char *p = strrchr(stat, ')');

			if (p)
				sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", minflt);
		}
		if (f)
			fclose(f);
		break;
	}
	if (d)
		closedir(d);
	return found;
}

static _Atomic int64_t worker_faults[2];

static int step_counting(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	int64_t n = atomic_load(&R.steps) + 1;

	if (n == 1)
		note_hot_thread(1);
	if (n == 300)
		atomic_store(&worker_faults[0], rtl_mem_thread_minor_faults());
	if (n == 5300)
		atomic_store(&worker_faults[1], rtl_mem_thread_minor_faults());
	return step(loop, fr, user);
}

Test(loop_rtde_rt, steady_state_allocates_nothing_and_takes_no_fault, .timeout = 60)
{
	struct rtl_sim_opts so;
	struct rtl_sim_server_opts sv = { 0 };
	struct rtl_rtde_transport_config tc = { 0 };
	struct rtl_loop_config lc = { 0 };
	struct rtl_rt_error err = { 0 };
	struct rtl_loop_stats s;
	long rx_faults[2] = { -1, -1 };
	pid_t rx_tid;
	long allocs;
	int64_t end;

	/* Positive control: the counter sees an allocation of a marked thread. */
	cr_assert(rtl_test_alloc_selftest(), "the allocation counter works");
	atomic_store(&hot_seen[0], false);
	atomic_store(&hot_seen[1], false);

	memset(&R, 0, sizeof(R));
	rtl_sim_opts_default(&so);
	cr_assert_eq(rtl_sim_server_create(&R.srv, &so, &sv), 0);
	cr_assert_eq(rtl_sim_server_start(R.srv), 0);
	tc.port = rtl_sim_server_port(R.srv);
	tc.client.outputs = OUTPUTS;
	tc.client.inputs[0] = RTL_RTDE_CMD_RECIPE;
	tc.connected = on_connected;
	tc.safe = on_safe;
	tc.user = &R;
	cr_assert_eq(rtl_rtde_transport_init(&R.tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(&R.tr);
	count_rx_thread(lc.transport);
	lc.step = step_counting;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_DEGRADE; /* mlockall and SCHED_FIFO where permitted */
	lc.rx_cpu = lc.worker_cpu = -1;
	lc.every_frame = true;
	lc.watchdog_periods = -1;
	R.heartbeat = true; /* a package every cycle: the send path runs too */
	R.qd0 = 0.05;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(R.loop, &err), 0, "%s", err.msg);

	end = rtl_time_now() + 30 * RTL_NS_PER_SEC;
	while (atomic_load(&R.steps) < 300 && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	rx_tid = find_thread("rtl-rx", &rx_faults[0]);
	cr_assert(hot_seen[0] && hot_seen[1], "both hot threads marked");
	rtl_test_alloc_start();
	while (atomic_load(&R.steps) < 5300 && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	find_thread("rtl-rx", &rx_faults[1]);
	allocs = rtl_test_alloc_stop();
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	rtl_loop_stats(R.loop, &s);
	rtl_sim_server_stop(R.srv);
	rtl_sim_server_join(R.srv);

	cr_expect_geq(s.steps, 5300, "5,000 cycles after warm-up");
	cr_expect_neq(rx_tid, 0, "found the rx thread");
	cr_expect_eq(allocs, 0, "%ld allocations in the rx thread and worker", allocs);
	cr_expect_eq(rx_faults[1] - rx_faults[0], 0, "rx thread minor faults");
	cr_expect_eq(worker_faults[1] - worker_faults[0], 0, "worker minor faults");
	cr_expect_gt(s.sends, 5000, "commands went out every cycle");
	rig_free();
	rtl_mem_unlock_all();
}
#endif
