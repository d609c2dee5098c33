// SPDX-License-Identifier: MIT
/*
 * Requests (<rtloop/rtde_req.h>) from a step, over loopback to rtde-sim's
 * server in this process: the step writes a move into the request
 * recipe's frame, follows its acknowledgement to the end, and the
 * simulated arm is where the move put it. Then the builders' argument
 * checks and the tracker's rules on their own.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_req.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "robot.h"
#include "server.h"
#include "sim.h"

#define OUTPUTS \
	"timestamp,actual_q,actual_qd," RTL_RTDE_CMD_STATUS_OUTPUTS "," RTL_RTDE_REQ_ACK_OUTPUTS
#define REQ_RECIPE 1

/* What the step does, in order. */
enum phase { P_MOVE, P_BAD, P_FK, P_FIRST, P_SECOND, P_END };

struct rig {
	struct sim_server *srv;
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	struct rtl_rtde_req_handles h;
	struct rtl_rtde_handle q;
	int handles_ret;
	struct rtl_rtde_req_ids ids;
	enum phase phase;
	bool sent;
	struct rtl_rtde_req_tracker tr_now, tr_first;
	double target[6], second[6];
	/* What each phase ended with. */
	enum rtl_rtde_req_outcome move, bad, fk, first, second_out;
	int32_t bad_reason;
	double fk_pose[6], q_end[6];
	_Atomic bool finished;
};

static struct rig R;

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct rig *r = user;
	struct rtl_error err = { 0 };

	r->q = rtl_rtde_transport_output_handle(t, "actual_q");
	r->handles_ret = rtl_rtde_req_resolve(&r->h, t, REQ_RECIPE, &err);
}

/* Send @q now (once per phase) and follow it; true when it is over. */
static bool follow(struct rig *r, struct rtl_rtde_frame *req, const struct rtl_rtde_frame *st,
		   const struct rtl_rtde_req *q, struct rtl_rtde_req_tracker *t,
		   enum rtl_rtde_req_outcome *out)
{
	struct rtl_rtde_req_ack ack;
	enum rtl_rtde_req_outcome o;

	if (!r->sent) {
		cr_assert_gt(rtl_rtde_req_write(q, req, &r->ids, t, &r->h, NULL), 0);
		r->sent = true;
		return false;
	}
	cr_assert_eq(rtl_rtde_req_read_ack(&ack, st, &r->h), 0);
	o = rtl_rtde_req_track(t, &ack);
	*out = o;
	if (o == RTL_RTDE_REQ_IS_DONE || o == RTL_RTDE_REQ_IS_FAILED ||
	    o == RTL_RTDE_REQ_IS_INTERRUPTED) {
		r->sent = false;
		return true;
	}
	return false;
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	struct rig *r = user;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(fr);
	struct rtl_rtde_frame *req = rtl_rtde_loop_commands(loop, REQ_RECIPE);
	struct rtl_rtde_req q;
	double far[6];

	switch (r->phase) {
	case P_MOVE:
		rtl_rtde_req_move_j(&q, r->target, 1.0, 2.0, NULL);
		if (follow(r, req, &st, &q, &r->tr_now, &r->move)) {
			rtl_rtde_frame_get_vec6(&st, r->q, r->q_end);
			r->phase = P_BAD;
		}
		break;
	case P_BAD:
		memcpy(far, r->target, sizeof(far));
		far[2] = 4.0; /* the elbow past its limit */
		rtl_rtde_req_move_j(&q, far, 0, 0, NULL);
		if (follow(r, req, &st, &q, &r->tr_now, &r->bad)) {
			r->bad_reason = r->tr_now.reason;
			r->phase = P_FK;
		}
		break;
	case P_FK:
		rtl_rtde_req_forward_kin(&q, r->target, NULL);
		if (follow(r, req, &st, &q, &r->tr_now, &r->fk)) {
			memcpy(r->fk_pose, r->tr_now.result, sizeof(r->fk_pose));
			r->phase = P_FIRST;
		}
		break;
	case P_FIRST:
		/* a long move, followed until it runs, then replaced */
		memcpy(far, r->target, sizeof(far));
		far[0] -= 1.0;
		rtl_rtde_req_move_j(&q, far, 0.5, 1.0, NULL);
		follow(r, req, &st, &q, &r->tr_first, &r->first);
		if (r->first == RTL_RTDE_REQ_IS_RUNNING) {
			r->sent = false;
			r->phase = P_SECOND;
		}
		break;
	case P_SECOND:
		rtl_rtde_req_move_j(&q, r->second, 0, 0, NULL);
		if (r->sent) {
			struct rtl_rtde_req_ack ack;

			rtl_rtde_req_read_ack(&ack, &st, &r->h);
			r->first = rtl_rtde_req_track(&r->tr_first, &ack);
		}
		if (follow(r, req, &st, &q, &r->tr_now, &r->second_out))
			r->phase = P_END;
		break;
	case P_END:
		/* actual_q follows the target one cycle behind */
		rtl_rtde_frame_get_vec6(&st, r->q, r->q_end);
		atomic_store(&r->finished, true);
		break;
	}
	return 0;
}

Test(rtde_req, a_step_moves_the_arm_by_request_and_follows_every_outcome)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	struct sim_stats ss;
	double pose[6], tcp0[6] = { 0 };
	int64_t end;

	memset(&R, 0, sizeof(R));
	sim_opts_default(&so);
	cr_assert_eq(sim_server_create(&R.srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(R.srv), 0);
	for (int i = 0; i < 6; i++)
		R.target[i] = so.robot.q0[i];
	R.target[0] += 0.5;
	R.target[3] -= 0.3;
	memcpy(R.second, so.robot.q0, sizeof(R.second));
	rtl_rtde_req_ids_init(&R.ids);

	tc.host = "127.0.0.1";
	tc.port = sim_server_port(R.srv);
	cc.outputs = OUTPUTS;
	cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
	cc.inputs[REQ_RECIPE] = RTL_RTDE_REQ_RECIPE;
	tc.connected = on_connected;
	tc.user = &R;
	cr_assert_eq(rtl_rtde_transport_create(&R.tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(R.tr);
	lc.step = step;
	lc.user = &R;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.every_frame = true;
	lc.watchdog_periods = -1;
	cr_assert_eq(rtl_loop_create(&R.loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(R.loop, &err), 0, "%s", err.msg);

	end = rtl_time_now() + 15 * RTL_NS_PER_SEC;
	while (!atomic_load(&R.finished) && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 10 * RTL_NS_PER_MS);
	rtl_loop_stop(R.loop);
	rtl_loop_join(R.loop);
	sim_server_stop(R.srv);
	sim_server_join(R.srv);
	sim_server_stats(R.srv, &ss);

	cr_assert_eq(R.handles_ret, 0, "the request registers resolve");
	cr_assert(atomic_load(&R.finished), "every phase ended (at phase %d)", R.phase);
	cr_assert_eq(R.move, RTL_RTDE_REQ_IS_DONE);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(R.q_end[i], R.second[i], 1e-9, "joint %d after the last move",
				   i);
	cr_assert_eq(R.bad, RTL_RTDE_REQ_IS_FAILED);
	cr_assert_eq(R.bad_reason, RTL_RTDE_REQ_JOINT_LIMIT, "reason %d", R.bad_reason);
	cr_assert_eq(R.fk, RTL_RTDE_REQ_IS_DONE);
	sim_robot_fk(R.target, tcp0, pose);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(R.fk_pose[i], pose[i], 1e-9, "pose[%d]", i);
	cr_assert_eq(R.first, RTL_RTDE_REQ_IS_INTERRUPTED, "the replaced move: %d", R.first);
	cr_assert_eq(R.second_out, RTL_RTDE_REQ_IS_DONE);
	cr_assert_eq(ss.nonfinite_in, 0);
	cr_assert_geq(ss.robot.max_speed, 0);

	rtl_loop_destroy(R.loop);
	rtl_rtde_transport_destroy(R.tr);
	sim_server_destroy(R.srv);
}

Test(rtde_req, builders_check_every_argument_and_name_it)
{
	struct rtl_rtde_req q = { .kind = 77 };
	struct rtl_error err = { 0 };
	double v[6] = { 0, 1, 2, 3, 4, 5 };

	v[3] = NAN;
	cr_assert_eq(rtl_rtde_req_move_j(&q, v, 1, 1, &err), -EINVAL);
	cr_assert(strstr(err.msg, "q[3]") != NULL, "%s", err.msg);
	cr_assert_eq(q.kind, 77, "not written on failure");
	v[3] = 3;
	cr_assert_eq(rtl_rtde_req_move_l(&q, v, INFINITY, 1, &err), -EINVAL);
	cr_assert(strstr(err.msg, "speed") != NULL, "%s", err.msg);
	cr_assert_eq(rtl_rtde_req_path_add(&q, v, true, 1, 1, -0.1, &err), -EINVAL);
	cr_assert(strstr(err.msg, "blend") != NULL, "%s", err.msg);
	cr_assert_eq(rtl_rtde_req_set_payload(&q, -1, NULL, &err), -EINVAL);
	cr_assert(strstr(err.msg, "mass") != NULL, "%s", err.msg);
	cr_assert_eq(rtl_rtde_req_move_j(&q, NULL, 1, 1, &err), -EINVAL);

	cr_assert_eq(rtl_rtde_req_move_l(&q, v, 0.2, 0, &err), 0);
	cr_assert_eq(q.kind, RTL_RTDE_REQ_MOVE_L);
	cr_assert_eq(q.arg[6], 0.2);
	cr_assert_eq(rtl_rtde_req_run_path(&q, &err), 0);
	cr_assert(q.flags & RTL_RTDE_REQ_FLAG_PATH);
	cr_assert_eq(rtl_rtde_req_inverse_kin(&q, v, v, &err), 0);
	cr_assert(q.flags & RTL_RTDE_REQ_FLAG_NEAR);
	cr_assert_eq(q.arg[11], 5);
	cr_assert_str_eq(rtl_rtde_req_reason_name(RTL_RTDE_REQ_UNREACHABLE), "unreachable");
	cr_assert_str_eq(rtl_rtde_req_kind_name(RTL_RTDE_REQ_MOVE_J), "move_j");
	cr_assert_str_eq(rtl_rtde_req_kind_name(99), "?");
}

Test(rtde_req, the_tracker_sees_pending_running_done_and_interruptions)
{
	struct rtl_rtde_req_tracker t = { .id = 5 };
	struct rtl_rtde_req_ack a = { .id = 4, .state = RTL_RTDE_REQ_STATE_DONE };

	cr_assert_eq(rtl_rtde_req_track(&t, &a), RTL_RTDE_REQ_PENDING, "an older answer");
	a = (struct rtl_rtde_req_ack){ .id = 5, .state = RTL_RTDE_REQ_STATE_RUNNING };
	cr_assert_eq(rtl_rtde_req_track(&t, &a), RTL_RTDE_REQ_IS_RUNNING);
	a = (struct rtl_rtde_req_ack){ .id = 6, .state = RTL_RTDE_REQ_STATE_RUNNING };
	cr_assert_eq(rtl_rtde_req_track(&t, &a), RTL_RTDE_REQ_IS_INTERRUPTED);
	cr_assert_eq(t.reason, RTL_RTDE_REQ_INTERRUPTED);
	a = (struct rtl_rtde_req_ack){ .id = 5, .state = RTL_RTDE_REQ_STATE_DONE };
	cr_assert_eq(rtl_rtde_req_track(&t, &a), RTL_RTDE_REQ_IS_INTERRUPTED, "final");

	t = (struct rtl_rtde_req_tracker){ .id = 9 };
	a = (struct rtl_rtde_req_ack){ .id = 9,
				       .state = RTL_RTDE_REQ_STATE_FAILED,
				       .reason = RTL_RTDE_REQ_UNREACHABLE };
	cr_assert_eq(rtl_rtde_req_track(&t, &a), RTL_RTDE_REQ_IS_FAILED);
	cr_assert_eq(t.reason, RTL_RTDE_REQ_UNREACHABLE);
	t = (struct rtl_rtde_req_tracker){ .id = 10 };
	a = (struct rtl_rtde_req_ack){ .id = 10,
				       .state = RTL_RTDE_REQ_STATE_DONE,
				       .result = { 1, 2, 3, 4, 5, 6 } };
	cr_assert_eq(rtl_rtde_req_track(&t, &a), RTL_RTDE_REQ_IS_DONE);
	cr_assert_eq(t.result[5], 6);
}

Test(rtde_req, identities_are_never_zero_and_never_repeat_in_a_row)
{
	struct rtl_rtde_req_ids ids = { .next = INT32_MAX - 1 };
	struct rtl_rtde_req_handles h = { 0 };
	struct rtl_rtde_req q = { 0 };
	uint8_t buf[64];
	struct rtl_rtde_frame f = { .values = buf, .size = sizeof(buf), .cap = sizeof(buf) };

	/* handles not resolved: refused, with nothing written */
	cr_assert_eq(rtl_rtde_req_write(&q, &f, &ids, NULL, &h, NULL), -EINVAL);
	rtl_rtde_req_ids_init(&ids);
	cr_assert_neq(ids.next, 0);
}

/* ---- from the application thread ---------------------------------------------------- */

/* A loop over rtde-sim in this process: with @step (the channel's
 * server) or without (the external-loop API). */
struct app {
	struct sim_server *srv;
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	struct rtl_rtde_req_handles h;
	struct rtl_rtde_req_ids ids;
	struct rtl_rtde_req_chan *chan;
	int handles_ret;
	struct sim_opts so;
};

static void app_connected(struct rtl_rtde_transport *t, void *user)
{
	struct app *a = user;

	a->handles_ret = rtl_rtde_req_resolve(&a->h, t, REQ_RECIPE, NULL);
}

/* The step: serve the channel, nothing else. */
static int serve_step(struct rtl_loop *loop, const struct rtl_loop_frame *fr, void *user)
{
	struct app *a = user;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(fr);

	rtl_rtde_req_chan_serve(a->chan, rtl_rtde_loop_commands(loop, REQ_RECIPE), &a->ids, &st,
				&a->h);
	return 0;
}

static void app_open(struct app *a, rtl_loop_step_fn fn)
{
	struct sim_server_opts sv = { 0 };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };

	sim_opts_default(&a->so);
	cr_assert_eq(sim_server_create(&a->srv, &a->so, &sv), 0);
	cr_assert_eq(sim_server_start(a->srv), 0);
	rtl_rtde_req_ids_init(&a->ids);
	cr_assert_eq(rtl_rtde_req_chan_create(&a->chan, &err), 0);
	tc.host = "127.0.0.1";
	tc.port = sim_server_port(a->srv);
	cc.outputs = OUTPUTS;
	cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
	cc.inputs[REQ_RECIPE] = RTL_RTDE_REQ_RECIPE;
	tc.connected = app_connected;
	tc.user = a;
	cr_assert_eq(rtl_rtde_transport_create(&a->tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(a->tr);
	lc.step = fn;
	lc.user = a;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.watchdog_periods = -1;
	cr_assert_eq(rtl_loop_create(&a->loop, &lc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_start(a->loop, &err), 0, "%s", err.msg);
	cr_assert_eq(a->handles_ret, 0);
}

/* Stop everything; the simulated robot's joints into @q. */
static void app_close(struct app *a, double q[6])
{
	struct sim_stats ss;

	rtl_loop_stop(a->loop);
	rtl_loop_join(a->loop);
	sim_server_stop(a->srv);
	sim_server_join(a->srv);
	sim_server_stats(a->srv, &ss);
	cr_assert_eq(ss.nonfinite_in, 0);
	/* joined: the robot is ours to read */
	memcpy(q, sim_server_sim(a->srv)->robot.actual_q, 6 * sizeof(double));
	rtl_loop_destroy(a->loop);
	rtl_rtde_transport_destroy(a->tr);
	rtl_rtde_req_chan_destroy(a->chan);
	sim_server_destroy(a->srv);
}

Test(rtde_req, the_application_thread_moves_the_arm_through_the_step)
{
	struct app a = { 0 };
	struct rtl_rtde_req q;
	struct rtl_rtde_req_tracker t;
	struct rtl_error err = { 0 };
	double target[6], far[6], pose[6], tcp0[6] = { 0 }, q_end[6];
	int k;

	app_open(&a, serve_step);
	memcpy(target, a.so.robot.q0, sizeof(target));
	target[0] += 0.3;
	cr_assert_eq(rtl_rtde_req_move_j(&q, target, 1.0, 2.0, &err), 0);
	k = rtl_rtde_req_chan_post(a.chan, &q, &err);
	cr_assert_gt(k, 0, "%s", err.msg);
	cr_assert_eq(rtl_rtde_req_chan_post(a.chan, &q, &err) == -EBUSY ||
			     rtl_rtde_req_chan_poll(a.chan, NULL, k) >= 0,
		     1, "a second post before the step took the first is refused");
	cr_assert_eq(rtl_rtde_req_chan_wait(a.chan, &t, k, 10 * RTL_NS_PER_SEC, &err), 0, "%s",
		     err.msg);
	/* refused: the wait names the reason */
	memcpy(far, target, sizeof(far));
	far[2] = 4.0;
	rtl_rtde_req_move_j(&q, far, 0, 0, NULL);
	k = rtl_rtde_req_chan_post(a.chan, &q, &err);
	cr_assert_gt(k, 0, "%s", err.msg);
	cr_assert_eq(rtl_rtde_req_chan_wait(a.chan, &t, k, 5 * RTL_NS_PER_SEC, &err), -EIO);
	cr_assert_eq(t.reason, RTL_RTDE_REQ_JOINT_LIMIT);
	cr_assert(strstr(err.msg, "joint limit") != NULL, "%s", err.msg);
	/* a result */
	rtl_rtde_req_forward_kin(&q, target, NULL);
	k = rtl_rtde_req_chan_post(a.chan, &q, &err);
	cr_assert_gt(k, 0, "%s", err.msg);
	cr_assert_eq(rtl_rtde_req_chan_wait(a.chan, &t, k, 5 * RTL_NS_PER_SEC, &err), 0);
	cr_assert_eq(rtl_rtde_req_chan_poll(a.chan, NULL, k - 1), -ENOENT, "superseded");
	app_close(&a, q_end);
	sim_robot_fk(target, tcp0, pose);
	for (int i = 0; i < 6; i++) {
		cr_assert_float_eq(t.result[i], pose[i], 1e-9, "pose[%d]", i);
		cr_assert_float_eq(q_end[i], target[i], 1e-9, "joint %d", i);
	}
}

Test(rtde_req, a_loop_without_a_step_runs_a_request_to_its_end)
{
	struct app a = { 0 };
	struct rtl_rtde_req q;
	struct rtl_rtde_req_tracker t;
	struct rtl_error err = { 0 };
	double target[6], q_end[6];

	app_open(&a, NULL);
	memcpy(target, a.so.robot.q0, sizeof(target));
	target[1] += 0.2;
	rtl_rtde_req_move_j(&q, target, 1.0, 2.0, NULL);
	cr_assert_eq(rtl_rtde_req_run(&q, &a.ids, &t, a.loop, &a.h, 10 * RTL_NS_PER_SEC, &err), 0,
		     "%s", err.msg);
	cr_assert_eq(t.outcome, RTL_RTDE_REQ_IS_DONE);
	rtl_rtde_req_set_payload(&q, 2.0, NULL, NULL);
	cr_assert_eq(rtl_rtde_req_run(&q, &a.ids, &t, a.loop, &a.h, 5 * RTL_NS_PER_SEC, &err), 0,
		     "%s", err.msg);
	rtl_rtde_req_move_j(&q, target, 10.0, 2.0, NULL); /* faster than the arm */
	cr_assert_eq(rtl_rtde_req_run(&q, &a.ids, &t, a.loop, &a.h, 5 * RTL_NS_PER_SEC, &err),
		     -EIO);
	cr_assert_eq(t.reason, RTL_RTDE_REQ_BAD_ARGUMENT);
	app_close(&a, q_end);
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(q_end[i], target[i], 1e-9, "joint %d", i);
}
