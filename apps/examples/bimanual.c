// SPDX-License-Identifier: MIT
/* Two arms in one step (<rtloop/rig.h>): arm A draws a circle by speedl,
 * arm B follows A's TCP motion with the offset the two had at the start,
 * as two hands holding one object. The step runs on A's frames and sees B's
 * newest frame with its age; each arm's commands go out through its own
 * transport, coalesced. If either arm is lost, stale or sends a non-finite
 * value, the rig's policy stops every arm (or, with "one", only that one).
 *
 * Usage: bimanual PORT_A PORT_B [SECONDS [all|one [CSV [TELEMETRY]]]] (defaults: 4 s,
 * all), against two rtde-sims (or two arms running rtloop_control.script;
 * this example assumes both arms' bases in one frame). The CSV gets one row
 * per step: t, A's x y z, B's x y z, the offset error in mm. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rtloop/rig.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#define RADIUS 0.05 /* m */
#define TURN_S 4.0  /* s per turn */
#define GAIN 5.0    /* 1/s: B's position error to velocity */
#define TWO_PI 6.283185307179586

struct arm {
	struct rtl_rtde_handle ts, pose, speed, mode, v[6], accel;
};

struct app {
	struct arm arm[2];
	double offset[3]; /* B - A at the first step */
	bool have_offset;
	double t0;
	double err_max, err_sum;
	uint64_t steps, b_unseen_max;
	FILE *csv;
	/* the rows the step writes into, for main() to print after the run
	 * (the step may not block on a file) */
	double (*rows)[8];
	size_t n_rows, cap_rows;
};

static struct rtl_rig *the_rig;

static void on_signal(int sig)
{
	(void)sig;
	rtl_rig_stop(the_rig);
}

static void ready(struct rtl_rtde_transport *t, void *user)
{
	struct arm *a = user;
	static const char *const v[6] = { RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1,
					  RTL_RTDE_CMD_FIELD_PARAM2, RTL_RTDE_CMD_FIELD_PARAM3,
					  RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5 };

	a->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	a->pose = rtl_rtde_transport_output_handle(t, "actual_TCP_pose");
	a->speed = rtl_rtde_transport_output_handle(t, "actual_TCP_speed");
	a->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	for (int i = 0; i < 6; i++)
		a->v[i] = rtl_rtde_transport_input_handle(t, 0, v[i]);
	a->accel = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
}

static void speedl(struct rtl_rig *rig, unsigned i, const struct arm *a, const double v[3])
{
	struct rtl_rtde_frame *out = rtl_rtde_loop_commands(rtl_rig_loop(rig, i), 0);

	rtl_rtde_frame_set_int(out, a->mode, RTL_RTDE_CMD_SPEEDL);
	for (int k = 0; k < 6; k++)
		rtl_rtde_frame_set_double(out, a->v[k], k < 3 ? v[k] : 0.0);
	rtl_rtde_frame_set_double(out, a->accel, 1.0);
}

/* The step: A's frame clocked it; B's is its newest, with its age. */
static int step(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n, void *user)
{
	struct app *app = user;
	struct rtl_rtde_frame fa, fb;
	double pa[6], pb[6], sa[6], va[3], vb[3], t, err = 0;

	(void)n;
	if (!in[0].frame || !in[1].frame)
		return 0; /* B not heard from yet: nothing is sent */
	fa = rtl_rtde_loop_state(in[0].frame);
	fb = rtl_rtde_loop_state(in[1].frame);
	rtl_rtde_frame_get_vec6(&fa, app->arm[0].pose, pa);
	rtl_rtde_frame_get_vec6(&fa, app->arm[0].speed, sa);
	rtl_rtde_frame_get_vec6(&fb, app->arm[1].pose, pb);
	t = rtl_rtde_frame_get_double(&fa, app->arm[0].ts);
	if (!app->have_offset) {
		for (int k = 0; k < 3; k++)
			app->offset[k] = pb[k] - pa[k];
		app->t0 = t;
		app->have_offset = true;
	}
	t -= app->t0;
	/* A: a circle in the horizontal plane through where it started */
	va[0] = -TWO_PI * RADIUS / TURN_S * sin(TWO_PI * t / TURN_S);
	va[1] = TWO_PI * RADIUS / TURN_S * cos(TWO_PI * t / TURN_S);
	va[2] = 0;
	/* B: A's measured velocity, plus the error to A's pose + the offset */
	for (int k = 0; k < 3; k++) {
		double e = pa[k] + app->offset[k] - pb[k];

		vb[k] = sa[k] + GAIN * e;
		err += e * e;
	}
	err = sqrt(err);
	/* a lost arm's commands are not the step's to write (a reconnect
	 * may hold its transport) */
	if (!in[0].lost)
		speedl(rig, 0, &app->arm[0], va);
	if (!in[1].lost)
		speedl(rig, 1, &app->arm[1], vb);
	if (in[0].live && in[1].live) {
		if (err > app->err_max)
			app->err_max = err;
		app->err_sum += err;
		app->steps++;
	}
	if (in[1].unseen > app->b_unseen_max)
		app->b_unseen_max = in[1].unseen;
	if (app->n_rows < app->cap_rows) {
		double *r = app->rows[app->n_rows++];

		r[0] = t;
		memcpy(r + 1, pa, 3 * sizeof(double));
		memcpy(r + 4, pb, 3 * sizeof(double));
		r[7] = err * 1e3;
	}
	return 0;
}

static struct rtl_rtde_transport *arm_transport(uint16_t port, struct arm *a, struct rtl_error *err)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc),
					     .outputs =
						     "timestamp,actual_TCP_pose,actual_TCP_speed",
					     .inputs = { RTL_RTDE_CMD_RECIPE } };
	struct rtl_rtde_transport_config tc = {
		.size = sizeof(tc), .port = port, .client = &cc, .connected = ready, .user = a
	};
	struct rtl_rtde_transport *t;

	return rtl_rtde_transport_create(&t, &tc, err) < 0 ? NULL : t;
}

int main(int argc, char **argv)
{
	struct app app = { 0 };
	struct rtl_rtde_transport *ta, *tb;
	struct rtl_rig_source src[2] = { { .name = "A" }, { .name = "B" } };
	struct rtl_rig_config rc = { .size = sizeof(rc),
				     .sources = src,
				     .n_sources = 2,
				     .clock = 0,
				     .step = step,
				     .user = &app,
				     .rt_mode = RTL_LOOP_RT_DEGRADE };
	struct rtl_rig_source_counters sc[2] = { { .size = sizeof(sc[0]) },
						 { .size = sizeof(sc[1]) } };
	struct rtl_error err = { 0 };
	double seconds = argc > 3 ? atof(argv[3]) : 4.0;
	int64_t end;
	int ret;

	if (argc < 3) {
		fprintf(stderr,
			"usage: bimanual PORT_A PORT_B [SECONDS [all|one [CSV [TELEMETRY]]]]\n");
		return 2;
	}
	rc.policy = argc > 4 && !strcmp(argv[4], "one") ? RTL_RIG_STOP_SOURCE : RTL_RIG_STOP_ALL;
	app.cap_rows = (size_t)(seconds * 600) + 1000;
	app.rows = calloc(app.cap_rows, sizeof(*app.rows));
	ta = arm_transport((uint16_t)atoi(argv[1]), &app.arm[0], &err);
	tb = ta ? arm_transport((uint16_t)atoi(argv[2]), &app.arm[1], &err) : NULL;
	if (!app.rows || !ta || !tb)
		return fprintf(stderr, "bimanual: %s\n", err.msg), 1;
	src[0].transport = rtl_rtde_transport_base(ta);
	src[1].transport = rtl_rtde_transport_base(tb);
	/* an arm silent for 50 ms is a fault (the default, 3 of its periods
	 * and one step, suits a dedicated real-time PC; this example also
	 * runs on a busy laptop against simulators) */
	src[0].stale_ns = src[1].stale_ns = 50 * RTL_NS_PER_MS;
	if (argc > 6) {
		/* the rig live in rtloop-view TELEMETRY (docs/rig.md) */
		struct rtl_telemetry_config tlc = {
			.size = sizeof(tlc), .name = argv[6], .label = "bimanual", .replace = true
		};

		if (rtl_telemetry_create(&rc.telemetry, &tlc, &err) < 0)
			return fprintf(stderr, "bimanual: %s\n", err.msg), 1;
	}
	if (rtl_rig_create(&the_rig, &rc, &err) < 0 || rtl_rig_start(the_rig, &err) < 0) {
		fprintf(stderr, "bimanual: %s\n", err.msg);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	end = rtl_time_now() + (int64_t)(seconds * 1e9);
	while (rtl_time_now() < end && !rtl_rig_stopping(the_rig))
		rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	rtl_rig_stop(the_rig);
	ret = rtl_rig_join(the_rig);
	for (unsigned i = 0; i < 2; i++)
		rtl_rig_source_stats(the_rig, i, &sc[i]);
	printf("bimanual: %" PRIu64 " steps with both arms live; B followed A at %.2f mm "
	       "mean, %.2f mm max from the offset; B's frames unseen per step at most %" PRIu64
	       "\n",
	       app.steps, app.steps ? app.err_sum / (double)app.steps * 1e3 : 0.0,
	       app.err_max * 1e3, app.b_unseen_max);
	for (unsigned i = 0; i < 2; i++)
		printf("bimanual: arm %s: %" PRIu64 " frames taken, faults caused %" PRIu64
		       " (lost %" PRIu64 ", stale %" PRIu64 ", non-finite %" PRIu64
		       "), stopped by the policy %" PRIu64 "\n",
		       rtl_rig_source_name(the_rig, i), sc[i].taken, sc[i].caused, sc[i].lost,
		       sc[i].stale, sc[i].nonfinite, sc[i].stopped);
	rtl_rig_report(the_rig, stdout, false);
	if (argc > 5) {
		FILE *f = fopen(argv[5], "w");

		if (f) {
			fprintf(f, "t,ax,ay,az,bx,by,bz,err_mm\n");
			for (size_t k = 0; k < app.n_rows; k++)
				fprintf(f, "%.4f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.3f\n",
					app.rows[k][0], app.rows[k][1], app.rows[k][2],
					app.rows[k][3], app.rows[k][4], app.rows[k][5],
					app.rows[k][6], app.rows[k][7]);
			fclose(f);
		}
	}
	rtl_rig_destroy(the_rig);
	rtl_telemetry_destroy(rc.telemetry);
	rtl_rtde_transport_destroy(ta);
	rtl_rtde_transport_destroy(tb);
	free(app.rows);
	if (ret != 0)
		printf("bimanual: the rig ended early: %s\n", strerror(-ret));
	return ret == 0 && app.steps > 0 ? 0 : 3;
}
