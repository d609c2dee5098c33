// SPDX-License-Identifier: MIT
/*
 * A force-control experiment in one step function (docs/experiment.md):
 *
 *   start      move_j to a start pose
 *   contact    move_until_contact straight down (-z) until the tool meets
 *              the surface
 *   press      force_limits, then force_mode pressing with 10 N along -z
 *              while our own speedl stream slides the tool along x
 *   end_force  end_force_mode, the arm at rest
 *   retract    move_l 5 cm straight up
 *   teach      teach_mode for 5 s (rtde-sim --push-x ... plays the hand)
 *   end_teach  end_teach_mode, the arm at rest
 *
 * Each phase writes its request once into the request recipe (input
 * recipe 1) and follows its acknowledgement (<rtloop/rtde_req.h>); the
 * press also writes the streaming command registers of input recipe 0
 * every step. At the end it prints one line per phase (time taken, pose
 * reached, force held, outcome with the controller's reason), optionally
 * a JSON summary (--json) and a CSV of the run (--csv). A failed phase
 * ends the run and the exit status is 1; every exit leaves the arm at
 * rest, because the loop's stop at exit sends STOP (which also ends force
 * and teach mode) and waits for rest.
 *
 * Usage: experiment [--host H] [--port N] [--json FILE] [--csv FILE] ...
 * (--help lists them), against rtde-sim --contact-z Z or a robot running
 * rtloop_control.script.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_req.h>
#include <rtloop/rtde_transport.h>

#define CMD_RECIPE 0 /* streaming commands: RTL_RTDE_CMD_RECIPE */
#define REQ_RECIPE 1 /* requests: RTL_RTDE_REQ_RECIPE */
/* What the step reads: the state, the executor's status, the answers. */
#define OUTPUTS                                         \
	"timestamp,actual_q,actual_qd,actual_TCP_pose," \
	"actual_TCP_force," RTL_RTDE_CMD_STATUS_OUTPUTS "," RTL_RTDE_REQ_ACK_OUTPUTS
#define MAX_SAMPLES (500 * 120) /* the CSV keeps the first 120 s at 500 Hz */
#define REST_SPEED 0.001	/* rad/s: every joint slower is at rest */
#define PI 3.14159265358979323846

enum phase { P_START, P_CONTACT, P_PRESS, P_END_FORCE, P_RETRACT, P_TEACH, P_END_TEACH, P_N };

static const char *const phase_names[P_N] = { "start",	 "contact", "press",	"end_force",
					      "retract", "teach",   "end_teach" };

/* Why a phase failed when it was not the controller's answer. */
enum failure { F_NONE, F_REQUEST, F_TIMEOUT, F_FORCE, F_STATUS, F_TRAVEL };

/* What the experiment is asked to do (the options). */
struct params {
	double start_q[6];  /* joints of the start pose [rad] */
	double approach;    /* contact: speed down [m/s] */
	double retract_mm;  /* contact: retract after it [mm] */
	double travel;	    /* contact: the farthest it searches down [m] */
	double force;	    /* press: the force along -z [N] */
	double slide;	    /* press: speedl along x [m/s] */
	double press_s;	    /* press: how long [s] */
	double settle_s;    /* press: not counted in the force error [s] */
	double tolerance;   /* press: the largest force error that holds [N] */
	double lift;	    /* retract: up by [m] */
	double teach_s;	    /* teach: how long [s] */
	double phase_limit; /* any phase: longest [s] */
};

/* What became of one phase. */
struct result {
	bool ran, ok;
	enum failure failure;
	int32_t kind, reason; /* the request that failed, the controller's reason */
	double t0, t1;	      /* controller time at its start and end [s] */
	double pose[6];	      /* TCP pose at its end */
	double q_err;	      /* start: the largest joint error at its end [rad] */
	/* press: the force error |F_z + force| after settle_s */
	double err_sum, err_max;
	long err_n;
	/* teach: the largest distance from where it began, and force seen */
	double moved, f_max;
};

struct sample {
	double t, pose[3], force[3];
	int32_t phase, status, ack_id, ack_state, ack_reason;
};

struct experiment {
	struct params p;
	struct rtl_rtde_req_handles h;
	struct rtl_rtde_handle ts, q, qd, pose, force, status;
	struct rtl_rtde_handle mode, param[6], accel;
	int resolved; /* rtl_rtde_req_resolve()'s return */
	struct rtl_rtde_req_ids ids;
	struct rtl_rtde_req_tracker tr;
	enum phase phase;
	int sub;   /* the step inside the phase */
	bool sent; /* the sub-step's request is written */
	double t_sub, from[6];
	struct result r[P_N];
	struct sample *s;
	long n_samples;
};

static struct rtl_loop *the_loop; /* for the signal handler */

static void on_signal(int sig)
{
	(void)sig;
	rtl_loop_stop(the_loop); /* async-signal-safe */
}

static void connected(struct rtl_rtde_transport *t, void *user)
{
	struct experiment *e = user;
	static const char *const params[6] = {
		RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1, RTL_RTDE_CMD_FIELD_PARAM2,
		RTL_RTDE_CMD_FIELD_PARAM3, RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5,
	};
	struct rtl_error err = { 0 };

	e->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	e->q = rtl_rtde_transport_output_handle(t, "actual_q");
	e->qd = rtl_rtde_transport_output_handle(t, "actual_qd");
	e->pose = rtl_rtde_transport_output_handle(t, "actual_TCP_pose");
	e->force = rtl_rtde_transport_output_handle(t, "actual_TCP_force");
	e->status = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_STATUS);
	e->mode = rtl_rtde_transport_input_handle(t, CMD_RECIPE, RTL_RTDE_CMD_FIELD_MODE);
	for (int i = 0; i < 6; i++)
		e->param[i] = rtl_rtde_transport_input_handle(t, CMD_RECIPE, params[i]);
	e->accel = rtl_rtde_transport_input_handle(t, CMD_RECIPE, RTL_RTDE_CMD_FIELD_ACCEL);
	e->resolved = rtl_rtde_req_resolve(&e->h, t, REQ_RECIPE, &err);
	if (e->resolved < 0)
		fprintf(stderr, "experiment: %s\n", err.msg); /* not in a step: may print */
}

/* The streaming command: speedl with twist (vx, 0, 0, 0, 0, 0), or IDLE. */
static void stream(struct experiment *e, struct rtl_rtde_frame *cmd, int mode, double vx)
{
	rtl_rtde_frame_set_int(cmd, e->mode, mode);
	rtl_rtde_frame_set_double(cmd, e->param[0], vx);
	for (int i = 1; i < 6; i++)
		rtl_rtde_frame_set_double(cmd, e->param[i], 0);
	rtl_rtde_frame_set_double(cmd, e->accel, 0.5);
}

/*
 * Write request @q once (the first call of a sub-step), then follow it.
 * Returns 1 when it is done, 0 while it is pending or running, -1 when
 * it failed or was interrupted (the phase's result says why).
 */
static int follow(struct experiment *e, struct rtl_rtde_frame *req,
		  const struct rtl_rtde_req_ack *ack, const struct rtl_rtde_req *q, int built,
		  enum rtl_rtde_req_kind kind)
{
	struct result *r = &e->r[e->phase];

	if (!e->sent) {
		if (built < 0 || rtl_rtde_req_write(q, req, &e->ids, &e->tr, &e->h, NULL) < 0) {
			r->failure = F_REQUEST; /* a builder refused an option's value */
			r->kind = kind;
			r->reason = RTL_RTDE_REQ_BAD_ARGUMENT;
			return -1;
		}
		e->sent = true;
		return 0;
	}
	switch (rtl_rtde_req_track(&e->tr, ack)) {
	case RTL_RTDE_REQ_IS_DONE:
		e->sent = false;
		return 1;
	case RTL_RTDE_REQ_IS_FAILED:
	case RTL_RTDE_REQ_IS_INTERRUPTED:
		r->failure = F_REQUEST;
		r->kind = kind;
		r->reason = e->tr.reason;
		return -1;
	default:
		return 0;
	}
}

static bool at_rest(const double qd[6])
{
	for (int i = 0; i < 6; i++)
		if (fabs(qd[i]) >= REST_SPEED)
			return false;
	return true;
}

/* The phase is over: record where it ended, go on to the next. */
static void next_phase(struct experiment *e, double t, const double pose[6])
{
	struct result *r = &e->r[e->phase];

	r->ok = true;
	r->t1 = t;
	memcpy(r->pose, pose, sizeof(r->pose));
	e->phase++;
	e->sub = 0;
	e->sent = false;
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct experiment *e = user;
	const struct params *p = &e->p;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(f);
	struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, CMD_RECIPE);
	struct rtl_rtde_frame *req = rtl_rtde_loop_commands(loop, REQ_RECIPE);
	struct rtl_rtde_req_ack ack;
	struct rtl_rtde_req q = { 0 };
	struct result *r;
	double t, limit, qa[6], qd[6], pose[6], force[6], target[6];
	int32_t status;
	int ret = 0, b;

	if (e->resolved < 0 || e->phase >= P_N)
		return -EINVAL;
	t = rtl_rtde_frame_get_double(&st, e->ts);
	rtl_rtde_frame_get_vec6(&st, e->q, qa);
	rtl_rtde_frame_get_vec6(&st, e->qd, qd);
	rtl_rtde_frame_get_vec6(&st, e->pose, pose);
	rtl_rtde_frame_get_vec6(&st, e->force, force);
	status = rtl_rtde_frame_get_int(&st, e->status);
	rtl_rtde_req_read_ack(&ack, &st, &e->h);

	if (e->n_samples < MAX_SAMPLES) { /* the CSV's row, into memory */
		struct sample *s = &e->s[e->n_samples++];

		s->t = t;
		memcpy(s->pose, pose, sizeof(s->pose));
		memcpy(s->force, force, sizeof(s->force));
		s->phase = (int32_t)e->phase;
		s->status = status;
		s->ack_id = ack.id;
		s->ack_state = ack.state;
		s->ack_reason = ack.reason;
	}

	r = &e->r[e->phase];
	if (!r->ran) {
		r->ran = true;
		r->t0 = t;
	}
	r->t1 = t; /* where it is so far, for a run stopped in the middle */
	memcpy(r->pose, pose, sizeof(r->pose));
	limit = p->phase_limit; /* the press and teach mode: their own time on top */
	if (e->phase == P_PRESS)
		limit += p->press_s;
	if (e->phase == P_TEACH)
		limit += p->teach_s;
	if (t - r->t0 > limit) {
		r->failure = F_TIMEOUT;
		goto failed;
	}

	switch (e->phase) {
	case P_START:
		b = rtl_rtde_req_move_j(&q, p->start_q, 1.0, 1.4, NULL);
		ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_MOVE_J);
		if (ret > 0) {
			for (int i = 0; i < 6; i++)
				r->q_err = fmax(r->q_err, fabs(qa[i] - p->start_q[i]));
			next_phase(e, t, pose);
		}
		break;
	case P_CONTACT: {
		const double down[6] = { 0, 0, -p->approach, 0, 0, 0 };

		if (e->sub == 0) { /* where the search began */
			memcpy(e->from, pose, sizeof(e->from));
			e->sub = 1;
		}
		if (e->from[2] - pose[2] > p->travel) {
			r->failure = F_TRAVEL; /* nothing under the tool: give up */
			goto failed;
		}
		b = rtl_rtde_req_move_until_contact(&q, down, 0, p->retract_mm / 1000.0, 0, NULL);
		ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_MOVE_UNTIL_CONTACT);
		if (ret > 0)
			next_phase(e, t, pose);
		break;
	}
	case P_PRESS:
		if (e->sub == 0) { /* limits: 0.1 m/s along the compliant z */
			const double limits[6] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1 };

			b = rtl_rtde_req_force_limits(&q, limits, -1, -1, NULL);
			ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_FORCE_LIMITS);
			e->sub += ret > 0;
		} else if (e->sub == 1) { /* z compliant, the base as task frame */
			const double frame[6] = { 0 }, wrench[6] = { 0, 0, -p->force, 0, 0, 0 };
			const int sel[6] = { 0, 0, 1, 0, 0, 0 };

			b = rtl_rtde_req_force_mode(&q, frame, sel, wrench, 2, NULL);
			ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_FORCE_MODE);
			if (ret > 0) {
				e->sub = 2;
				e->t_sub = t;
			}
		} else { /* slide along x, then brake for the last 0.5 s */
			double dt = t - e->t_sub;

			if (!(status & RTL_RTDE_CMD_STATUS_FORCE) && dt > 0.1) {
				r->failure = F_STATUS; /* force mode went off */
				goto failed;
			}
			if (dt >= p->settle_s) {
				double err = fabs(force[2] + p->force);

				r->err_sum += err;
				r->err_max = fmax(r->err_max, err);
				r->err_n++;
			}
			if (dt < p->press_s) {
				stream(e, cmd, RTL_RTDE_CMD_SPEEDL,
				       dt < p->press_s - 0.5 ? p->slide : 0.0);
			} else {
				stream(e, cmd, RTL_RTDE_CMD_IDLE, 0);
				if (r->err_max > p->tolerance) {
					r->failure = F_FORCE;
					goto failed;
				}
				next_phase(e, t, pose);
			}
		}
		break;
	case P_END_FORCE:
		if (e->sub == 0) {
			b = rtl_rtde_req_simple(&q, RTL_RTDE_REQ_END_FORCE_MODE, NULL);
			ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_END_FORCE_MODE);
			e->sub += ret > 0;
		} else if (!(status & RTL_RTDE_CMD_STATUS_FORCE) && at_rest(qd)) {
			next_phase(e, t, pose);
		}
		break;
	case P_RETRACT:
		if (e->sub == 0) { /* the target, from where the arm is now */
			memcpy(e->from, pose, sizeof(e->from));
			e->sub = 1;
		}
		memcpy(target, e->from, sizeof(target));
		target[2] += p->lift;
		b = rtl_rtde_req_move_l(&q, target, 0.1, 0.5, NULL);
		ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_MOVE_L);
		if (ret > 0)
			next_phase(e, t, pose);
		break;
	case P_TEACH:
		if (e->sub == 0) {
			b = rtl_rtde_req_simple(&q, RTL_RTDE_REQ_TEACH_MODE, NULL);
			ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_TEACH_MODE);
			if (ret > 0) {
				e->sub = 1;
				e->t_sub = t;
				memcpy(e->from, pose, sizeof(e->from));
			}
		} else {
			double d = 0, fn = 0;

			if (!(status & RTL_RTDE_CMD_STATUS_TEACH) && t - e->t_sub > 0.1) {
				r->failure = F_STATUS; /* teach mode went off */
				goto failed;
			}
			for (int i = 0; i < 3; i++) {
				d += (pose[i] - e->from[i]) * (pose[i] - e->from[i]);
				fn += force[i] * force[i];
			}
			r->moved = fmax(r->moved, sqrt(d));
			r->f_max = fmax(r->f_max, sqrt(fn));
			if (t - e->t_sub >= p->teach_s)
				next_phase(e, t, pose);
		}
		break;
	case P_END_TEACH:
		if (e->sub == 0) {
			b = rtl_rtde_req_simple(&q, RTL_RTDE_REQ_END_TEACH_MODE, NULL);
			ret = follow(e, req, &ack, &q, b, RTL_RTDE_REQ_END_TEACH_MODE);
			e->sub += ret > 0;
		} else if (!(status & RTL_RTDE_CMD_STATUS_TEACH) && at_rest(qd)) {
			next_phase(e, t, pose);
			return -ECANCELED; /* all done: the loop stops the arm */
		}
		break;
	case P_N:
		break;
	}
	if (ret < 0)
		goto failed;
	return 0;

failed:
	r->t1 = t;
	memcpy(r->pose, pose, sizeof(r->pose));
	stream(e, cmd, RTL_RTDE_CMD_IDLE, 0);
	return -EPROTO; /* the loop sends STOP and waits for rest */
}

static const char *failure_text(const struct result *r, char *buf, size_t len)
{
	switch (r->failure) {
	case F_NONE:
		return r->ok ? "ok" : r->ran ? "unfinished: the loop stopped" : "not run";
	case F_REQUEST:
		snprintf(buf, len, "%s failed: %s",
			 rtl_rtde_req_kind_name((enum rtl_rtde_req_kind)r->kind),
			 rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)r->reason));
		return buf;
	case F_TIMEOUT:
		return "timed out";
	case F_FORCE:
		return "force not held within tolerance";
	case F_STATUS:
		return "the mode's status bit went off";
	case F_TRAVEL:
		return "no contact within --travel";
	}
	return "?";
}

static const char *outcome(const struct result *r)
{
	return r->ok ? "ok" : r->ran ? "failed" : "not_run";
}

/* The phase table, one line per phase. */
static void print_table(const struct experiment *e, FILE *o)
{
	char buf[128];

	fprintf(o, "%-10s %7s  %-26s %-24s %s\n", "phase", "time", "pose reached [mm]",
		"force err / motion", "outcome");
	for (int i = 0; i < P_N; i++) {
		const struct result *r = &e->r[i];
		char force[32] = "-";

		if (i == P_PRESS && r->err_n)
			snprintf(force, sizeof(force), "mean %.2f max %.2f N",
				 r->err_sum / (double)r->err_n, r->err_max);
		if (i == P_TEACH && r->ran)
			snprintf(force, sizeof(force), "moved %.1f mm, %.1f N", r->moved * 1000.0,
				 r->f_max);
		if (!r->ran) {
			fprintf(o, "%-10s %7s  %-26s %-24s %s\n", phase_names[i], "-", "-", "-",
				"not run");
			continue;
		}
		fprintf(o, "%-10s %6.2fs  (%7.1f %7.1f %7.1f)  %-24s %s\n", phase_names[i],
			r->t1 - r->t0, r->pose[0] * 1000.0, r->pose[1] * 1000.0,
			r->pose[2] * 1000.0, force, failure_text(r, buf, sizeof(buf)));
	}
}

static void write_json(const struct experiment *e, FILE *o, bool ok, bool rest,
		       unsigned long long watchdog)
{
	char buf[128];

	fprintf(o,
		"{\n  \"ok\": %s,\n  \"at_rest_at_exit\": %s,\n  \"loop_watchdog\": %llu,\n"
		"  \"force\": %g,\n  \"tolerance\": %g,\n  \"phases\": [",
		ok ? "true" : "false", rest ? "true" : "false", watchdog, e->p.force,
		e->p.tolerance);
	for (int i = 0; i < P_N; i++) {
		const struct result *r = &e->r[i];

		fprintf(o, "%s\n    {\"name\": \"%s\", \"outcome\": \"%s\", \"ran\": %s",
			i ? "," : "", phase_names[i], outcome(r), r->ran ? "true" : "false");
		if (r->ran) {
			fprintf(o,
				", \"seconds\": %.4f, \"pose\": [%.6f, %.6f, %.6f, %.6f, %.6f, "
				"%.6f]",
				r->t1 - r->t0, r->pose[0], r->pose[1], r->pose[2], r->pose[3],
				r->pose[4], r->pose[5]);
		}
		fprintf(o, ", \"error\": \"%s\"", r->ok ? "" : failure_text(r, buf, sizeof(buf)));
		if (r->failure == F_REQUEST)
			fprintf(o, ", \"request\": \"%s\", \"reason\": \"%s\"",
				rtl_rtde_req_kind_name((enum rtl_rtde_req_kind)r->kind),
				rtl_rtde_req_reason_name((enum rtl_rtde_req_reason)r->reason));
		if (i == P_PRESS && r->err_n)
			fprintf(o,
				", \"force_err_mean\": %.4f, \"force_err_max\": %.4f, \"held\": %s",
				r->err_sum / (double)r->err_n, r->err_max,
				r->err_max <= e->p.tolerance ? "true" : "false");
		if (i == P_START && r->ok)
			fprintf(o, ", \"q_err\": %.6f", r->q_err);
		if (i == P_TEACH && r->ran)
			fprintf(o, ", \"moved\": %.6f, \"force_max\": %.4f", r->moved, r->f_max);
		fprintf(o, "}");
	}
	fprintf(o, "\n  ]\n}\n");
}

static int write_csv(const struct experiment *e, const char *path)
{
	FILE *o = fopen(path, "w");

	if (!o)
		return -errno;
	fprintf(o, "t,phase,x,y,z,fx,fy,fz,status,ack_id,ack_state,ack_reason\n");
	for (long i = 0; i < e->n_samples; i++) {
		const struct sample *s = &e->s[i];

		fprintf(o, "%.4f,%d,%.6f,%.6f,%.6f,%.4f,%.4f,%.4f,%d,%d,%d,%d\n", s->t - e->s[0].t,
			(int)s->phase, s->pose[0], s->pose[1], s->pose[2], s->force[0], s->force[1],
			s->force[2], (int)s->status, (int)s->ack_id, (int)s->ack_state,
			(int)s->ack_reason);
	}
	return fclose(o) ? -errno : 0;
}

static void usage(FILE *o)
{
	fprintf(o, "Usage: experiment [options]\n"
		   "  --host H          controller (default 127.0.0.1)\n"
		   "  --port N          RTDE port (default 30004)\n"
		   "  --start-q Q,..    start pose joints [rad] (default 0.3,-1.5708,1.5708,"
		   "-1.5708,-1.5708,0)\n"
		   "  --approach V      contact: speed down [m/s] (default 0.05)\n"
		   "  --retract MM      contact: retract after it [mm] (default 0)\n"
		   "  --travel M        contact: the farthest it searches down [m] (default 0.1)\n"
		   "  --force N         press: force along -z [N] (default 10)\n"
		   "  --slide V         press: speedl along x [m/s] (default 0.02)\n"
		   "  --press S         press: duration [s] (default 3)\n"
		   "  --tolerance N     press: largest force error that holds [N] (default 1.5)\n"
		   "  --teach S         teach mode duration [s] (default 5)\n"
		   "  --phase-limit S   longest a phase may take [s] (default 20; the press\n"
		   "                    and teach mode: their own time on top)\n"
		   "  --json FILE       write the summary as JSON (- for stdout)\n"
		   "  --csv FILE        write the run (t, phase, TCP xyz, force xyz, status)\n"
		   "  --no-rt           plain threads (no SCHED_FIFO, no memory locking)\n"
		   "  -h, --help        this text\n");
}

static int parse_q(const char *s, double q[6])
{
	char *end;

	for (int i = 0; i < 6; i++) {
		q[i] = strtod(s, &end);
		if (end == s || (i < 5 && *end != ',') || (i == 5 && *end))
			return -1;
		s = end + 1;
	}
	return 0;
}

static bool number(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && !*end && isfinite(*v);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "start-q", required_argument, NULL, 'q' },
		{ "approach", required_argument, NULL, 'a' },
		{ "retract", required_argument, NULL, 'r' },
		{ "travel", required_argument, NULL, 'd' },
		{ "force", required_argument, NULL, 'f' },
		{ "slide", required_argument, NULL, 's' },
		{ "press", required_argument, NULL, 'P' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "teach", required_argument, NULL, 'T' },
		{ "phase-limit", required_argument, NULL, 'L' },
		{ "json", required_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'c' },
		{ "no-rt", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct experiment e = {
		.p = { .start_q = { 0.3, -PI / 2, PI / 2, -PI / 2, -PI / 2, 0 },
		       .approach = 0.05,
		       .travel = 0.1,
		       .force = 10,
		       .slide = 0.02,
		       .press_s = 3,
		       .settle_s = 0.3,
		       .tolerance = 1.5,
		       .lift = 0.05,
		       .teach_s = 5,
		       .phase_limit = 20 },
	};
	const char *host = NULL, *json = NULL, *csv = NULL;
	long port = 0;
	bool no_rt = false;
	struct rtl_rtde_client_config cc = { .size = sizeof(cc),
					     .outputs = OUTPUTS,
					     .inputs = { RTL_RTDE_CMD_RECIPE,
							 RTL_RTDE_REQ_RECIPE } };
	struct rtl_rtde_transport_config tc = {
		.size = sizeof(tc), .client = &cc, .connected = connected, .user = &e
	};
	struct rtl_loop_config lc = { .size = sizeof(lc), .step = step, .user = &e };
	struct rtl_rtde_transport *rtde;
	struct rtl_loop_counters counters = { .size = sizeof(counters) };
	struct rtl_error err = { 0 };
	bool ok = true;
	int c, ret, li = 0;

	while ((c = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		double v = 0;

		switch (c) {
		case 'H':
			host = optarg;
			continue;
		case 'p':
			port = strtol(optarg, NULL, 10);
			if (port <= 0 || port > 65535)
				break;
			continue;
		case 'q':
			if (parse_q(optarg, e.p.start_q) < 0)
				break;
			continue;
		case 'j':
			json = optarg;
			continue;
		case 'c':
			csv = optarg;
			continue;
		case 'n':
			no_rt = true;
			continue;
		case 'h':
			usage(stdout);
			return 0;
		case '?':
			usage(stderr);
			return 2;
		default: /* the numbers, each > 0 but the retract (>= 0) */
			if (!number(optarg, &v) || v < 0 || (v == 0 && c != 'r'))
				break;
			*(c == 'a'   ? &e.p.approach
			  : c == 'r' ? &e.p.retract_mm
			  : c == 'd' ? &e.p.travel
			  : c == 'f' ? &e.p.force
			  : c == 's' ? &e.p.slide
			  : c == 'P' ? &e.p.press_s
			  : c == 't' ? &e.p.tolerance
			  : c == 'T' ? &e.p.teach_s
				     : &e.p.phase_limit) = v;
			continue;
		}
		fprintf(stderr, "experiment: bad value '%s' for --%s (see --help)\n", optarg,
			opts[li].name);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "experiment: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return 2;
	}

	e.s = calloc(MAX_SAMPLES, sizeof(*e.s));
	if (!e.s)
		return fprintf(stderr, "experiment: out of memory\n"), 1;
	rtl_rtde_req_ids_init(&e.ids);
	tc.host = host;
	tc.port = (uint16_t)port;
	if (rtl_rtde_transport_create(&rtde, &tc, &err) < 0)
		return fprintf(stderr, "experiment: %s\n", err.msg), 1;
	lc.transport = rtl_rtde_transport_base(rtde);
	lc.rt_mode = no_rt ? RTL_LOOP_RT_OFF : RTL_LOOP_RT_DEGRADE;
	lc.stop_timeout_ns = 5 * (int64_t)1000000000; /* the stop at exit may brake a slide */
	/* The loop's watchdog sends STOP when a frame waits this many periods
	 * for a step; STOP also ends force and teach mode and fails a move.
	 * The default, 3 periods (6 ms at 500 Hz), is for control laws that
	 * must not run late; these phases only follow requests, so 25 (50 ms,
	 * half the controller's heartbeat watchdog) keeps a host hiccup from
	 * ending the experiment, and the controller's still stops a dead loop. */
	lc.watchdog_periods = 25;
	if (rtl_loop_create(&the_loop, &lc, &err) < 0) {
		fprintf(stderr, "experiment: %s\n", err.msg);
		rtl_rtde_transport_destroy(rtde);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Runs until the last phase ends (-ECANCELED), one fails (-EPROTO),
	 * a signal, or the connection is lost; the arm is at rest after it. */
	ret = rtl_loop_run(the_loop, &err);
	if (ret != -ECANCELED) {
		ok = false;
		if (ret == 0)
			fprintf(stderr, "experiment: stopped by a signal\n");
		else if (ret != -EPROTO)
			fprintf(stderr, "experiment: the loop ended early (%s): %s\n",
				strerror(-ret), err.msg[0] ? err.msg : "see the report");
	}
	for (int i = 0; i < P_N; i++)
		ok = ok && e.r[i].ok;
	rtl_loop_stats(the_loop, &counters);

	print_table(&e, stdout);
	if (e.r[P_START].ran) /* connected: the loop's stop at exit ran */
		printf("stop at exit: %s\n", counters.stop_unconfirmed
						     ? "the arm was NOT seen at rest"
						     : "the arm at rest");
	if (counters.watchdog) /* the safe package (STOP) ends moves, force and teach mode */
		printf("loop: %llu watchdog episodes (a step was late; the STOP it sent ends "
		       "moves, force and teach mode)\n",
		       (unsigned long long)counters.watchdog);
	printf("experiment: %s\n", ok ? "every phase ok" : "FAILED");
	if (json) {
		FILE *o = strcmp(json, "-") ? fopen(json, "w") : stdout;

		if (!o) {
			fprintf(stderr, "experiment: %s: %s\n", json, strerror(errno));
			ok = false;
		} else {
			write_json(&e, o, ok, !counters.stop_unconfirmed,
				   (unsigned long long)counters.watchdog);
			if (o != stdout)
				fclose(o);
		}
	}
	if (csv && (ret = write_csv(&e, csv)) < 0) {
		fprintf(stderr, "experiment: %s: %s\n", csv, strerror(-ret));
		ok = false;
	}
	rtl_loop_destroy(the_loop);
	rtl_rtde_transport_destroy(rtde);
	free(e.s);
	return ok ? 0 : 1;
}
