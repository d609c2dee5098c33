/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_req: the commands beside the stream (move_j, move_l, paths,
 * payload, TCP, sensor zero, kinematics), as requests over the registers
 * of <rtloop/rtde_cmd.h> (docs/rtde-registers.md, "Requests").
 *
 * Design
 * ------
 * A request travels in an input recipe of its own (RTL_RTDE_REQ_RECIPE),
 * one of the transport's, and its answer in the output registers
 * RTL_RTDE_REQ_ACK_OUTPUTS of the state. So a step issues a request as it
 * writes a command: it writes the request into the recipe's frame
 * (rtl_rtde_loop_commands()) and the coalescer sends it once, because it
 * changed; the step reads the answer from later frames. Nothing here
 * blocks, allocates or locks: every call is RT-safe.
 *
 * - The builders (rtl_rtde_req_move_j() ...) check every argument before
 *   anything is written (lengths are the caller's arrays; ranges and
 *   finiteness here) and name the argument that is wrong.
 * - rtl_rtde_req_write() gives the request its identity: a new non-zero
 *   value from a struct rtl_rtde_req_ids, whose start is drawn from the
 *   clock, so a program restarted by a reconnect does not take a new
 *   request for one it has seen.
 * - rtl_rtde_req_track() turns the acknowledgement a frame carries into
 *   the outcome of one request: pending (not answered yet), accepted,
 *   running, done, failed with the controller's reason, or interrupted
 *   (the executor answered a newer request before this one ended).
 */
#ifndef RTLOOP_RTDE_REQ_H
#define RTLOOP_RTDE_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_recipe.h>

RTL_BEGIN_DECLS

struct rtl_rtde_transport;
struct rtl_loop;

/* A request before it has an identity: what, and its arguments. */
struct rtl_rtde_req {
	int32_t kind;	/* enum rtl_rtde_req_kind */
	uint32_t flags; /* RTL_RTDE_REQ_FLAG_* and the kind's bits */
	double arg[RTL_RTDE_REQ_NARG];
};

/* The request registers in the transport's recipes. */
struct rtl_rtde_req_handles {
	unsigned recipe; /* the input recipe that is RTL_RTDE_REQ_RECIPE */
	struct rtl_rtde_handle id, kind, flags, arg[RTL_RTDE_REQ_NARG];
	struct rtl_rtde_handle ack_id, ack_state, ack_reason, result[RTL_RTDE_REQ_NRESULT];
};

/* The acknowledgement a state frame carries. */
struct rtl_rtde_req_ack {
	int32_t id;	/* the identity answered (0: none yet) */
	int32_t state;	/* enum rtl_rtde_req_state */
	int32_t reason; /* enum rtl_rtde_req_reason */
	double result[RTL_RTDE_REQ_NRESULT];
};

/* Identities: the next one comes from @next (0 is skipped). */
struct rtl_rtde_req_ids {
	uint32_t next;
};

/* What became of one request (rtl_rtde_req_track()). */
enum rtl_rtde_req_outcome {
	RTL_RTDE_REQ_PENDING = 0,     /* not answered yet */
	RTL_RTDE_REQ_IS_ACCEPTED = 1, /* taken (a waypoint) */
	RTL_RTDE_REQ_IS_RUNNING = 2,  /* a move in progress */
	RTL_RTDE_REQ_IS_DONE = 3,     /* finished; the result is in the ack */
	RTL_RTDE_REQ_IS_FAILED = 4,   /* refused or failed: see the reason */
	RTL_RTDE_REQ_IS_INTERRUPTED = 5,
};

/* One request being followed: its identity and what was last seen of it. */
struct rtl_rtde_req_tracker {
	int32_t id;
	enum rtl_rtde_req_outcome outcome;
	int32_t reason;
	double result[RTL_RTDE_REQ_NRESULT];
};

/*
 * Resolve the request registers in @t's input recipe @recipe (which must
 * be RTL_RTDE_REQ_RECIPE) and the acknowledgement in its output recipe
 * (which must hold RTL_RTDE_REQ_ACK_OUTPUTS), into @out. Call it where
 * handles are resolved: in the transport's connected callback. Returns 0,
 * or -EINVAL (NULL) or -ENOENT (a register missing: the message names it
 * and the recipe to add), with @err filled. Not RT-safe.
 */
RTL_API int rtl_rtde_req_resolve(struct rtl_rtde_req_handles *out, struct rtl_rtde_transport *t,
				 unsigned recipe, struct rtl_error *err);

/* Start @ids at a value drawn from the monotonic clock. RT-safe. */
RTL_API void rtl_rtde_req_ids_init(struct rtl_rtde_req_ids *ids);

/*
 * The builders: fill @out with a request, every argument checked first.
 * Speeds and accelerations <= 0 take URScript's defaults. Return 0, or
 * -EINVAL with @err naming the argument (NULL, not finite, out of range);
 * @out is written only on success. RT-safe.
 */
/* movej to joints @q [rad]: leading joint @speed [rad/s], @accel [rad/s^2]. Returns 0 or -EINVAL.
 */
RTL_API int rtl_rtde_req_move_j(struct rtl_rtde_req *out, const double q[6], double speed,
				double accel, struct rtl_error *err);
/* movel to @pose (base frame [m, rotation vector rad]): @speed [m/s], @accel [m/s^2]. Returns 0 or
 * -EINVAL. */
RTL_API int rtl_rtde_req_move_l(struct rtl_rtde_req *out, const double pose[6], double speed,
				double accel, struct rtl_error *err);
/* A waypoint of the next path (@linear: movel, else movej), with @blend [m] >= 0. Returns 0 or
 * -EINVAL. */
RTL_API int rtl_rtde_req_path_add(struct rtl_rtde_req *out, const double target[6], bool linear,
				  double speed, double accel, double blend, struct rtl_error *err);
/* Make a move request (move_j or move_l) run the added path, ending at its own target. Returns 0 or
 * -EINVAL. */
RTL_API int rtl_rtde_req_run_path(struct rtl_rtde_req *move, struct rtl_error *err);
/* Bring a move to rest with @decel (<= 0: the default). Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_stop_move(struct rtl_rtde_req *out, double decel, struct rtl_error *err);
/* set_payload: @mass [kg] 0..1000, centre of gravity @cog [m] (NULL: 0) in the flange frame.
 * Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_set_payload(struct rtl_rtde_req *out, double mass, const double cog[3],
				     struct rtl_error *err);
/* set_tcp: @pose of the TCP in the flange frame. Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_set_tcp(struct rtl_rtde_req *out, const double pose[6],
				 struct rtl_error *err);
/* zero_ftsensor. Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_zero_ft_sensor(struct rtl_rtde_req *out, struct rtl_error *err);
/* get_forward_kin(@q): the answer's result is the pose. Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_forward_kin(struct rtl_rtde_req *out, const double q[6],
				     struct rtl_error *err);
/* get_inverse_kin(@pose, @q_near) (@q_near NULL: the current joints):
 * the answer's result is the joints. Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_inverse_kin(struct rtl_rtde_req *out, const double pose[6],
				     const double q_near[6], struct rtl_error *err);

/*
 * force_mode(@task_frame, @selection (each 0 or 1: 1 compliant), @wrench
 * [N, N m], @type 1..3). The limits, damping and gain scaling are the last
 * rtl_rtde_req_force_limits()'. Returns 0 or -EINVAL.
 */
RTL_API int rtl_rtde_req_force_mode(struct rtl_rtde_req *out, const double task_frame[6],
				    const int selection[6], const double wrench[6], int type,
				    struct rtl_error *err);
/* The limits of the next force mode (each > 0: speed on compliant axes
 * [m/s, rad/s], deviation on the others [m, rad]), @damping 0..1 and
 * @gain_scaling 0..2 (< 0: the defaults). Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_force_limits(struct rtl_rtde_req *out, const double limits[6],
				      double damping, double gain_scaling, struct rtl_error *err);
/* A request without arguments: END_FORCE_MODE, TEACH_MODE,
 * END_TEACH_MODE or ZERO_FT_SENSOR. Returns 0 or -EINVAL (another kind). */
RTL_API int rtl_rtde_req_simple(struct rtl_rtde_req *out, enum rtl_rtde_req_kind kind,
				struct rtl_error *err);
/* Move with the TCP speed @xd (base frame [m/s, rad/s], a linear part
 * needed) and @accel until the tool meets @force [N] (<= 0: the default),
 * then retract by @retract [m] 0..1. Returns 0 or -EINVAL. */
RTL_API int rtl_rtde_req_move_until_contact(struct rtl_rtde_req *out, const double xd[6],
					    double accel, double retract, double force,
					    struct rtl_error *err);

/*
 * Write @req into @frame (the request recipe's, e.g.
 * rtl_rtde_loop_commands(loop, h->recipe)) with the next identity of
 * @ids, and start @tracker on it (may be NULL). Returns the identity
 * (> 0), or -EINVAL (NULL, a handle not resolved) with @err filled.
 * RT-safe.
 */
RTL_API int rtl_rtde_req_write(const struct rtl_rtde_req *req, struct rtl_rtde_frame *frame,
			       struct rtl_rtde_req_ids *ids, struct rtl_rtde_req_tracker *tracker,
			       const struct rtl_rtde_req_handles *h, struct rtl_error *err);

/* Read the acknowledgement of state @frame into @out. Returns 0, or
 * -EINVAL (NULL, a handle not resolved). RT-safe. */
RTL_API int rtl_rtde_req_read_ack(struct rtl_rtde_req_ack *out, const struct rtl_rtde_frame *frame,
				  const struct rtl_rtde_req_handles *h);

/*
 * Update @tracker with @ack, the newest acknowledgement. The executor
 * answers one request at a time: while it answers @tracker's identity
 * the state is its outcome; when it answers another identity after
 * having answered this one as accepted or running, this one was
 * interrupted; before it has answered it at all, it is pending. A done or
 * failed outcome is final. Returns the outcome. RT-safe.
 */
RTL_API enum rtl_rtde_req_outcome rtl_rtde_req_track(struct rtl_rtde_req_tracker *tracker,
						     const struct rtl_rtde_req_ack *ack);

/*
 * From the application thread.
 *
 * A loop with a step function: a struct rtl_rtde_req_chan hands requests
 * from one application thread to the step, lock-free. The application
 * posts a request and waits for its outcome; the step calls
 * rtl_rtde_req_chan_serve() every step, which writes a posted request
 * into the request frame and publishes the outcome of the newest one.
 * One request at a time is followed: a newer post supersedes the older
 * (which the executor then answers as interrupted, if it was running).
 *
 * A loop without a step (the external-loop API, or a loop created only
 * for a move between two loops): rtl_rtde_req_run() writes the request
 * and drives the loop itself (read, follow the answer, write) until the
 * request is over.
 */
struct rtl_rtde_req_chan;

/* Allocate a channel. Returns 0 or -ENOMEM. Not RT-safe. */
RTL_API int rtl_rtde_req_chan_create(struct rtl_rtde_req_chan **out, struct rtl_error *err);
/* Free it (NULL: nothing); the loop that serves it must be joined. */
RTL_API void rtl_rtde_req_chan_destroy(struct rtl_rtde_req_chan *c);
/*
 * Post @req from the application thread (one thread only). Returns a
 * ticket > 0, -EBUSY while the last request posted has not been taken by
 * a step yet, or -EINVAL. RT-safe.
 */
RTL_API int rtl_rtde_req_chan_post(struct rtl_rtde_req_chan *c, const struct rtl_rtde_req *req,
				   struct rtl_error *err);
/*
 * In the step: follow the newest request with the acknowledgement of
 * @state, and write a newly posted one into @frame (the request recipe's)
 * with an identity of @ids. Returns 1 when it wrote one, 0, or -EINVAL.
 * RT-safe: no lock, no allocation, no system call.
 */
RTL_API int rtl_rtde_req_chan_serve(struct rtl_rtde_req_chan *c, struct rtl_rtde_frame *frame,
				    struct rtl_rtde_req_ids *ids,
				    const struct rtl_rtde_frame *state,
				    const struct rtl_rtde_req_handles *h);
/*
 * What became of @ticket, copied into @out (may be NULL). Returns the
 * outcome (PENDING until a step took it and the executor answered), or
 * -ENOENT for a ticket a newer post superseded. Any thread. RT-safe.
 */
RTL_API int rtl_rtde_req_chan_poll(const struct rtl_rtde_req_chan *c,
				   struct rtl_rtde_req_tracker *out, int ticket);
/*
 * Wait up to @timeout_ns for @ticket to be over, polling every
 * millisecond (no wake-up from the step: it makes no system call).
 * Returns 0 when done, -ECANCELED (interrupted), -EIO (failed: @out's
 * reason, and @err names it), -ETIMEDOUT, -ENOENT. Not RT-safe.
 */
RTL_API int rtl_rtde_req_chan_wait(const struct rtl_rtde_req_chan *c,
				   struct rtl_rtde_req_tracker *out, int ticket, int64_t timeout_ns,
				   struct rtl_error *err);

/*
 * On @loop, created without a step function and started: write @req,
 * then read every frame, follow the answer and end each step with a
 * write, until the request is over or @timeout_ns ran out. Returns as
 * rtl_rtde_req_chan_wait() (-ECANCELED also when the loop stopped), with
 * @out (may be NULL) the request's last state. From the thread that owns
 * the external loop. Not RT-safe (it waits), allocation-free.
 */
RTL_API int rtl_rtde_req_run(const struct rtl_rtde_req *req, struct rtl_rtde_req_ids *ids,
			     struct rtl_rtde_req_tracker *out, struct rtl_loop *loop,
			     const struct rtl_rtde_req_handles *h, int64_t timeout_ns,
			     struct rtl_error *err);

/* Returns the name of @reason ("unreachable" ...), "?" for others. RT-safe. */
RTL_API const char *rtl_rtde_req_reason_name(enum rtl_rtde_req_reason reason);
/* Returns the name of @kind ("move_j" ...), "?" for others. RT-safe. */
RTL_API const char *rtl_rtde_req_kind_name(enum rtl_rtde_req_kind kind);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_REQ_H */
