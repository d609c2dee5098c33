// SPDX-License-Identifier: MIT
/*
 * rtde-sim's UDP mode: see udp.h for the design and docs/udp.md for the
 * wire format.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "driver.h"
#include "timer.h"
#include "udp.h"

#define DEG (180.0 / M_PI)
#define RAD (M_PI / 180.0)
#define ECHO_RING 4096 /* states remembered for the round trip (4 s) */
#define MAX_CATCH_UP 50
#define READS_PER_WAKE 64
/* Alarm codes are small: one rate per code of the RT group. */
#define ALARM_CODES 8

enum { TAG_SOCK = 1, TAG_TIMER, TAG_STOP };

struct sim_udp {
	struct sim_udp_opts opts;
	struct sim_robot robot;
	struct sim_driver drv; /* epoll, timer, stop, thread */
	int fd;
	uint16_t port;

	/* Schedule. */
	int64_t t0;	/* deadline of cycle 0 */
	uint64_t cycle; /* next cycle to run */
	int64_t armed;	/* the deadline the timer is set to, or -1 */
	int64_t end;

	/* The session. */
	bool client;
	struct sockaddr_in peer;
	uint64_t session_cycle0; /* the cycle whose state is sequence number 1 */
	int64_t last_heard;
	bool have_cmd_seq;
	uint64_t last_cmd_seq;
	uint64_t last_echo_seq;
	struct sim_udp_loss loss;
	struct rtl_udp_limits limits;
	struct sim_udp_rate alarm_rate[ALARM_CODES];
	uint64_t alarm_seq; /* the session's alarms sent */
	struct {
		uint64_t seq;
		int64_t sent_ns;
	} echo[ECHO_RING];

	struct sim_udp_stats st;
	struct rtl_hist echo_hist;
	struct rtl_udp_state state;
	uint8_t tx[RTL_UDP_MAX_DATAGRAM];
	uint8_t rx[RTL_UDP_MAX_DATAGRAM + 1];

	pthread_mutex_t lock; /* guards snap */
	struct sim_udp_stats snap;
};

/* ---- pure pieces ---------------------------------------------------------------------- */

void sim_udp_zyz(const double R[9], double abc[3])
{
	double sb = hypot(R[2], R[5]);

	abc[1] = atan2(sb, R[8]);
	if (sb > 1e-9) {
		abc[0] = atan2(R[5], R[2]);
		abc[2] = atan2(R[7], -R[6]);
	} else if (R[8] > 0) {
		/* b = 0: only a + c is defined; c = 0. */
		abc[0] = atan2(R[3], R[0]);
		abc[2] = 0;
	} else {
		/* b = pi: only a - c is defined; c = 0. */
		abc[0] = atan2(-R[1], R[4]);
		abc[2] = 0;
	}
}

/* A UR pose (m, rotation vector) in Doosan units (mm, ZYZ deg). */
static void pose_to_doosan(const double p[6], float out[6])
{
	double R[9], abc[3];

	sim_robot_rotvec_to_matrix(p + 3, R);
	sim_udp_zyz(R, abc);
	for (int i = 0; i < 3; i++) {
		out[i] = (float)(p[i] * 1000.0);
		out[i + 3] = (float)(abc[i] * DEG);
	}
}

/* A twist (m/s, rad/s) in mm/s and deg/s. */
static void speed_to_doosan(const double v[6], float out[6])
{
	for (int i = 0; i < 3; i++) {
		out[i] = (float)(v[i] * 1000.0);
		out[i + 3] = (float)(v[i + 3] * DEG);
	}
}

static void deg6(const double in[6], float out[6])
{
	for (int i = 0; i < 6; i++)
		out[i] = (float)(in[i] * DEG);
}

static void f6(const double in[6], float out[6])
{
	for (int i = 0; i < 6; i++)
		out[i] = (float)in[i];
}

void sim_udp_fill_state(const struct sim_robot *r, double time_s, struct rtl_udp_state *s)
{
	double flange[6], jac[36], jac0[36], fv[6] = { 0 };
	bool moving = false;

	memset(s, 0, sizeof(*s));
	s->time_stamp = time_s;
	deg6(r->actual_q, s->actual_joint_position);
	deg6(r->actual_q, s->actual_joint_position_abs);
	deg6(r->actual_qd, s->actual_joint_velocity);
	deg6(r->actual_qd, s->actual_joint_velocity_abs);
	pose_to_doosan(r->actual_TCP_pose, s->actual_tcp_position);
	speed_to_doosan(r->actual_TCP_speed, s->actual_tcp_velocity);
	sim_robot_fk_dh(&r->cfg.dh, r->actual_q, NULL, flange);
	pose_to_doosan(flange, s->actual_flange_position);
	sim_robot_jacobian_dh(&r->cfg.dh, r->actual_q, NULL, jac0);
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 6; j++)
			fv[i] += jac0[6 * i + j] * r->actual_qd[j];
	speed_to_doosan(fv, s->actual_flange_velocity);
	f6(r->target_moment, s->actual_motor_torque);
	f6(r->target_moment, s->actual_joint_torque);
	f6(r->target_moment, s->raw_joint_torque);
	f6(r->ft_raw_wrench, s->raw_force_torque);
	f6(r->actual_TCP_force, s->external_tcp_force);
	deg6(r->target_q, s->target_joint_position);
	deg6(r->target_qd, s->target_joint_velocity);
	deg6(r->target_qdd, s->target_joint_acceleration);
	f6(r->target_moment, s->target_motor_torque);
	pose_to_doosan(r->target_TCP_pose, s->target_tcp_position);
	speed_to_doosan(r->target_TCP_speed, s->target_tcp_velocity);
	/* The Jacobian as the plant computes it: SI (m/rad, rad/rad). */
	sim_robot_jacobian_dh(&r->cfg.dh, r->actual_q, r->tcp_offset, jac);
	for (int i = 0; i < 36; i++)
		s->jacobian_matrix[i / 6][i % 6] = (float)jac[i];
	/* Doosan's operation speed rate is the pendant's speed override, 1-100 %:
	 * the slider, not the limiter's factor */
	s->operation_speed_rate = (float)fmax(1.0, r->target_speed_fraction * 100.0);
	f6(r->joint_temperatures, s->joint_temperature);
	s->controller_digital_input = (uint16_t)r->actual_digital_input_bits;
	s->controller_digital_output =
		(uint16_t)(r->standard_digital_out | (r->configurable_digital_out << 8));
	for (int i = 0; i < 2; i++) {
		s->controller_analog_input[i] = (float)r->standard_analog_input[i];
		s->controller_analog_output[i] = (float)r->standard_analog_output[i];
		s->controller_analog_input_type[i] = (r->analog_io_types >> i) & 1 ? 0 : 1;
		s->controller_analog_output_type[i] = (r->analog_io_types >> (2 + i)) & 1 ? 0 : 1;
	}
	s->flange_digital_output = r->tool_digital_out;
	deg6(r->target_q, s->goal_joint_position);
	pose_to_doosan(r->target_TCP_pose, s->goal_tcp_position);
	for (int i = 0; i < 6; i++)
		moving |= fabs(r->target_qd[i]) > 1e-6;
	s->robot_mode = 1; /* autonomous */
	/* ROBOT_STATE: 1 STANDBY, 2 MOVING, 5 SAFE_STOP after a time-out */
	s->robot_state = r->watchdog_tripped ? 5 : moving ? 2 : 1;
	s->control_mode = 3; /* position */
}

/*
 * The robot ramps with one acceleration for all axes (the vector's rate of
 * change); Doosan gives one per axis. Each axis asks for its own value, or
 * for AUTO its velocity change over target_time (the AUTO rule); the
 * robot gets the norm of those, so no axis is slower than asked. 0: the
 * robot's default.
 */
static double ramp_acc(const double acc[], const double dv[], int n, double scale,
		       double target_time)
{
	double sum = 0;

	for (int i = 0; i < n; i++) {
		double a = 0;

		if (acc[i] > 0 && acc[i] != RTL_UDP_AUTO)
			a = acc[i] * scale;
		else if (target_time > 0)
			a = fabs(dv[i]) / target_time;
		sum += a * a;
	}
	return sqrt(sum);
}

int sim_udp_apply(struct sim_robot *r, const struct rtl_udp_cmd *c, int32_t seq, int64_t now_ns)
{
	struct sim_robot_cmd cmd = { .seq = seq, .mode = RTL_RTDE_CMD_IDLE };
	double dv[6] = { 0 }, period = (double)r->cfg.period_ns * 1e-9, tau;
	bool unsupported = false;
	int ret;

	switch (c->mode) {
	case RTL_UDP_MODE_SPEEDJ:
		cmd.mode = RTL_RTDE_CMD_SPEEDJ;
		for (int i = 0; i < 6; i++) {
			cmd.param[i] = c->vel[i] * RAD;
			dv[i] = cmd.param[i] - r->target_qd[i];
		}
		cmd.accel = ramp_acc(c->acc, dv, 6, RAD, c->target_time);
		break;
	case RTL_UDP_MODE_SPEEDL:
		cmd.mode = RTL_RTDE_CMD_SPEEDL;
		for (int i = 0; i < 3; i++) {
			cmd.param[i] = c->vel[i] / 1000.0;
			cmd.param[i + 3] = c->vel[i + 3] * RAD;
			dv[i] = cmd.param[i] - r->target_TCP_speed[i];
		}
		/* The robot's linear ramp rate (m/s^2) from the x, y, z axes. */
		cmd.accel = ramp_acc(c->acc, dv, 3, 1e-3, c->target_time);
		break;
	case RTL_UDP_MODE_SERVOJ:
		cmd.mode = RTL_RTDE_CMD_SERVOJ;
		for (int i = 0; i < 6; i++)
			cmd.param[i] = c->pos[i] * RAD;
		/* The tracker reaches ~95 % of a step in 3 time constants. */
		tau = fmax(c->target_time / 3.0, period);
		cmd.time = c->target_time;
		cmd.lookahead = RTL_RTDE_CMD_LOOKAHEAD_MIN;
		cmd.gain = fmin(RTL_RTDE_CMD_GAIN_MAX,
				fmax(RTL_RTDE_CMD_GAIN_MIN,
				     RTL_RTDE_CMD_LOOKAHEAD_MIN * RTL_RTDE_CMD_GAIN_DEFAULT / tau));
		break;
	case RTL_UDP_MODE_SERVOL:
		unsupported = true;
		cmd.mode = RTL_RTDE_CMD_STOP;
		break;
	case RTL_UDP_MODE_STOP:
		cmd.mode = RTL_RTDE_CMD_STOP;
		cmd.accel = ramp_acc(c->acc, dv, 1, r->linear ? 1e-3 : RAD, 0);
		break;
	default:
		break; /* NONE: a heartbeat only */
	}
	ret = sim_robot_command(r, &cmd, now_ns);
	if (ret < 0)
		return ret;
	return unsupported ? -ENOTSUP : 0;
}

/* ---- Doosan's RT session rules: limits, loss count, alarm rate ---------------------------- */

static void keep_or_take(double *cur, double in)
{
	if (in != 0)
		*cur = in;
}

void sim_udp_limits_merge(struct rtl_udp_limits *cur, const struct rtl_udp_limits *in)
{
	for (int i = 0; i < 2; i++) {
		keep_or_take(&cur->velx[i], in->velx[i]);
		keep_or_take(&cur->accx[i], in->accx[i]);
	}
	for (int i = 0; i < 6; i++) {
		keep_or_take(&cur->velj[i], in->velj[i]);
		keep_or_take(&cur->accj[i], in->accj[i]);
	}
}

/* The limit of axis @i: the joint's, or the Cartesian translational one
 * on x, y, z and the rotational one (AUTO: the same number) on the
 * rotations. 0: none. */
static double axis_limit(const double j[6], const double x[2], bool joint, int i)
{
	if (joint)
		return j[i];
	if (i < 3)
		return x[0];
	return x[1] == RTL_UDP_AUTO ? x[0] : x[1];
}

/* The robot's target speed on axis @i in the command's Doosan units. */
static double target_speed(const struct sim_robot *r, bool joint, int i)
{
	if (joint)
		return r->target_qd[i] * DEG;
	return r->target_TCP_speed[i] * (i < 3 ? 1000.0 : DEG);
}

bool sim_udp_clamp(const struct rtl_udp_limits *l, const struct sim_robot *r, struct rtl_udp_cmd *c,
		   struct sim_udp_clamp *out)
{
	bool joint = c->mode == RTL_UDP_MODE_SPEEDJ;

	memset(out, 0, sizeof(*out));
	if (c->mode != RTL_UDP_MODE_SPEEDJ && c->mode != RTL_UDP_MODE_SPEEDL)
		return false;
	/* Velocities first: an AUTO acceleration is derived from the
	 * velocity that will be commanded, the clamped one. */
	for (int i = 0; i < 6; i++) {
		double lim = axis_limit(l->velj, l->velx, joint, i), v = c->vel[i];

		if (!(lim > 0) || !isfinite(v) || fabs(v) <= lim)
			continue;
		c->vel[i] = copysign(lim, v);
		if (!out->vel) {
			out->vel = true;
			out->vel_axis = i;
			out->vel_asked = v;
			out->vel_limit = lim;
		}
	}
	for (int i = 0; i < 6; i++) {
		double lim = axis_limit(l->accj, l->accx, joint, i), a = c->acc[i];
		/* What ramp_acc() derives: every value that is not above 0. */
		bool derived = !(a > 0);

		if (!(lim > 0))
			continue;
		if (derived) {
			if (!(c->target_time > 0))
				continue;
			a = fabs(c->vel[i] - target_speed(r, joint, i)) / c->target_time;
		}
		if (!isfinite(a) || a <= lim)
			continue;
		c->acc[i] = lim;
		if (!out->acc) {
			out->acc = true;
			out->acc_axis = i;
			out->acc_asked = a;
			out->acc_limit = lim;
			out->acc_auto = derived;
		}
	}
	return out->vel || out->acc;
}

const char *sim_udp_clamp_text(enum rtl_udp_mode mode, const struct sim_udp_clamp *cl, bool acc,
			       char *buf, size_t len)
{
	int i = acc ? cl->acc_axis : cl->vel_axis;
	const char *unit = mode == RTL_UDP_MODE_SPEEDJ || i >= 3 ? "deg/s" : "mm/s";

	if (acc)
		snprintf(buf, len, "%s: acc[%d] = %g %s^2%s is above the limit %g %s^2: clamped",
			 rtl_udp_mode_name(mode), i, cl->acc_asked, unit,
			 cl->acc_auto ? " (AUTO)" : "", cl->acc_limit, unit);
	else
		snprintf(buf, len, "%s: vel[%d] = %g %s is above the limit %g %s: clamped",
			 rtl_udp_mode_name(mode), i, cl->vel_asked, unit, cl->vel_limit, unit);
	return buf;
}

void sim_udp_loss_command(struct sim_udp_loss *l)
{
	l->armed = true;
	l->fresh = true;
}

bool sim_udp_loss_cycle(struct sim_udp_loss *l, bool late)
{
	if (!l->armed || late)
		return false;
	if (l->fresh) {
		l->fresh = false;
		l->misses = 0;
		return false;
	}
	if (l->misses < UINT32_MAX)
		l->misses++;
	return l->count > 0 && l->misses > (uint32_t)l->count;
}

bool sim_udp_rate_ok(struct sim_udp_rate *r, int64_t now_ns, int64_t interval_ns)
{
	if (r->any && now_ns - r->last_ns < interval_ns)
		return false;
	r->any = true;
	r->last_ns = now_ns;
	return true;
}

/* ---- the session ------------------------------------------------------------------------ */

static bool same_peer(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* True when the datagram went out. */
static bool send_to_peer(struct sim_udp *u, const uint8_t *buf, int len)
{
	if (len <= 0)
		return false;
	if (sendto(u->fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL,
		   (const struct sockaddr *)&u->peer, sizeof(u->peer)) < 0) {
		u->st.send_errors++;
		return false;
	}
	return true;
}

static void send_alarm(struct sim_udp *u, enum rtl_udp_alarm_level level,
		       enum rtl_udp_alarm_code code, const char *text, int64_t now)
{
	struct rtl_udp_alarm a = { .level = level, .group = RTL_UDP_ALARM_GROUP_RT, .code = code };
	int len;

	snprintf(a.text, sizeof(a.text), "%s", text);
	/* Numbered even when the send fails: a gap is a lost alarm. */
	len = rtl_udp_encode_alarm(u->tx, sizeof(u->tx), ++u->alarm_seq, now, &a);
	if (send_to_peer(u, u->tx, len))
		u->st.alarms_sent++;
}

/*
 * An alarm that a client can provoke every period (a clamped or an
 * unsupported command): at most one per second per code, on the simulated
 * clock (the cycle the command acts in x period, the states' clock), so
 * that the count depends on the cycles, not on how the host schedules us.
 */
static void send_alarm_rated(struct sim_udp *u, enum rtl_udp_alarm_level level,
			     enum rtl_udp_alarm_code code, const char *text, int64_t now,
			     uint64_t *suppressed)
{
	int64_t sim_ns = (int64_t)u->cycle * u->opts.period_ns;

	if (!sim_udp_rate_ok(&u->alarm_rate[code % ALARM_CODES], sim_ns, RTL_NS_PER_SEC)) {
		(*suppressed)++;
		return;
	}
	send_alarm(u, level, code, text, now);
}

/* The end of RT control, the client's BYE or the loss count's: stop, and
 * stop watching the heartbeat (a new one, watchdog off). */
static void stop_robot(struct sim_udp *u, int64_t now)
{
	struct sim_robot_cmd stop = { .mode = RTL_RTDE_CMD_STOP,
				      .seq = u->robot.last_seq + 1,
				      .watchdog_ms = -1 };

	sim_robot_command(&u->robot, &stop, now);
}

/* More than loss_count periods without a command: ALARM, BYE, stop, end
 * (set_rt_control_input's loss count). @seq is this cycle's state number,
 * which no state carries: the BYE does. */
static void end_by_loss(struct sim_udp *u, uint64_t seq, int64_t now)
{
	char text[RTL_UDP_ALARM_TEXT];
	int len;

	snprintf(text, sizeof(text),
		 "RT input lost %u periods in a row (loss count %d): RT session closed",
		 u->loss.misses, u->loss.count);
	send_alarm(u, RTL_UDP_ALARM_ERROR, RTL_UDP_ALARM_LOSS, text, now);
	len = rtl_udp_encode_bye(u->tx, sizeof(u->tx), seq, now);
	if (send_to_peer(u, u->tx, len))
		u->st.byes_sent++;
	stop_robot(u, now);
	u->st.loss_closed++;
	u->client = false;
}

static void on_hello(struct sim_udp *u, const struct sockaddr_in *from,
		     const struct rtl_udp_hello *hi, int64_t now)
{
	struct rtl_udp_hello w = { .period_ns = (uint32_t)u->opts.period_ns };
	int len;

	u->st.hellos++;
	if (u->client && !same_peer(from, &u->peer)) {
		/* One RT client at a time, as on the controller; one that has
		 * been silent for the client time-out may be replaced. */
		if (now - u->last_heard <= u->opts.client_timeout_ns) {
			u->st.rejected++;
			return;
		}
		u->st.timeouts++;
		u->client = false;
	}
	if (!u->client || !same_peer(from, &u->peer)) {
		u->st.sessions++;
		u->client = true;
		u->peer = *from;
		u->session_cycle0 = u->cycle;
		u->have_cmd_seq = false;
		u->last_echo_seq = 0;
		memset(u->echo, 0, sizeof(u->echo));
		/* Doosan's RT settings belong to the session: none yet. */
		memset(&u->loss, 0, sizeof(u->loss));
		memset(&u->limits, 0, sizeof(u->limits));
		memset(u->alarm_rate, 0, sizeof(u->alarm_rate));
		u->alarm_seq = 0;
	}
	/* A repeated HELLO (the WELCOME was lost) is answered again, and
	 * its loss count is the one that applies. */
	u->last_heard = now;
	u->loss.count = hi->loss_count > 0 ? hi->loss_count : 0;
	w.loss_count = u->loss.count;
	memcpy(w.schema, RTL_UDP_SCHEMA, sizeof(RTL_UDP_SCHEMA));
	len = rtl_udp_encode_hello(u->tx, sizeof(u->tx), RTL_UDP_WELCOME, u->st.sessions, now, &w);
	send_to_peer(u, u->tx, len);
}

/* A command the robot took was clamped: count it, tell the client. */
static void on_clamp(struct sim_udp *u, enum rtl_udp_mode mode, const struct sim_udp_clamp *cl,
		     int64_t now)
{
	char text[RTL_UDP_ALARM_TEXT];

	if (cl->vel) {
		u->st.vel_clamped++;
		send_alarm_rated(u, RTL_UDP_ALARM_INFO, RTL_UDP_ALARM_VEL_LIMIT,
				 sim_udp_clamp_text(mode, cl, false, text, sizeof(text)), now,
				 &u->st.limit_alarms_suppressed);
	}
	if (cl->acc) {
		u->st.acc_clamped++;
		send_alarm_rated(u, RTL_UDP_ALARM_INFO, RTL_UDP_ALARM_ACC_LIMIT,
				 sim_udp_clamp_text(mode, cl, true, text, sizeof(text)), now,
				 &u->st.limit_alarms_suppressed);
	}
}

static void on_command(struct sim_udp *u, const struct rtl_udp_header *h,
		       const struct rtl_udp_cmd *c, int64_t now)
{
	struct rtl_udp_cmd run = *c; /* what the robot gets: within the limits */
	struct sim_udp_clamp cl;
	bool clamped;
	int ret;

	u->last_heard = now;
	/* Every double a client sends is looked at (the tests count them). */
	u->st.nonfinite_in += !isfinite(c->target_time);
	for (int i = 0; i < 6; i++)
		u->st.nonfinite_in +=
			!isfinite(c->pos[i]) + !isfinite(c->vel[i]) + !isfinite(c->acc[i]);
	/* Dropped, each under its own name, and not a heartbeat: a datagram
	 * that repeats or precedes the newest one, and a target time that is
	 * no duration (docs/doosan-rt.md 3.1: t >= 0; -10000 is AUTO only
	 * for velocities and accelerations). */
	if (u->have_cmd_seq && h->seq == u->last_cmd_seq) {
		u->st.duplicate_in++;
		return;
	}
	if (u->have_cmd_seq && h->seq < u->last_cmd_seq) {
		u->st.stale_in++;
		return;
	}
	if (!(c->target_time >= 0) || !isfinite(c->target_time)) {
		u->st.bad_target_time++;
		return;
	}
	u->st.commands++;
	if (u->have_cmd_seq && h->seq > u->last_cmd_seq + 1)
		u->st.commands_lost += h->seq - u->last_cmd_seq - 1;
	u->have_cmd_seq = true;
	u->last_cmd_seq = h->seq;
	sim_udp_loss_command(&u->loss);
	if (c->mode < RTL_UDP_MODE_COUNT)
		u->st.mode_count[c->mode]++;
	if (c->echo_seq > u->last_echo_seq) {
		unsigned i = (unsigned)(c->echo_seq % ECHO_RING);

		if (u->echo[i].seq == c->echo_seq) {
			rtl_hist_record(&u->echo_hist, now - u->echo[i].sent_ns);
			u->st.echoes++;
		} else {
			u->st.echo_unmatched++;
		}
		u->last_echo_seq = c->echo_seq;
	}
	clamped = sim_udp_clamp(&u->limits, &u->robot, &run, &cl);
	ret = sim_udp_apply(&u->robot, &run, (int32_t)(uint32_t)h->seq, now);
	if (ret == -ENOTSUP) {
		u->st.unsupported++;
		send_alarm_rated(u, RTL_UDP_ALARM_WARN, RTL_UDP_ALARM_UNSUPPORTED,
				 "servol_rt is not modelled by rtde-sim: robot stopped", now,
				 &u->st.unsupported_alarms_suppressed);
	} else if (ret < 0) {
		u->st.refused++;
	} else if (clamped) {
		/* Only a command the robot took: a refused one moved nothing. */
		on_clamp(u, run.mode, &cl, now);
	}
}

static void on_limits(struct sim_udp *u, size_t len, int64_t now)
{
	struct rtl_udp_limits l;
	int ret = rtl_udp_decode_limits(NULL, &l, u->rx, len);

	u->last_heard = now;
	if (ret == -EDOM) {
		u->st.bad_limits++; /* a value below 0 or not finite: all ignored */
		return;
	}
	if (ret < 0) {
		u->st.bad_in++;
		return;
	}
	sim_udp_limits_merge(&u->limits, &l);
	u->st.limits_in++;
}

static void on_datagram(struct sim_udp *u, size_t len, const struct sockaddr_in *from, int64_t now)
{
	struct rtl_udp_header h;
	struct rtl_udp_hello hi;
	struct rtl_udp_cmd c;

	u->st.datagrams_in++;
	if (rtl_udp_decode_header(&h, u->rx, len) < 0) {
		u->st.bad_in++;
		return;
	}
	if (h.type == RTL_UDP_HELLO) {
		if (rtl_udp_decode_hello(&h, &hi, u->rx, len) < 0)
			u->st.bad_in++;
		else
			on_hello(u, from, &hi, now);
		return;
	}
	if (!u->client || !same_peer(from, &u->peer)) {
		u->st.rejected++;
		return;
	}
	if (h.type == RTL_UDP_BYE) {
		stop_robot(u, now);
		u->st.byes++;
		u->client = false;
	} else if (h.type == RTL_UDP_COMMAND) {
		if (rtl_udp_decode_command(&h, &c, u->rx, len) < 0)
			u->st.bad_in++;
		else
			on_command(u, &h, &c, now);
	} else if (h.type == RTL_UDP_LIMITS) {
		on_limits(u, len, now);
	} else {
		u->st.bad_in++; /* a server-to-client type */
	}
}

/* The robot's command time-out tripped: tell the client (once per trip). */
static void on_watchdog(struct sim_udp *u, int64_t now)
{
	char text[RTL_UDP_ALARM_TEXT];

	u->st.watchdog_trips++;
	if (!u->client)
		return;
	snprintf(text, sizeof(text), "RT command time-out: no command for %lld ms; robot stopped",
		 (long long)(u->robot.cfg.watchdog_ns / RTL_NS_PER_MS));
	send_alarm(u, RTL_UDP_ALARM_ERROR, RTL_UDP_ALARM_CMD_TIMEOUT, text, now);
}

/*
 * One control cycle: step the robot, count the loss, send the state unless
 * skipped. @on_time: the newest cycle due; the others of a catch-up ran
 * late because the host stalled us, and the client, which had no state to
 * answer meanwhile, is not blamed for them by the loss count.
 */
/* The report's snapshot, for other threads: taken under the lock. */
static void publish(struct sim_udp *u)
{
	u->st.client = u->client;
	sim_robot_summarize(&u->robot, &u->st.robot);
	pthread_mutex_lock(&u->lock);
	u->snap = u->st;
	pthread_mutex_unlock(&u->lock);
}

static void cycle(struct sim_udp *u, int64_t now, bool send, bool on_time)
{
	uint64_t k = u->cycle++;
	uint32_t every = u->opts.skip_every;
	uint64_t seq;
	int len;

	if (sim_robot_step(&u->robot, now) & SIM_ROBOT_EV_WATCHDOG)
		on_watchdog(u, now);
	u->st.cycles++;
	if (!u->client)
		return;
	seq = k - u->session_cycle0 + 1;
	if (sim_udp_loss_cycle(&u->loss, !on_time)) {
		end_by_loss(u, seq, now);
		return;
	}
	if (!send) {
		u->st.overruns++;
		return;
	}
	if (every && k % every >= every - u->opts.skip_count) {
		u->st.states_skipped++;
		return;
	}
	sim_udp_fill_state(&u->robot,
			   u->opts.start_time_s +
				   (double)u->robot.cycles * ((double)u->opts.period_ns * 1e-9),
			   &u->state);
	len = rtl_udp_encode_state(u->tx, sizeof(u->tx), seq, rtl_time_now(), &u->state);
	/* Counted and published before it leaves: a report read after the
	 * client got this state includes it, and the plant it shows. */
	if (len > 0)
		u->st.states_sent++;
	publish(u);
	/* The round trip starts when the bytes are handed to the socket, as
	 * the bare ping-pong's does: after the plant step and the encode. */
	u->echo[seq % ECHO_RING].seq = seq;
	u->echo[seq % ECHO_RING].sent_ns = rtl_time_now();
	send_to_peer(u, u->tx, len);
}

/* ---- the driver ---------------------------------------------------------------------------- */

void sim_udp_opts_default(struct sim_udp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = RTL_UDP_DEFAULT_PORT;
	o->period_ns = RTL_NS_PER_MS;
	o->client_timeout_ns = RTL_NS_PER_SEC;
	sim_robot_config_default(&o->robot);
}

/* Deadline of cycle @k: on the grid from t0, never "now + period". */
static int64_t deadline(const struct sim_udp *u, uint64_t k)
{
	return u->t0 + (int64_t)k * u->opts.period_ns;
}

int sim_udp_create(struct sim_udp **out, const struct sim_udp_opts *o)
{
	struct sim_udp *u;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	int err;

	if (!out || !o || o->period_ns <= 0 || o->period_ns > RTL_NS_PER_SEC || o->duration_s < 0 ||
	    (o->skip_every && o->skip_count >= o->skip_every) || o->skip_every == 1)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->fd = -1;
	sim_driver_init(&u->drv);
	u->opts = *o;
	if (!u->opts.bind)
		u->opts.bind = "127.0.0.1";
	if (u->opts.client_timeout_ns <= 0)
		u->opts.client_timeout_ns = RTL_NS_PER_SEC;
	if (!u->opts.skip_count)
		u->opts.skip_count = 1;
	u->opts.robot.period_ns = u->opts.period_ns;
	pthread_mutex_init(&u->lock, NULL);
	rtl_hist_init(&u->echo_hist);
	err = sim_robot_init(&u->robot, &u->opts.robot);
	if (err)
		goto err_destroy;
	if (inet_pton(AF_INET, u->opts.bind, &sa.sin_addr) != 1) {
		err = -EINVAL;
		goto err_destroy;
	}
	sa.sin_port = htons(u->opts.port);
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0 || bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(u->fd, (struct sockaddr *)&sa, &salen))
		goto err_errno;
	u->port = ntohs(sa.sin_port);
	if ((err = sim_driver_open(&u->drv, TAG_TIMER, TAG_STOP)) ||
	    (err = sim_driver_watch(&u->drv, EPOLL_CTL_ADD, u->fd, EPOLLIN, TAG_SOCK)))
		goto err_destroy;
	*out = u;
	return 0;

err_errno:
	err = -errno;
err_destroy:
	sim_udp_destroy(u);
	return err;
}

uint16_t sim_udp_port(const struct sim_udp *u)
{
	return u->port;
}

static void read_all(struct sim_udp *u)
{
	for (int i = 0; i < READS_PER_WAKE; i++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(u->fd, u->rx, sizeof(u->rx), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN, or an ICMP error of an old send */
		}
		on_datagram(u, (size_t)n, &from, rtl_time_now());
	}
}

int sim_udp_run(struct sim_udp *u)
{
	struct epoll_event evs[4];
	int64_t now = rtl_time_now();
	bool quit = false;
	int err = 0;

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	u->t0 = now + u->opts.period_ns;
	u->cycle = 0;
	u->armed = -1;
	u->end = u->opts.duration_s > 0 ? now + llround(u->opts.duration_s * 1e9) : 0;
	while (!quit) {
		uint64_t next;
		int n;

		sim_timer_arm(u->drv.timer_fd, &u->armed, deadline(u, u->cycle));
		n = epoll_wait(u->drv.epoll_fd, evs, 4, 200);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		for (int i = 0; i < n; i++)
			if (evs[i].data.u64 == TAG_STOP)
				quit = true;
		/* Inputs first: a command counts in the cycle it arrived in. */
		read_all(u);
		now = rtl_time_now();
		/* The timer goes to the next cycle before this one's state is
		 * sent: after the send the thread only waits, like a bare
		 * ping-pong's, so that the client's answer meets no timer
		 * work of ours. */
		for (next = u->cycle; now >= deadline(u, next); next++)
			;
		sim_timer_arm(u->drv.timer_fd, &u->armed, deadline(u, next));
		while (u->cycle < next)
			cycle(u, now,
			      (now - deadline(u, u->cycle)) / u->opts.period_ns <= MAX_CATCH_UP,
			      u->cycle + 1 == next);
		publish(u);
		if (u->end && now >= u->end)
			quit = true;
	}
	publish(u);
	return err;
}

static int run(void *u)
{
	return sim_udp_run(u);
}

int sim_udp_start(struct sim_udp *u)
{
	return sim_driver_start(&u->drv, run, u);
}

void sim_udp_stop(struct sim_udp *u)
{
	sim_driver_stop(&u->drv);
}

int sim_udp_join(struct sim_udp *u)
{
	return sim_driver_join(&u->drv);
}

void sim_udp_stats(struct sim_udp *u, struct sim_udp_stats *out)
{
	pthread_mutex_lock(&u->lock);
	*out = u->snap;
	pthread_mutex_unlock(&u->lock);
}

const struct rtl_hist *sim_udp_echo_hist(const struct sim_udp *u)
{
	return &u->echo_hist;
}

const struct sim_robot *sim_udp_robot(const struct sim_udp *u)
{
	return &u->robot;
}

void sim_udp_destroy(struct sim_udp *u)
{
	if (!u)
		return;
	if (u->fd >= 0)
		close(u->fd);
	sim_driver_close(&u->drv);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

/* ---- the program's UDP mode ------------------------------------------------------------- */

static void report(FILE *f, const struct sim_udp_opts *o, uint16_t port,
		   const struct sim_udp_stats *st, const struct rtl_hist *echo, double secs)
{
	fprintf(f, "rtde-sim --udp: %s:%u, %.0f Hz, Doosan v1.0 state layout, %.3f s\n", o->bind,
		port, 1e9 / (double)o->period_ns, secs);
	fprintf(f, "  cycles: %" PRIu64 ", %" PRIu64 " overruns\n", st->cycles, st->overruns);
	fprintf(f,
		"  sessions: %" PRIu64 " (%" PRIu64 " hellos, %" PRIu64 " byes, %" PRIu64
		" taken over, %" PRIu64 " rejected datagrams)\n",
		st->sessions, st->hellos, st->byes, st->timeouts, st->rejected);
	fprintf(f,
		"  sent: %" PRIu64 " states (%" PRIu64 " skipped by --skip-every, %" PRIu64
		" send errors)\n",
		st->states_sent, st->states_skipped, st->send_errors);
	fprintf(f,
		"  received: %" PRIu64 " datagrams, %" PRIu64 " commands (%" PRIu64
		" lost in sequence gaps), %" PRIu64 " malformed, %" PRIu64 " stale, %" PRIu64
		" duplicate, %" PRIu64 " with a bad target time, %" PRIu64 " refused, %" PRIu64
		" servol (not modelled)\n",
		st->datagrams_in, st->commands, st->commands_lost, st->bad_in, st->stale_in,
		st->duplicate_in, st->bad_target_time, st->refused, st->unsupported);
	fprintf(f,
		"  robot: %" PRIu64 " command time-outs (0.1 s watchdog), %" PRIu64
		" stops (%" PRIu64 " to rest, longest %" PRIu64 " cycles), %s at the end; %" PRIu64
		" non-finite values received\n",
		st->watchdog_trips, st->robot.stops, st->robot.stops_at_rest,
		st->robot.max_stop_cycles, st->robot.at_rest ? "at rest" : "MOVING",
		st->nonfinite_in);
	fprintf(f,
		"  RT session: %" PRIu64 " alarms sent, %" PRIu64
		" closed by the loss count (%" PRIu64 " BYEs sent)\n",
		st->alarms_sent, st->loss_closed, st->byes_sent);
	fprintf(f,
		"  limits: %" PRIu64 " LIMITS applied, %" PRIu64 " bad; %" PRIu64
		" commands with a velocity clamped, %" PRIu64
		" with an acceleration clamped; %" PRIu64 " limit alarms and %" PRIu64
		" servol alarms suppressed (1/s per code)\n",
		st->limits_in, st->bad_limits, st->vel_clamped, st->acc_clamped,
		st->limit_alarms_suppressed, st->unsupported_alarms_suppressed);
	fprintf(f, "  echo: %" PRIu64 " round trips, %" PRIu64 " unmatched\n", st->echoes,
		st->echo_unmatched);
	if (st->echoes)
		rtl_hist_print(echo, f, "  echo round trip", RTL_NS_PER_US);
}

static void report_json(FILE *f, const struct sim_udp_opts *o, uint16_t port,
			const struct sim_udp_stats *st, const struct rtl_hist *echo, double secs)
{
	fprintf(f,
		"{\"program\":\"rtde-sim\",\"mode\":\"udp\",\"port\":%u,\"frequency_hz\":%.3f,"
		"\"seconds\":%.6f,\"skip_every\":%u,\"skip_count\":%u,",
		port, 1e9 / (double)o->period_ns, secs, o->skip_every,
		o->skip_every ? o->skip_count : 0);
	fprintf(f,
		"\"stats\":{\"cycles\":%" PRIu64 ",\"overruns\":%" PRIu64
		",\"states_sent\":%" PRIu64 ",\"states_skipped\":%" PRIu64
		",\"send_errors\":%" PRIu64 ",\"datagrams_in\":%" PRIu64 ",\"bad_in\":%" PRIu64
		",\"hellos\":%" PRIu64 ",\"sessions\":%" PRIu64 ",\"rejected\":%" PRIu64
		",\"byes\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"commands\":%" PRIu64
		",\"commands_lost\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"unsupported\":%" PRIu64
		",\"watchdog_trips\":%" PRIu64 ",\"echoes\":%" PRIu64 ",\"echo_unmatched\":%" PRIu64
		",\"nonfinite_in\":%" PRIu64 ",\"stale_in\":%" PRIu64 ",\"duplicate_in\":%" PRIu64
		",\"bad_target_time\":%" PRIu64 ",",
		st->cycles, st->overruns, st->states_sent, st->states_skipped, st->send_errors,
		st->datagrams_in, st->bad_in, st->hellos, st->sessions, st->rejected, st->byes,
		st->timeouts, st->commands, st->commands_lost, st->refused, st->unsupported,
		st->watchdog_trips, st->echoes, st->echo_unmatched, st->nonfinite_in, st->stale_in,
		st->duplicate_in, st->bad_target_time);
	fprintf(f,
		"\"loss_closed\":%" PRIu64 ",\"alarms_sent\":%" PRIu64 ",\"byes_sent\":%" PRIu64
		",\"limits_in\":%" PRIu64 ",\"bad_limits\":%" PRIu64 ",\"vel_clamped\":%" PRIu64
		",\"acc_clamped\":%" PRIu64 ",\"limit_alarms_suppressed\":%" PRIu64
		",\"unsupported_alarms_suppressed\":%" PRIu64 "},\"robot\":",
		st->loss_closed, st->alarms_sent, st->byes_sent, st->limits_in, st->bad_limits,
		st->vel_clamped, st->acc_clamped, st->limit_alarms_suppressed,
		st->unsupported_alarms_suppressed);
	sim_robot_summary_json(f, &st->robot);
	fprintf(f, ",\"echo_latency\":");
	rtl_hist_write_json(echo, f);
	fprintf(f, "}\n");
}

int sim_udp_report_json(struct sim_udp *u, FILE *f, double secs)
{
	struct sim_udp_stats st;

	sim_udp_stats(u, &st);
	report_json(f, &u->opts, u->port, &st, &u->echo_hist, secs);
	return ferror(f) ? -EIO : 0;
}

int sim_udp_main(const struct sim_udp_opts *o, FILE *out, FILE *json, bool quiet,
		 struct sim_udp **running)
{
	struct sim_udp *u;
	struct sim_udp_stats st;
	int64_t t0;
	double secs;
	int err = sim_udp_create(&u, o);

	if (err) {
		fprintf(stderr, "rtde-sim: --udp: cannot serve on %s:%u: %s\n",
			o->bind ? o->bind : "127.0.0.1", o->port, strerror(-err));
		return err;
	}
	if (!quiet)
		fprintf(stderr, "rtde-sim: UDP on %s:%u (%.0f Hz, Doosan v1.0 layout)\n",
			u->opts.bind, u->port, 1e9 / (double)u->opts.period_ns);
	*running = u;
	t0 = rtl_time_now();
	err = sim_udp_run(u);
	secs = (double)(rtl_time_now() - t0) / 1e9;
	*running = NULL;
	sim_udp_stats(u, &st);
	report(out, &u->opts, u->port, &st, &u->echo_hist, secs);
	if (json)
		report_json(json, &u->opts, u->port, &st, &u->echo_hist, secs);
	sim_udp_destroy(u);
	return err;
}
