// SPDX-License-Identifier: MIT
/*
 * The loop's counters are declared once (RTL_LOOP_COUNTERS in
 * <rtloop/loop.h>). This binary is built with the runtime compiled again
 * with one counter more, test_extra, added to that list and nowhere else
 * (tests/rt/meson.build), and checks that it is in everything made from
 * the list: the snapshot struct, the loop's atomics, the snapshot copy,
 * the counters' table, the text report and the JSON report. (The Python
 * binding's dict is made from the table: tests/python/test_receive.py
 * checks that the dict and the table agree.)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop_private.h"

static int no_connect(struct rtl_transport *t, struct rtl_error *err)
{
	(void)t;
	return rtl_error_set(err, -ENOTCONN, "not used");
}

static int no_recv(struct rtl_transport *t)
{
	(void)t;
	return -EAGAIN;
}

static int no_next(struct rtl_transport *t, struct rtl_loop_frame *f, size_t cap)
{
	(void)t, (void)f, (void)cap;
	return 0;
}

static int no_send(struct rtl_transport *t, int64_t now)
{
	(void)t, (void)now;
	return 0;
}

static void no_disconnect(struct rtl_transport *t)
{
	(void)t;
}

static const struct rtl_transport_ops ops = {
	.size = sizeof(ops),
	.name = "none",
	.connect = no_connect,
	.recv = no_recv,
	.next = no_next,
	.send = no_send,
	.disconnect = no_disconnect,
};

static struct rtl_loop *make_loop(struct rtl_transport *t)
{
	struct rtl_loop_config cfg = { .size = sizeof(cfg),
				       .transport = t,
				       .rt_mode = RTL_LOOP_RT_OFF };
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_loop_create(&loop, &cfg, &err), 0, "%s", err.msg);
	return loop;
}

/* The report, text or JSON, as a string (free it). */
static char *report(const struct rtl_loop *loop, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f != NULL);
	cr_assert_eq(rtl_loop_report(loop, f, json), 0);
	fclose(f);
	return buf;
}

Test(loop_counters, a_counter_added_to_the_list_is_in_the_struct_and_the_table)
{
	const struct rtl_stat_field *fields;
	size_t n = 0;

	fields = rtl_loop_counter_fields(&n);
	/* The snapshot: the size member, then one uint64_t per counter. */
	cr_expect_eq(sizeof(struct rtl_loop_counters), sizeof(size_t) + n * sizeof(uint64_t));
	cr_expect_eq(sizeof(struct loop_counters), n * sizeof(uint64_t), "one atomic each");
	cr_assert_gt(n, 1);
	cr_expect_str_eq(fields[n - 1].name, "test_extra", "added last");
	cr_expect_str_eq(fields[n - 1].doc, "a counter the test adds");
	cr_expect_eq(fields[n - 1].offset, offsetof(struct rtl_loop_counters, test_extra));
	for (size_t i = 0; i < n; i++)
		cr_expect_eq(fields[i].offset, sizeof(size_t) + i * sizeof(uint64_t),
			     "%s is in list order", fields[i].name);
}

Test(loop_counters, the_added_counter_reaches_the_snapshot_and_both_reports)
{
	struct rtl_transport t = { .size = sizeof(t), .ops = &ops };
	struct rtl_loop *loop = make_loop(&t);
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char *text, *json;

	/* The writer's side: the atomic made from the same list. */
	rtl_stat_add(&loop->c.test_extra, 7);
	rtl_stat_add(&loop->c.frames, 3);
	cr_assert_eq(rtl_loop_stats(loop, &s), 0);
	cr_expect_eq(s.test_extra, 7);
	cr_expect_eq(s.frames, 3);
	text = report(loop, false);
	json = report(loop, true);
	cr_expect(strstr(text, "  test_extra       7\n") != NULL, "text report:\n%s", text);
	cr_expect(strstr(json, "\"test_extra\":7") != NULL, "JSON report: %s", json);
	cr_expect(strstr(json, "\"frames\":3,") != NULL, "JSON report: %s", json);
	free(text);
	free(json);
	rtl_loop_destroy(loop);
}

Test(loop_counters, an_older_programs_smaller_snapshot_is_not_overrun)
{
	struct rtl_transport t = { .size = sizeof(t), .ops = &ops };
	struct rtl_loop *loop = make_loop(&t);
	/* A program built before test_extra existed: its snapshot ends
	 * before it. The bytes after it must stay as they were. */
	size_t older = offsetof(struct rtl_loop_counters, test_extra);
	unsigned char *mem = malloc(older + 16);
	struct rtl_loop_counters *s = (struct rtl_loop_counters *)(void *)mem;

	cr_assert(mem != NULL);
	memset(mem, 0xa5, older + 16);
	s->size = older;
	rtl_stat_add(&loop->c.test_extra, 9);
	rtl_stat_add(&loop->c.steps, 2);
	cr_assert_eq(rtl_loop_stats(loop, s), 0);
	cr_expect_eq(s->steps, 2);
	cr_expect_eq(s->size, older, "the caller's size is kept");
	for (size_t i = older; i < older + 16; i++)
		cr_expect_eq(mem[i], 0xa5, "byte %zu past the older snapshot was written", i);
	free(mem);
	rtl_loop_destroy(loop);
}

Test(loop_counters, a_snapshot_without_its_size_is_refused)
{
	struct rtl_transport t = { .size = sizeof(t), .ops = &ops };
	struct rtl_loop *loop = make_loop(&t);
	struct rtl_loop_counters s = { 0 };

	cr_expect_eq(rtl_loop_stats(loop, &s), -EINVAL);
	cr_expect_eq(rtl_loop_stats(loop, NULL), -EINVAL);
	cr_expect_eq(rtl_loop_stats(NULL, &s), -EINVAL);
	rtl_loop_destroy(loop);
}
