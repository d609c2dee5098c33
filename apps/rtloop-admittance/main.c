// SPDX-License-Identifier: MIT
/*
 * rtloop-admittance: a force-feedback loop on a UR robot (or rtde-sim),
 * the control example that `make demo` runs.
 *
 * The law is a virtual mass-damper(-spring) along the base z axis. The tool
 * is told to press down with --target-force N; the contact pushes back with
 * f = -actual_TCP_force.z (actual_TCP_force is what the tool exerts, so a
 * tool pressing down reads a negative z). Each frame:
 *
 *     a  = (f - N - D * vz - K * (z - z0)) / M
 *     vz = clamp(vz + dt * a, -vmax, vmax)
 *     vz = 0 if it would take z further than --max-travel from z0
 *
 * In free space f = 0 and the tool sinks at about N / D; in contact it
 * settles where the surface pushes back with N. The first ZERO_FRAMES
 * frames hold still and zero the force sensor (real sensors read an
 * offset; the simulator's is zero). vz goes out as a speedl
 * twist in the register layout of <rtloop/rtde_cmd.h>; the transport owns
 * the heartbeat and keeps the executor's watchdog fed, so the executor
 * stops the robot when the loop dies. At the end (the duration, a signal,
 * an error) the loop itself sends the safe set (stop) and waits until the
 * arm is at rest.
 *
 * Shape: a thin driver over rtl_loop (callback API). main() parses, checks,
 * allocates and pre-faults the sample buffer, starts the loop (which locks
 * memory and sets SCHED_FIFO where permitted), then only watches: a status
 * line while it runs, the loop's report at the end. The step function is
 * RT-safe: it reads three fields, does a few flops, writes the registers and
 * appends a sample to the preallocated buffer; the CSV is written after the
 * loop has stopped.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rtloop/hist.h>
#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#include "cli.h"
#include "upload.h"

#define PROG "rtloop-admittance"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define OUTPUTS "timestamp,actual_TCP_pose,actual_TCP_force," RTL_RTDE_CMD_STATUS_OUTPUTS
/* What --telemetry adds to the outputs: the robot's state. */
#define TEL_STATE "robot_mode,safety_mode,runtime_state"
/* The outputs --telemetry publishes, named as RTDE names them. */
#define TEL_OUTPUTS "actual_TCP_pose,actual_TCP_force," TEL_STATE
#define VMAX 0.1       /* |vz| clamp of the law [m/s] */
#define TWIST_LIM 0.25 /* the transport's bound on every twist register */
/* Samples are kept for the run plus a margin, at up to 500 frames/s. */
#define SAMPLE_HZ 500
#define SAMPLE_MARGIN_S 10
/* The loop's defaults, named here for the report. */
#define RX_PRIORITY 90
#define WORKER_PRIORITY 80
#define WATCHDOG_PERIODS 10
/* Frames at rest at the start whose mean force is the sensor's zero. */
#define ZERO_FRAMES 50
/* Frames that command stop at the end, before the loop closes. */

struct opts {
	const char *host;
	uint16_t port;
	double duration;
	double target, mass, damping, stiffness, accel, travel;
	bool echo, read_only;
	const char *csv, *json;
	unsigned csv_every;
	enum rtl_loop_rt_mode rt;
	bool pin;
	int rx_cpu, worker_cpu;
	bool inline_step;
	const char *telemetry; /* --telemetry NAME, or NULL */
	struct cli_upload up;  /* the controller program (--upload ...) */
};

struct sample {
	double t, z, fz, vz;
};

struct app {
	struct opts o;
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	struct rtl_telemetry *tel;	       /* --telemetry, or NULL */
	int tel_f, tel_vz, tel_dz, tel_target; /* the law's signals in it */
	/* Handles, resolved on connect. */
	struct rtl_rtde_handle ts, pose, force, out_mode, out_status, out_trips;
	struct rtl_rtde_handle mode, wd, acc, echo;
	struct rtl_rtde_handle twist[RTL_RTDE_CMD_NPARAM]; /* vx vy vz wx wy wz */
	/* Worker state (the step function only). */
	double vz, z0, t0, last_ts;
	bool started;
	double bias_sum, bias; /* the force sensor's z offset, zeroed at start */
	unsigned bias_n;
	uint64_t frames;
	/* Samples: the worker appends, main reads after the join. */
	struct sample *samples;
	size_t cap;
	_Atomic size_t n_samples;
	/* The newest state, for the status line (relaxed: display only). */
	_Atomic double now_z, now_fz, now_vz;
	_Atomic int32_t exec_mode, exec_status, exec_trips; /* the executor's registers */
};

/* ---- the law ------------------------------------------------------------------------ */

/* One step of the mass-damper-spring along z; returns the new vz [m/s].
 * @f is the contact force pushing the tool up [N]. Pure. */
static double admittance(const struct opts *o, double vz, double f, double z, double z0, double dt)
{
	double a = (f - o->target - o->damping * vz - o->stiffness * (z - z0)) / o->mass;

	vz += dt * a;
	if (vz > VMAX)
		vz = VMAX;
	if (vz < -VMAX)
		vz = -VMAX;
	/* No surface within reach (or it gave way): go no further. */
	if ((z < z0 - o->travel && vz < 0) || (z > z0 + o->travel && vz > 0))
		vz = 0;
	return vz;
}

/* ---- transport callbacks (slow path) -------------------------------------------------- */

/* speedl's twist: the six parameter registers, in order. */
static const char *const twist_fields[RTL_RTDE_CMD_NPARAM] = {
	RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1, RTL_RTDE_CMD_FIELD_PARAM2,
	RTL_RTDE_CMD_FIELD_PARAM3, RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5,
};

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct app *a = user;

	a->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	a->pose = rtl_rtde_transport_output_handle(t, "actual_TCP_pose");
	a->force = rtl_rtde_transport_output_handle(t, "actual_TCP_force");
	a->out_mode = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_MODE);
	a->out_status = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_STATUS);
	a->out_trips = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_WD_TRIPS);
	if (a->o.read_only)
		return;
	a->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	a->wd = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_WATCHDOG_MS);
	for (int i = 0; i < RTL_RTDE_CMD_NPARAM; i++)
		a->twist[i] = rtl_rtde_transport_input_handle(t, 0, twist_fields[i]);
	a->acc = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
	if (a->o.echo)
		a->echo = rtl_rtde_transport_input_handle(t, 1, RTL_RTDE_CMD_FIELD_ECHO);
}

/* The safe set: stop (stopl after speedl) at the configured deceleration. */
static void on_safe(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user)
{
	struct app *a = user;
	struct rtl_rtde_frame *f = rtl_rtde_coalesce_frame(c, 0);

	(void)t;
	rtl_rtde_frame_set_int(f, a->mode, RTL_RTDE_CMD_STOP);
	rtl_rtde_frame_set_double(f, a->acc, a->o.accel);
}

/* ---- the step (worker, RT context) ----------------------------------------------------- */

/*
 * RT-safe: no allocation, no locks, no system call. Reads the pose, the
 * force and the timestamp, runs the law with the controller's own time step
 * (so a skipped package integrates over its real length), writes speedl.
 */
static int step(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	struct app *a = user;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(fr);
	double pose[6], force[6], ts, dt, f;
	size_t n;

	ts = rtl_rtde_frame_get_double(&st, a->ts);
	rtl_rtde_frame_get_vec6(&st, a->pose, pose);
	rtl_rtde_frame_get_vec6(&st, a->force, force);
	if (!a->started) {
		a->started = true;
		a->z0 = pose[2];
		a->t0 = ts;
		a->last_ts = ts;
	}
	dt = ts - a->last_ts;
	if (!(dt >= 0 && dt < 0.1))
		dt = 0; /* first frame, or a clock jump: do not integrate it */
	a->last_ts = ts;
	/* A real sensor reads an offset (the tool's weight, drift): hold
	 * still for the first frames and take their mean as zero. */
	if (a->bias_n < ZERO_FRAMES) {
		a->bias_sum += force[2];
		if (++a->bias_n == ZERO_FRAMES)
			a->bias = a->bias_sum / ZERO_FRAMES;
		dt = 0;
	}
	f = -(force[2] - a->bias);
	if (!a->o.read_only) {
		struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, 0);
		double twist[6] = { 0 };

		if (a->bias_n >= ZERO_FRAMES)
			a->vz = admittance(&a->o, a->vz, f, pose[2], a->z0, dt);
		twist[2] = a->vz;
		rtl_rtde_frame_set_int(cmd, a->mode, RTL_RTDE_CMD_SPEEDL);
		rtl_rtde_frame_set_int(cmd, a->wd, 0); /* the executor's default timeout */
		for (int i = 0; i < RTL_RTDE_CMD_NPARAM; i++)
			rtl_rtde_frame_set_double(cmd, a->twist[i], twist[i]);
		rtl_rtde_frame_set_double(cmd, a->acc, a->o.accel);
		if (a->o.echo)
			rtl_rtde_frame_set_double(rtl_rtde_loop_commands(loop, 1), a->echo, ts);
	}
	/* The telemetry (NULL: none) publishes them after the send. */
	rtl_telemetry_set(a->tel, a->tel_f, 0, f);
	rtl_telemetry_set(a->tel, a->tel_vz, 0, a->vz);
	rtl_telemetry_set(a->tel, a->tel_dz, 0, (pose[2] - a->z0) * 1e3);
	rtl_telemetry_set(a->tel, a->tel_target, 0, a->o.target);
	/* Display only: relaxed. */
	atomic_store_explicit(&a->now_z, pose[2], memory_order_relaxed);
	atomic_store_explicit(&a->now_fz, force[2], memory_order_relaxed);
	atomic_store_explicit(&a->now_vz, a->vz, memory_order_relaxed);
	atomic_store_explicit(&a->exec_mode, rtl_rtde_frame_get_int(&st, a->out_mode),
			      memory_order_relaxed);
	atomic_store_explicit(&a->exec_status, rtl_rtde_frame_get_int(&st, a->out_status),
			      memory_order_relaxed);
	atomic_store_explicit(&a->exec_trips, rtl_rtde_frame_get_int(&st, a->out_trips),
			      memory_order_relaxed);
	if (a->frames++ % a->o.csv_every == 0) {
		n = atomic_load_explicit(&a->n_samples, memory_order_relaxed);
		if (n < a->cap) {
			a->samples[n] = (struct sample){ ts - a->t0, pose[2], force[2], a->vz };
			/* release: the sample is complete before the count says so. */
			atomic_store_explicit(&a->n_samples, n + 1, memory_order_release);
		}
	}
	return 0;
}

/* ---- options ------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS]\n"
		"\n"
		"An admittance (force-feedback) loop over RTDE: reads actual_TCP_pose and\n"
		"actual_TCP_force, and drives the TCP along base z with speedl so that the\n"
		"tool presses on a surface with the target force. The robot must run\n"
		"rtloop_control.script (rtde-sim executes the same registers), installed as\n"
		"%s\n"
		"\n"
		"  a = (f - N - D*vz - K*(z - z0)) / M,  vz += dt*a,  |vz| <= 0.1 m/s\n"
		"  (f = -actual_TCP_force.z, zeroed over the first 0.1 s at rest: the surface\n"
		"  pushing back; N = --target-force)\n"
		"\n"
		"Connection:\n"
		"  -H, --host HOST         controller address (default 127.0.0.1)\n"
		"  -p, --port N            RTDE port (default 30004)\n"
		"  -d, --duration S        run S seconds (default 20)\n"
		"  -r, --read-only         send nothing (no input recipes, disarmed): watch only\n"
		"  -e, --echo              write each frame's timestamp to "
		"input_double_register_47\n"
		"                          (rtde-sim --echo-register 47 then measures the round "
		"trip)\n"
		"Admittance:\n"
		"  -F, --target-force N    force to press down with [N] (default 10)\n"
		"  -M, --mass M            virtual mass [kg] (default 5)\n"
		"  -D, --damping D         virtual damping [N s/m] (default 250)\n"
		"  -K, --stiffness K       virtual spring to the start height [N/m] (default 0)\n"
		"  -a, --accel A           speedl acceleration and stop deceleration [m/s^2]\n"
		"                          (default 4)\n"
		"  -T, --max-travel M      never move more than M metres from the start height\n"
		"                          (default 0.1: no surface in reach stops the descent)\n"
		"%s"
		"Output:\n"
		"  -c, --csv FILE          per-frame samples: t_s,z_m,fz_N,vz_mps (written at "
		"the end)\n"
		"      --csv-every N       keep every N-th frame (default 1)\n"
		"  -j, --json FILE         the loop's report as JSON ('-': stdout)\n"
		"%s"
		"Real time:\n"
		"      --rt MODE           require | degrade (default) | off\n"
		"      --cpus A,B          pin the receive thread to CPU A, the worker to B\n"
		"      --inline            run the step on the receive thread (no hand-off to\n"
		"                          the worker: about 3 us less per cycle where both\n"
		"                          would share a CPU; B then keeps only the watchdog)\n"
		"  -h, --help              print this help and exit\n"
		"  -V, --version           print the version and exit\n"
		"\n"
		"While it runs, a status line on stderr (refreshed on a terminal, every 2 s\n"
		"otherwise): frame rate, frames, lost frames (skipped by the controller +\n"
		"skipped by the worker), sends, p50/p99 of the loop's receive -> step and\n"
		"step -> send times, TCP z and Fz. At the end the loop's report goes to stdout.\n"
		"Exit status: 0 ran to the end, 1 could not run or the loop failed, 2 usage.\n",
		rtl_rtde_cmd_script_installed(), cli_upload_help, CLI_TELEMETRY_HELP);
}

enum {
	OPT_RT = 256,
	OPT_CPUS,
	OPT_CSV_EVERY,
	OPT_INLINE,
	OPT_TELEMETRY,
	OPT_UPLOAD, /* .. + CLI_UPLOAD_N */
};

/* In enum rtl_loop_rt_mode's order. */
static const char *const rt_modes[] = { "require", "degrade", "off" };

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse(int argc, char **argv, struct opts *o)
{
	const struct cli_opt opts[] = {
		CLI_TEXT('H', "host", &o->host),
		CLI_UINT('p', "port", &o->port, 1, 65535, NULL),
		CLI_REAL('d', "duration", &o->duration, 0.1, 86400, NULL),
		CLI_FLAG('r', "read-only", &o->read_only),
		CLI_FLAG('e', "echo", &o->echo),
		CLI_REAL('F', "target-force", &o->target, 0, 200, NULL),
		CLI_REAL('M', "mass", &o->mass, 0.01, 1e4, NULL),
		CLI_REAL('D', "damping", &o->damping, 0, 1e6, NULL),
		CLI_REAL('K', "stiffness", &o->stiffness, 0, 1e6, NULL),
		CLI_REAL('a', "accel", &o->accel, 0.01, 20, NULL),
		CLI_REAL('T', "max-travel", &o->travel, 0, 1, NULL),
		CLI_TEXT('c', "csv", &o->csv),
		CLI_UINT(OPT_CSV_EVERY, "csv-every", &o->csv_every, 1, 1000000, NULL),
		CLI_TEXT('j', "json", &o->json),
		CLI_TEXT(OPT_TELEMETRY, "telemetry", &o->telemetry),
		CLI_CHOICE(OPT_RT, "rt", &o->rt, rt_modes, 3, "expected require, degrade or off"),
		CLI_CASE_ARG(OPT_CPUS, "cpus"),
		CLI_FLAG(OPT_INLINE, "inline", &o->inline_step),
		CLI_UPLOAD_ROWS(OPT_UPLOAD, &o->up),
		CLI_HELP,
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	uint64_t cpus[2];
	int c;

	/* --cpus is the one option the table hands back. */
	while ((c = cli_next(&p, argc, argv)) > 0) {
		if (cli_parse_list(optarg, 4095, cpus, 2, 2) < 0)
			return cli_bad_value(PROG, "--cpus", optarg,
					     "expected two CPU numbers A,B");
		o->pin = true;
		o->rx_cpu = (int)cpus[0];
		o->worker_cpu = (int)cpus[1];
	}
	if (c < 0)
		return p.status;
	if (cli_extra_args(PROG, optind, argc, argv))
		return CLI_EXIT_USAGE;
	if (o->echo && o->read_only) {
		fprintf(stderr, PROG ": --echo writes a register, --read-only writes nothing: "
				     "choose one\n");
		return CLI_EXIT_USAGE;
	}
	return cli_upload_check(PROG, &o->up, o->read_only) ? CLI_EXIT_USAGE : CLI_RUN;
}

/* ---- telemetry (--telemetry) ------------------------------------------------------- */

/* The outputs and the robot's state as RTDE names them, then the law's
 * own values. Set-up time, before the loop is created. */
static int add_telemetry(struct app *a, struct rtl_error *err)
{
	int ret = rtl_rtde_transport_telemetry(a->tr, a->tel, TEL_OUTPUTS, NULL, err);

	if (ret < 0)
		return ret;
	if ((a->tel_f = rtl_telemetry_signal(a->tel, "contact_force", 1, "N", err)) < 0)
		return a->tel_f;
	if ((a->tel_target = rtl_telemetry_signal(a->tel, "target_force", 1, "N", err)) < 0)
		return a->tel_target;
	if ((a->tel_vz = rtl_telemetry_signal(a->tel, "vz_command", 1, "m/s", err)) < 0)
		return a->tel_vz;
	a->tel_dz = rtl_telemetry_signal(a->tel, "z_from_start", 1, "mm", err);
	return a->tel_dz < 0 ? a->tel_dz : 0;
}

/* ---- running ------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_asked;

static void on_signal(int sig)
{
	(void)sig;
	stop_asked = 1; /* main() stops the robot, then the loop */
}

/* The joiner: rtl_loop_join() blocks, so it waits here while main() shows
 * the status; done tells main() that the loop ended (on its own or not). */
struct joiner {
	struct rtl_loop *loop;
	int result;
	atomic_bool done;
};

static void *join_loop(void *arg)
{
	struct joiner *j = arg;

	j->result = rtl_loop_join(j->loop);
	atomic_store(&j->done, true);
	return NULL;
}

static double us(int64_t ns)
{
	return (double)ns / 1e3;
}

/* One status line into @buf (no line end). Latencies are the loop's two
 * client-side stages, receive -> step and step -> send done: the client
 * cannot see the controller's side of the round trip (rtde-sim measures
 * that from the echo register). */
static void status(struct app *a, char *buf, size_t len, double rate)
{
	const struct rtl_hist *h1 = rtl_loop_hist(a->loop, RTL_LOOP_H_RX_TO_STEP);
	const struct rtl_hist *h2 = rtl_loop_hist(a->loop, RTL_LOOP_H_STEP_TO_SEND);
	struct rtl_loop_counters s = { .size = sizeof(s) };

	rtl_loop_stats(a->loop, &s);
	snprintf(buf, len,
		 "%4.0f Hz  frames %llu  lost %llu+%llu  sends %llu  "
		 "p50/p99 rx>step %.0f/%.0f step>send %.0f/%.0f us  z %.1f mm  Fz %+.1f N",
		 rate, (unsigned long long)s.frames, (unsigned long long)s.ctrl_skipped,
		 (unsigned long long)s.worker_skipped, (unsigned long long)s.sends,
		 us(rtl_hist_percentile(h1, 50)), us(rtl_hist_percentile(h1, 99)),
		 us(rtl_hist_percentile(h2, 50)), us(rtl_hist_percentile(h2, 99)),
		 atomic_load_explicit(&a->now_z, memory_order_relaxed) * 1e3,
		 atomic_load_explicit(&a->now_fz, memory_order_relaxed));
}

/* Columns of the terminal on stderr (80 when unknown). */
static size_t columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return ws.ws_col;
	return 80;
}

/* Watch the loop until the duration is over, a signal, or the loop ends. */
static void watch(struct app *a, struct joiner *j)
{
	bool tty = isatty(STDERR_FILENO);
	int64_t t_start = rtl_time_now(), t_end, t_show, every;
	int64_t t_last = t_start;
	uint64_t f_last = 0, reconnects = 0;
	bool shown = false, checked = false;
	char line[512];

	t_end = t_start + (int64_t)(a->o.duration * 1e9);
	every = tty ? 250 * RTL_NS_PER_MS : 2 * RTL_NS_PER_SEC;
	t_show = t_start + every;
	while (!stop_asked && !atomic_load(&j->done)) {
		int64_t now = rtl_time_now();

		if (now >= t_end)
			break;
		cli_upload_rearm(PROG, &a->o.up, a->loop, a->o.read_only, &reconnects);
		if (!checked && now - t_start > RTL_NS_PER_SEC) {
			struct rtl_loop_counters s = { .size = sizeof(s) };

			rtl_loop_stats(a->loop, &s);
			checked = true;
			if (s.frames &&
			    !((uint32_t)atomic_load(&a->exec_status) & RTL_RTDE_CMD_STATUS_READY))
				fprintf(stderr,
					"%s" PROG ": the controller's executor is not running "
					"(%s bit 0 is 0): nothing moves until "
					"rtloop_control.script runs on the robot (--upload "
					"sends it; installed as %s)\n",
					shown && tty ? "\n" : "", RTL_RTDE_CMD_FIELD_OUT_STATUS,
					rtl_rtde_cmd_script_installed());
		}
		if (now >= t_show) {
			struct rtl_loop_counters s = { .size = sizeof(s) };
			double rate;

			rtl_loop_stats(a->loop, &s);
			rate = (double)(s.frames - f_last) * 1e9 / (double)(now - t_last);
			f_last = s.frames;
			t_last = now;
			status(a, line, sizeof(line), rate);
			if (tty) {
				/* One line that never wraps: cut at the width. */
				size_t w = columns() - 1;

				if (strlen(line) > w)
					line[w] = '\0';
				fprintf(stderr, "\r%s\033[K", line);
			} else {
				fprintf(stderr, PROG ": %s\n", line);
			}
			fflush(stderr);
			shown = true;
			t_show += every;
		}
		rtl_time_sleep_until(now + 20 * RTL_NS_PER_MS);
	}
	if (shown && tty)
		fputc('\n', stderr);
}

static int write_csv(const struct app *a, const char *path)
{
	size_t n = atomic_load_explicit(&a->n_samples, memory_order_acquire);
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		fprintf(stderr, PROG ": --csv %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "t_s,z_m,fz_N,vz_mps\n");
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &a->samples[i];

		fprintf(f, "%.4f,%.6f,%.3f,%.5f\n", s->t, s->z, s->fz, s->vz);
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, PROG ": --csv %s: write failed\n", path);
	return err;
}

/* What the law did, from the samples: the last second against the target. */
static void summary(const struct app *a, FILE *f)
{
	static const char *const mode_names[RTL_RTDE_CMD_MODE_COUNT] = { "idle", "speedj", "speedl",
									 "servoj", "stop" };
	int32_t mode;
	size_t n = atomic_load_explicit(&a->n_samples, memory_order_acquire), k = 0;
	double t_end, sum = 0, sum2 = 0, mean, sd, t_contact = -1;

	if (n == 0)
		return;
	t_end = a->samples[n - 1].t;
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &a->samples[i];

		if (t_contact < 0 && -s->fz > 0.5 * a->o.target && a->o.target > 0)
			t_contact = s->t;
		if (s->t >= t_end - 1.0) {
			sum += -s->fz;
			sum2 += s->fz * s->fz;
			k++;
		}
	}
	mean = sum / (double)k;
	sd = sqrt(fmax(0, sum2 / (double)k - mean * mean));
	fprintf(f, "admittance: %s, target %.1f N, M %.1f kg, D %.0f N s/m, K %.0f N/m\n",
		a->o.read_only ? "read-only" : "armed", a->o.target, a->o.mass, a->o.damping,
		a->o.stiffness);
	fprintf(f, "  z: start %.4f m, end %.4f m (%+.1f mm)", a->samples[0].z, a->samples[n - 1].z,
		(a->samples[n - 1].z - a->samples[0].z) * 1e3);
	if (t_contact >= 0)
		fprintf(f, "; half the target force at %.2f s", t_contact);
	fprintf(f,
		"\n  pressing force (-Fz) over the last second: mean %.2f N, sd %.2f N"
		" (sensor zero %+.2f N)\n",
		mean, sd, a->bias);
	mode = atomic_load(&a->exec_mode);
	fprintf(f, "  executor: %s, mode %s, %d watchdog trips\n",
		(uint32_t)atomic_load(&a->exec_status) & RTL_RTDE_CMD_STATUS_READY ? "running"
										   : "NOT running",
		mode >= 0 && mode < RTL_RTDE_CMD_MODE_COUNT ? mode_names[mode] : "?",
		(int)atomic_load(&a->exec_trips));
	if (a->o.rt == RTL_LOOP_RT_OFF)
		fprintf(f, "  real time: off (--rt off)\n");
	else if (!rtl_loop_rt_notes(a->loop)[0])
		fprintf(f, "  real time: applied (memory locked; SCHED_FIFO rx %d, worker %d)\n",
			RX_PRIORITY, WORKER_PRIORITY);
	else
		fprintf(f, "  real time: partly applied (see the notes below)\n");
}

int main(int argc, char **argv)
{
	static struct app app; /* large (the transport's buffers): not on the stack */
	struct app *a = &app;
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	struct joiner j = { 0 };
	pthread_t joiner;
	FILE *report;
	char label[128];
	int ret, rc = EXIT_OK;

	/* Parse and validate. */
	a->o = (struct opts){ .host = "127.0.0.1",
			      .port = 30004,
			      .duration = 20,
			      .target = 10,
			      .mass = 5,
			      .damping = 250,
			      .stiffness = 0,
			      .accel = 4,
			      .travel = 0.1,
			      .csv_every = 1,
			      .rt = RTL_LOOP_RT_DEGRADE };
	ret = parse(argc, argv, &a->o);
	if (ret != CLI_RUN)
		return ret;
	rtl_log_set_handler(rtl_log_stderr, (void *)(intptr_t)RTL_LOG_WARN);
	snprintf(label, sizeof(label), PROG ", RTDE %s:%u", a->o.host, a->o.port);
	ret = cli_telemetry(PROG, a->o.telemetry, label, &a->tel);
	if (ret != CLI_RUN)
		return ret;

	/* Allocate and pre-fault the samples (the loop locks them with the
	 * rest when it starts). */
	a->cap = (size_t)((a->o.duration + SAMPLE_MARGIN_S) * SAMPLE_HZ / a->o.csv_every) + 1;
	a->samples = calloc(a->cap, sizeof(*a->samples));
	if (!a->samples) {
		fprintf(stderr, PROG ": out of memory for %zu samples\n", a->cap);
		rtl_telemetry_destroy(a->tel);
		return EXIT_FAIL;
	}
	memset(a->samples, 0, a->cap * sizeof(*a->samples));

	/* The transport: outputs always; inputs (command, echo) unless
	 * read-only, which claims no register at all. */
	tc.host = a->o.host;
	tc.port = a->o.port;
	cc.outputs = a->tel ? OUTPUTS "," TEL_STATE : OUTPUTS;
	if (!a->o.read_only) {
		cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
		if (a->o.echo)
			cc.inputs[1] = RTL_RTDE_CMD_ECHO_RECIPE;
		tc.safe = on_safe;
		for (int i = 0; i < RTL_RTDE_CMD_NPARAM; i++)
			tc.limits[tc.n_limits++] =
				(struct rtl_rtde_limit){ twist_fields[i], -TWIST_LIM, TWIST_LIM };
	}
	tc.connected = on_connected;
	tc.user = a;
	ret = cli_upload_attach(&a->o.up, &tc, &err);
	if (!ret)
		ret = rtl_rtde_transport_create(&a->tr, &tc, &err);
	if (!ret && a->tel)
		ret = add_telemetry(a, &err);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		rc = EXIT_FAIL;
		goto out_transport;
	}

	/* The loop: newest frame only (a late worker catches up at once). */
	lc.transport = rtl_rtde_transport_base(a->tr);
	lc.step = step;
	lc.user = a;
	lc.rt_mode = a->o.rt;
	lc.rx_priority = RX_PRIORITY;
	lc.worker_priority = WORKER_PRIORITY;
	lc.pin_rx = lc.pin_worker = a->o.pin;
	lc.rx_cpu = a->o.rx_cpu;
	lc.worker_cpu = a->o.worker_cpu;
	lc.inline_step = a->o.inline_step;
	lc.start_disarmed = a->o.read_only;
	/* The loop's watchdog sends the safe set (stop) when a frame waits
	 * that long for a step to finish. 10 periods (20 ms at 500 Hz) keeps a
	 * loaded host's scheduling hiccup from stopping the robot; the
	 * executor's own heartbeat watchdog (100 ms) still catches a dead
	 * loop. */
	lc.watchdog_periods = WATCHDOG_PERIODS;
	lc.reconnect_attempts = (int)a->o.up.reconnect;
	lc.telemetry = a->tel;
	ret = rtl_loop_create(&a->loop, &lc, &err);
	if (ret) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		rc = EXIT_FAIL;
		goto out_transport;
	}

	/* Run: connect, lock, prioritise, start the threads. */
	cli_on_stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);
	ret = rtl_loop_start(a->loop, &err);
	if (ret) {
		fprintf(stderr, PROG ": cannot start against %s:%u: %s\n", a->o.host, a->o.port,
			err.msg[0] ? err.msg : strerror(-ret));
		rc = EXIT_FAIL;
		goto out_loop;
	}
	fprintf(stderr, PROG ": connected to %s:%u, %s, %g s%s\n", a->o.host, a->o.port,
		a->o.read_only ? "read-only (nothing is sent)" : "armed: speedl along z",
		a->o.duration, a->o.echo ? ", echoing timestamps" : "");
	cli_upload_started(PROG, &a->o.up, a->o.host);
	if (rtl_loop_rt_notes(a->loop)[0])
		fprintf(stderr, PROG ": real time not fully applied:\n%s",
			rtl_loop_rt_notes(a->loop));
	j.loop = a->loop;
	ret = pthread_create(&joiner, NULL, join_loop, &j);
	if (ret) {
		fprintf(stderr, PROG ": cannot start the joiner thread: %s\n", strerror(ret));
		rtl_loop_stop(a->loop);
		rtl_loop_join(a->loop);
		rc = EXIT_FAIL;
		goto out_loop;
	}
	watch(a, &j);
	/* The loop sends the stop and waits for rest before it ends. */
	rtl_loop_stop(a->loop);
	pthread_join(joiner, NULL);
	if (j.result < 0) {
		fprintf(stderr, PROG ": the loop ended early: %s\n", strerror(-j.result));
		rc = EXIT_FAIL;
	}
	/* The arm is at rest: the program it ran goes too. */
	if (cli_upload_finish(PROG, &a->o.up, a->tr))
		rc = EXIT_FAIL;

	/* Report; with the JSON on stdout, the text goes to stderr. */
	report = a->o.json && !strcmp(a->o.json, "-") ? stderr : stdout;
	summary(a, report);
	if (rtl_loop_report(a->loop, report, false))
		rc = EXIT_FAIL;
	fflush(report);
	if (a->o.csv && write_csv(a, a->o.csv))
		rc = EXIT_FAIL;
	if (a->o.json) {
		FILE *f = strcmp(a->o.json, "-") ? fopen(a->o.json, "w") : stdout;

		if (!f) {
			fprintf(stderr, PROG ": --json %s: %s\n", a->o.json, strerror(errno));
			rc = EXIT_FAIL;
		} else {
			if (rtl_loop_report(a->loop, f, true))
				rc = EXIT_FAIL;
			if (f != stdout && fclose(f))
				rc = EXIT_FAIL;
		}
	}
out_loop:
	rtl_loop_destroy(a->loop);
out_transport:
	rtl_rtde_transport_destroy(a->tr);
	cli_upload_free(&a->o.up);
	free(a->samples);
	/* Last: readers keep the final figures the loop's end mirrored. */
	rtl_telemetry_destroy(a->tel);
	return rc;
}
