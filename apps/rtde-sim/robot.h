/* SPDX-License-Identifier: MIT */
/*
 * sim_robot: the plant behind rtde-sim, a UR5e (a UR5 with the CB3
 * profile's cfg.dh) that executes the register commands of
 * <rtloop/rtde_cmd.h>.
 *
 * Design
 * ------
 * A simulator is only as useful as its robot is predictable, so the robot is
 * a pure step function: sim_robot_command() latches what the client
 * wrote, sim_robot_step() advances the plant by exactly one control
 * period (1/500 s or 1/125 s), and every output the RTDE server publishes is
 * a plain field of struct sim_robot, named after its RTDE output. Time
 * comes in as an argument (used only by the watchdog); the plant's own time
 * is cycles x period, as the controller's `timestamp`. No allocation, no
 * threads, no I/O, no clock: the server drives it from its timer, tests
 * drive it with a loop.
 *
 * The model, in the order a step runs it:
 * - Watchdog. While a motion command (speedj, speedl, servoj) is executed,
 *   the heartbeat register must change within the timeout (100 ms by
 *   default). When it does not, the robot decelerates to rest in joint
 *   space, counts a trip, and says so through the message hook. The next new
 *   heartbeat resumes command execution; a command with the stale heartbeat
 *   is refused (-ESTALE), so a stuck client cannot restart the motion. STOP
 *   and IDLE bring the arm to rest by themselves: under them the watchdog
 *   does not trip, so a client that stops the arm and leaves trips nothing.
 * - Stops. Each STOP or IDLE that finds the arm moving starts a stop; the
 *   robot counts the stops, those that reached rest, and the cycles they
 *   took (the last and the longest), so a test can read how fast a stop
 *   sent by a client's watchdog took effect.
 * - Trajectory generator, per mode. speedj ramps the joint velocity vector
 *   toward the command with the acceleration of the leading joint (all
 *   joints reach the target together, so the joint-space direction holds, as
 *   URScript's speedj). speedl ramps a TCP twist the same way and maps it to
 *   joint velocities with a damped least-squares inverse of the geometric
 *   Jacobian, closed around a reference pose integrated from the twist, so
 *   the TCP follows the commanded straight line instead of drifting with the
 *   integration error (closed-loop inverse kinematics). servoj is a
 *   per-joint first-order tracker with time constant
 *   lookahead * 300 / gain, bounded by a braking curve so that it stops on
 *   the target without overshoot. stop (and idle) ramp to rest, in Cartesian
 *   space after speedl (stopl), in joint space otherwise (stopj).
 * - Force mode, teach mode and move_until_contact (requests, requests.c):
 *   force mode replaces the compliant axes of the stream's twist, in the
 *   task frame, with an admittance's speed toward the commanded wrench;
 *   teach mode ignores the stream and moves the TCP with the hand's push
 *   (cfg.push) / 100 N s/m; move_until_contact runs under IDLE as a speedl
 *   until the force reaches its threshold, brakes, and retracts as a
 *   linear move. All three map the twist as speedl does. STOP, a watchdog
 *   trip and a protective stop end force and teach mode; the watchdog
 *   watches force mode, move_until_contact and teach mode.
 * - Limits, applied to every mode: the speed slider (target_speed_fraction)
 *   scales the commanded speeds, as on the real robot; velocities are scaled
 *   uniformly to the joint speed limits (direction kept), and that ratio is
 *   speed_scaling, the trajectory limiter's factor (1 while nothing limits
 *   the speed, so that a client's combined scaling, speed_scaling x
 *   target_speed_fraction, is the fraction of the commanded speed the arm
 *   executes); a joint brakes ahead of its position limit; the velocity
 *   change per cycle is scaled uniformly to the joint acceleration limits.
 *   What bound is recorded in .limited.
 * - Integration: trapezoidal (a velocity ramp integrates exactly). These are
 *   the target_* values. The actual joints follow one cycle behind.
 * - Outputs: forward kinematics (standard DH of cfg.dh) gives the TCP poses as UR
 *   reports them (x, y, z in m, rotation vector in rad, base frame), the
 *   Jacobian gives the TCP speeds; a virtual contact plane gives
 *   actual_TCP_force, with seeded Gaussian noise; gravity of UR's published
 *   link masses and the configured payload, an inertia and a friction term
 *   give plausible joint torques, currents, temperatures and power draw; the
 *   tool accelerometer reads the TCP's acceleration minus gravity in the
 *   flange frame; the execution time is a seeded model of the controller's
 *   real-time thread.
 *
 * Thread safety: none; one robot belongs to one thread. Every function is
 * RT-safe (no allocation, no locks, no system calls) unless it says
 * otherwise.
 */
#ifndef RTLOOP_SIM_ROBOT_H
#define RTLOOP_SIM_ROBOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/rtde_cmd.h>

#include "moves.h"

#define SIM_ROBOT_DOF 6

/* Values the robot reports while running (docs/rtde-protocol.md 5.4). */
#define SIM_ROBOT_MODE_RUNNING 7
#define SIM_SAFETY_MODE_NORMAL 1
#define SIM_JOINT_MODE_RUNNING 253
#define SIM_RUNTIME_PLAYING 2
#define SIM_ROBOT_STATUS_POWER_ON (1u << 0)
#define SIM_ROBOT_STATUS_PROGRAM_RUNNING (1u << 1)
#define SIM_SAFETY_STATUS_NORMAL (1u << 0)

/* Levels of the message hook: those of RTDE text messages. */
enum sim_robot_level {
	SIM_ROBOT_EXCEPTION = 0,
	SIM_ROBOT_ERROR = 1,
	SIM_ROBOT_WARNING = 2,
	SIM_ROBOT_INFO = 3,
};

/* Bits of sim_robot_step()'s result and of struct sim_robot.limited. */
enum sim_robot_event {
	SIM_ROBOT_EV_WATCHDOG = 1u << 0,  /* the watchdog tripped this step */
	SIM_ROBOT_EV_VEL_LIMIT = 1u << 1, /* a joint speed limit scaled the motion */
	SIM_ROBOT_EV_ACC_LIMIT = 1u << 2, /* a joint acceleration limit bound */
	SIM_ROBOT_EV_POS_LIMIT = 1u << 3, /* a joint braked at a position limit */
};

/* The virtual contact: a half space the TCP can press into. */
struct sim_contact {
	bool enabled;
	double point[3];  /* a point on the plane, base frame [m] */
	double normal[3]; /* toward the free side; need not be unit length */
	double stiffness; /* k [N/m], >= 0 */
	double damping;	  /* d [N s/m], >= 0 */
};

/*
 * A UR arm's standard DH lengths [m], joint i 0-based: d[i] along z, a[i]
 * along x (d2 = d3 = a1 = a4 = a5 = a6 = 0 on every UR). The twists are the
 * same on every model, alpha = pi/2 0 0 pi/2 -pi/2 0, and are not stored.
 */
struct sim_dh {
	double d[SIM_ROBOT_DOF];
	double a[SIM_ROBOT_DOF];
};

/* The e-Series UR5e (the default) and the CB3 UR5. */
extern const struct sim_dh sim_dh_ur5e;
extern const struct sim_dh sim_dh_ur5;

struct sim_robot_config {
	int64_t period_ns;	      /* control period: 2 000 000 (500 Hz) or 8 000 000 (125 Hz) */
	double q0[SIM_ROBOT_DOF];     /* initial joint positions [rad] */
	double qd_max[SIM_ROBOT_DOF]; /* joint speed limits [rad/s], > 0 */
	double qdd_max[SIM_ROBOT_DOF]; /* joint acceleration limits [rad/s^2], > 0 */
	double q_min[SIM_ROBOT_DOF];   /* joint position limits [rad], min < max */
	double q_max[SIM_ROBOT_DOF];
	double joint_accel;    /* speedj/stopj/idle acceleration when the command has none */
	double linear_accel;   /* speedl/stopl/idle acceleration when the command has none */
	int64_t watchdog_ns;   /* heartbeat timeout when the command says 0; 0 = off */
	double watchdog_decel; /* leading-joint deceleration after a trip [rad/s^2] */
	double tcp_offset[6];  /* flange -> TCP, x y z [m], rotation vector [rad] */
	struct sim_dh dh;      /* the arm's kinematics: sim_dh_ur5e, or sim_dh_ur5 on CB3 */
	struct sim_contact contact;
	double force_noise;  /* standard deviation of each force component [N], >= 0 */
	double torque_noise; /* standard deviation of each torque component [N m], >= 0 */
	/* The mounted payload (set_payload), reported as payload, payload_cog
	 * and payload_inertia and carried in the gravity torques. */
	double payload_mass;	   /* [kg], >= 0 */
	double payload_cog[3];	   /* centre of gravity, flange frame [m] */
	double payload_inertia[6]; /* Ixx Iyy Izz Ixy Ixz Iyz about the cog [kg m^2] */
	uint64_t seed;		   /* of the noise generator */
	/* The hand on the tool in teach mode: the force it applies (base
	 * frame [N]), from @push_after s after teach mode begins, for
	 * @push_for s (0: until teach mode ends). */
	double push[3];
	double push_after, push_for;
	/* Called from sim_robot_step() when the robot has something to say
	 * (a watchdog trip); the server turns it into an RTDE text message. Must
	 * be RT-safe itself. NULL: silent. @text is a static string. */
	void (*message)(void *ctx, enum sim_robot_level level, const char *text);
	void *message_ctx;
};

/* A command, decoded from the registers of <rtloop/rtde_cmd.h>. */
struct sim_robot_cmd {
	int32_t mode;	     /* enum rtl_rtde_cmd_mode */
	int32_t seq;	     /* heartbeat */
	int32_t watchdog_ms; /* 0 = the configured timeout, < 0 = off */
	double param[RTL_RTDE_CMD_NPARAM];
	double accel;
	double time;
	double lookahead;
	double gain;
};

/* A request, decoded from the request registers of <rtloop/rtde_cmd.h>. */
struct sim_robot_req {
	int32_t id;   /* a new non-zero value per request */
	int32_t kind; /* enum rtl_rtde_req_kind */
	uint32_t flags;
	double arg[RTL_RTDE_REQ_NARG];
};

/* A waypoint of the path being added (RTL_RTDE_REQ_PATH_ADD). */
struct sim_robot_waypoint {
	double target[6];
	double v, a, blend;
	bool linear;
};

/*
 * The controller inputs that act on the robot, as the server has latched
 * them (the controller keeps the last value of every input). Applying the
 * same struct twice changes nothing.
 */
struct sim_robot_inputs {
	uint32_t speed_slider_mask; /* 1 = take speed_slider_fraction */
	double speed_slider_fraction;
	uint8_t standard_digital_output_mask;
	uint8_t standard_digital_output;
	uint8_t configurable_digital_output_mask;
	uint8_t configurable_digital_output;
	uint8_t tool_digital_output_mask; /* bits 0-1 */
	uint8_t tool_digital_output;
	uint8_t standard_analog_output_mask; /* bits 0-1 = AO0, AO1 */
	uint8_t standard_analog_output_type; /* bit set = voltage, clear = current */
	double standard_analog_output_0;     /* ratio 0..1 */
	double standard_analog_output_1;
};

/*
 * The robot. Fields below "outputs" are named after the RTDE outputs they
 * fill; read them, do not write them (except the inputs marked so).
 */
struct sim_robot {
	struct sim_robot_config cfg;

	/* ---- outputs ---- */
	uint64_t cycles; /* steps taken; timestamp = cycles * period */
	double target_q[SIM_ROBOT_DOF];
	double target_qd[SIM_ROBOT_DOF];
	double target_qdd[SIM_ROBOT_DOF];
	double target_current[SIM_ROBOT_DOF]; /* [A] */
	double target_moment[SIM_ROBOT_DOF];  /* [N m] */
	double actual_q[SIM_ROBOT_DOF];
	double actual_qd[SIM_ROBOT_DOF];
	double actual_current[SIM_ROBOT_DOF];
	double joint_control_output[SIM_ROBOT_DOF];
	double actual_TCP_pose[6];
	double actual_TCP_speed[6];
	double actual_TCP_force[6]; /* base frame, what the tool exerts [N, N m] */
	double target_TCP_pose[6];
	double target_TCP_speed[6];
	double ft_raw_wrench[6]; /* actual_TCP_force in the tool frame */
	double tcp_force_scalar; /* norm of the force part [N] */
	double tcp_offset[6];
	double joint_temperatures[SIM_ROBOT_DOF]; /* [deg C] */
	double actual_joint_voltage[SIM_ROBOT_DOF];
	double actual_main_voltage;
	double actual_robot_voltage;
	double actual_robot_current;
	double actual_momentum;
	double actual_tool_accelerometer[3]; /* specific force, flange frame [m/s^2] */
	double actual_execution_time;	     /* [ms] */
	double tool_temperature;	     /* [deg C] */
	double payload;			     /* [kg] */
	double payload_cog[3];		     /* [m] */
	double payload_inertia[6];	     /* [kg m^2] */
	double elbow_position[3];
	double elbow_velocity[3];
	int32_t joint_mode[SIM_ROBOT_DOF];
	int32_t robot_mode;
	int32_t safety_mode;
	int32_t safety_status;
	uint32_t robot_status_bits;
	uint32_t safety_status_bits;
	uint32_t runtime_state;
	double speed_scaling;	      /* the limiter's factor of this step, 0..1 */
	double target_speed_fraction; /* the speed slider, 0..1 */
	uint8_t standard_digital_out; /* bits of actual_digital_output_bits 0-7 */
	uint8_t configurable_digital_out;
	uint8_t tool_digital_out;
	uint32_t analog_io_types;	  /* bits 0-1 AI0/1, 2-3 AO0/1; 1 = voltage */
	double standard_analog_output[2]; /* [mA or V] */
	double analog_output_ratio[2];	  /* what the client asked for */
	/* Inputs of the outside world; the server may set them (faults). */
	uint64_t actual_digital_input_bits;
	double standard_analog_input[2];

	/* ---- command executor, reported in output registers 24-27 ---- */
	int32_t active_mode; /* enum rtl_rtde_cmd_mode being executed */
	int32_t last_seq;    /* last heartbeat seen */
	uint64_t watchdog_trips;
	bool watchdog_tripped; /* since the trip, until a new heartbeat */
	uint32_t limited;      /* SIM_ROBOT_EV_*_LIMIT bits of the last step */
	/* Stops (STOP or IDLE finding the arm moving): started, reached rest,
	 * cycles from the command to rest (the last one, the longest), and
	 * the command that started the last one. */
	uint64_t stops, stops_at_rest;
	uint64_t last_stop_cycles, max_stop_cycles;
	struct sim_robot_cmd last_stop_cmd;

	/* ---- requests, reported in output int 40-42 and double 24-29 ---- */
	int32_t req_id;	    /* the identity answered (0: none yet) */
	int32_t req_state;  /* enum rtl_rtde_req_state */
	int32_t req_reason; /* enum rtl_rtde_req_reason */
	double req_result[RTL_RTDE_REQ_NRESULT];
	uint64_t requests, requests_failed, moves_done;
	double ft_bias[6]; /* zero_ft_sensor: subtracted from the reading */
	bool force_on;	   /* force mode (RTL_RTDE_CMD_STATUS_FORCE) */
	bool teach_on;	   /* teach mode (RTL_RTDE_CMD_STATUS_TEACH) */

	/* ---- private ---- */
	bool req_seen;	   /* req_last is valid */
	int32_t req_last;  /* the last identity taken */
	bool move_on;	   /* a move runs: the plan drives the joints */
	bool move_pending; /* a move waits for the one being stopped */
	double move_t;	   /* time into the plan [s] */
	struct sim_move move;
	struct sim_robot_req pending;
	int path_n;
	struct sim_robot_waypoint path[RTL_RTDE_REQ_PATH_MAX];
	/* force mode: task frame (rotation, base frame), wrench, compliant
	 * axes (bits 0-5), and the limits of FORCE_LIMITS */
	double force_R[9];
	double force_wrench[6];
	uint32_t force_sel;
	double force_limit[6];
	double force_damping, force_gain;
	double force_twist[6]; /* the twist force mode executed last step */
	uint64_t teach_cycles; /* steps in teach mode */
	bool push_on;	       /* the hand pushes this step */
	/* move_until_contact: its phase (enum sim_muc_phase), the
	 * twist, acceleration, braking deceleration, retract distance and
	 * contact force */
	int muc_phase;
	double muc_twist[6];
	double muc_accel, muc_decel, muc_retract, muc_force;
	struct sim_robot_cmd cmd;
	bool stopping;	       /* a stop is on */
	uint64_t stop_started; /* its first cycle */
	bool seen_seq;	       /* last_seq is valid */
	bool armed;	       /* the watchdog is watching the heartbeat */
	int64_t last_refresh_ns;
	bool linear;	 /* the last motion was Cartesian: stop with stopl */
	double twist[6]; /* speedl: the ramped twist being executed */
	double ref_p[3]; /* speedl: reference pose the TCP is held to */
	double ref_R[9];
	uint64_t rng;
	uint64_t exec_rng; /* actual_execution_time's own stream */
	double spare_gauss;
	bool have_spare;
};

/*
 * Fill @cfg with a UR5e on an e-Series controller: 500 Hz, speed limits
 * pi rad/s, acceleration limits 15 rad/s^2, position limits +-2 pi (elbow
 * +-pi), default accelerations 1.4 rad/s^2 and 1.2 m/s^2, watchdog 100 ms
 * with a 10 rad/s^2 stop, start pose (0, -pi/2, pi/2, -pi/2, -pi/2, 0), no
 * TCP offset, a 1 kg payload at (0, 0, 0.05) m in the flange frame with
 * 0.001 kg m^2 about each axis, no contact, no noise, seed 1.
 */
void sim_robot_config_default(struct sim_robot_config *cfg);

/*
 * Power the robot up at rest at cfg->q0, running (robot_mode RUNNING,
 * safety NORMAL, program PLAYING), idle, the watchdog disarmed until the
 * first heartbeat. @cfg is copied.
 * Returns 0, or -EINVAL when a pointer is NULL, the period is not positive,
 * a limit is not positive or finite, a position range is empty, q0 lies
 * outside it, a noise or contact parameter is negative, the payload mass is
 * negative or a payload value is not finite, or an enabled contact has a
 * zero normal.
 */
int sim_robot_init(struct sim_robot *r, const struct sim_robot_config *cfg);

/*
 * The client wrote @cmd at @now_ns (the clock sim_robot_step() gets).
 * A heartbeat different from the last one (or the first one) feeds and arms
 * the watchdog; the command takes effect at the next step.
 * Returns 0; -EINVAL when a pointer is NULL, the mode is unknown or a
 * parameter is not finite (the previous command stays); -ESTALE when the
 * watchdog has stopped the robot and @cmd still carries the heartbeat it
 * timed out on (ignored: send a new heartbeat to resume).
 */
int sim_robot_command(struct sim_robot *r, const struct sim_robot_cmd *cmd, int64_t now_ns);

/*
 * The client wrote request @q (docs/rtde-registers.md, "Requests"). The
 * robot takes it when its identity is new and answers in req_id,
 * req_state, req_reason and req_result: at once for what ends at once
 * (payload, TCP, kinematics, a waypoint added, a refusal), RUNNING and
 * later DONE for a move. This simulator runs every kind of
 * <rtloop/rtde_cmd.h>: moves, paths, STOP_MOVE, force mode and its limits,
 * teach mode, move_until_contact, ZERO_FT_SENSOR, SET_PAYLOAD, SET_TCP,
 * FORWARD_KIN and INVERSE_KIN (the models: docs/rtde-sim.md, "Requests");
 * other kinds are refused with UNKNOWN_KIND.
 * Returns 0 (also for a request answered FAILED), 1 for an identity
 * already taken (ignored), -EINVAL for a NULL pointer.
 */
int sim_robot_request(struct sim_robot *r, const struct sim_robot_req *q, int64_t now_ns);

/* Between robot.c and requests.c only: the running move's next joints
 * (false: no move runs), and its end when something else takes the arm. */
bool sim_robot_move_step(struct sim_robot *r, double dt, double q_next[SIM_ROBOT_DOF]);
void sim_robot_move_abort(struct sim_robot *r, int32_t reason);
/* Force and teach mode end (STOP, a watchdog trip, a protective stop). */
void sim_robot_modes_end(struct sim_robot *r);
/* The phases of move_until_contact robot.c runs (muc_phase). */
enum sim_muc_phase {
	SIM_MUC_NONE = 0,
	SIM_MUC_APPROACH, /* ramping to the twist, watching the force */
	SIM_MUC_BRAKE,	  /* contact: braking, then the retract */
	SIM_MUC_YIELD,	  /* stopped (STOP_MOVE) or interrupted by a newer move */
};
/* The contact move's phase @phase (BRAKE, YIELD) brought the arm to rest:
 * its retract, its end or the pending move. */
void sim_robot_contact_rest(struct sim_robot *r);
/* A joint limit or the speed limiter stopped the approach: NO_CONTACT. */
void sim_robot_contact_fail(struct sim_robot *r, int32_t reason);

/*
 * Advance the robot by one control period; @now_ns is the time of this
 * cycle, compared with the last heartbeat by the watchdog. Returns the
 * SIM_ROBOT_EV_* bits of what happened in this step.
 */
uint32_t sim_robot_step(struct sim_robot *r, int64_t now_ns);

/*
 * Apply the controller inputs @in: digital outputs take the value bits
 * under their masks, analog outputs under theirs with the given domain
 * (current 4-20 mA, voltage 0-10 V over the ratio 0-1), and the speed slider
 * takes the fraction (clamped to 0-1) when its mask is 1.
 * Returns 0; -EINVAL when a pointer is NULL or a selected value is not
 * finite (nothing is applied).
 */
int sim_robot_set_inputs(struct sim_robot *r, const struct sim_robot_inputs *in);

/*
 * Replace the virtual contact (disable it with c->enabled = false).
 * Returns 0; -EINVAL as sim_robot_init() for the contact fields.
 */
int sim_robot_set_contact(struct sim_robot *r, const struct sim_contact *c);

/* actual_digital_output_bits: 0-7 standard, 8-15 configurable, 16-17 tool. */
uint64_t sim_robot_digital_output_bits(const struct sim_robot *r);

/* What the reports and tests read of a robot's safety behaviour. */
struct sim_robot_summary {
	uint64_t watchdog_trips;
	uint64_t stops, stops_at_rest;
	uint64_t last_stop_cycles, max_stop_cycles;
	struct sim_robot_cmd last_stop_cmd;
	bool at_rest;	  /* every actual joint speed exactly 0 */
	double max_speed; /* the largest |actual_qd| [rad/s] */
	/* Where the arm is and what is set: what a test of another
	 * library's program checks against the client's view. */
	double q[SIM_ROBOT_DOF]; /* actual_q */
	double tcp_pose[6];	 /* actual_TCP_pose */
	double tcp_offset[6];
	double payload, payload_cog[3];
	double ft_bias[6]; /* what zero_ft_sensor subtracts */
	bool force_on, teach_on;
	uint64_t requests, requests_failed, moves_done;
};

void sim_robot_summarize(const struct sim_robot *r, struct sim_robot_summary *out);

/* @s as a JSON object (the sims' reports); not RT-safe (stdio). */
void sim_robot_summary_json(FILE *f, const struct sim_robot_summary *s);

/* Every joint's actual speed is exactly zero. */
bool sim_robot_at_rest(const struct sim_robot *r);

/* The largest |actual_qd| [rad/s]. */
double sim_robot_max_speed(const struct sim_robot *r);

/* The status word of RTL_RTDE_CMD_OUT_STATUS. */
uint32_t sim_robot_cmd_status(const struct sim_robot *r);

/*
 * Kinematics of the arm @dh (NULL: the UR5e, standard DH: d1 0.1625, a2
 * -0.425, a3 -0.3922, d4 0.1333, d5 0.0997, d6 0.0996; the UR5 has d1
 * 0.089159, a2 -0.425, a3 -0.39225, d4 0.10915, d5 0.09465, d6 0.0823;
 * alpha pi/2 0 0 pi/2 -pi/2 0), in the base frame the controller reports.
 * @tcp_offset may be NULL (flange). The functions without _dh are the
 * UR5e's.
 */
/* TCP pose of @q: x, y, z [m], rotation vector [rad] (angle in [0, pi]). */
void sim_robot_fk_dh(const struct sim_dh *dh, const double q[SIM_ROBOT_DOF],
		     const double tcp_offset[6], double pose[6]);
void sim_robot_fk(const double q[SIM_ROBOT_DOF], const double tcp_offset[6], double pose[6]);
/*
 * Geometric Jacobian at the TCP, row-major 6 x 6: row r is vx vy vz wx wy wz,
 * column c is joint c; jac[6 * r + c].
 */
void sim_robot_jacobian_dh(const struct sim_dh *dh, const double q[SIM_ROBOT_DOF],
			   const double tcp_offset[6], double jac[36]);
void sim_robot_jacobian(const double q[SIM_ROBOT_DOF], const double tcp_offset[6], double jac[36]);
/*
 * The damped least-squares inverse of @jac (as sim_robot_jacobian()'s)
 * applied to the twist @v: qd = J^T (J J^T + lambda^2 I)^-1 v, lambda
 * 0.01, so that a singular pose gives a bounded answer.
 */
void sim_robot_dls(const double jac[36], const double v[6], double qd[SIM_ROBOT_DOF]);
/* Rotation vector (axis * angle) to a row-major 3 x 3 rotation matrix. */
void sim_robot_rotvec_to_matrix(const double rv[3], double m[9]);
/* Rotation matrix to rotation vector, angle in [0, pi]; at exactly pi the
 * axis sign is arbitrary (both describe the same rotation). */
void sim_robot_matrix_to_rotvec(const double m[9], double rv[3]);

#endif /* RTLOOP_SIM_ROBOT_H */
