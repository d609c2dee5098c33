/* SPDX-License-Identifier: MIT */
/*
 * rtl_motion: motion streaming with the semantics of Doosan's RT commands
 * (speedl_rt, speedj_rt, servol_rt, servoj_rt, the global RT limits), for
 * any backend.
 *
 * One struct rtl_motion per robot, an opaque handle made at set-up time
 * with rtl_motion_create() and freed with rtl_motion_destroy(). The
 * command functions (rtl_motion_speedl and friends) only record the newest
 * command with the time it was given; rtl_motion_step(), called once per
 * control period with the time of the period and the measured state,
 * latches it, advances the profile and produces the setpoint the backend
 * sends. Everything is a pure function of explicit state and explicit
 * time: no clock, no thread, and no allocation after the create, so the
 * unit tests drive it on a fake clock.
 *
 * Units are SI: m, rad, s (and m/s, rad/s, m/s^2, rad/s^2). A Cartesian
 * vector is (x, y, z, rx, ry, rz); a joint vector is (q1..q6). Both spaces
 * have six axes and run through the same code; only their limits differ.
 * Backends in mm and degrees (Doosan) convert with rtl_motion_to_mm_deg()
 * and rtl_motion_from_mm_deg(), which keep RTL_MOTION_ACC_AUTO intact.
 *
 * Semantics (docs/motion.md has the full account):
 *   - A command's profile starts from the current setpoint (or the measured
 *     state when the stream starts or changes space) and reaches its target
 *     over target_time. A target_time at or below one period applies the
 *     target in the very next step. Velocity commands ramp linearly;
 *     servo commands follow a quintic that matches position, velocity and
 *     acceleration at both ends.
 *   - RTL_MOTION_ACC_AUTO (-10000) in an acceleration (and, for servo
 *     commands, a velocity) means "derive it from the target".
 *   - Velocity commands hold their velocity until the next command; with no
 *     command for the time-out (default 0.1 s) the motion stops
 *     (RTL_MOTION_EV_TIMEOUT).
 *   - The loss count: N consecutive periods without a command end the
 *     stream (RTL_MOTION_EV_LOSS); N = RTL_MOTION_LOSS_OFF (-1) disables it.
 *   - Global limits clamp (the motion goes on) and raise
 *     RTL_MOTION_EV_LIMIT at most once per second; every clamp is counted.
 *   - Commands with a NaN or infinite value are rejected with -EDOM and
 *     leave the state as it was.
 *
 * Threading: every function taking a struct rtl_motion * other than
 * rtl_motion_stats() and rtl_motion_destroy() must be called from one
 * thread (the control loop's step). Counters are single-writer relaxed
 * atomics, so any thread may read them with rtl_motion_stats().
 * rtl_motion_create() and rtl_motion_destroy() are set-up and tear-down
 * calls (they allocate and free), made while no step uses the handle.
 */
#ifndef RTLOOP_MOTION_H
#define RTLOOP_MOTION_H

#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

/* Axes of both spaces: Cartesian (x, y, z, rx, ry, rz) and joint (q1..q6). */
#define RTL_MOTION_AXES 6

/* "Compute it from the target": Doosan's -10000 convention. Valid in the
 * acc arrays of every command, the vel array of servo commands, the rot
 * argument of rtl_motion_set_velx/set_accx, and rtl_motion_stop(). */
#define RTL_MOTION_ACC_AUTO (-10000.0)

/* loss_count value that disables the loss check. */
#define RTL_MOTION_LOSS_OFF (-1)

/* Default command time-out of velocity streaming (Doosan: 0.1 s). */
#define RTL_MOTION_DEFAULT_TIMEOUT_NS INT64_C(100000000)

/* Default radius that turns a translational limit into a rotational one
 * when rot is RTL_MOTION_ACC_AUTO: rot = trans / radius. */
#define RTL_MOTION_DEFAULT_ROT_RADIUS_M 0.1

/* Minimum time between two RTL_MOTION_EV_LIMIT events. */
#define RTL_MOTION_LIMIT_EVENT_INTERVAL_NS INT64_C(1000000000)

/* Longest target_time a command may ask for, in seconds. */
#define RTL_MOTION_MAX_TARGET_TIME 3600.0

enum rtl_motion_space {
	RTL_MOTION_CARTESIAN = 0,
	RTL_MOTION_JOINT = 1,
};

enum rtl_motion_mode {
	RTL_MOTION_IDLE = 0,		/* no motion commanded */
	RTL_MOTION_SPEED_CARTESIAN = 1, /* speedl: out.vel is the TCP velocity */
	RTL_MOTION_SPEED_JOINT = 2,	/* speedj: out.vel is the joint velocity */
	RTL_MOTION_SERVO_CARTESIAN = 3, /* servol: out.pose is the TCP pose */
	RTL_MOTION_SERVO_JOINT = 4,	/* servoj: out.pose is the joint position */
	RTL_MOTION_STOPPING = 5,	/* decelerating to zero in out.space */
};

/* Events, raised from rtl_motion_step() only. */
enum rtl_motion_event {
	/* A velocity stream had no command for the time-out: stopping. */
	RTL_MOTION_EV_TIMEOUT = 0,
	/* loss_count consecutive periods without a command: stream ended,
	 * stopping. A backend may also drop its RT connection (Doosan does). */
	RTL_MOTION_EV_LOSS = 1,
	/* A global limit clamped the motion (info; the motion goes on). At
	 * most one per RTL_MOTION_LIMIT_EVENT_INTERVAL_NS. */
	RTL_MOTION_EV_LIMIT = 2,
	/* A stop (commanded, time-out or loss) reached zero velocity. */
	RTL_MOTION_EV_STOPPED = 3,
};
#define RTL_MOTION_EV_COUNT 4

/* What a limit event is about. */
enum rtl_motion_limit {
	RTL_MOTION_LIMIT_NONE = 0,
	RTL_MOTION_LIMIT_VEL = 1,
	RTL_MOTION_LIMIT_ACC = 2,
};

struct rtl_motion_event_info {
	enum rtl_motion_event type;
	int64_t time_ns;	   /* the now_ns of the step that raised it */
	enum rtl_motion_mode mode; /* the mode when it was raised */
	enum rtl_motion_space space;
	/* RTL_MOTION_EV_LIMIT only (else NONE, -1, 0, 0): */
	enum rtl_motion_limit limit;
	int axis;     /* the axis furthest over its limit */
	double value; /* what was asked for on that axis (magnitude) */
	double max;   /* its limit */
};

/* Event callback. Called from rtl_motion_step(), that is from the control
 * loop's step context: it must be RT-safe (no allocation, no locks, no
 * blocking calls) and must not call back into the same struct rtl_motion. */
typedef void (*rtl_motion_event_fn)(void *user, const struct rtl_motion_event_info *ev);

/* The motion state's configuration: fill it with rtl_motion_config_init()
 * (which sets .size and the defaults), then change what differs. */
struct rtl_motion_config {
	size_t size;	     /* sizeof(struct rtl_motion_config) */
	int64_t period_ns;   /* control period, > 0 */
	int64_t timeout_ns;  /* velocity command time-out, > 0 */
	int loss_count;	     /* >= 1, or RTL_MOTION_LOSS_OFF */
	double rot_radius_m; /* > 0; see RTL_MOTION_DEFAULT_ROT_RADIUS_M */
	/* Global limits per axis, > 0; INFINITY means no limit. */
	double velx[RTL_MOTION_AXES]; /* m/s, rad/s */
	double accx[RTL_MOTION_AXES]; /* m/s^2, rad/s^2 */
	double velj[RTL_MOTION_AXES]; /* rad/s */
	double accj[RTL_MOTION_AXES]; /* rad/s^2 */
};

/* The measured robot state, in SI units (rad, m). */
struct rtl_motion_state {
	double joint_pos[RTL_MOTION_AXES];
	double joint_vel[RTL_MOTION_AXES];
	double tcp_pos[RTL_MOTION_AXES];
	double tcp_vel[RTL_MOTION_AXES];
};

/* The setpoint of one period. */
struct rtl_motion_output {
	enum rtl_motion_mode mode;
	enum rtl_motion_space space; /* the space of vel, pose and acc */
	/* Velocity setpoint for this period. Zero when idle. */
	double vel[RTL_MOTION_AXES];
	/* Position setpoint. Servo modes: the interpolated target. Speed
	 * modes and stopping: the pose the setpoint velocities lead to,
	 * integrated from the pose at the start of the stream. Idle: the
	 * measured position (or the last setpoint if none was passed). */
	double pose[RTL_MOTION_AXES];
	/* Signed setpoint acceleration for this period (dv/dt). Doosan's
	 * speedl_rt/speedj_rt take its magnitude. */
	double acc[RTL_MOTION_AXES];
	/* Bit (1u << enum rtl_motion_event) per event raised in this step,
	 * whether or not the callback was called (limit rate). */
	unsigned events;
};

/*
 * The motion state's counters, declared once: X(name, what it counts); the
 * snapshot, the atomics and the table rtl_motion_counter_fields() are made
 * from it. The events raised, per enum rtl_motion_event, follow them in
 * the snapshot (events[]). New counters go at the end of the list.
 */
#define RTL_MOTION_COUNTERS(X)                             \
	X(steps, "rtl_motion_step() calls")                \
	X(commands, "accepted commands (motion and stop)") \
	X(rejected, "commands refused (-EDOM or -EINVAL)") \
	X(latched, "commands that reached a step")         \
	X(limit_clamps, "every clamp, including rate-limited events")

/* A snapshot of the counters (rtl_motion_stats()). Set .size. */
struct rtl_motion_counters {
	size_t size;
	RTL_MOTION_COUNTERS(RTL_STAT_U64)
	uint64_t events[RTL_MOTION_EV_COUNT]; /* raised, per event type */
};

/*
 * The motion state of one robot: the pending command, the profile, the
 * setpoint, the watchdogs and the counters. Opaque: its fields are
 * private and change between versions; make one with rtl_motion_create()
 * and use the functions.
 */
struct rtl_motion;

/*
 * Fill @cfg with the defaults for control period @period_ns: time-out
 * 0.1 s, loss check off, rotation radius 0.1 m, no limits (INFINITY).
 * Returns 0, or -EINVAL when @cfg is NULL or @period_ns <= 0. RT-safe.
 */
RTL_API int rtl_motion_config_init(struct rtl_motion_config *cfg, int64_t period_ns);

/*
 * Allocate a motion state, idle, set up from @cfg (copied: later changes
 * to *@cfg have no effect; use rtl_motion_set_velx() and friends), and
 * store it in *@out. Set-up time: not RT-safe (it allocates); call it
 * before the thread that will step it uses it, and hand the pointer over
 * with release/acquire ordering (or before that thread starts).
 * Returns 0, or
 *   -EINVAL  @out or @cfg is NULL, cfg->size is not set,
 *            period_ns or timeout_ns <= 0,
 *            loss_count is 0 or below -1, rot_radius_m is not a finite
 *            value > 0, or a limit is not > 0 (NaN included),
 *   -E2BIG   @cfg sets a field this library does not know,
 *   -ENOMEM  the allocation failed,
 * with @err filled. On error *@out is set to NULL (when @out is not NULL).
 */
RTL_API int rtl_motion_create(struct rtl_motion **out, const struct rtl_motion_config *cfg,
			      struct rtl_error *err);

/*
 * Free @m. NULL is accepted. No other thread may use @m any more (stop or
 * join the control loop that steps it first). Not RT-safe.
 */
RTL_API void rtl_motion_destroy(struct rtl_motion *m);

/*
 * Install the event callback @fn (NULL: counters only) with @user. Call
 * from the step thread. RT-safe.
 */
RTL_API void rtl_motion_set_handler(struct rtl_motion *m, rtl_motion_event_fn fn, void *user);

/*
 * Velocity streaming, Cartesian (speedl) or joint (speedj): ramp the
 * velocity linearly from the current setpoint to @vel over @target_time s
 * (<= one period: at once), then hold it until the next command.
 * @acc per axis is an upper bound on the ramp's acceleration (> 0; the
 * ramp lasts longer when it binds, all axes arriving together) or
 * RTL_MOTION_ACC_AUTO: |dv| / target_time. @now_ns is when the command was
 * given; the time-out counts from it. The command takes effect at the next
 * rtl_motion_step() and replaces any command not yet stepped.
 * Returns 0; -EINVAL when @m, @vel or @acc is NULL, an acc is <= 0 and not
 * RTL_MOTION_ACC_AUTO, or @target_time is < 0 or above
 * RTL_MOTION_MAX_TARGET_TIME; -EDOM when a value is NaN or infinite. On
 * error the state is unchanged (only the rejected counter moves).
 * RT-safe: no allocation, no locks, no system calls.
 */
RTL_API int rtl_motion_speedl(struct rtl_motion *m, int64_t now_ns,
			      const double vel[RTL_MOTION_AXES], const double acc[RTL_MOTION_AXES],
			      double target_time);
RTL_API int rtl_motion_speedj(struct rtl_motion *m, int64_t now_ns,
			      const double vel[RTL_MOTION_AXES], const double acc[RTL_MOTION_AXES],
			      double target_time);

/*
 * Position streaming, Cartesian (servol) or joint (servoj): move from the
 * current setpoint (the measured position when the stream starts) to @pose
 * over @target_time s along a quintic that ends with velocity @vel and
 * acceleration @acc (the segment's end state, as in Doosan's servo*_rt).
 * RTL_MOTION_ACC_AUTO in @vel or @acc means 0: the segment ends at rest.
 * When the segment ends with no newer command the setpoint holds @pose, or
 * decelerates at the global acceleration limit if @vel is not zero.
 * Global limits stretch the segment's duration (see docs/motion.md).
 * Returns 0; -EINVAL when a pointer is NULL or @target_time is < 0 or above
 * RTL_MOTION_MAX_TARGET_TIME; -EDOM when a value is NaN or infinite. On
 * error the state is unchanged. RT-safe: no allocation, no locks, no
 * system calls.
 */
RTL_API int rtl_motion_servol(struct rtl_motion *m, int64_t now_ns,
			      const double pose[RTL_MOTION_AXES], const double vel[RTL_MOTION_AXES],
			      const double acc[RTL_MOTION_AXES], double target_time);
RTL_API int rtl_motion_servoj(struct rtl_motion *m, int64_t now_ns,
			      const double pose[RTL_MOTION_AXES], const double vel[RTL_MOTION_AXES],
			      const double acc[RTL_MOTION_AXES], double target_time);

/*
 * Stop: decelerate every axis linearly to zero, together, at @dec (m/s^2
 * or rad/s^2 on the fastest axis relative to its velocity, i.e. the stop
 * takes max |v_i| / @dec seconds), or at the global acceleration limits
 * when @dec is RTL_MOTION_ACC_AUTO (at once when there are none). The stop
 * is not slowed by the limits. A stop when idle does nothing.
 * Returns 0; -EINVAL when @m is NULL or @dec is <= 0 and not
 * RTL_MOTION_ACC_AUTO; -EDOM when @dec is NaN or infinite. RT-safe.
 */
RTL_API int rtl_motion_stop(struct rtl_motion *m, int64_t now_ns, double dec);

/*
 * Global limits, applied to commands stepped after the call. Cartesian:
 * @trans (m/s, m/s^2) on x, y, z and @rot (rad/s, rad/s^2) on rx, ry, rz;
 * @rot = RTL_MOTION_ACC_AUTO derives it as @trans / cfg.rot_radius_m.
 * Joint: one value per axis. INFINITY removes a limit.
 * Returns 0; -EINVAL when a pointer is NULL or a value is <= 0 (and not
 * RTL_MOTION_ACC_AUTO where allowed); -EDOM when a value is NaN. On error
 * no limit changes. RT-safe.
 */
RTL_API int rtl_motion_set_velx(struct rtl_motion *m, double trans, double rot);
RTL_API int rtl_motion_set_accx(struct rtl_motion *m, double trans, double rot);
RTL_API int rtl_motion_set_velj(struct rtl_motion *m, const double vel[RTL_MOTION_AXES]);
RTL_API int rtl_motion_set_accj(struct rtl_motion *m, const double acc[RTL_MOTION_AXES]);

/*
 * One control period at @now_ns (the periods' times must not go back).
 * Latches the newest command, checks the time-out and the loss count,
 * advances the profile and writes the setpoint to @out. @measured (may be
 * NULL) gives the robot's state; it is read when a stream starts or
 * changes space, and for out->pose when idle. Raises events through the
 * callback and the counters. Returns the mode of @out, or -EINVAL when @m
 * or @out is NULL. RT-safe: no allocation, no locks, no system calls.
 */
RTL_API int rtl_motion_step(struct rtl_motion *m, struct rtl_motion_output *out, int64_t now_ns,
			    const struct rtl_motion_state *measured);

/*
 * A snapshot of the counters of @m into @out (set out->size =
 * sizeof(*out) first: at most that many bytes are written). Any thread,
 * any time (relaxed atomic loads: each value is exact, the set is not one
 * snapshot). Returns 0, or -EINVAL (@m or @out NULL, out->size not set).
 * RT-safe.
 */
RTL_API int rtl_motion_stats(const struct rtl_motion *m, struct rtl_motion_counters *out);

/* Returns the counters' table (without events[]); sets *@n (may be NULL)
 * to its length. RT-safe. */
RTL_API const struct rtl_stat_field *rtl_motion_counter_fields(size_t *n);

/* Returns the name of @mode: "idle", "speed-cartesian", ..., "stopping";
 * "?" when unknown. */
RTL_API const char *rtl_motion_mode_name(enum rtl_motion_mode mode);
/* Returns the name of @ev: "timeout", "loss", "limit", "stopped"; "?" when
 * unknown. */
RTL_API const char *rtl_motion_event_name(enum rtl_motion_event ev);

/*
 * Unit conversion for backends in mm and degrees (Doosan). Cartesian:
 * axes 0-2 m <-> mm, 3-5 rad <-> deg; joint: rad <-> deg on all axes.
 * Works for positions, velocities and accelerations alike (the time unit
 * is the second in both). RTL_MOTION_ACC_AUTO passes through unchanged.
 * Only units: the orientation representation (Doosan's ZYZ Euler angles,
 * UR's rotation vector) is the backend's business. @in and @out may alias.
 * RT-safe.
 */
RTL_API void rtl_motion_to_mm_deg(double out[RTL_MOTION_AXES], const double in[RTL_MOTION_AXES],
				  enum rtl_motion_space space);
RTL_API void rtl_motion_from_mm_deg(double out[RTL_MOTION_AXES], const double in[RTL_MOTION_AXES],
				    enum rtl_motion_space space);

/* Returns @rad in degrees. */
RTL_INLINE double rtl_motion_rad_to_deg(double rad)
{
	return rad * (180.0 / 3.14159265358979323846);
}

/* Returns @deg in radians. */
RTL_INLINE double rtl_motion_deg_to_rad(double deg)
{
	return deg * (3.14159265358979323846 / 180.0);
}

/* Returns @m in millimetres. */
RTL_INLINE double rtl_motion_m_to_mm(double m)
{
	return m * 1000.0;
}

/* Returns @mm in metres. */
RTL_INLINE double rtl_motion_mm_to_m(double mm)
{
	return mm / 1000.0;
}

RTL_END_DECLS

#endif /* RTLOOP_MOTION_H */
