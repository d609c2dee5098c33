// SPDX-License-Identifier: MIT
/* The external-loop API: the program owns the loop's thread (here, main())
 * instead of handing the loop a step function. The loop's rx thread still
 * receives and decodes every frame into its ring; rtl_loop_read() hands the
 * newest one to this thread, which writes commands into rtl_loop_commands()
 * and sends them with rtl_loop_write() (checked, coalesced, non-blocking, as
 * the loop's worker would). Joint 0 swings on a slow sine, then the loop
 * stops the arm.
 * Usage: external_loop [PORT [SECONDS]] (default 30004, 2 s), against
 * rtde-sim or a robot running rtloop_control.script. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

/* Field handles, resolved once connected (the transport's callback). */
struct handles {
	struct rtl_rtde_handle ts, q, mode, qd0, accel;
};

static void ready(struct rtl_rtde_transport *t, void *user)
{
	struct handles *h = user;

	h->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	h->q = rtl_rtde_transport_output_handle(t, "actual_q");
	h->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	h->qd0 = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
	h->accel = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
}

int main(int argc, char **argv)
{
	uint16_t port = argc > 1 ? (uint16_t)atoi(argv[1]) : 0; /* 0: 30004 */
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	struct handles h = { 0 };
	struct rtl_rtde_transport *rtde;
	struct rtl_rtde_client_config cc = { .size = sizeof(cc),
					     .outputs = "timestamp,actual_q",
					     .inputs = { RTL_RTDE_CMD_RECIPE } };
	struct rtl_rtde_transport_config tc = {
		.size = sizeof(tc),
		.port = port,
		.client = &cc,
		.connected = ready,
		.user = &h,
	};
	/* No .step: this thread runs the loop through rtl_loop_read/write(). */
	struct rtl_loop_config lc = { .size = sizeof(lc), .rt_mode = RTL_LOOP_RT_DEGRADE };
	struct rtl_error err = { 0 };
	struct rtl_loop_counters st = { .size = sizeof(st) };
	struct rtl_loop *loop;
	uint64_t reads = 0, sent = 0;
	double q_first[6] = { 0 }, q_last[6] = { 0 };
	int64_t end;
	int ret;

	if (rtl_rtde_transport_create(&rtde, &tc, &err) < 0)
		return fprintf(stderr, "%s\n", err.msg), 1;
	lc.transport = rtl_rtde_transport_base(rtde);
	if (rtl_loop_create(&loop, &lc, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		rtl_rtde_transport_destroy(rtde);
		return 1;
	}
	/* Connects (the handles are set when this returns) and starts the rx
	 * thread; no worker, since no step function is configured. */
	if (rtl_loop_start(loop, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		rtl_loop_destroy(loop);
		rtl_rtde_transport_destroy(rtde);
		return 1;
	}

	end = rtl_time_now() + (int64_t)(seconds * (double)RTL_NS_PER_SEC);
	while (rtl_time_now() < end) {
		const int64_t wait = 100 * RTL_NS_PER_MS;
		int64_t asked = rtl_time_now();
		const struct rtl_loop_frame *f = rtl_loop_read(loop, wait);
		struct rtl_rtde_frame in, *out;

		if (!f) {
			/* NULL before the time-out: the loop has stopped (the
			 * connection was lost). At the time-out: go on waiting. */
			if (rtl_time_now() - asked < wait)
				break;
			continue;
		}
		/* From here to rtl_loop_write() this thread is "in a step": the
		 * watchdog times it; no allocation, no blocking. */
		in = rtl_rtde_loop_state(f);
		out = rtl_rtde_loop_commands(loop, 0);
		rtl_rtde_frame_get_vec6(&in, h.q, reads == 0 ? q_first : q_last);
		rtl_rtde_frame_set_int(out, h.mode, RTL_RTDE_CMD_SPEEDJ);
		rtl_rtde_frame_set_double(out, h.qd0,
					  0.2 * sin(2.0 * rtl_rtde_frame_get_double(&in, h.ts)));
		rtl_rtde_frame_set_double(out, h.accel, 2.0);
		if (rtl_loop_write(loop) > 0)
			sent++;
		reads++;
	}

	/* The stop at exit: the safe package (mode stop), then wait until the
	 * arm is at rest. rtl_loop_join() returns 0 for a requested stop. */
	rtl_loop_stop(loop);
	ret = rtl_loop_join(loop);
	rtl_loop_stats(loop, &st);
	printf("external_loop: %" PRIu64 " frames read, %" PRIu64 " sent, %" PRIu64
	       " skipped; joint 0 moved %.4f rad; stop %s\n",
	       reads, sent, st.worker_skipped, q_last[0] - q_first[0],
	       st.stop_unconfirmed ? "NOT confirmed" : "confirmed at rest");
	rtl_loop_report(loop, stdout, false);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(rtde);
	if (ret != 0)
		fprintf(stderr, "external_loop: the loop ended early (%d)\n", ret);
	return ret == 0 && reads > 0 ? 0 : 1;
}
