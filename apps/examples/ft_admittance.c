// SPDX-License-Identifier: MIT
/* An arm and an external force/torque sensor in one step (<rtloop/rig.h>):
 * an admittance loop that presses the tool down onto a surface with a set
 * force, the force read by a Net F/T sensor on the flange over RDT
 * (<rtloop/rdt_transport.h>) instead of the arm's own estimate (a CB3 has
 * none). The step runs on the arm's frames (500 Hz) and takes the sensor's
 * newest record (up to 7 kHz: the ones in between are counted as unseen).
 * The sensor is tared at the first step (its software bias), in free air.
 * The sensor reads the wrench in the tool frame; the TCP pose turns it into
 * the base frame. A lost or stale sensor stops the arm (the rig's policy).
 *
 * Usage: ft_admittance ARM_PORT SENSOR_PORT [SECONDS [FORCE_N [CSV]]]
 * (defaults: 4 s, 10 N), against rtde-sim --contact-z Z --ft-port N, or an
 * arm running rtloop_control.script and a Net F/T at its address (edit
 * HOST). The CSV gets one row per step: t, z, the press in N. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rtloop/rdt_transport.h>
#include <rtloop/rig.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#define HOST "127.0.0.1"
#define GAIN 0.004     /* m/s per N of force error */
#define MAX_SPEED 0.05 /* m/s */

struct app {
	struct rtl_rtde_handle ts, pose, mode, v[6], accel;
	struct rtl_rdt_cmd *ft_cmd;
	double force; /* the press to hold, N */
	bool tared;
	double t0, press, z;
	uint64_t steps, sensor_unseen;
	double (*rows)[3];
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
	struct app *a = user;
	static const char *const v[6] = { RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1,
					  RTL_RTDE_CMD_FIELD_PARAM2, RTL_RTDE_CMD_FIELD_PARAM3,
					  RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5 };

	a->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	a->pose = rtl_rtde_transport_output_handle(t, "actual_TCP_pose");
	a->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	for (int i = 0; i < 6; i++)
		a->v[i] = rtl_rtde_transport_input_handle(t, 0, v[i]);
	a->accel = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
}

/* @w (tool frame) into the base frame of a TCP whose rotation vector is
 * @r (Rodrigues' formula). */
static void tool_to_base(const double r[3], const double w[3], double out[3])
{
	double th = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]), k[3], c, s, kw, kxw[3];

	if (th < 1e-12) {
		memcpy(out, w, 3 * sizeof(double));
		return;
	}
	for (int i = 0; i < 3; i++)
		k[i] = r[i] / th;
	c = cos(th);
	s = sin(th);
	kw = k[0] * w[0] + k[1] * w[1] + k[2] * w[2];
	kxw[0] = k[1] * w[2] - k[2] * w[1];
	kxw[1] = k[2] * w[0] - k[0] * w[2];
	kxw[2] = k[0] * w[1] - k[1] * w[0];
	for (int i = 0; i < 3; i++)
		out[i] = w[i] * c + kxw[i] * s + k[i] * kw * (1 - c);
}

static int step(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n, void *user)
{
	struct app *app = user;
	struct rtl_rtde_frame fa, *out;
	const struct rtl_rdt_frame *ft;
	double pose[6], f_base[3], vz;

	(void)n;
	if (!in[0].frame || !in[1].frame)
		return 0;
	fa = rtl_rtde_loop_state(in[0].frame);
	ft = rtl_rdt_loop_frame(in[1].frame);
	rtl_rtde_frame_get_vec6(&fa, app->pose, pose);
	if (!app->tared) {
		/* free air: tare the sensor (its software bias), wait a moment */
		app->ft_cmd->bias++;
		app->tared = true;
		app->t0 = rtl_rtde_frame_get_double(&fa, app->ts);
	}
	tool_to_base(pose + 3, ft->wrench, f_base);
	/* what the tool exerts, in the base frame: pressing down is -z */
	app->press = -f_base[2];
	app->z = pose[2];
	vz = -GAIN * (app->force - app->press);
	if (rtl_rtde_frame_get_double(&fa, app->ts) - app->t0 < 0.1)
		vz = 0; /* the bias request's round trip */
	vz = vz > MAX_SPEED ? MAX_SPEED : vz < -MAX_SPEED ? -MAX_SPEED : vz;
	if (in[0].lost)
		return 0; /* a reconnect may hold the arm's transport */
	out = rtl_rtde_loop_commands(rtl_rig_loop(rig, 0), 0);
	rtl_rtde_frame_set_int(out, app->mode, RTL_RTDE_CMD_SPEEDL);
	for (int k = 0; k < 6; k++)
		rtl_rtde_frame_set_double(out, app->v[k], k == 2 ? vz : 0.0);
	rtl_rtde_frame_set_double(out, app->accel, 1.0);
	app->steps++;
	app->sensor_unseen += in[1].unseen;
	if (app->n_rows < app->cap_rows) {
		double *r = app->rows[app->n_rows++];

		r[0] = rtl_rtde_frame_get_double(&fa, app->ts) - app->t0;
		r[1] = pose[2];
		r[2] = app->press;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct app app = { 0 };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc),
					     .outputs = "timestamp,actual_TCP_pose",
					     .inputs = { RTL_RTDE_CMD_RECIPE } };
	struct rtl_rtde_transport_config tc = {
		.size = sizeof(tc), .client = &cc, .connected = ready, .user = &app
	};
	struct rtl_rdt_transport_config fc = { .size = sizeof(fc), .host = HOST };
	struct rtl_rtde_transport *arm;
	struct rtl_rdt_transport *sensor;
	struct rtl_rig_source src[2] = { { .name = "arm" }, { .name = "ft", .sensor = true } };
	struct rtl_rig_config rc = { .size = sizeof(rc),
				     .sources = src,
				     .n_sources = 2,
				     .clock = 0,
				     .step = step,
				     .user = &app,
				     .rt_mode = RTL_LOOP_RT_DEGRADE };
	struct rtl_rdt_transport_counters fs = { .size = sizeof(fs) };
	struct rtl_error err = { 0 };
	double seconds = argc > 3 ? atof(argv[3]) : 4.0;
	int64_t end;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: ft_admittance ARM_PORT SENSOR_PORT [SECONDS [FORCE_N "
				"[CSV]]]\n");
		return 2;
	}
	app.force = argc > 4 ? atof(argv[4]) : 10.0;
	app.cap_rows = (size_t)(seconds * 600) + 1000;
	app.rows = calloc(app.cap_rows, sizeof(*app.rows));
	tc.port = (uint16_t)atoi(argv[1]);
	fc.port = (uint16_t)atoi(argv[2]);
	if (!app.rows || rtl_rtde_transport_create(&arm, &tc, &err) < 0)
		return fprintf(stderr, "ft_admittance: %s\n", err.msg), 1;
	if (rtl_rdt_transport_create(&sensor, &fc, &err) < 0)
		return fprintf(stderr, "ft_admittance: %s\n", err.msg), 1;
	app.ft_cmd = rtl_rdt_transport_command(sensor);
	src[0].transport = rtl_rtde_transport_base(arm);
	src[1].transport = rtl_rdt_transport_base(sensor);
	/* the sensor silent for 20 ms is a fault: the arm stops (the default,
	 * 3 of its periods and one step, 2.4 ms at 7 kHz, suits a dedicated
	 * real-time PC and a sensor on its own link) */
	src[1].stale_ns = 20 * RTL_NS_PER_MS;
	if (rtl_rig_create(&the_rig, &rc, &err) < 0 || rtl_rig_start(the_rig, &err) < 0) {
		fprintf(stderr, "ft_admittance: %s\n", err.msg);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	end = rtl_time_now() + (int64_t)(seconds * 1e9);
	while (rtl_time_now() < end && !rtl_rig_stopping(the_rig))
		rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	rtl_rig_stop(the_rig);
	ret = rtl_rig_join(the_rig);
	rtl_rdt_transport_stats(sensor, &fs);
	printf("ft_admittance: %" PRIu64 " steps; the sensor read %.2f N at the end (asked "
	       "%.2f N), the TCP at z = %.4f m; sensor records %" PRIu64 " (%" PRIu64
	       " unseen by the step), lost %" PRIu64 ", late %" PRIu64 ", duplicate %" PRIu64
	       ", restarts %" PRIu64 "\n",
	       app.steps, app.press, app.force, app.z, fs.records, app.sensor_unseen, fs.lost,
	       fs.late, fs.duplicate, fs.restarts);
	rtl_rig_report(the_rig, stdout, false);
	if (argc > 5) {
		FILE *f = fopen(argv[5], "w");

		if (f) {
			fprintf(f, "t,z,press_n\n");
			for (size_t k = 0; k < app.n_rows; k++)
				fprintf(f, "%.4f,%.5f,%.3f\n", app.rows[k][0], app.rows[k][1],
					app.rows[k][2]);
			fclose(f);
		}
	}
	rtl_rig_destroy(the_rig);
	rtl_rtde_transport_destroy(arm);
	rtl_rdt_transport_destroy(sensor);
	free(app.rows);
	if (ret != 0)
		printf("ft_admittance: the rig ended early (%d)\n", ret);
	return ret == 0 && app.steps > 0 ? 0 : 3;
}
