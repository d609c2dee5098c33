// SPDX-License-Identifier: MIT
/*
 * Room to grow (docs/api.md): every public configuration and ops table
 * starts with its size, and the library reads only that many bytes. A
 * program built against an older header passes a smaller struct, whose
 * missing fields take their defaults; one built against a newer header
 * passes a larger one, accepted only when what this library does not know
 * is zero; a struct whose size was never set is refused with the fix.
 *
 * The older program is played two ways: as a consumer compiled against a
 * frozen copy of the previous layout (struct loop_config_v0 and
 * struct transport_ops_v0 below: the last field of each not there yet),
 * and, for every other config, as the struct cut before its last member,
 * in a heap block of exactly that size, so that a read past it is an
 * AddressSanitizer error in the sanitizer build.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/doctor.h>
#include <rtloop/drfl_transport.h>
#include <rtloop/loop.h>
#include <rtloop/motion.h>
#include <rtloop/rtde_client.h>
#include <rtloop/rtde_recipe.h>
#include <rtloop/thread.h>
#include <rtloop/udp_transport.h>

/* ---- a consumer of the previous layout ------------------------------------------- */

/* struct rtl_loop_config as a program built before stop_timeout_ns. */
struct loop_config_v0 {
	size_t size;
	struct rtl_transport *transport;
	rtl_loop_step_fn step;
	void *user;
	enum rtl_loop_rt_mode rt_mode;
	int rx_priority, worker_priority;
	bool pin_rx, pin_worker;
	int rx_cpu, worker_cpu;
	uint32_t ring_capacity;
	bool every_frame;
	bool inline_step;
	int64_t spin_ns;
	int64_t spin_lead_ns;
	int watchdog_periods;
	int reconnect_attempts;
	int64_t reconnect_backoff_ns;
	bool start_disarmed;
};

/* struct rtl_transport_ops before error() was added. */
struct transport_ops_v0 {
	size_t size;
	const char *name;
	int (*connect)(struct rtl_transport *t, struct rtl_error *err);
	int (*recv)(struct rtl_transport *t);
	int (*next)(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap);
	int (*check)(struct rtl_transport *t, char *why, size_t len);
	int (*send)(struct rtl_transport *t, int64_t now);
	int (*send_safe)(struct rtl_transport *t);
	bool (*at_rest)(struct rtl_transport *t, const struct rtl_loop_frame *f);
	void (*disconnect)(struct rtl_transport *t);
};

/* The frozen copies are prefixes of today's structs, member for member. */
_Static_assert(offsetof(struct loop_config_v0, start_disarmed) ==
		       offsetof(struct rtl_loop_config, start_disarmed),
	       "the previous loop config is a prefix of today's");
_Static_assert(sizeof(struct loop_config_v0) < sizeof(struct rtl_loop_config),
	       "today's loop config has grown past the previous one");
_Static_assert(offsetof(struct transport_ops_v0, disconnect) ==
		       offsetof(struct rtl_transport_ops, disconnect),
	       "the previous ops table is a prefix of today's");

static int fake_connect(struct rtl_transport *t, struct rtl_error *err)
{
	(void)t;
	return rtl_error_set(err, -ENOTCONN, "not used");
}

static int fake_recv(struct rtl_transport *t)
{
	(void)t;
	return -EAGAIN;
}

static int fake_next(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap)
{
	(void)t, (void)f, (void)cap;
	return 0;
}

static int fake_send(struct rtl_transport *t, int64_t now)
{
	(void)t, (void)now;
	return 0;
}

static void fake_disconnect(struct rtl_transport *t)
{
	(void)t;
}

/* The fake's table as this tree's headers define it. */
static const struct rtl_transport_ops fake_ops = {
	.size = sizeof(fake_ops),
	.connect = fake_connect,
	.recv = fake_recv,
	.next = fake_next,
	.send = fake_send,
	.disconnect = fake_disconnect,
};

/* A heap copy of @size bytes of @src: nothing readable past it. */
static void *exact(const void *src, size_t size)
{
	void *p = malloc(size);

	cr_assert(p != NULL);
	memcpy(p, src, size);
	return p;
}

Test(sizes, a_loop_built_against_the_previous_layout_runs_with_the_defaults)
{
	static const struct transport_ops_v0 ops0 = {
		.size = sizeof(ops0),
		.name = "v0",
		.connect = fake_connect,
		.recv = fake_recv,
		.next = fake_next,
		.send = fake_send,
		.disconnect = fake_disconnect,
	};
	struct transport_ops_v0 *ops = exact(&ops0, sizeof(ops0));
	struct rtl_transport t = { .size = sizeof(t),
				   .ops = (struct rtl_transport_ops *)(void *)ops };
	struct loop_config_v0 cfg0 = { .size = sizeof(cfg0),
				       .transport = &t,
				       .rt_mode = RTL_LOOP_RT_OFF };
	struct loop_config_v0 *cfg = exact(&cfg0, sizeof(cfg0));
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_loop_create(&loop, (const struct rtl_loop_config *)(void *)cfg, &err), 0,
		     "%s", err.msg);
	/* The field the old program could not set takes its default: the
	 * start then fails in connect (the fake refuses), not in a value. */
	cr_expect_eq(rtl_loop_start(loop, &err), -ENOTCONN, "%s", err.msg);
	rtl_loop_destroy(loop);
	free(cfg);
	free(ops);
}

Test(sizes, a_config_from_newer_headers_is_refused_when_it_sets_what_is_unknown)
{
	struct rtl_transport t = { .size = sizeof(t), .ops = &fake_ops };
	size_t bigger = sizeof(struct rtl_loop_config) + 16;
	unsigned char *mem = calloc(1, bigger);
	struct rtl_loop_config *cfg = (struct rtl_loop_config *)(void *)mem;
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	cr_assert(mem != NULL);
	cfg->size = bigger;
	cfg->transport = &t;
	cfg->rt_mode = RTL_LOOP_RT_OFF;
	cr_assert_eq(rtl_loop_create(&loop, cfg, &err), 0, "zero past the known part: %s", err.msg);
	rtl_loop_destroy(loop);
	mem[sizeof(struct rtl_loop_config) + 3] = 1;
	cr_expect_eq(rtl_loop_create(&loop, cfg, &err), -E2BIG);
	cr_expect_null(loop);
	cr_expect(strstr(err.msg, "newer headers") != NULL, "%s", err.msg);
	free(mem);
}

Test(sizes, a_config_whose_size_was_never_set_is_refused_with_the_fix)
{
	struct rtl_transport t = { .size = sizeof(t), .ops = &fake_ops };
	struct rtl_loop_config cfg = { .transport = &t, .rt_mode = RTL_LOOP_RT_OFF };
	struct rtl_transport_ops unsized = fake_ops;
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "set .size = sizeof(struct rtl_loop_config)") != NULL, "%s",
		  err.msg);
	cfg.size = sizeof(cfg);
	unsized.size = 0;
	t.ops = &unsized;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, "struct rtl_transport_ops") != NULL, "%s", err.msg);
	t.ops = &fake_ops;
	t.size = 0;
	cr_expect_eq(rtl_loop_create(&loop, &cfg, &err), -EINVAL);
	cr_expect(strstr(err.msg, ".size") != NULL, "%s", err.msg);
	cr_expect_null(loop);
}

/* ---- every other config, cut before its last member ------------------------------- */

/* @full (its size set) cut to @prev bytes, on the heap. */
static void *previous(const void *full, size_t prev)
{
	void *p = exact(full, prev);

	*(size_t *)p = prev;
	return p;
}

Test(sizes, the_udp_transport_takes_its_previous_config)
{
	struct rtl_udp_transport_config full = { .size = sizeof(full), .host = "127.0.0.1" };
	struct rtl_udp_transport_config *old =
		previous(&full, offsetof(struct rtl_udp_transport_config, rest_speed));
	struct rtl_udp_transport *t = NULL;
	struct rtl_error err = { 0 };

	cr_expect_eq(rtl_udp_transport_create(&t, old, &err), 0, "%s", err.msg);
	rtl_udp_transport_destroy(t);
	full.size = 0;
	cr_expect_eq(rtl_udp_transport_create(&t, &full, &err), -EINVAL);
	cr_expect_null(t);
	free(old);
}

Test(sizes, the_motion_state_checks_its_config_size)
{
	struct rtl_motion_config full;
	size_t bigger = sizeof(full) + 8;
	unsigned char *mem = calloc(1, bigger);
	struct rtl_motion *m = NULL;
	struct rtl_error err = { 0 };

	cr_assert(mem != NULL);
	cr_assert_eq(rtl_motion_config_init(&full, 2000000), 0);
	cr_expect_eq(full.size, sizeof(full), "config_init sets the size");
	memcpy(mem, &full, sizeof(full));
	((struct rtl_motion_config *)(void *)mem)->size = bigger;
	cr_expect_eq(rtl_motion_create(&m, (void *)mem, &err), 0, "%s", err.msg);
	rtl_motion_destroy(m);
	mem[sizeof(full) + 1] = 7;
	cr_expect_eq(rtl_motion_create(&m, (void *)mem, &err), -E2BIG);
	full.size = 0;
	cr_expect_eq(rtl_motion_create(&m, &full, &err), -EINVAL);
	cr_expect(strstr(err.msg, "struct rtl_motion_config") != NULL, "%s", err.msg);
	free(mem);
}

static void *noop(void *arg)
{
	return arg;
}

Test(sizes, a_thread_takes_its_previous_attributes)
{
	struct rtl_thread_attr full = { .size = sizeof(full), .policy = SCHED_OTHER, .cpu = -1 };
	struct rtl_thread_attr *old =
		previous(&full, offsetof(struct rtl_thread_attr, best_effort));
	struct rtl_thread *t = NULL;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_thread_create(&t, old, noop, NULL, &err), 0, "%s", err.msg);
	cr_expect_eq(rtl_thread_join(t, NULL), 0);
	full.size = 0;
	cr_expect_eq(rtl_thread_create(&t, &full, noop, NULL, &err), -EINVAL);
	cr_expect(strstr(err.msg, "struct rtl_thread_attr") != NULL, "%s", err.msg);
	free(old);
}

Test(sizes, a_recipe_takes_its_previous_options)
{
	struct rtl_rtde_recipe_opts full = { .size = sizeof(full), .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rtl_rtde_recipe_opts *old =
		previous(&full, offsetof(struct rtl_rtde_recipe_opts, flags));
	struct rtl_rtde_recipe r;
	struct rtl_rtde_report rep;

	cr_expect_gt(rtl_rtde_recipe_from_list(&r, old, "timestamp,actual_q", &rep), 0, "%s",
		     rep.text);
	full.size = 0;
	cr_expect_eq(rtl_rtde_recipe_from_list(&r, &full, "timestamp", &rep), -EINVAL);
	cr_expect(strstr(rep.text, ".size") != NULL, "%s", rep.text);
	free(old);
}

Test(sizes, the_rtde_client_takes_its_previous_config)
{
	struct rtl_rtde_client_config full = { .size = sizeof(full), .outputs = "timestamp" };
	struct rtl_rtde_client_config *old =
		previous(&full, offsetof(struct rtl_rtde_client_config, protocol));
	struct rtl_rtde_client *c = NULL;
	struct rtl_error err = { 0 };

	cr_expect_eq(rtl_rtde_client_create(&c, old, &err), 0, "%s", err.msg);
	rtl_rtde_client_destroy(c);
	full.size = 0;
	cr_expect_eq(rtl_rtde_client_create(&c, &full, &err), -EINVAL);
	free(old);
}

Test(sizes, the_doctor_takes_its_previous_options)
{
	struct rtl_doctor_opts full = { .size = sizeof(full), .root = "/" };
	struct rtl_doctor_opts *old =
		previous(&full, offsetof(struct rtl_doctor_opts, root) + sizeof(full.root));
	static struct rtl_doctor_finding fs[RTL_DOCTOR_MAX_FINDINGS];

	cr_expect_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, old), RTL_DOCTOR_MAX_FINDINGS);
	full.size = 0;
	cr_expect_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &full), -EINVAL);
	free(old);
}
