// SPDX-License-Identifier: MIT
/*
 * rtloop-circle: trace a horizontal circle with the TCP through the motion
 * API (speedl streaming with Doosan's speedl_rt semantics), at 1 kHz over
 * rtloop's UDP stream or at 500 Hz over RTDE, and report how far the
 * measured TCP strayed from the ideal circle.
 *
 * The controller, per period: the ideal point moves along the circle (its
 * angular speed eased in over 0.3 s); the commanded TCP velocity is the
 * circle's tangential velocity plus 10/s times the position error (x, y
 * toward the ideal point, z toward the circle's plane); rtl_motion_speedl()
 * takes it with a horizon of one period, rtl_motion_loop_step() produces
 * the setpoint (and reports the motion events to the loop's counters), and
 * the backend (<rtloop/motion_backend.h>) turns it into a UDP command
 * datagram or the RTDE command registers. The error is the
 * distance of each measured TCP position from the circle (radial and
 * vertical), so a phase lag along the circle does not count.
 *
 * main() reads: parse, validate, allocate (the loop locks memory and sets
 * priorities, degrading with a note where not permitted), run, report.
 * docs/rtloop-circle.md is the manual.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if RTL_CIRCLE_DRFL
#include <rtloop/drfl_real.h>
#endif
#include <rtloop/drfl_transport.h>
#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/motion.h>
#include <rtloop/motion_backend.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>
#include <rtloop/udp_transport.h>

#include "cli.h"
#include "upload.h"

#define PROG "rtloop-circle"
#define GAIN 10.0  /* position feedback [1/s] */
#define EASE_S 0.3 /* angular speed ramp */
#define SETTLE_S 0.05

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* RTDE's outputs, and what --telemetry adds: the robot's state. */
#define CIRCLE_OUTPUTS "timestamp,actual_TCP_pose,actual_TCP_speed,actual_q,actual_qd"
#define TEL_RTDE_STATE "robot_mode,safety_mode,runtime_state"
/* The UDP stream's state that --telemetry publishes (DRFL's is the same). */
#define TEL_UDP_STATE "actual_tcp_position,actual_tcp_velocity,robot_state,robot_mode"

enum transport { T_UDP, T_RTDE, T_DRFL, T_COUNT };
/* --transport's names, and the JSON report's, in enum transport's order. */
static const char *const transport_names[T_COUNT] = { "udp", "rtde", "drfl" };

struct opts {
	enum transport transport;
	const char *host;
	unsigned port; /* 0: the transport's default */
	double radius, period_s, duration_s;
	bool json;
	bool report;	       /* also the loop's report (rtl_loop_report()) */
	const char *telemetry; /* --telemetry NAME, or NULL */
	struct cli_upload up;  /* --upload ... (RTDE) */
};

struct app {
	struct opts o;
	bool udp; /* the UDP stream's state and commands: UDP and DRFL */
	struct rtl_udp_transport *udp_tr;
	struct rtl_drfl_transport *drfl_tr;
	struct rtl_drfl_api drfl_api;
	struct rtl_rtde_transport *rtde_tr;
	struct rtl_motion_rtde rtde_b;
	struct rtl_rtde_handle h_ts, h_pose, h_speed, h_q, h_qd;
	struct rtl_motion *motion;	      /* made once the period is known */
	struct rtl_telemetry *tel;	      /* --telemetry, or NULL */
	int tel_target, tel_error, tel_twist; /* its signals the step sets */
	int64_t period_ns;
	_Atomic bool motion_ready;
	_Atomic bool finishing;
	/* The circle. */
	bool started;
	int64_t t0_ns;
	double center[3];
	double err_sq, err_max;
	uint64_t err_n;
	int backend_errors;
	uint64_t nonfinite_state; /* frames whose TCP was NaN or infinite: not stepped */
};

static struct rtl_loop *the_loop;

static void on_signal(int sig)
{
	(void)sig;
	if (the_loop)
		rtl_loop_stop(the_loop);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [options]\n"
		"\n"
		"Trace a horizontal circle with speedl streaming (the motion API) against a\n"
		"controller or rtde-sim, and print the tracking error.\n"
		"\n"
		"  -t, --transport udp|rtde|drfl  1 kHz UDP stream (rtde-sim --udp), 500 Hz\n"
		"                            RTDE (rtde-sim), or a Doosan robot through its\n"
		"                            DRFL library at 1 kHz; default udp\n"
		"  -H, --host ADDR           controller address (default 127.0.0.1)\n"
		"  -p, --port N              port (default 12347 for udp and drfl, 30004 for\n"
		"                            rtde)\n"
		"  -r, --radius M            circle radius in m (default 0.05; 0.001..0.3)\n"
		"  -T, --period-s S          time for one turn in s (default 2; 0.2..60)\n"
		"  -d, --duration S          how long to circle in s (default 4; 0.1..3600)\n"
		"  -j, --json                print the result as one JSON object\n"
		"  -R, --report              also print the loop's report (counters, histograms,\n"
		"                            the stop at exit)\n"
		"%s"
		"  -h, --help                print this help and exit\n"
		"  -V, --version             print the version and exit\n"
		"%s"
		"\n"
		"Exit status: 0 done, 1 could not run, 2 usage error.\n",
		CLI_TELEMETRY_HELP, cli_upload_help);
}

enum { OPT_TELEMETRY = 256, OPT_UPLOAD /* .. + CLI_UPLOAD_N */ };

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct cli_opt opts[] = {
		CLI_CHOICE('t', "transport", &o->transport, transport_names, T_COUNT, NULL),
		CLI_TEXT('H', "host", &o->host),
		CLI_UINT('p', "port", &o->port, 1, 65535, NULL),
		CLI_REAL('r', "radius", &o->radius, 0.001, 0.3, NULL),
		CLI_REAL('T', "period-s", &o->period_s, 0.2, 60, NULL),
		CLI_REAL('d', "duration", &o->duration_s, 0.1, 3600, NULL),
		CLI_FLAG('j', "json", &o->json),
		CLI_FLAG('R', "report", &o->report),
		CLI_TEXT(OPT_TELEMETRY, "telemetry", &o->telemetry),
		CLI_HELP,
		CLI_VERSION,
		CLI_UPLOAD_ROWS(OPT_UPLOAD, &o->up),
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };

	/* Every row stores its own value: none comes back. */
	if (cli_next(&p, argc, argv) < 0)
		return p.status;
	if (cli_upload_check(PROG, &o->up, false))
		return CLI_EXIT_USAGE;
	if ((o->up.enabled || o->up.reconnect) && o->transport != T_RTDE)
		return cli_usage_error(PROG, "--upload and --reconnect are RTDE options: "
					     "add --transport rtde");
	return cli_extra_args(PROG, optind, argc, argv) ? CLI_EXIT_USAGE : CLI_RUN;
}

static const char *transport_name(enum transport t)
{
	return transport_names[t];
}

/* ---- the controller (worker thread) ------------------------------------------------------ */

/* The measured TCP (m; orientation as the transport reports it) and the
 * controller's time of frame @f. */
static int64_t read_state(struct app *a, const struct rtl_loop_frame *f, struct rtl_motion_state *m)
{
	if (a->udp) {
		const struct rtl_udp_state *s = &rtl_udp_loop_frame(f)->rt;

		rtl_motion_from_udp(m, s);
		return llround(s->time_stamp * 1e9);
	} else {
		struct rtl_rtde_frame fr = rtl_rtde_loop_state(f);

		rtl_rtde_frame_get_vec6(&fr, a->h_pose, m->tcp_pos);
		rtl_rtde_frame_get_vec6(&fr, a->h_speed, m->tcp_vel);
		rtl_rtde_frame_get_vec6(&fr, a->h_q, m->joint_pos);
		rtl_rtde_frame_get_vec6(&fr, a->h_qd, m->joint_vel);
		return llround(rtl_rtde_frame_get_double(&fr, a->h_ts) * 1e9);
	}
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct app *a = user;
	struct rtl_motion_state m;
	struct rtl_motion_output out;
	double vel[6] = { 0 }, acc[6], t, w, th, ideal[2], r = a->o.radius;
	double omega = 2 * M_PI / a->o.period_s, horizon = (double)a->period_ns * 1e-9;
	int64_t now = read_state(a, f, &m);
	int ret;

	/* acquire: pairs with main()'s release after the motion set-up. */
	if (!atomic_load_explicit(&a->motion_ready, memory_order_acquire))
		return 0;
	/* A non-finite measurement must not become an "RMS nan": counted,
	 * not stepped, and the run fails (the UDP transport already drops
	 * such states; the RTDE path is checked here). */
	for (int i = 0; i < 3; i++) {
		if (!isfinite(m.tcp_pos[i])) {
			a->nonfinite_state++;
			return 0;
		}
	}
	if (!a->started) {
		a->started = true;
		a->t0_ns = now;
		a->center[0] = m.tcp_pos[0] - r;
		a->center[1] = m.tcp_pos[1];
		a->center[2] = m.tcp_pos[2];
	}
	t = (double)(now - a->t0_ns) * 1e-9;
	if (atomic_load_explicit(&a->finishing, memory_order_relaxed)) {
		rtl_motion_stop(a->motion, now, RTL_MOTION_ACC_AUTO);
	} else {
		w = omega * fmin(1.0, t / EASE_S);
		th = t < EASE_S ? omega * t * t / (2 * EASE_S) : omega * (t - EASE_S / 2);
		ideal[0] = a->center[0] + r * cos(th);
		ideal[1] = a->center[1] + r * sin(th);
		vel[0] = -r * w * sin(th) + GAIN * (ideal[0] - m.tcp_pos[0]);
		vel[1] = r * w * cos(th) + GAIN * (ideal[1] - m.tcp_pos[1]);
		vel[2] = GAIN * (a->center[2] - m.tcp_pos[2]);
		for (int i = 0; i < 6; i++)
			acc[i] = RTL_MOTION_ACC_AUTO;
		rtl_motion_speedl(a->motion, now, vel, acc, horizon);
		if (t > SETTLE_S) {
			double dx = m.tcp_pos[0] - a->center[0], dy = m.tcp_pos[1] - a->center[1];
			double e = hypot(hypot(dx, dy) - r, m.tcp_pos[2] - a->center[2]);

			a->err_sq += e * e;
			a->err_max = fmax(a->err_max, e);
			a->err_n++;
			rtl_telemetry_set(a->tel, a->tel_error, 0, e * 1e3);
		}
		/* The telemetry (NULL: none) publishes them after the send. */
		rtl_telemetry_set(a->tel, a->tel_target, 0, ideal[0]);
		rtl_telemetry_set(a->tel, a->tel_target, 1, ideal[1]);
		rtl_telemetry_set(a->tel, a->tel_target, 2, a->center[2]);
		rtl_telemetry_set_vec(a->tel, a->tel_twist, vel, 6);
	}
	/* Also counts and traces the motion events in the loop. */
	rtl_motion_loop_step(a->motion, &out, loop, now, &m);
	if (a->udp)
		ret = rtl_motion_to_udp(rtl_loop_commands(loop), &out, horizon);
	else
		ret = rtl_motion_rtde_encode(&a->rtde_b, rtl_rtde_loop_commands(loop, 0), &out);
	if (ret < 0)
		a->backend_errors++;
	return 0;
}

/* ---- telemetry (--telemetry) ------------------------------------------------------------- */

/* The transport's counters and state as it names them, then the step's own
 * signals. Set-up time, before the loop is created. */
static int add_telemetry(struct app *a, struct rtl_error *err)
{
	int ret;

	if (a->o.transport == T_UDP)
		ret = rtl_udp_transport_telemetry(a->udp_tr, a->tel, TEL_UDP_STATE, true, err);
	else if (a->o.transport == T_DRFL)
		ret = rtl_drfl_transport_telemetry(a->drfl_tr, a->tel, TEL_UDP_STATE, true, err);
	else
		ret = rtl_rtde_transport_telemetry(
			a->rtde_tr, a->tel, "actual_TCP_pose,actual_TCP_speed," TEL_RTDE_STATE,
			NULL, err);
	if (ret < 0)
		return ret;
	a->tel_target = rtl_telemetry_signal(a->tel, "circle_target", 3, "m", err);
	if (a->tel_target < 0)
		return a->tel_target;
	a->tel_error = rtl_telemetry_signal(a->tel, "tracking_error", 1, "mm", err);
	if (a->tel_error < 0)
		return a->tel_error;
	a->tel_twist = rtl_telemetry_signal(a->tel, "speedl", 6, "m/s, rad/s", err);
	return a->tel_twist < 0 ? a->tel_twist : 0;
}

/* ---- RTDE set-up -------------------------------------------------------------------------- */

static void rtde_connected(struct rtl_rtde_transport *t, void *user)
{
	struct app *a = user;
	struct rtl_rtde_client *c = rtl_rtde_transport_client(t);

	a->h_ts = rtl_rtde_transport_output_handle(t, "timestamp");
	a->h_pose = rtl_rtde_transport_output_handle(t, "actual_TCP_pose");
	a->h_speed = rtl_rtde_transport_output_handle(t, "actual_TCP_speed");
	a->h_q = rtl_rtde_transport_output_handle(t, "actual_q");
	a->h_qd = rtl_rtde_transport_output_handle(t, "actual_qd");
	a->period_ns = rtl_rtde_client_info(c)->period_ns;
	rtl_motion_rtde_init(&a->rtde_b, rtl_rtde_client_input_recipe(c, 0), a->period_ns);
}

static void rtde_safe(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user)
{
	struct app *a = user;
	struct rtl_rtde_frame *f = rtl_rtde_coalesce_frame(c, 0);

	(void)t;
	rtl_rtde_frame_set_int(f, a->rtde_b.h.mode, RTL_RTDE_CMD_STOP);
}

/* ---- main ---------------------------------------------------------------------------------- */

/* ,"KEY":{...}: every counter of snapshot @snap by its C name, from the
 * transport's table, so a counter added there shows here too. */
static void json_counters(const char *key, const void *snap,
			  const struct rtl_stat_field *(*fields)(size_t *n))
{
	size_t n;
	const struct rtl_stat_field *f = fields(&n);

	printf(",\"%s\":{", key);
	for (size_t i = 0; i < n; i++)
		printf("%s\"%s\":%llu", i ? "," : "", f[i].name,
		       (unsigned long long)rtl_stat_value(snap, &f[i]));
	printf("}");
}

int main(int argc, char **argv)
{
	static struct app a;
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_motion_config mc;
	struct rtl_loop_counters st = { .size = sizeof(st) };
	struct rtl_udp_transport_counters ts = { .size = sizeof(ts) };
	struct rtl_drfl_transport_counters ds = { .size = sizeof(ds) };
	struct rtl_error err = { 0 };
	struct rtl_loop *loop = NULL;
	char label[128];
	double rms;
	int ret;

	/* Parse and validate. */
	a.o = (struct opts){ .transport = T_UDP,
			     .host = "127.0.0.1",
			     .radius = 0.05,
			     .period_s = 2.0,
			     .duration_s = 4.0 };
	ret = parse(argc, argv, &a.o);
	if (ret != CLI_RUN)
		return ret;
	a.udp = a.o.transport != T_RTDE;
	rtl_log_set_handler(rtl_log_stderr, (void *)(intptr_t)RTL_LOG_WARN);
	snprintf(label, sizeof(label), PROG ", %s %s", transport_name(a.o.transport), a.o.host);
	ret = cli_telemetry(PROG, a.o.telemetry, label, &a.tel);
	if (ret != CLI_RUN)
		return ret;

	/* Allocate: the transport, the loop. */
	if (a.o.transport == T_DRFL) {
		struct rtl_drfl_config dc = { .size = sizeof(dc),
					      .host = a.o.host,
					      .port = (uint16_t)a.o.port };
		struct rtl_drfl_transport_config tc = {
			.size = sizeof(tc),
			.api = &a.drfl_api,
			.drfl = &dc,
			.limits = { .max_linear_vel = 2000.0, .max_angular_vel = 180.0 },
		};

#if RTL_CIRCLE_DRFL
		ret = rtl_drfl_api_real(&a.drfl_api);
		if (ret < 0) {
			fprintf(stderr, PROG ": the DRFL robot object: %s\n", strerror(-ret));
			return EXIT_FAIL;
		}
		ret = rtl_drfl_transport_create(&a.drfl_tr, &tc, &err);
		lc.transport = rtl_drfl_transport_base(a.drfl_tr);
#else
		(void)tc;
		fprintf(stderr,
			PROG ": --transport drfl: this rtloop was built without Doosan's "
			     "DRFL library; fix: install DRFL (libDRFL and DRFLEx.h) and rebuild "
			     "with meson setup -Ddrfl=enabled (or try it on rtde-sim --udp with "
			     "-Ddrfl_standin=true, docs/rtloop-circle.md)\n");
		return EXIT_FAIL;
#endif
	} else if (a.udp) {
		struct rtl_udp_transport_config tc = { .size = sizeof(tc),
						       .host = a.o.host,
						       .port = (uint16_t)a.o.port,
						       .max_linear_vel = 2000.0,
						       .max_angular_vel = 180.0 };

		ret = rtl_udp_transport_create(&a.udp_tr, &tc, &err);
		lc.transport = rtl_udp_transport_base(a.udp_tr);
	} else {
		struct rtl_rtde_client_config cc = {
			.size = sizeof(cc),
			.outputs = a.tel ? CIRCLE_OUTPUTS "," TEL_RTDE_STATE : CIRCLE_OUTPUTS,
			.inputs = { RTL_RTDE_CMD_RECIPE },
		};
		struct rtl_rtde_transport_config tc = { .size = sizeof(tc),
							.host = a.o.host,
							.port = (uint16_t)a.o.port,
							.client = &cc,
							.connected = rtde_connected,
							.safe = rtde_safe,
							.user = &a };

		ret = cli_upload_attach(&a.o.up, &tc, &err);
		if (!ret)
			ret = rtl_rtde_transport_create(&a.rtde_tr, &tc, &err);
		lc.transport = rtl_rtde_transport_base(a.rtde_tr);
	}
	if (ret >= 0 && a.tel)
		ret = add_telemetry(&a, &err);
	if (ret < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = -1;
		goto out;
	}
	lc.telemetry = a.tel;
	lc.step = step;
	lc.user = &a;
	lc.rt_mode = RTL_LOOP_RT_DEGRADE;
	lc.every_frame = true;
	lc.reconnect_attempts = (int)a.o.up.reconnect;
	ret = rtl_loop_create(&loop, &lc, &err);
	if (ret < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		goto out;
	}

	/* Run: connect (the period is known then), set up the motion, circle,
	 * stop, and wait for the robot to come to rest. */
	the_loop = loop;
	cli_on_stop_signals(on_signal);
	ret = rtl_loop_start(loop, &err);
	if (ret < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		goto out;
	}
	cli_upload_started(PROG, &a.o.up, a.o.host);
	if (a.udp) /* UDP and DRFL */
		a.period_ns = lc.transport->period_ns;
	rtl_motion_config_init(&mc, a.period_ns);
	ret = rtl_motion_create(&a.motion, &mc, &err);
	if (ret < 0) {
		/* The worker has not seen the flag: it never touched the motion. */
		fprintf(stderr, PROG ": the motion set-up: %s\n", err.msg);
		the_loop = NULL;
		goto out;
	}
	rtl_motion_set_velx(a.motion, 1.0, RTL_MOTION_ACC_AUTO);
	/* release: the worker sees the motion set up before the flag. */
	atomic_store_explicit(&a.motion_ready, true, memory_order_release);
	rtl_time_sleep_until(rtl_time_now() + llround(a.o.duration_s * 1e9));
	atomic_store(&a.finishing, true);
	rtl_time_sleep_until(rtl_time_now() + 500 * RTL_NS_PER_MS);
	rtl_loop_stop(loop);
	ret = rtl_loop_join(loop);
	the_loop = NULL;
	/* The arm is at rest: the uploaded program goes too. */
	if (cli_upload_finish(PROG, &a.o.up, a.rtde_tr) && ret >= 0)
		ret = -EIO;

	/* Report. */
	rtl_loop_stats(loop, &st);
	rms = a.err_n ? sqrt(a.err_sq / (double)a.err_n) : NAN;
	if (a.o.transport == T_UDP)
		rtl_udp_transport_stats(a.udp_tr, &ts);
	else if (a.o.transport == T_DRFL)
		rtl_drfl_transport_stats(a.drfl_tr, &ds);
	if (a.o.json) {
		/* JSON has no NaN: no sample is null. */
		char rms_s[32] = "null", max_s[32] = "null";

		if (a.err_n) {
			snprintf(rms_s, sizeof(rms_s), "%.4f", rms * 1e3);
			snprintf(max_s, sizeof(max_s), "%.4f", a.err_max * 1e3);
		}
		printf("{\"program\":\"" PROG "\",\"transport\":\"%s\",\"rate_hz\":%.1f,"
		       "\"radius_m\":%g,\"period_s\":%g,\"duration_s\":%g,\"samples\":%llu,"
		       "\"rms_error_mm\":%s,\"max_error_mm\":%s,\"frames\":%llu,"
		       "\"ctrl_skipped\":%llu,\"sends\":%llu,\"overruns\":%llu,"
		       "\"backend_errors\":%d",
		       transport_name(a.o.transport), 1e9 / (double)a.period_ns, a.o.radius,
		       a.o.period_s, a.o.duration_s, (unsigned long long)a.err_n, rms_s, max_s,
		       (unsigned long long)st.frames, (unsigned long long)st.ctrl_skipped,
		       (unsigned long long)st.sends, (unsigned long long)st.overruns,
		       a.backend_errors);
		if (a.o.transport == T_DRFL)
			json_counters("drfl", &ds, rtl_drfl_transport_counter_fields);
		if (a.o.transport == T_UDP)
			json_counters("udp", &ts, rtl_udp_transport_counter_fields);
		printf("}\n");
	} else {
		printf(PROG ": %s at %.0f Hz, r = %g m, %g s per turn, %g s: %llu samples\n"
			    "  tracking error: RMS %.3f mm, max %.3f mm\n"
			    "  frames %llu, controller skipped %llu, sends %llu, overruns %llu\n",
		       a.o.transport == T_UDP	 ? "UDP"
		       : a.o.transport == T_DRFL ? "DRFL"
						 : "RTDE",
		       1e9 / (double)a.period_ns, a.o.radius, a.o.period_s, a.o.duration_s,
		       (unsigned long long)a.err_n, rms * 1e3, a.err_max * 1e3,
		       (unsigned long long)st.frames, (unsigned long long)st.ctrl_skipped,
		       (unsigned long long)st.sends, (unsigned long long)st.overruns);
		if (a.o.transport == T_DRFL)
			printf("  DRFL: %llu states handed over, dropped %llu overflow, %llu "
			       "stale, "
			       "%llu duplicate, %llu non-finite; %llu alarms (%llu repeats not "
			       "logged); %llu calls sent, %llu refused\n",
			       (unsigned long long)ds.callbacks, (unsigned long long)ds.overflow,
			       (unsigned long long)ds.stale, (unsigned long long)ds.duplicate,
			       (unsigned long long)ds.nonfinite_state,
			       (unsigned long long)ds.alarms,
			       (unsigned long long)ds.alarms_suppressed,
			       (unsigned long long)(ds.commands + ds.safe),
			       (unsigned long long)ds.command_failed);
		if (a.o.transport == T_UDP)
			printf("  UDP dropped: %llu malformed, %llu stale, %llu duplicate, %llu "
			       "non-finite states\n",
			       (unsigned long long)ts.malformed, (unsigned long long)ts.stale,
			       (unsigned long long)ts.duplicate,
			       (unsigned long long)ts.nonfinite_state);
		if (a.o.report)
			rtl_loop_report(loop, stdout, false);
	}
	a.nonfinite_state += ts.nonfinite_state + ds.nonfinite_state;
	if (ret < 0)
		fprintf(stderr, PROG ": the loop ended: %s\n", strerror(-ret));
	if (a.nonfinite_state) {
		fprintf(stderr, PROG ": %llu states from the controller held NaN or infinity\n",
			(unsigned long long)a.nonfinite_state);
		ret = -EBADMSG;
	}
	if (!a.err_n) {
		fprintf(stderr, PROG ": no tracking sample: the error cannot be measured\n");
		ret = ret < 0 ? ret : -ENODATA;
	}
out:
	/* The loop first: its worker steps the motion until it is stopped. */
	rtl_loop_destroy(loop);
	rtl_motion_destroy(a.motion);
	rtl_udp_transport_destroy(a.udp_tr);
	rtl_drfl_transport_destroy(a.drfl_tr);
#if RTL_CIRCLE_DRFL
	rtl_drfl_api_real_free(&a.drfl_api);
#endif
	rtl_rtde_transport_destroy(a.rtde_tr);
	cli_upload_free(&a.o.up);
	/* Last: readers keep the final figures the loop's end mirrored. */
	rtl_telemetry_destroy(a.tel);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}
