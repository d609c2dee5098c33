// SPDX-License-Identifier: MIT
/* The README's example: a 500 Hz loop that moves joint 0 back and forth for
 * five seconds, then stops it. Usage: minimal [PORT] (default 30004). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>

static struct rtl_rtde_handle ts, mode, qd0;

static void ready(struct rtl_rtde_transport *t, void *user) /* once connected */
{
	(void)user; /* the handles are globals here */
	ts = rtl_rtde_transport_output_handle(t, "timestamp");
	mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	qd0 = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct rtl_rtde_frame in = rtl_rtde_loop_state(f);
	struct rtl_rtde_frame *out = rtl_rtde_loop_commands(loop, 0);

	(void)user;
	rtl_rtde_frame_set_int(out, mode, RTL_RTDE_CMD_SPEEDJ);
	rtl_rtde_frame_set_double(out, qd0, 0.2 * sin(rtl_rtde_frame_get_double(&in, ts)));
	return f->seq < 2500 ? 0 : -ECANCELED; /* five seconds; the loop then stops the arm */
}

int main(int argc, char **argv)
{
	struct rtl_rtde_transport *rtde;
	/* The step reads the timestamp alone and writes the command recipe. */
	struct rtl_rtde_client_config cc = { .size = sizeof(cc),
					     .outputs = "timestamp",
					     .inputs = { RTL_RTDE_CMD_RECIPE } };
	struct rtl_rtde_transport_config tc = {
		.size = sizeof(tc),
		.port = argc > 1 ? (uint16_t)atoi(argv[1]) : 0,
		.client = &cc,
		.connected = ready,
	};
	struct rtl_loop_config lc = { .size = sizeof(lc),
				      .step = step,
				      .rt_mode = RTL_LOOP_RT_DEGRADE };
	struct rtl_error err = { 0 };
	struct rtl_loop *loop;
	int ret;

	if (rtl_rtde_transport_create(&rtde, &tc, &err) < 0)
		return fprintf(stderr, "%s\n", err.msg), 1;
	lc.transport = rtl_rtde_transport_base(rtde);
	if (rtl_loop_create(&loop, &lc, &err) < 0)
		return fprintf(stderr, "%s\n", err.msg), 1;
	ret = rtl_loop_run(loop, &err);
	if (ret != -ECANCELED)
		fprintf(stderr, "loop ended early: %s\n", err.msg[0] ? err.msg : "see the report");
	rtl_loop_report(loop, stdout, false);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(rtde);
	return ret == -ECANCELED ? 0 : 1;
}
