// SPDX-License-Identifier: MIT
/*
 * Requests over the registers of <rtloop/rtde_cmd.h>: the builders with
 * their argument checks, the identity, the write into the request frame,
 * the acknowledgement and the outcome of one request (see rtde_req.h).
 * Everything is RT-safe except rtl_rtde_req_resolve() (string compares).
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_req.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/sized.h>
#include <rtloop/time.h>

/* ---- handles ------------------------------------------------------------------ */

/* Resolve @name as input (@in) or output field into @h; -ENOENT names it. */
static int resolve(struct rtl_rtde_transport *t, bool in, unsigned recipe, const char *name,
		   struct rtl_rtde_handle *h, struct rtl_error *err)
{
	*h = in ? rtl_rtde_transport_input_handle(t, recipe, name)
		: rtl_rtde_transport_output_handle(t, name);
	if (rtl_rtde_handle_valid(*h))
		return 0;
	if (in)
		return rtl_error_set(err, -ENOENT,
				     "requests: input recipe %u has no '%s': make it "
				     "RTL_RTDE_REQ_RECIPE",
				     recipe, name);
	return rtl_error_set(err, -ENOENT,
			     "requests: the output recipe has no '%s': add "
			     "RTL_RTDE_REQ_ACK_OUTPUTS to it",
			     name);
}

RTL_API int rtl_rtde_req_resolve(struct rtl_rtde_req_handles *out, struct rtl_rtde_transport *t,
				 unsigned recipe, struct rtl_error *err)
{
	struct rtl_rtde_req_handles h = { .recipe = recipe };
	struct rtl_rtde_handle *in[3 + RTL_RTDE_REQ_NARG] = { &h.id, &h.kind, &h.flags };
	struct rtl_rtde_handle *ack[3 + RTL_RTDE_REQ_NRESULT] = { &h.ack_id, &h.ack_state,
								  &h.ack_reason };
	char name[48];
	int ret = 0;

	if (!out || !t)
		return rtl_error_set(err, -EINVAL, "requests: NULL %s", out ? "transport" : "out");
	for (int i = 0; i < RTL_RTDE_REQ_NARG; i++)
		in[3 + i] = &h.arg[i];
	for (int i = 0; i < RTL_RTDE_REQ_NRESULT; i++)
		ack[3 + i] = &h.result[i];
	/* the request's registers, then the acknowledgement's: three ints,
	 * then the doubles, of each */
	for (int i = 0; i < 6 + RTL_RTDE_REQ_NARG + RTL_RTDE_REQ_NRESULT && ret == 0; i++) {
		bool input = i < 3 + RTL_RTDE_REQ_NARG;
		int k = input ? i : i - (3 + RTL_RTDE_REQ_NARG);
		bool dbl = k >= 3;
		int reg =
			input ? (dbl ? RTL_RTDE_REQ_REG_ARG0 + k - 3 : RTL_RTDE_REQ_REG_ID + k)
			      : (dbl ? RTL_RTDE_REQ_OUT_RESULT0 + k - 3 : RTL_RTDE_REQ_OUT_ID + k);

		snprintf(name, sizeof(name), "%s_%s_register_%d", input ? "input" : "output",
			 dbl ? "double" : "int", reg);
		ret = resolve(t, input, recipe, name, input ? in[k] : ack[k], err);
	}
	if (ret == 0)
		*out = h;
	return ret;
}

RTL_API void rtl_rtde_req_ids_init(struct rtl_rtde_req_ids *ids)
{
	if (ids)
		ids->next = (uint32_t)(rtl_time_now() / RTL_NS_PER_US) & 0x3fffffff;
}

/* ---- builders ------------------------------------------------------------------ */

/* @v[0..n) all finite; else -EINVAL naming @what. */
static int finite_arg(const double *v, int n, const char *call, const char *what,
		      struct rtl_error *err)
{
	if (!v)
		return rtl_error_set(err, -EINVAL, "%s: %s is NULL", call, what);
	for (int i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return rtl_error_set(err, -EINVAL, "%s: %s[%d] is %g: give a finite number",
					     call, what, i, v[i]);
	return 0;
}

/* A speed or acceleration: finite; <= 0 means the default. */
static int rate_arg(double v, const char *call, const char *what, struct rtl_error *err)
{
	return isfinite(v) ? 0
			   : rtl_error_set(err, -EINVAL,
					   "%s: %s is %g: give a finite number (<= 0: the default)",
					   call, what, v);
}

/* The common part of a move or a waypoint. */
static int build_move(struct rtl_rtde_req *out, const char *call, int32_t kind,
		      const double target[6], const char *what, double speed, double accel,
		      struct rtl_error *err)
{
	struct rtl_rtde_req r = { .kind = kind };
	int ret = finite_arg(target, 6, call, what, err);

	if (ret == 0)
		ret = rate_arg(speed, call, "speed", err);
	if (ret == 0)
		ret = rate_arg(accel, call, "acceleration", err);
	if (ret < 0)
		return ret;
	if (!out)
		return rtl_error_set(err, -EINVAL, "%s: out is NULL", call);
	memcpy(r.arg, target, 6 * sizeof(double));
	r.arg[6] = speed;
	r.arg[7] = accel;
	*out = r;
	return 0;
}

RTL_API int rtl_rtde_req_move_j(struct rtl_rtde_req *out, const double q[6], double speed,
				double accel, struct rtl_error *err)
{
	return build_move(out, "move_j", RTL_RTDE_REQ_MOVE_J, q, "q", speed, accel, err);
}

RTL_API int rtl_rtde_req_move_l(struct rtl_rtde_req *out, const double pose[6], double speed,
				double accel, struct rtl_error *err)
{
	return build_move(out, "move_l", RTL_RTDE_REQ_MOVE_L, pose, "pose", speed, accel, err);
}

RTL_API int rtl_rtde_req_path_add(struct rtl_rtde_req *out, const double target[6], bool linear,
				  double speed, double accel, double blend, struct rtl_error *err)
{
	struct rtl_rtde_req r;
	int ret;

	if (!isfinite(blend) || blend < 0)
		return rtl_error_set(err, -EINVAL,
				     "path_add: blend is %g: give a radius >= 0 m (0: stop there)",
				     blend);
	ret = build_move(&r, "path_add", RTL_RTDE_REQ_PATH_ADD, target, "target", speed, accel,
			 err);
	if (ret < 0)
		return ret;
	if (!out)
		return rtl_error_set(err, -EINVAL, "path_add: out is NULL");
	r.arg[8] = blend;
	r.flags = linear ? RTL_RTDE_REQ_FLAG_LINEAR : 0;
	*out = r;
	return 0;
}

RTL_API int rtl_rtde_req_run_path(struct rtl_rtde_req *move, struct rtl_error *err)
{
	if (!move || (move->kind != RTL_RTDE_REQ_MOVE_J && move->kind != RTL_RTDE_REQ_MOVE_L))
		return rtl_error_set(err, -EINVAL,
				     "run_path: give a move_j or move_l request, the path's end");
	move->flags |= RTL_RTDE_REQ_FLAG_PATH;
	return 0;
}

/* A request of @kind with @n values of @v (may be NULL for none). */
static int build_plain(struct rtl_rtde_req *out, const char *call, int32_t kind, const double *v,
		       int n, const char *what, struct rtl_error *err)
{
	struct rtl_rtde_req r = { .kind = kind };
	int ret = n ? finite_arg(v, n, call, what, err) : 0;

	if (ret < 0)
		return ret;
	if (!out)
		return rtl_error_set(err, -EINVAL, "%s: out is NULL", call);
	if (n)
		memcpy(r.arg, v, (size_t)n * sizeof(double));
	*out = r;
	return 0;
}

RTL_API int rtl_rtde_req_stop_move(struct rtl_rtde_req *out, double decel, struct rtl_error *err)
{
	int ret = rate_arg(decel, "stop_move", "deceleration", err);

	if (ret == 0)
		ret = build_plain(out, "stop_move", RTL_RTDE_REQ_STOP_MOVE, NULL, 0, NULL, err);
	if (ret == 0)
		out->arg[7] = decel;
	return ret;
}

RTL_API int rtl_rtde_req_set_payload(struct rtl_rtde_req *out, double mass, const double cog[3],
				     struct rtl_error *err)
{
	static const double origin[3];
	double v[4];

	if (!isfinite(mass) || mass < 0 || mass > 1000)
		return rtl_error_set(err, -EINVAL, "set_payload: mass is %g kg: give 0 to 1000 kg",
				     mass);
	v[0] = mass;
	memcpy(v + 1, cog ? cog : origin, sizeof(origin));
	return build_plain(out, "set_payload", RTL_RTDE_REQ_SET_PAYLOAD, v, 4, "cog", err);
}

RTL_API int rtl_rtde_req_set_tcp(struct rtl_rtde_req *out, const double pose[6],
				 struct rtl_error *err)
{
	return build_plain(out, "set_tcp", RTL_RTDE_REQ_SET_TCP, pose, 6, "pose", err);
}

RTL_API int rtl_rtde_req_zero_ft_sensor(struct rtl_rtde_req *out, struct rtl_error *err)
{
	return rtl_rtde_req_simple(out, RTL_RTDE_REQ_ZERO_FT_SENSOR, err);
}

RTL_API int rtl_rtde_req_forward_kin(struct rtl_rtde_req *out, const double q[6],
				     struct rtl_error *err)
{
	return build_plain(out, "forward_kinematics", RTL_RTDE_REQ_FORWARD_KIN, q, 6, "q", err);
}

RTL_API int rtl_rtde_req_inverse_kin(struct rtl_rtde_req *out, const double pose[6],
				     const double q_near[6], struct rtl_error *err)
{
	struct rtl_rtde_req r;
	int ret = build_plain(&r, "inverse_kinematics", RTL_RTDE_REQ_INVERSE_KIN, pose, 6, "pose",
			      err);

	if (ret == 0 && q_near)
		ret = finite_arg(q_near, 6, "inverse_kinematics", "q_near", err);
	if (ret < 0)
		return ret;
	if (!out)
		return rtl_error_set(err, -EINVAL, "inverse_kinematics: out is NULL");
	if (q_near) {
		memcpy(r.arg + 6, q_near, 6 * sizeof(double));
		r.flags |= RTL_RTDE_REQ_FLAG_NEAR;
	}
	*out = r;
	return 0;
}

RTL_API int rtl_rtde_req_force_mode(struct rtl_rtde_req *out, const double task_frame[6],
				    const int selection[6], const double wrench[6], int type,
				    struct rtl_error *err)
{
	struct rtl_rtde_req r;
	int ret = build_plain(&r, "force_mode", RTL_RTDE_REQ_FORCE_MODE, task_frame, 6,
			      "task_frame", err);

	if (ret == 0)
		ret = finite_arg(wrench, 6, "force_mode", "wrench", err);
	if (ret < 0)
		return ret;
	if (!selection)
		return rtl_error_set(err, -EINVAL, "force_mode: selection is NULL");
	if (type < 1 || type > 3)
		return rtl_error_set(err, -EINVAL,
				     "force_mode: type is %d: give 1, 2 or 3 (URScript's "
				     "force_mode types; 2 is the task frame as given)",
				     type);
	for (int i = 0; i < 6; i++) {
		if (selection[i] != 0 && selection[i] != 1)
			return rtl_error_set(err, -EINVAL,
					     "force_mode: selection[%d] is %d: give 0 (follow "
					     "the motion) or 1 (compliant)",
					     i, selection[i]);
		r.flags |= (uint32_t)selection[i] << i;
	}
	if (!out)
		return rtl_error_set(err, -EINVAL, "force_mode: out is NULL");
	memcpy(r.arg + 6, wrench, 6 * sizeof(double));
	r.flags |= (uint32_t)type << 8;
	*out = r;
	return 0;
}

RTL_API int rtl_rtde_req_force_limits(struct rtl_rtde_req *out, const double limits[6],
				      double damping, double gain_scaling, struct rtl_error *err)
{
	struct rtl_rtde_req r;
	int ret = build_plain(&r, "force_limits", RTL_RTDE_REQ_FORCE_LIMITS, limits, 6, "limits",
			      err);

	if (ret < 0)
		return ret;
	for (int i = 0; i < 6; i++)
		if (!(limits[i] > 0))
			return rtl_error_set(err, -EINVAL,
					     "force_limits: limits[%d] is %g: give > 0 (a speed "
					     "on a compliant axis, a deviation on the others)",
					     i, limits[i]);
	if (!isfinite(damping) || damping > 1)
		return rtl_error_set(err, -EINVAL,
				     "force_limits: damping is %g: give 0 to 1 (< 0: %g)", damping,
				     RTL_RTDE_REQ_FORCE_DAMPING_DEFAULT);
	if (!isfinite(gain_scaling) || gain_scaling > 2)
		return rtl_error_set(err, -EINVAL,
				     "force_limits: gain_scaling is %g: give 0 to 2 (< 0: %g)",
				     gain_scaling, RTL_RTDE_REQ_FORCE_GAIN_DEFAULT);
	if (!out)
		return rtl_error_set(err, -EINVAL, "force_limits: out is NULL");
	r.arg[6] = damping;
	r.arg[7] = gain_scaling;
	*out = r;
	return 0;
}

RTL_API int rtl_rtde_req_simple(struct rtl_rtde_req *out, enum rtl_rtde_req_kind kind,
				struct rtl_error *err)
{
	switch (kind) {
	case RTL_RTDE_REQ_END_FORCE_MODE:
	case RTL_RTDE_REQ_TEACH_MODE:
	case RTL_RTDE_REQ_END_TEACH_MODE:
	case RTL_RTDE_REQ_ZERO_FT_SENSOR:
		return build_plain(out, rtl_rtde_req_kind_name(kind), (int32_t)kind, NULL, 0, NULL,
				   err);
	default:
		return rtl_error_set(err, -EINVAL,
				     "requests: %s (%d) takes arguments: use its own builder",
				     rtl_rtde_req_kind_name(kind), (int)kind);
	}
}

RTL_API int rtl_rtde_req_move_until_contact(struct rtl_rtde_req *out, const double xd[6],
					    double accel, double retract, double force,
					    struct rtl_error *err)
{
	struct rtl_rtde_req r;
	double n = 0;
	int ret = build_plain(&r, "move_until_contact", RTL_RTDE_REQ_MOVE_UNTIL_CONTACT, xd, 6,
			      "xd", err);

	if (ret == 0)
		ret = rate_arg(accel, "move_until_contact", "acceleration", err);
	if (ret == 0)
		ret = rate_arg(force, "move_until_contact", "force", err);
	if (ret < 0)
		return ret;
	for (int i = 0; i < 3; i++)
		n += xd[i] * xd[i];
	if (!(n > 0))
		return rtl_error_set(err, -EINVAL,
				     "move_until_contact: xd has no linear part: give the "
				     "speed toward the surface [m/s]");
	if (!isfinite(retract) || retract < 0 || retract > 1)
		return rtl_error_set(err, -EINVAL,
				     "move_until_contact: retract is %g m: give 0 to 1 m", retract);
	if (!out)
		return rtl_error_set(err, -EINVAL, "move_until_contact: out is NULL");
	r.arg[6] = accel;
	r.arg[7] = retract;
	r.arg[8] = force;
	*out = r;
	return 0;
}

/* ---- the exchange -------------------------------------------------------------- */

RTL_API int rtl_rtde_req_write(const struct rtl_rtde_req *req, struct rtl_rtde_frame *frame,
			       struct rtl_rtde_req_ids *ids, struct rtl_rtde_req_tracker *tracker,
			       const struct rtl_rtde_req_handles *h, struct rtl_error *err)
{
	int32_t id;
	bool ok;

	if (!frame || !h || !ids || !req)
		return rtl_error_set(err, -EINVAL, "requests: NULL frame, handles, ids or request");
	if (++ids->next > INT32_MAX || ids->next == 0)
		ids->next = 1;
	id = (int32_t)ids->next;
	ok = rtl_rtde_frame_set_int(frame, h->kind, req->kind) &&
	     rtl_rtde_frame_set_int(frame, h->flags, (int32_t)req->flags);
	for (int i = 0; ok && i < RTL_RTDE_REQ_NARG; i++)
		ok = rtl_rtde_frame_set_double(frame, h->arg[i], req->arg[i]);
	/* the identity last: with it the request is complete */
	if (!ok || !rtl_rtde_frame_set_int(frame, h->id, id))
		return rtl_error_set(err, -EINVAL,
				     "requests: the frame is not the request recipe's "
				     "(rtl_rtde_req_resolve() resolves it)");
	if (tracker)
		*tracker = (struct rtl_rtde_req_tracker){ .id = id };
	return id;
}

RTL_API int rtl_rtde_req_read_ack(struct rtl_rtde_req_ack *out, const struct rtl_rtde_frame *frame,
				  const struct rtl_rtde_req_handles *h)
{
	if (!out || !frame || !h || !rtl_rtde_handle_valid(h->ack_id))
		return -EINVAL;
	out->id = rtl_rtde_frame_get_int(frame, h->ack_id);
	out->state = rtl_rtde_frame_get_int(frame, h->ack_state);
	out->reason = rtl_rtde_frame_get_int(frame, h->ack_reason);
	for (int i = 0; i < RTL_RTDE_REQ_NRESULT; i++)
		out->result[i] = rtl_rtde_frame_get_double(frame, h->result[i]);
	return 0;
}

RTL_API enum rtl_rtde_req_outcome rtl_rtde_req_track(struct rtl_rtde_req_tracker *tracker,
						     const struct rtl_rtde_req_ack *ack)
{
	enum rtl_rtde_req_outcome o;

	if (!tracker || !ack)
		return RTL_RTDE_REQ_PENDING;
	o = tracker->outcome;
	if (o == RTL_RTDE_REQ_IS_DONE || o == RTL_RTDE_REQ_IS_FAILED ||
	    o == RTL_RTDE_REQ_IS_INTERRUPTED)
		return o; /* final */
	if (ack->id != tracker->id) {
		if (o == RTL_RTDE_REQ_IS_ACCEPTED || o == RTL_RTDE_REQ_IS_RUNNING) {
			tracker->outcome = RTL_RTDE_REQ_IS_INTERRUPTED;
			tracker->reason = RTL_RTDE_REQ_INTERRUPTED;
		}
		return tracker->outcome;
	}
	switch (ack->state) {
	case RTL_RTDE_REQ_STATE_ACCEPTED:
		o = RTL_RTDE_REQ_IS_ACCEPTED;
		break;
	case RTL_RTDE_REQ_STATE_RUNNING:
		o = RTL_RTDE_REQ_IS_RUNNING;
		break;
	case RTL_RTDE_REQ_STATE_DONE:
		o = RTL_RTDE_REQ_IS_DONE;
		memcpy(tracker->result, ack->result, sizeof(tracker->result));
		break;
	case RTL_RTDE_REQ_STATE_FAILED:
		o = ack->reason == RTL_RTDE_REQ_INTERRUPTED ? RTL_RTDE_REQ_IS_INTERRUPTED
							    : RTL_RTDE_REQ_IS_FAILED;
		tracker->reason = ack->reason;
		break;
	default:
		break;
	}
	tracker->outcome = o;
	return o;
}

/* ---- from the application thread ----------------------------------------------- */

/*
 * The channel: the poster writes req while posted == taken (the step has
 * taken the last one) and then publishes the ticket in posted (release);
 * the step reads req once it sees a new ticket (acquire) and says so in
 * taken. The outcome the step publishes is a sequence lock over atomic
 * words, so a reader on any thread retries instead of blocking the step.
 */
struct rtl_rtde_req_chan {
	_Atomic uint32_t posted, taken;
	uint32_t tickets; /* the poster's */
	struct rtl_rtde_req req;
	/* the step's */
	uint32_t t_ticket;
	struct rtl_rtde_req_tracker t;
	/* published */
	_Atomic uint32_t seq, out_ticket;
	_Atomic int32_t out_outcome, out_reason;
	_Atomic uint64_t out_result[RTL_RTDE_REQ_NRESULT];
};

RTL_API int rtl_rtde_req_chan_create(struct rtl_rtde_req_chan **out, struct rtl_error *err)
{
	struct rtl_rtde_req_chan *c;

	if (!out)
		return rtl_error_set(err, -EINVAL, "requests: out is NULL");
	c = calloc(1, sizeof(*c));
	if (!c)
		return rtl_error_set(err, -ENOMEM, "requests: no memory for a channel");
	*out = c;
	return 0;
}

RTL_API void rtl_rtde_req_chan_destroy(struct rtl_rtde_req_chan *c)
{
	free(c);
}

RTL_API int rtl_rtde_req_chan_post(struct rtl_rtde_req_chan *c, const struct rtl_rtde_req *req,
				   struct rtl_error *err)
{
	uint32_t ticket;

	if (!c || !req)
		return rtl_error_set(err, -EINVAL, "requests: NULL channel or request");
	if (atomic_load_explicit(&c->posted, memory_order_relaxed) !=
	    atomic_load_explicit(&c->taken, memory_order_acquire))
		return rtl_error_set(err, -EBUSY,
				     "requests: the last request is not taken yet: is the "
				     "step calling rtl_rtde_req_chan_serve()?");
	ticket = ++c->tickets & 0x7fffffff;
	if (ticket == 0)
		ticket = c->tickets = 1;
	c->req = *req;
	atomic_store_explicit(&c->posted, ticket, memory_order_release);
	return (int)ticket;
}

static void publish(struct rtl_rtde_req_chan *c)
{
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);

	/* odd while written; the words are release stores, so a poller that
	 * sees one of them sees odd too (no fence: TSan cannot model one) */
	atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
	atomic_store_explicit(&c->out_ticket, c->t_ticket, memory_order_release);
	atomic_store_explicit(&c->out_outcome, (int32_t)c->t.outcome, memory_order_release);
	atomic_store_explicit(&c->out_reason, c->t.reason, memory_order_release);
	for (int i = 0; i < RTL_RTDE_REQ_NRESULT; i++) {
		uint64_t bits;

		memcpy(&bits, &c->t.result[i], sizeof(bits));
		atomic_store_explicit(&c->out_result[i], bits, memory_order_release);
	}
	atomic_store_explicit(&c->seq, s + 2, memory_order_release);
}

RTL_API int rtl_rtde_req_chan_serve(struct rtl_rtde_req_chan *c, struct rtl_rtde_frame *frame,
				    struct rtl_rtde_req_ids *ids,
				    const struct rtl_rtde_frame *state,
				    const struct rtl_rtde_req_handles *h)
{
	struct rtl_rtde_req_ack ack;
	uint32_t p;

	if (!c || !state || !frame || !ids || !h)
		return -EINVAL;
	if (c->t_ticket && rtl_rtde_req_read_ack(&ack, state, h) == 0) {
		enum rtl_rtde_req_outcome before = c->t.outcome;

		if (rtl_rtde_req_track(&c->t, &ack) != before)
			publish(c);
	}
	p = atomic_load_explicit(&c->posted, memory_order_acquire);
	if (p == atomic_load_explicit(&c->taken, memory_order_relaxed))
		return 0;
	if (rtl_rtde_req_write(&c->req, frame, ids, &c->t, h, NULL) < 0)
		return -EINVAL;
	c->t_ticket = p;
	atomic_store_explicit(&c->taken, p, memory_order_release);
	publish(c);
	return 1;
}

RTL_API int rtl_rtde_req_chan_poll(const struct rtl_rtde_req_chan *c,
				   struct rtl_rtde_req_tracker *out, int ticket)
{
	struct rtl_rtde_req_tracker t = { 0 };
	uint32_t s1, s2, tk;

	if (!c || ticket <= 0)
		return -EINVAL;
	do {
		s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
		tk = atomic_load_explicit(&c->out_ticket, memory_order_acquire);
		t.outcome = (enum rtl_rtde_req_outcome)atomic_load_explicit(&c->out_outcome,
									    memory_order_acquire);
		t.reason = atomic_load_explicit(&c->out_reason, memory_order_acquire);
		for (int i = 0; i < RTL_RTDE_REQ_NRESULT; i++) {
			uint64_t bits =
				atomic_load_explicit(&c->out_result[i], memory_order_acquire);

			memcpy(&t.result[i], &bits, sizeof(bits));
		}
		s2 = atomic_load_explicit(&c->seq, memory_order_relaxed);
	} while ((s1 & 1) || s1 != s2);
	if (tk != (uint32_t)ticket) {
		/* posted, not taken yet: pending; anything else: superseded */
		if (atomic_load_explicit(&c->posted, memory_order_acquire) != (uint32_t)ticket)
			return -ENOENT;
		t = (struct rtl_rtde_req_tracker){ 0 };
	}
	if (out)
		*out = t;
	return (int)t.outcome;
}

static bool is_final(int o)
{
	return o == RTL_RTDE_REQ_IS_DONE || o == RTL_RTDE_REQ_IS_FAILED ||
	       o == RTL_RTDE_REQ_IS_INTERRUPTED;
}

/* The return of a wait for outcome @o with @t's reason. */
static int ended(int o, const struct rtl_rtde_req_tracker *t, struct rtl_error *err)
{
	if (o == RTL_RTDE_REQ_IS_DONE)
		return 0;
	if (o == RTL_RTDE_REQ_IS_INTERRUPTED)
		return rtl_error_set(err, -ECANCELED,
				     "requests: interrupted: a newer command took the arm");
	return rtl_error_set(err, -EIO, "requests: the controller says: %s",
			     rtl_rtde_req_reason_name(t->reason));
}

RTL_API int rtl_rtde_req_chan_wait(const struct rtl_rtde_req_chan *c,
				   struct rtl_rtde_req_tracker *out, int ticket, int64_t timeout_ns,
				   struct rtl_error *err)
{
	int64_t end = rtl_time_now() + timeout_ns;
	struct rtl_rtde_req_tracker t;

	for (;;) {
		int o = rtl_rtde_req_chan_poll(c, &t, ticket);

		if (o < 0)
			return rtl_error_set(err, o,
					     o == -ENOENT ? "requests: ticket %d was superseded"
							  : "requests: bad channel or ticket %d",
					     ticket);
		if (out)
			*out = t;
		if (is_final(o))
			return ended(o, &t, err);
		if (rtl_time_now() >= end)
			return rtl_error_set(err, -ETIMEDOUT,
					     "requests: no end of ticket %d in time (outcome %d)",
					     ticket, o);
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	}
}

RTL_API int rtl_rtde_req_run(const struct rtl_rtde_req *req, struct rtl_rtde_req_ids *ids,
			     struct rtl_rtde_req_tracker *out, struct rtl_loop *loop,
			     const struct rtl_rtde_req_handles *h, int64_t timeout_ns,
			     struct rtl_error *err)
{
	int64_t end = rtl_time_now() + timeout_ns;
	struct rtl_rtde_req_tracker t;
	struct rtl_rtde_req_ack ack;
	int ret;

	if (!loop)
		return rtl_error_set(err, -EINVAL, "requests: NULL loop");
	ret = rtl_rtde_req_write(req, rtl_rtde_loop_commands(loop, h ? h->recipe : 0), ids, &t, h,
				 err);
	if (ret < 0)
		return ret;
	ret = rtl_loop_write(loop);
	if (ret < 0 && ret != -EAGAIN)
		return rtl_error_set(err, ret, "requests: the request could not be sent");
	while (!is_final(t.outcome)) {
		int64_t left = end - rtl_time_now();
		const struct rtl_loop_frame *f;
		struct rtl_rtde_frame st;

		if (left <= 0) {
			if (out)
				*out = t;
			return rtl_error_set(err, -ETIMEDOUT,
					     "requests: %s not over in time (outcome %d)",
					     rtl_rtde_req_kind_name(req->kind), (int)t.outcome);
		}
		int64_t slice = left < 100 * RTL_NS_PER_MS ? left : 100 * RTL_NS_PER_MS;
		int64_t asked = rtl_time_now();

		f = rtl_loop_read(loop, slice);
		/* NULL before the slice is over: the loop stops */
		if (!f && rtl_time_now() - asked < slice)
			return rtl_error_set(err, -ECANCELED, "requests: the loop stopped");
		if (!f)
			continue;
		st = rtl_rtde_loop_state(f);
		if (rtl_rtde_req_read_ack(&ack, &st, h) == 0)
			rtl_rtde_req_track(&t, &ack);
		ret = rtl_loop_write(loop);
		if (ret < 0 && ret != -EAGAIN)
			return rtl_error_set(err, ret, "requests: a step's write failed");
	}
	if (out)
		*out = t;
	return ended(t.outcome, &t, err);
}
