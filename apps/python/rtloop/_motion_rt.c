// SPDX-License-Identifier: MIT
/*
 * rtloop.Motion's C side (_motion.h): the step that runs the motion API
 * every period on the loop's rx thread, and the two hand-overs to Python.
 * Nothing here touches Python: no GIL, no object, no allocation; the only
 * system call is the futex wake of a reader that sleeps.
 *
 * The newest-state hand-over is a triple buffer: the step always has a
 * slot of its own to fill (back), the reader always has the slot it took
 * (front), and the third (ready) is the newest publication; an atomic
 * exchange moves a slot between the writer or the reader and ready, so
 * neither ever waits for the other and neither reads a slot being
 * written. The reader sleeps on an event word (bell) the writer bumps
 * after each publication, announcing sleep first (Dekker's pattern with
 * sequentially consistent operations, as the loop's own wake-up): the
 * writer calls FUTEX_WAKE only when someone sleeps.
 */
#include "_motion_rt.h"

#include <linux/futex.h>
#include <math.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/rtde_cmd.h>
#include <rtloop/time.h>

const char *const py_mt_names[PY_MT_COUNT] = { "udp", "rtde", "drfl" };

const char py_motion_rtde_outputs[] = "timestamp,actual_q,actual_qd,actual_TCP_pose,"
				      "actual_TCP_speed,actual_TCP_force,robot_mode,"
				      "safety_mode,runtime_state";

/* ---- the triple buffer ------------------------------------------------------------- */

void py_mpub_init(struct py_mpub *p)
{
	atomic_store(&p->ready, 0);
	p->back = 1;
	p->front = 2;
	atomic_store(&p->bell, 0);
	atomic_store(&p->waiting, 0);
}

void py_mpub_publish(struct py_mpub *p)
{
	/* acq_rel: the release publishes the slot's contents to the reader
	 * that takes it; the acquire gets back a slot the reader gave up. */
	uint32_t prev =
		atomic_exchange_explicit(&p->ready, p->back | PY_MPUB_NEW, memory_order_acq_rel);

	p->back = prev & 3u;
	/* seq_cst, both: a reader that announced sleep is seen here, or it
	 * sees the new bell value and does not sleep (Dekker). */
	atomic_fetch_add(&p->bell, 1);
	if (atomic_load(&p->waiting))
		syscall(SYS_futex, (uint32_t *)&p->bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

const struct py_mstate *py_mpub_take(struct py_mpub *p)
{
	uint32_t prev;

	if (!(atomic_load(&p->ready) & PY_MPUB_NEW))
		return NULL;
	/* acq_rel: the acquire sees the writer's slot; the release hands
	 * ours back for it to reuse. */
	prev = atomic_exchange_explicit(&p->ready, p->front, memory_order_acq_rel);
	p->front = prev & 3u;
	return &p->slot[p->front];
}

const struct py_mstate *py_mpub_front(const struct py_mpub *p)
{
	return &p->slot[p->front];
}

int py_mpub_wait(struct py_mpub *p, int64_t timeout_ns)
{
	int64_t deadline = rtl_time_now() + timeout_ns;

	for (;;) {
		uint32_t seen = atomic_load(&p->bell);
		int64_t left;
		struct timespec ts;

		if (py_mpub_take(p))
			return 1;
		left = deadline - rtl_time_now();
		if (left <= 0)
			return 0;
		atomic_store(&p->waiting, 1);
		if (py_mpub_take(p)) {
			atomic_store(&p->waiting, 0);
			return 1;
		}
		ts = rtl_time_to_timespec(left);
		/* Returns at once when the bell rang since @seen. */
		syscall(SYS_futex, (uint32_t *)&p->bell, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
		atomic_store(&p->waiting, 0);
	}
}

/* ---- the step ------------------------------------------------------------------------ */

/* The motion's event handler (from rtl_motion_step(), on the step's
 * thread): into the event ring; a full ring refuses it, counted by the
 * ring's producer (events_dropped). */
static void on_event(void *user, const struct rtl_motion_event_info *ev)
{
	struct py_motion_rt *r = user;

	rtl_ring_push_sz(r->events, ev, sizeof(*ev));
}

/* The measured state of frame @f into @st (SI), and the controller's time
 * of it [ns]. */
static int64_t read_state(struct py_motion_rt *r, const struct rtl_loop_frame *f,
			  struct py_mstate *st)
{
	if (r->kind != PY_MT_RTDE) {
		const struct rtl_udp_state *s = &rtl_udp_loop_frame(f)->rt;

		rtl_motion_from_udp(&st->m, s);
		for (int i = 0; i < 6; i++)
			st->force[i] = s->external_tcp_force[i];
		st->status[0] = s->robot_mode;
		st->status[1] = s->robot_state;
		st->status[2] = s->control_mode;
		st->raw = *s;
		return llround(s->time_stamp * 1e9);
	} else {
		struct rtl_rtde_frame fr = rtl_rtde_loop_state(f);

		rtl_rtde_frame_get_vec6(&fr, r->h_q, st->m.joint_pos);
		rtl_rtde_frame_get_vec6(&fr, r->h_qd, st->m.joint_vel);
		rtl_rtde_frame_get_vec6(&fr, r->h_pose, st->m.tcp_pos);
		rtl_rtde_frame_get_vec6(&fr, r->h_speed, st->m.tcp_vel);
		rtl_rtde_frame_get_vec6(&fr, r->h_force, st->force);
		for (int i = 0; i < 3; i++)
			st->status[i] = rtl_rtde_frame_get_int(&fr, r->h_status[i]);
		return llround(rtl_rtde_frame_get_double(&fr, r->h_ts) * 1e9);
	}
}

static bool finite_state(const struct rtl_motion_state *m)
{
	for (int i = 0; i < RTL_MOTION_AXES; i++)
		if (!isfinite(m->joint_pos[i]) || !isfinite(m->joint_vel[i]) ||
		    !isfinite(m->tcp_pos[i]) || !isfinite(m->tcp_vel[i]))
			return false;
	return true;
}

/* Python's commands, in the order given, at the period's time @now. Each
 * was checked before it was queued; what the motion API still refuses is
 * its rejected counter. */
static void apply_commands(struct py_motion_rt *r, int64_t now)
{
	struct rtl_motion *m = r->motion;
	struct py_mcmd c;

	while (rtl_ring_pop_sz(r->cmds, &c, sizeof(c))) {
		switch (c.op) {
		case PY_MOP_SPEEDL:
			rtl_motion_speedl(m, now, c.vel, c.acc, c.time);
			break;
		case PY_MOP_SPEEDJ:
			rtl_motion_speedj(m, now, c.vel, c.acc, c.time);
			break;
		case PY_MOP_SERVOL:
			rtl_motion_servol(m, now, c.pos, c.vel, c.acc, c.time);
			break;
		case PY_MOP_SERVOJ:
			rtl_motion_servoj(m, now, c.pos, c.vel, c.acc, c.time);
			break;
		case PY_MOP_STOP:
			rtl_motion_stop(m, now, c.acc[0]);
			break;
		case PY_MOP_VELX:
			rtl_motion_set_velx(m, c.vel[0], c.vel[1]);
			break;
		case PY_MOP_ACCX:
			rtl_motion_set_accx(m, c.acc[0], c.acc[1]);
			break;
		case PY_MOP_VELJ:
			rtl_motion_set_velj(m, c.vel);
			break;
		case PY_MOP_ACCJ:
			rtl_motion_set_accj(m, c.acc);
			break;
		}
		rtl_stat_add(&r->c.applied, 1);
	}
}

int py_motion_step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct py_motion_rt *r = user;
	struct py_mstate *st;
	int64_t now;
	int ret;

	/* acquire: pairs with the opener's release once the motion is made. */
	if (!atomic_load_explicit(&r->ready, memory_order_acquire)) {
		rtl_stat_add(&r->c.not_ready, 1);
		return 0;
	}
	st = &r->pub.slot[r->pub.back];
	now = read_state(r, f, st);
	if (!finite_state(&st->m)) {
		/* Never stepped from it: the last command stays on the wire. */
		rtl_stat_add(&r->c.nonfinite, 1);
		return 0;
	}
	if (now < r->last_now) {
		/* The motion's periods may not go back (a controller that
		 * restarted its clock): hold the time. */
		rtl_stat_add(&r->c.clock_back, 1);
		now = r->last_now;
	}
	r->last_now = now;
	if (!r->handler_set) {
		rtl_motion_set_handler(r->motion, on_event, r);
		r->handler_set = true;
	}
	apply_commands(r, now);
	rtl_motion_loop_step(r->motion, &st->out, loop, now, &st->m);
	if (r->kind == PY_MT_RTDE)
		ret = rtl_motion_rtde_encode(&r->rtde_b, rtl_rtde_loop_commands(loop, 0), &st->out);
	else
		ret = rtl_motion_to_udp(rtl_loop_commands(loop), &st->out, r->horizon_s);
	if (ret < 0)
		rtl_stat_add(&r->c.backend_errors, 1);
	if (r->tel) {
		rtl_telemetry_set_vec(r->tel, r->t_q, st->m.joint_pos, 6);
		rtl_telemetry_set_vec(r->tel, r->t_qd, st->m.joint_vel, 6);
		rtl_telemetry_set_vec(r->tel, r->t_pose, st->m.tcp_pos, 6);
		rtl_telemetry_set_vec(r->tel, r->t_speed, st->m.tcp_vel, 6);
		rtl_telemetry_set_vec(r->tel, r->t_sp_vel, st->out.vel, 6);
		rtl_telemetry_set_vec(r->tel, r->t_sp_pose, st->out.pose, 6);
		rtl_telemetry_set(r->tel, r->t_mode, 0, st->out.mode);
	}
	st->seq = f->seq;
	st->rx_ns = f->rx_ns;
	st->now_ns = now;
	st->ctrl_skipped = f->ctrl_skipped;
	py_mpub_publish(&r->pub);
	rtl_stat_add(&r->c.stepped, 1);
	return 0;
}

/* ---- RTDE's callbacks ----------------------------------------------------------------- */

/* Inside rtl_loop_start(), on the opening thread (the GIL released): the
 * handles and the backend, before any step. */
void py_motion_rtde_connected(struct rtl_rtde_transport *t, void *user)
{
	static const char *const status[3] = { "robot_mode", "safety_mode", "runtime_state" };
	struct py_motion_rt *r = user;
	struct rtl_rtde_client *c = rtl_rtde_transport_client(t);

	r->h_ts = rtl_rtde_transport_output_handle(t, "timestamp");
	r->h_q = rtl_rtde_transport_output_handle(t, "actual_q");
	r->h_qd = rtl_rtde_transport_output_handle(t, "actual_qd");
	r->h_pose = rtl_rtde_transport_output_handle(t, "actual_TCP_pose");
	r->h_speed = rtl_rtde_transport_output_handle(t, "actual_TCP_speed");
	r->h_force = rtl_rtde_transport_output_handle(t, "actual_TCP_force");
	for (int i = 0; i < 3; i++)
		r->h_status[i] = rtl_rtde_transport_output_handle(t, status[i]);
	r->period_ns = rtl_rtde_client_info(c)->period_ns;
	rtl_motion_rtde_init(&r->rtde_b, rtl_rtde_client_input_recipe(c, 0), r->period_ns);
}

/* The safe package: the executor's STOP (built once, at connect). */
void py_motion_rtde_safe(struct rtl_rtde_transport *t, struct rtl_rtde_coalesce *c, void *user)
{
	struct py_motion_rt *r = user;

	(void)t;
	rtl_rtde_frame_set_int(rtl_rtde_coalesce_frame(c, 0), r->rtde_b.h.mode, RTL_RTDE_CMD_STOP);
}
