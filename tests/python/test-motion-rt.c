// SPDX-License-Identifier: MIT
/*
 * rtloop.Motion's C side (apps/python/rtloop/_motion_rt.c), without Python:
 * the triple buffer that hands the newest state to Python (single-thread
 * validity first, then a writer and a reader on two threads: every state
 * taken is whole and newer than the one before, which ThreadSanitizer
 * checks too in the stress build), and the step over a UDP frame on a
 * fake clock: Python's commands applied in order, the state converted to
 * SI, a NaN or a clock that goes back handled and counted, nothing
 * allocated.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/udp_transport.h>

#include "_motion_rt.h"
#include "alloc-count.h"

/* ---- the triple buffer, one thread ----------------------------------------------------- */

static void publish(struct py_mpub *p, uint64_t seq)
{
	/* The writer's side as the step does it: fill back, swap. */
	struct py_mstate *st = &p->slot[p->back];

	st->seq = seq;
	for (int i = 0; i < 6; i++)
		st->m.joint_pos[i] = (double)seq;
	py_mpub_publish(p);
}

Test(motion_rt, a_buffer_gives_nothing_before_a_publication_and_the_newest_after)
{
	static struct py_mpub p;

	py_mpub_init(&p);
	cr_expect(py_mpub_take(&p) == NULL, "nothing published yet");
	publish(&p, 1);
	publish(&p, 2);
	publish(&p, 3);
	cr_assert(py_mpub_take(&p) != NULL);
	cr_expect_eq(py_mpub_front(&p)->seq, 3, "the newest of three");
	cr_expect(py_mpub_take(&p) == NULL, "taken once");
	cr_expect_eq(py_mpub_front(&p)->seq, 3, "the state held stays");
	publish(&p, 4);
	cr_expect_neq(p.back, p.front, "the writer never fills the reader's slot");
	cr_assert(py_mpub_take(&p) != NULL);
	cr_expect_eq(py_mpub_front(&p)->seq, 4);
	cr_expect_neq(p.back, p.front);
}

Test(motion_rt, a_wait_times_out_without_a_publication_and_returns_with_one)
{
	static struct py_mpub p;

	py_mpub_init(&p);
	cr_expect_eq(py_mpub_wait(&p, 1000000), 0, "1 ms: nothing came");
	publish(&p, 7);
	cr_expect_eq(py_mpub_wait(&p, 0), 1, "one was there: no wait needed");
	cr_expect_eq(py_mpub_front(&p)->seq, 7);
}

/* ---- the triple buffer, two threads --------------------------------------------------- */

#define N_PUBLISH 200000

static struct py_mpub shared;

static void *writer(void *arg)
{
	(void)arg;
	for (uint64_t i = 1; i <= N_PUBLISH; i++)
		publish(&shared, i);
	return NULL;
}

Test(motion_rt, a_reader_beside_the_writer_takes_whole_states_in_order)
{
	pthread_t w;
	uint64_t last = 0, taken = 0, torn = 0, back = 0;

	py_mpub_init(&shared);
	cr_assert_eq(pthread_create(&w, NULL, writer, NULL), 0);
	while (last < N_PUBLISH) {
		const struct py_mstate *st;

		/* Bounded: the writer ends; a wait is 10 ms at most. */
		if (!py_mpub_wait(&shared, 10000000))
			continue;
		st = py_mpub_front(&shared);
		for (int i = 0; i < 6; i++)
			if (st->m.joint_pos[i] != (double)st->seq)
				torn++;
		if (st->seq <= last)
			back++;
		last = st->seq;
		taken++;
	}
	pthread_join(w, NULL);
	cr_expect_eq(torn, 0, "a state changed while the reader held it");
	cr_expect_eq(back, 0, "a state older than the one before");
	cr_expect_eq(last, N_PUBLISH, "the last publication reached the reader");
	cr_expect_gt(taken, 0);
}

/* ---- the step ------------------------------------------------------------------------------ */

struct rig {
	struct py_motion_rt r;
	/* A loop frame: its header, then a UDP frame as its values. */
	RTL_ALIGNAS(8)
	unsigned char frame[sizeof(struct rtl_loop_frame) + sizeof(struct rtl_udp_frame)];
};

static struct rig *rig_new(void)
{
	struct rig *g = calloc(1, sizeof(*g));
	struct rtl_motion_config mc;
	struct rtl_error err = { 0 };

	cr_assert(g != NULL);
	g->r.kind = PY_MT_UDP;
	g->r.period_ns = 1000000;
	g->r.horizon_s = 0.001;
	py_mpub_init(&g->r.pub);
	cr_assert_eq(rtl_ring_create(&g->r.cmds, PY_MOTION_CMD_SLOTS, sizeof(struct py_mcmd), &err),
		     0);
	cr_assert_eq(rtl_ring_create(&g->r.events, PY_MOTION_EVENT_SLOTS,
				     sizeof(struct rtl_motion_event_info), &err),
		     0);
	rtl_motion_config_init(&mc, g->r.period_ns);
	cr_assert_eq(rtl_motion_create(&g->r.motion, &mc, &err), 0);
	((struct rtl_loop_frame *)(void *)g->frame)->size = sizeof(struct rtl_udp_frame);
	return g;
}

static void rig_free(struct rig *g)
{
	rtl_motion_destroy(g->r.motion);
	rtl_ring_destroy(g->r.cmds);
	rtl_ring_destroy(g->r.events);
	free(g);
}

/* A UDP state at controller time @t [s], joint 0 at @q0_deg, TCP x at @x_mm. */
static const struct rtl_loop_frame *frame(struct rig *g, uint64_t seq, double t, double q0_deg,
					  double x_mm)
{
	struct rtl_loop_frame *f = (struct rtl_loop_frame *)(void *)g->frame;
	struct rtl_udp_frame *u = (struct rtl_udp_frame *)(void *)f->values;

	f->seq = seq;
	u->rt.time_stamp = t;
	u->rt.actual_joint_position[0] = (float)q0_deg;
	u->rt.actual_tcp_position[0] = (float)x_mm;
	return f;
}

static unsigned long long count(const RTL_ATOMIC(uint64_t) * c)
{
	return (unsigned long long)rtl_stat_get(c);
}

Test(motion_rt, the_step_waits_for_the_motion_then_applies_every_command_in_order)
{
	struct rig *g = rig_new();
	struct py_mcmd c = { .op = PY_MOP_SPEEDL, .vel = { 0.05 }, .time = 0.001 };
	const struct py_mstate *st;

	for (int i = 0; i < 6; i++)
		c.acc[i] = RTL_MOTION_ACC_AUTO;
	cr_expect_eq(py_motion_step(NULL, frame(g, 0, 1.0, 0, 0), &g->r), 0);
	cr_expect_eq(count(&g->r.c.not_ready), 1, "not ready: nothing stepped");
	cr_expect(py_mpub_take(&g->r.pub) == NULL, "nothing published");
	atomic_store(&g->r.ready, true);

	/* a limit, then a speedl above it, in one period: both, in order */
	cr_assert(rtl_ring_push_sz(
		g->r.cmds,
		&(struct py_mcmd){ .op = PY_MOP_VELX, .vel = { 0.02, RTL_MOTION_ACC_AUTO } },
		sizeof(c)));
	cr_assert(rtl_ring_push_sz(g->r.cmds, &c, sizeof(c)));
	cr_expect_eq(py_motion_step(NULL, frame(g, 1, 1.001, 90.0, 500.0), &g->r), 0);
	cr_expect_eq(count(&g->r.c.applied), 2);
	cr_assert((st = py_mpub_take(&g->r.pub)) != NULL);
	cr_expect_eq(st->seq, 1);
	cr_expect_eq(st->now_ns, 1001000000, "the controller's time, in ns");
	cr_assert_float_eq(st->m.joint_pos[0], M_PI / 2, 1e-6, "degrees became radians");
	cr_assert_float_eq(st->m.tcp_pos[0], 0.5, 1e-6, "millimetres became metres");
	cr_expect_eq(st->out.mode, RTL_MOTION_SPEED_CARTESIAN);
	cr_assert_float_eq(st->out.vel[0], 0.02, 1e-12, "the limit came first: clamped");
	cr_expect_eq(count(&g->r.c.stepped), 1);
	/* no loop here: the backend has no command to write into */
	cr_expect_eq(count(&g->r.c.backend_errors), 1);
	rig_free(g);
}

Test(motion_rt, a_non_finite_state_is_not_stepped_and_a_clock_that_goes_back_is_held)
{
	struct rig *g = rig_new();
	const struct py_mstate *st;

	atomic_store(&g->r.ready, true);
	cr_expect_eq(py_motion_step(NULL, frame(g, 0, 2.0, 0, 0), &g->r), 0);
	cr_assert(py_mpub_take(&g->r.pub) != NULL);
	cr_expect_eq(py_motion_step(NULL, frame(g, 1, 2.001, NAN, 0), &g->r), 0);
	cr_expect_eq(count(&g->r.c.nonfinite), 1);
	cr_expect(py_mpub_take(&g->r.pub) == NULL, "a NaN state is never published");
	cr_expect_eq(py_motion_step(NULL, frame(g, 2, 1.5, 0, 0), &g->r), 0);
	cr_expect_eq(count(&g->r.c.clock_back), 1);
	cr_assert((st = py_mpub_take(&g->r.pub)) != NULL);
	cr_expect_eq(st->now_ns, 2000000000, "the time held at the last step's");
	cr_expect_eq(count(&g->r.c.stepped), 2);
	rig_free(g);
}

Test(motion_rt, the_step_allocates_nothing)
{
	struct rig *g = rig_new();
	struct py_mcmd c = { .op = PY_MOP_SPEEDJ, .vel = { 0.1 }, .time = 0.001 };
	long n;

	for (int i = 0; i < 6; i++)
		c.acc[i] = RTL_MOTION_ACC_AUTO;
	cr_assert(rtl_test_alloc_selftest(), "the allocation counter counts (positive control)");
	atomic_store(&g->r.ready, true);
	py_motion_step(NULL, frame(g, 0, 3.0, 0, 0), &g->r); /* the handler is set once */
	rtl_test_alloc_mark_thread();
	rtl_test_alloc_start();
	for (int i = 1; i <= 1000; i++) {
		rtl_ring_push_sz(g->r.cmds, &c, sizeof(c));
		py_motion_step(NULL, frame(g, (uint64_t)i, 3.0 + i * 0.001, 0, 0), &g->r);
		py_mpub_take(&g->r.pub);
	}
	n = rtl_test_alloc_stop();
	rtl_test_alloc_unmark_thread();
	cr_expect_eq(n, 0, "%ld allocations in 1000 steps", n);
	cr_expect_eq(count(&g->r.c.stepped), 1001);
	rig_free(g);
}
