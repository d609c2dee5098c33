// SPDX-License-Identifier: MIT
/*
 * A short traced run of the real chain: rtde-sim in this process on an
 * ephemeral port, the loop with the RTDE transport stepping every frame and
 * echoing each timestamp (so every step sends). Recorded by
 * test-trace-loop.sh with rtloop-trace, which checks the events.
 * Usage: loop-traced FRAMES
 */
#include <stdio.h>
#include <stdlib.h>

#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "server.h"

static struct rtl_rtde_handle ts, echo;
static _Atomic long steps;

static void connected(struct rtl_rtde_transport *t, void *user)
{
	ts = rtl_rtde_transport_output_handle(t, "timestamp");
	echo = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ECHO);
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct rtl_rtde_frame st = rtl_rtde_loop_state(f);
	struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, 0);

	rtl_rtde_frame_set_double(cmd, echo, rtl_rtde_frame_get_double(&st, ts));
	atomic_fetch_add(&steps, 1);
	return 0;
}

int main(int argc, char **argv)
{
	long frames = argc > 1 ? atol(argv[1]) : 200;
	struct sim_server *srv;
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	struct rtl_error err = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	int64_t end;

	sim_opts_default(&so);
	if (sim_server_create(&srv, &so, &sv) < 0 || sim_server_start(srv) < 0) {
		fprintf(stderr, "loop-traced: cannot start the simulator\n");
		return 1;
	}
	tc.port = sim_server_port(srv);
	cc.outputs = "timestamp";
	cc.inputs[0] = RTL_RTDE_CMD_ECHO_RECIPE;
	tc.connected = connected;
	if (rtl_rtde_transport_create(&tr, &tc, &err) < 0)
		goto fail;
	lc.transport = rtl_rtde_transport_base(tr);
	lc.step = step;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.rx_cpu = lc.worker_cpu = -1;
	lc.every_frame = true;
	lc.watchdog_periods = -1;
	if (rtl_loop_create(&loop, &lc, &err) < 0 || rtl_loop_start(loop, &err) < 0)
		goto fail;
	end = rtl_time_now() + 10 * RTL_NS_PER_SEC;
	while (atomic_load(&steps) < frames && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 2 * RTL_NS_PER_MS);
	rtl_loop_stop(loop);
	rtl_loop_join(loop);
	rtl_loop_stats(loop, &s);
	printf("frames %llu steps %llu sends %llu\n", (unsigned long long)s.frames,
	       (unsigned long long)s.steps, (unsigned long long)s.sends);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(tr);
	sim_server_stop(srv);
	sim_server_join(srv);
	sim_server_destroy(srv);
	return s.steps >= (unsigned long long)frames ? 0 : 1;
fail:
	fprintf(stderr, "loop-traced: %s\n", err.msg);
	return 1;
}
