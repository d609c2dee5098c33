// SPDX-License-Identifier: MIT
/*
 * Motion streaming: Doosan RT semantics as a step function.
 *
 * The state is one segment and one setpoint. A segment starts at the step
 * that latches a command (seg_start_ns) and lasts seg_ns; the setpoint a
 * step produces is the profile's value at the END of that step's period,
 * elapsed = now - seg_start + period. So a segment of n periods is done
 * after exactly n steps, and a target_time at or below one period is done
 * after one: "applied directly".
 *
 * Velocity (speed*, stop):  v(e) = v0 + (v1 - v0) * min(1, e / D)
 *   A linear ramp: the acceleration is constant, |v1 - v0| / D per axis,
 *   and all axes arrive together, so a Cartesian velocity keeps its
 *   direction. D = max(target_time, one period, |dv_i| / acc_i for each
 *   explicit acc, |dv_i| / limit_i): an explicit acceleration or a global
 *   limit can only stretch the ramp, never shorten it. ACC_AUTO leaves D at
 *   target_time, which makes the acceleration |dv| / target_time.
 *
 * Position (servo*):  the quintic from (p0, v0, a0) to (p1, v1, a1) over D,
 *   the one polynomial that matches position, velocity and acceleration at
 *   both ends, so consecutive servo commands join without jumps in
 *   velocity or acceleration. Re-sending the same target with the
 *   remaining time re-plans the very same curve. Limits stretch D: the
 *   peaks of |v| and |a| are sampled (PEAK_SAMPLES points per axis) and D
 *   grows by max(|v|/vlim, sqrt(|a|/alim)), which is exact from rest to
 *   rest (peaks 1.875 h / D and 5.7735 h / D^2) and converges in a few
 *   rounds otherwise.
 *
 * Limits never stop a motion. A velocity target above a limit is scaled
 * down as a whole vector (direction kept); an acceleration above a limit
 * stretches the segment. Each clamp is counted; the info event is raised
 * at most once per RTL_MOTION_LIMIT_EVENT_INTERVAL_NS, as Doosan is said to
 * rate its Info messages.
 *
 * Watchdogs: velocity modes hold the last velocity, and stop (decelerating
 * at the acceleration limits) when no command came for timeout_ns; every
 * streaming mode counts consecutive steps without a new command and ends
 * the stream at loss_count of them. Only newly latched commands count:
 * a command given twice before a step is one command.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/motion.h>
#include <rtloop/sized.h>

#define N RTL_MOTION_AXES
#define PI 3.14159265358979323846

enum cmd_kind {
	CMD_NONE = 0,
	CMD_SPEED = 1,
	CMD_SERVO = 2,
	CMD_STOP = 3,
};

/* A command as given, waiting for the next step to latch it. */
struct motion_cmd {
	int kind; /* enum cmd_kind */
	enum rtl_motion_space space;
	int64_t time_ns;
	int64_t target_ns;
	double pos[N];
	double vel[N];
	double acc[N];
	double dec;
};

/* Written by the step thread only, read by any thread through
 * rtl_motion_stats(). */
struct motion_counters {
	RTL_MOTION_COUNTERS(RTL_STAT_ATOMIC)
	_Atomic uint64_t events[RTL_MOTION_EV_COUNT];
};

struct rtl_motion {
	struct rtl_motion_config cfg;
	rtl_motion_event_fn on_event;
	void *user;

	struct motion_cmd pending; /* newest command not yet latched */

	/* The profile: segment from (p0, v0, a0) at seg_start_ns to the
	 * target over seg_ns. Speed/stop: v0 -> v1 linear. Servo: quintic. */
	enum rtl_motion_mode mode;
	enum rtl_motion_space space;
	int64_t seg_start_ns;
	int64_t seg_ns;
	double p0[N], v0[N], a0[N];
	double p1[N], v1[N], a1[N];
	/* Servo: the quintic's coefficients per axis, planned at the latch. */
	double qc[N][5];

	/* The setpoint of the last step. */
	double pos[N], vel[N], acc[N];

	int64_t last_cmd_ns;	  /* time of the last latched command */
	int missing;		  /* consecutive steps without a command */
	int64_t last_limit_ev_ns; /* time of the last limit event */
	bool limit_ev_ever;

	struct motion_counters cnt;
};

/* Single writer: a relaxed load and store is enough for readers of other
 * threads to see whole values, and cheaper than a locked add. */
static void bump(_Atomic uint64_t *c)
{
	uint64_t v = atomic_load_explicit(c, memory_order_relaxed);

	atomic_store_explicit(c, v + 1, memory_order_relaxed);
}

static bool all_finite(const double *v)
{
	for (int i = 0; i < N; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

static bool is_auto(double x)
{
	return x == RTL_MOTION_ACC_AUTO;
}

/* Seconds to ns, saturating far beyond any real segment. */
static int64_t sec_to_ns(double s)
{
	if (s > 1e9)
		s = 1e9;
	return llround(s * 1e9);
}

static bool limit_ok(double x)
{
	return x > 0; /* false for NaN; INFINITY is "no limit" */
}

static const double *vel_limit(const struct rtl_motion *m, enum rtl_motion_space s)
{
	return s == RTL_MOTION_CARTESIAN ? m->cfg.velx : m->cfg.velj;
}

static const double *acc_limit(const struct rtl_motion *m, enum rtl_motion_space s)
{
	return s == RTL_MOTION_CARTESIAN ? m->cfg.accx : m->cfg.accj;
}

RTL_API int rtl_motion_config_init(struct rtl_motion_config *cfg, int64_t period_ns)
{
	if (!cfg || period_ns <= 0)
		return -EINVAL;
	*cfg = (struct rtl_motion_config){
		.size = sizeof(*cfg),
		.period_ns = period_ns,
		.timeout_ns = RTL_MOTION_DEFAULT_TIMEOUT_NS,
		.loss_count = RTL_MOTION_LOSS_OFF,
		.rot_radius_m = RTL_MOTION_DEFAULT_ROT_RADIUS_M,
	};
	for (int i = 0; i < N; i++) {
		cfg->velx[i] = INFINITY;
		cfg->accx[i] = INFINITY;
		cfg->velj[i] = INFINITY;
		cfg->accj[i] = INFINITY;
	}
	return 0;
}

/* The rules of rtl_motion_create(): every value the step divides by or
 * compares against must make sense, so the step itself never checks. */
static bool config_ok(const struct rtl_motion_config *cfg)
{
	if (cfg->period_ns <= 0 || cfg->timeout_ns <= 0)
		return false;
	if (cfg->loss_count == 0 || cfg->loss_count < RTL_MOTION_LOSS_OFF)
		return false;
	if (!(cfg->rot_radius_m > 0) || isinf(cfg->rot_radius_m))
		return false;
	for (int i = 0; i < N; i++)
		if (!limit_ok(cfg->velx[i]) || !limit_ok(cfg->accx[i]) || !limit_ok(cfg->velj[i]) ||
		    !limit_ok(cfg->accj[i]))
			return false;
	return true;
}

RTL_API int rtl_motion_create(struct rtl_motion **out, const struct rtl_motion_config *user_cfg,
			      struct rtl_error *err)
{
	struct rtl_motion_config cfg_copy;
	const struct rtl_motion_config *cfg = &cfg_copy;
	struct rtl_motion *m;
	int ret;

	if (out)
		*out = NULL;
	if (!out)
		return rtl_error_set(err, -EINVAL, "motion: nowhere to put it (out is NULL)");
	ret = rtl__sized_in(&cfg_copy, sizeof(cfg_copy), user_cfg,
			    "motion: struct rtl_motion_config", err);
	if (ret < 0)
		return ret;
	if (!config_ok(cfg))
		return rtl_error_set(
			err, -EINVAL,
			"motion: a period or time-out <= 0, a loss count of 0 or below "
			"-1, a rotation radius that is not finite and > 0, or a limit "
			"that is not > 0: start from rtl_motion_config_init()");
	m = malloc(sizeof(*m));
	if (!m)
		return rtl_error_set(err, -ENOMEM, "motion: out of memory");
	/* Writing every byte here, at set-up time, also faults the pages in:
	 * the step then touches only memory that is already resident. */
	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->mode = RTL_MOTION_IDLE;
	m->space = RTL_MOTION_JOINT;
	/* m->cnt: all-zero bytes are valid zero atomics on every ABI we build
	 * for; make it explicit anyway. */
	atomic_init(&m->cnt.steps, 0);
	atomic_init(&m->cnt.commands, 0);
	atomic_init(&m->cnt.rejected, 0);
	atomic_init(&m->cnt.latched, 0);
	atomic_init(&m->cnt.limit_clamps, 0);
	for (int i = 0; i < RTL_MOTION_EV_COUNT; i++)
		atomic_init(&m->cnt.events[i], 0);
	*out = m;
	return 0;
}

RTL_API void rtl_motion_destroy(struct rtl_motion *m)
{
	free(m);
}

RTL_API void rtl_motion_set_handler(struct rtl_motion *m, rtl_motion_event_fn fn, void *user)
{
	if (!m)
		return;
	m->on_event = fn;
	m->user = user;
}

/* ---- commands ------------------------------------------------------------ */

static int reject(struct rtl_motion *m, int err)
{
	bump(&m->cnt.rejected);
	return err;
}

static int check_time(double target_time)
{
	if (!isfinite(target_time))
		return -EDOM;
	if (target_time < 0 || target_time > RTL_MOTION_MAX_TARGET_TIME)
		return -EINVAL;
	return 0;
}

static int speed(struct rtl_motion *m, enum rtl_motion_space space, int64_t now_ns,
		 const double vel[N], const double acc[N], double target_time)
{
	int ret;

	if (!m)
		return -EINVAL;
	if (!vel || !acc)
		return reject(m, -EINVAL);
	if (!all_finite(vel) || !all_finite(acc))
		return reject(m, -EDOM);
	ret = check_time(target_time);
	if (ret)
		return reject(m, ret);
	for (int i = 0; i < N; i++)
		if (!(acc[i] > 0) && !is_auto(acc[i]))
			return reject(m, -EINVAL);

	m->pending = (struct motion_cmd){
		.kind = CMD_SPEED,
		.space = space,
		.time_ns = now_ns,
		.target_ns = sec_to_ns(target_time),
	};
	memcpy(m->pending.vel, vel, sizeof(m->pending.vel));
	memcpy(m->pending.acc, acc, sizeof(m->pending.acc));
	bump(&m->cnt.commands);
	return 0;
}

RTL_API int rtl_motion_speedl(struct rtl_motion *m, int64_t now_ns, const double vel[N],
			      const double acc[N], double target_time)
{
	return speed(m, RTL_MOTION_CARTESIAN, now_ns, vel, acc, target_time);
}

RTL_API int rtl_motion_speedj(struct rtl_motion *m, int64_t now_ns, const double vel[N],
			      const double acc[N], double target_time)
{
	return speed(m, RTL_MOTION_JOINT, now_ns, vel, acc, target_time);
}

static int servo(struct rtl_motion *m, enum rtl_motion_space space, int64_t now_ns,
		 const double pose[N], const double vel[N], const double acc[N], double target_time)
{
	int ret;

	if (!m)
		return -EINVAL;
	if (!pose || !vel || !acc)
		return reject(m, -EINVAL);
	if (!all_finite(pose) || !all_finite(vel) || !all_finite(acc))
		return reject(m, -EDOM);
	ret = check_time(target_time);
	if (ret)
		return reject(m, ret);

	m->pending = (struct motion_cmd){
		.kind = CMD_SERVO,
		.space = space,
		.time_ns = now_ns,
		.target_ns = sec_to_ns(target_time),
	};
	for (int i = 0; i < N; i++) {
		m->pending.pos[i] = pose[i];
		/* ACC_AUTO: the segment ends at rest at the pose. */
		m->pending.vel[i] = is_auto(vel[i]) ? 0.0 : vel[i];
		m->pending.acc[i] = is_auto(acc[i]) ? 0.0 : acc[i];
	}
	bump(&m->cnt.commands);
	return 0;
}

RTL_API int rtl_motion_servol(struct rtl_motion *m, int64_t now_ns, const double pose[N],
			      const double vel[N], const double acc[N], double target_time)
{
	return servo(m, RTL_MOTION_CARTESIAN, now_ns, pose, vel, acc, target_time);
}

RTL_API int rtl_motion_servoj(struct rtl_motion *m, int64_t now_ns, const double pose[N],
			      const double vel[N], const double acc[N], double target_time)
{
	return servo(m, RTL_MOTION_JOINT, now_ns, pose, vel, acc, target_time);
}

RTL_API int rtl_motion_stop(struct rtl_motion *m, int64_t now_ns, double dec)
{
	if (!m)
		return -EINVAL;
	if (!isfinite(dec))
		return reject(m, -EDOM);
	if (!(dec > 0) && !is_auto(dec))
		return reject(m, -EINVAL);
	m->pending = (struct motion_cmd){
		.kind = CMD_STOP,
		.space = m->space,
		.time_ns = now_ns,
		.dec = dec,
	};
	bump(&m->cnt.commands);
	return 0;
}

/* ---- limits -------------------------------------------------------------- */

static int set_x(struct rtl_motion *m, double *lim, double trans, double rot)
{
	if (!m)
		return -EINVAL;
	if (isnan(trans) || isnan(rot))
		return -EDOM;
	if (!limit_ok(trans) || (!limit_ok(rot) && !is_auto(rot)))
		return -EINVAL;
	if (is_auto(rot))
		rot = trans / m->cfg.rot_radius_m;
	for (int i = 0; i < 3; i++) {
		lim[i] = trans;
		lim[i + 3] = rot;
	}
	return 0;
}

static int set_j(struct rtl_motion *m, double *lim, const double v[N])
{
	if (!m || !v)
		return -EINVAL;
	for (int i = 0; i < N; i++)
		if (isnan(v[i]))
			return -EDOM;
	for (int i = 0; i < N; i++)
		if (!limit_ok(v[i]))
			return -EINVAL;
	memcpy(lim, v, N * sizeof(*lim));
	return 0;
}

RTL_API int rtl_motion_set_velx(struct rtl_motion *m, double trans, double rot)
{
	return set_x(m, m ? m->cfg.velx : NULL, trans, rot);
}

RTL_API int rtl_motion_set_accx(struct rtl_motion *m, double trans, double rot)
{
	return set_x(m, m ? m->cfg.accx : NULL, trans, rot);
}

RTL_API int rtl_motion_set_velj(struct rtl_motion *m, const double vel[N])
{
	return set_j(m, m ? m->cfg.velj : NULL, vel);
}

RTL_API int rtl_motion_set_accj(struct rtl_motion *m, const double acc[N])
{
	return set_j(m, m ? m->cfg.accj : NULL, acc);
}

/* ---- events -------------------------------------------------------------- */

static void raise_event(struct rtl_motion *m, int64_t now, enum rtl_motion_event type,
			enum rtl_motion_limit limit, int axis, double value, double max,
			unsigned *events)
{
	struct rtl_motion_event_info ev = {
		.type = type,
		.time_ns = now,
		.mode = m->mode,
		.space = m->space,
		.limit = limit,
		.axis = axis,
		.value = value,
		.max = max,
	};

	*events |= 1u << type;
	bump(&m->cnt.events[type]);
	if (m->on_event)
		m->on_event(m->user, &ev);
}

static void event(struct rtl_motion *m, int64_t now, enum rtl_motion_event type, unsigned *events)
{
	raise_event(m, now, type, RTL_MOTION_LIMIT_NONE, -1, 0, 0, events);
}

/* A limit clamped something: count it; tell at most once per interval. */
static void clamped(struct rtl_motion *m, int64_t now, enum rtl_motion_limit limit, int axis,
		    double value, double max, unsigned *events)
{
	bump(&m->cnt.limit_clamps);
	if (m->limit_ev_ever && now - m->last_limit_ev_ns < RTL_MOTION_LIMIT_EVENT_INTERVAL_NS)
		return;
	m->limit_ev_ever = true;
	m->last_limit_ev_ns = now;
	raise_event(m, now, RTL_MOTION_EV_LIMIT, limit, axis, value, max, events);
}

/* ---- the profile --------------------------------------------------------- */

static enum rtl_motion_mode speed_mode(enum rtl_motion_space s)
{
	return s == RTL_MOTION_CARTESIAN ? RTL_MOTION_SPEED_CARTESIAN : RTL_MOTION_SPEED_JOINT;
}

static enum rtl_motion_mode servo_mode(enum rtl_motion_space s)
{
	return s == RTL_MOTION_CARTESIAN ? RTL_MOTION_SERVO_CARTESIAN : RTL_MOTION_SERVO_JOINT;
}

static bool streaming(enum rtl_motion_mode mode)
{
	return mode != RTL_MOTION_IDLE && mode != RTL_MOTION_STOPPING;
}

static bool speed_mode_p(enum rtl_motion_mode mode)
{
	return mode == RTL_MOTION_SPEED_CARTESIAN || mode == RTL_MOTION_SPEED_JOINT;
}

/*
 * Make the setpoint the start state of a command in @space: the setpoint
 * itself while moving in that space (continuity), else the measured state
 * (a new stream starts where the robot is), else what is known.
 */
static void start_from(struct rtl_motion *m, enum rtl_motion_space space,
		       const struct rtl_motion_state *meas)
{
	if (m->mode != RTL_MOTION_IDLE && m->space == space)
		return;
	if (meas) {
		const double *p = space == RTL_MOTION_CARTESIAN ? meas->tcp_pos : meas->joint_pos;
		const double *v = space == RTL_MOTION_CARTESIAN ? meas->tcp_vel : meas->joint_vel;

		memcpy(m->pos, p, sizeof(m->pos));
		memcpy(m->vel, v, sizeof(m->vel));
	} else {
		if (m->space != space)
			memset(m->pos, 0, sizeof(m->pos));
		memset(m->vel, 0, sizeof(m->vel));
	}
	memset(m->acc, 0, sizeof(m->acc));
	m->space = space;
}

static void begin_segment(struct rtl_motion *m, enum rtl_motion_mode mode, int64_t start,
			  int64_t dur)
{
	m->mode = mode;
	m->seg_start_ns = start;
	m->seg_ns = dur < m->cfg.period_ns ? m->cfg.period_ns : dur;
	memcpy(m->p0, m->pos, sizeof(m->p0));
	memcpy(m->v0, m->vel, sizeof(m->v0));
	memcpy(m->a0, m->acc, sizeof(m->a0));
}

/* Decelerate all axes to zero together, the slowest at dec[i]. */
static void begin_stop(struct rtl_motion *m, int64_t start, const double dec[N])
{
	double t = 0;

	for (int i = 0; i < N; i++) {
		double ti = fabs(m->vel[i]) / dec[i];

		if (ti > t)
			t = ti;
	}
	begin_segment(m, RTL_MOTION_STOPPING, start, sec_to_ns(t));
	memset(m->v1, 0, sizeof(m->v1));
}

/* Scale @v so that no axis exceeds @lim, keeping its direction. */
static void clamp_vel(struct rtl_motion *m, int64_t now, double v[N], const double lim[N],
		      unsigned *events)
{
	double s = 1;
	int worst = -1;

	for (int i = 0; i < N; i++) {
		double si = lim[i] / fabs(v[i]);

		if (si < s) {
			s = si;
			worst = i;
		}
	}
	if (worst < 0)
		return;
	clamped(m, now, RTL_MOTION_LIMIT_VEL, worst, fabs(v[worst]), lim[worst], events);
	for (int i = 0; i < N; i++)
		v[i] *= s;
}

static void latch_speed(struct rtl_motion *m, int64_t now, const struct motion_cmd *c,
			unsigned *events)
{
	const double *alim = acc_limit(m, c->space);
	int64_t dur = c->target_ns < m->cfg.period_ns ? m->cfg.period_ns : c->target_ns;
	int worst = -1;
	int64_t need_max = dur;
	double v1[N];

	memcpy(v1, c->vel, sizeof(v1));
	clamp_vel(m, now, v1, vel_limit(m, c->space), events);

	/* An explicit acceleration bounds the ramp: it may only get longer. */
	for (int i = 0; i < N; i++) {
		if (!is_auto(c->acc[i])) {
			int64_t need = sec_to_ns(fabs(v1[i] - m->vel[i]) / c->acc[i]);

			if (need > dur)
				dur = need;
		}
	}
	/* The global limit likewise, but that is a clamp. */
	for (int i = 0; i < N; i++) {
		int64_t need = sec_to_ns(fabs(v1[i] - m->vel[i]) / alim[i]);

		if (need > need_max) {
			need_max = need;
			worst = i;
		}
	}
	if (worst >= 0 && need_max > dur) {
		double dv = fabs(v1[worst] - m->vel[worst]);

		clamped(m, now, RTL_MOTION_LIMIT_ACC, worst, dv / ((double)dur * 1e-9), alim[worst],
			events);
		dur = need_max;
	}
	begin_segment(m, speed_mode(c->space), now, dur);
	memcpy(m->v1, v1, sizeof(m->v1));
}

/* Samples per segment when looking for the quintic's peaks: bounded work
 * per command (RT), and s = 1/2, where a rest-to-rest peak lies, is one. */
#define PEAK_SAMPLES 64
/* Stretch iterations: one suffices from rest to rest, where the peaks scale
 * as 1/D and 1/D^2; non-zero end velocities converge in a few more. */
#define STRETCH_ROUNDS 4

/* Coefficients c1..c5 of axis @i's quintic from (p0, v0, a0) to
 * (p1, v1, a1) over @d seconds, in normalised time s = t / d. */
static void quintic_coef(const struct rtl_motion *m, int i, double d, double c[5])
{
	/* In normalised time: velocities scale by d, accelerations by d^2. */
	double h = m->p1[i] - m->p0[i];
	double V0 = m->v0[i] * d, V1 = m->v1[i] * d;
	double A0 = m->a0[i] * d * d, A1 = m->a1[i] * d * d;

	c[0] = V0;
	c[1] = A0 / 2;
	c[2] = (20 * h - (8 * V1 + 12 * V0) - (3 * A0 - A1)) / 2;
	c[3] = (-30 * h + (14 * V1 + 16 * V0) + (3 * A0 - 2 * A1)) / 2;
	c[4] = (12 * h - 6 * (V1 + V0) + (A1 - A0)) / 2;
}

/* The quintic from @p0 with coefficients @c over @d seconds, at s in [0, 1]. */
static void quintic(double p0, const double c[5], double d, double s, double *p, double *v,
		    double *a)
{
	*p = p0 + s * (c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * c[4]))));
	*v = (c[0] + s * (2 * c[1] + s * (3 * c[2] + s * (4 * c[3] + s * 5 * c[4])))) / d;
	*a = (2 * c[1] + s * (6 * c[2] + s * (12 * c[3] + s * 20 * c[4]))) / (d * d);
}

/* How far the segment's velocity and acceleration peaks exceed the limits:
 * the largest of |v| / vlim and sqrt(|a| / alim), or <= 1 when within. */
static double overshoot(const struct rtl_motion *m, const double *vlim, const double *alim,
			enum rtl_motion_limit *what, int *axis, double *value)
{
	double d = (double)m->seg_ns * 1e-9;
	double worst = 1;

	for (int i = 0; i < N; i++) {
		double c[5];

		quintic_coef(m, i, d, c);
		for (int j = 0; j <= PEAK_SAMPLES; j++) {
			double p, v, a, rv, ra;

			quintic(m->p0[i], c, d, (double)j / PEAK_SAMPLES, &p, &v, &a);
			rv = fabs(v) / vlim[i];
			ra = sqrt(fabs(a) / alim[i]);
			if (rv > worst) {
				worst = rv;
				*what = RTL_MOTION_LIMIT_VEL;
				*axis = i;
				*value = fabs(v);
			}
			if (ra > worst) {
				worst = ra;
				*what = RTL_MOTION_LIMIT_ACC;
				*axis = i;
				*value = fabs(a);
			}
		}
	}
	return worst;
}

static void latch_servo(struct rtl_motion *m, int64_t now, const struct motion_cmd *c,
			unsigned *events)
{
	const double *vlim = vel_limit(m, c->space);
	const double *alim = acc_limit(m, c->space);
	double v1[N];

	memcpy(v1, c->vel, sizeof(v1));
	clamp_vel(m, now, v1, vlim, events);
	begin_segment(m, servo_mode(c->space), now, c->target_ns);
	memcpy(m->p1, c->pos, sizeof(m->p1));
	memcpy(m->v1, v1, sizeof(m->v1));
	memcpy(m->a1, c->acc, sizeof(m->a1));

	/* Stretch the segment until its peaks fit the limits. */
	for (int round = 0; round < STRETCH_ROUNDS; round++) {
		enum rtl_motion_limit what = RTL_MOTION_LIMIT_NONE;
		int axis = -1;
		double value = 0;
		double k = overshoot(m, vlim, alim, &what, &axis, &value);

		if (!(k > 1 + 1e-9))
			break;
		if (round == 0)
			clamped(m, now, what, axis, value,
				what == RTL_MOTION_LIMIT_VEL ? vlim[axis] : alim[axis], events);
		m->seg_ns = sec_to_ns((double)m->seg_ns * 1e-9 * k);
	}
	/* The curve is fixed now: plan it once, not in every step. */
	for (int i = 0; i < N; i++)
		quintic_coef(m, i, (double)m->seg_ns * 1e-9, m->qc[i]);
}

static void latch(struct rtl_motion *m, int64_t now, const struct rtl_motion_state *meas,
		  unsigned *events)
{
	const struct motion_cmd *c = &m->pending;
	double dec[N];

	switch (c->kind) {
	case CMD_SPEED:
		start_from(m, c->space, meas);
		latch_speed(m, now, c, events);
		break;
	case CMD_SERVO:
		start_from(m, c->space, meas);
		latch_servo(m, now, c, events);
		break;
	case CMD_STOP:
		if (m->mode == RTL_MOTION_IDLE)
			break;
		for (int i = 0; i < N; i++)
			dec[i] = is_auto(c->dec) ? acc_limit(m, m->space)[i] : c->dec;
		begin_stop(m, now, dec);
		break;
	default:
		break;
	}
}

static void advance(struct rtl_motion *m, int64_t now, const struct rtl_motion_state *meas,
		    unsigned *events)
{
	int64_t p = m->cfg.period_ns;
	int64_t e = now - m->seg_start_ns + p;
	double dt = (double)p * 1e-9;
	double d = (double)m->seg_ns * 1e-9;
	bool done = e >= m->seg_ns;
	double f = done ? 1.0 : (double)e / (double)m->seg_ns;
	bool ramping = e - p < m->seg_ns; /* some of this period was in the segment */
	bool moving = false;

	switch (m->mode) {
	case RTL_MOTION_IDLE:
		if (meas)
			memcpy(m->pos,
			       m->space == RTL_MOTION_CARTESIAN ? meas->tcp_pos : meas->joint_pos,
			       sizeof(m->pos));
		memset(m->vel, 0, sizeof(m->vel));
		memset(m->acc, 0, sizeof(m->acc));
		break;
	case RTL_MOTION_SPEED_CARTESIAN:
	case RTL_MOTION_SPEED_JOINT:
	case RTL_MOTION_STOPPING:
		for (int i = 0; i < N; i++) {
			double v = done ? m->v1[i] : m->v0[i] + (m->v1[i] - m->v0[i]) * f;

			m->pos[i] += (m->vel[i] + v) * dt / 2;
			m->vel[i] = v;
			m->acc[i] = ramping ? (m->v1[i] - m->v0[i]) / d : 0.0;
		}
		if (m->mode == RTL_MOTION_STOPPING && done) {
			event(m, now, RTL_MOTION_EV_STOPPED, events);
			m->mode = RTL_MOTION_IDLE;
		}
		break;
	case RTL_MOTION_SERVO_CARTESIAN:
	case RTL_MOTION_SERVO_JOINT:
		for (int i = 0; i < N; i++) {
			if (done) {
				m->pos[i] = m->p1[i];
				m->vel[i] = m->v1[i];
				m->acc[i] = ramping ? m->a1[i] : 0.0;
			} else {
				quintic(m->p0[i], m->qc[i], d, f, &m->pos[i], &m->vel[i],
					&m->acc[i]);
			}
			if (m->v1[i] != 0)
				moving = true;
		}
		/* The segment ended moving with no newer command: decelerate at
		 * the limits from the next period on (Doosan's servo*_rt). */
		if (done && moving)
			begin_stop(m, now + p, acc_limit(m, m->space));
		break;
	}
}

RTL_API int rtl_motion_step(struct rtl_motion *m, struct rtl_motion_output *out, int64_t now_ns,
			    const struct rtl_motion_state *measured)
{
	unsigned events = 0;

	if (!m || !out)
		return -EINVAL;
	bump(&m->cnt.steps);

	if (m->pending.kind != CMD_NONE) {
		latch(m, now_ns, measured, &events);
		m->last_cmd_ns = m->pending.time_ns;
		m->missing = 0;
		m->pending.kind = CMD_NONE;
		bump(&m->cnt.latched);
	} else if (streaming(m->mode)) {
		m->missing++;
		if (speed_mode_p(m->mode) && now_ns - m->last_cmd_ns >= m->cfg.timeout_ns) {
			event(m, now_ns, RTL_MOTION_EV_TIMEOUT, &events);
			begin_stop(m, now_ns, acc_limit(m, m->space));
		} else if (m->cfg.loss_count > 0 && m->missing >= m->cfg.loss_count) {
			event(m, now_ns, RTL_MOTION_EV_LOSS, &events);
			begin_stop(m, now_ns, acc_limit(m, m->space));
		}
	}

	advance(m, now_ns, measured, &events);

	out->mode = m->mode;
	out->space = m->space;
	memcpy(out->vel, m->vel, sizeof(out->vel));
	memcpy(out->pose, m->pos, sizeof(out->pose));
	memcpy(out->acc, m->acc, sizeof(out->acc));
	out->events = events;
	return (int)m->mode;
}

/* The events' counters are an array, not in the list. */
RTL__DEFINE_COUNTERS_THEN(rtl_motion, RTL_MOTION_COUNTERS, cnt,
			  for (int i = 0; i < RTL_MOTION_EV_COUNT; i++)
				  s.events[i] = rtl_stat_get(&obj->cnt.events[i]);)

static const char *const mode_names[] = { [RTL_MOTION_IDLE] = "idle",
					  [RTL_MOTION_SPEED_CARTESIAN] = "speed-cartesian",
					  [RTL_MOTION_SPEED_JOINT] = "speed-joint",
					  [RTL_MOTION_SERVO_CARTESIAN] = "servo-cartesian",
					  [RTL_MOTION_SERVO_JOINT] = "servo-joint",
					  [RTL_MOTION_STOPPING] = "stopping" };

static const char *const event_names[] = { [RTL_MOTION_EV_TIMEOUT] = "timeout",
					   [RTL_MOTION_EV_LOSS] = "loss",
					   [RTL_MOTION_EV_LIMIT] = "limit",
					   [RTL_MOTION_EV_STOPPED] = "stopped" };

RTL_API const char *rtl_motion_mode_name(enum rtl_motion_mode mode)
{
	return RTL__NAME_OF(mode_names, mode, "?");
}

RTL_API const char *rtl_motion_event_name(enum rtl_motion_event ev)
{
	return RTL__NAME_OF(event_names, ev, "?");
}

/* ---- units --------------------------------------------------------------- */

static void convert(enum rtl_motion_space space, const double in[N], double out[N], double lin,
		    double ang)
{
	for (int i = 0; i < N; i++) {
		double k = space == RTL_MOTION_CARTESIAN && i < 3 ? lin : ang;

		out[i] = is_auto(in[i]) ? in[i] : in[i] * k;
	}
}

RTL_API void rtl_motion_to_mm_deg(double out[N], const double in[N], enum rtl_motion_space space)
{
	convert(space, in, out, 1000.0, 180.0 / PI);
}

RTL_API void rtl_motion_from_mm_deg(double out[N], const double in[N], enum rtl_motion_space space)
{
	convert(space, in, out, 1e-3, PI / 180.0);
}
