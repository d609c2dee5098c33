// SPDX-License-Identifier: MIT
/* The log hook: nothing printed without a handler, everything with one. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/log.h>

static char last[600];
static enum rtl_log_level last_level;
static int calls;

static void capture(void *user, enum rtl_log_level level, const char *msg)
{
	*(int *)user += 1;
	last_level = level;
	snprintf(last, sizeof(last), "%s", msg);
}

Test(log, handler_receives_formatted_message)
{
	rtl_log_set_handler(capture, &calls);
	rtl_log(RTL_LOG_WARN, "value %d of %s", 42, "x");
	cr_assert_eq(calls, 1);
	cr_assert_eq(last_level, RTL_LOG_WARN);
	cr_assert_str_eq(last, "value 42 of x");
	rtl_log_set_handler(NULL, NULL);
	rtl_log(RTL_LOG_ERROR, "dropped");
	cr_assert_eq(calls, 1, "no handler: nothing delivered");
}

Test(log, long_messages_are_truncated_not_overflowed)
{
	char big[2000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rtl_log_set_handler(capture, &calls);
	rtl_log(RTL_LOG_INFO, "%s", big);
	cr_assert_eq(strlen(last), RTL_LOG_LINE - 1);
	rtl_log_set_handler(NULL, NULL);
}

Test(log, level_names)
{
	cr_assert_str_eq(rtl_log_level_name(RTL_LOG_ERROR), "error");
	cr_assert_str_eq(rtl_log_level_name(RTL_LOG_WARN), "warning");
	cr_assert_str_eq(rtl_log_level_name(RTL_LOG_INFO), "info");
	cr_assert_str_eq(rtl_log_level_name(RTL_LOG_DEBUG), "debug");
	cr_assert_str_eq(rtl_log_level_name((enum rtl_log_level)9), "unknown");
}

/* ---- queues: what a real-time thread logs waits for the drain ------------------------ */

static char seen[8][64];
static int n_seen;

static void collect(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	if (n_seen < 8)
		snprintf(seen[n_seen], sizeof(seen[0]), "%s:%s", rtl_log_level_name(level), msg);
	n_seen++;
}

Test(log, attached_thread_queues_until_drained_in_order)
{
	struct rtl_log_queue *q = NULL;

	n_seen = 0;
	cr_assert_eq(rtl_log_queue_create(&q, 4, NULL), 0);
	rtl_log_set_handler(collect, NULL);
	rtl_log_queue_attach(q);
	rtl_log(RTL_LOG_WARN, "first %d", 1);
	rtl_log(RTL_LOG_INFO, "second");
	cr_expect_eq(n_seen, 0, "an attached thread never calls the handler itself");
	rtl_log_queue_attach(NULL);
	cr_expect_eq(rtl_log_queue_drain(q), 2);
	cr_expect_eq(n_seen, 2);
	cr_expect_str_eq(seen[0], "warning:first 1");
	cr_expect_str_eq(seen[1], "info:second");
	cr_expect_eq(rtl_log_queue_drain(q), 0, "drained means empty");
	rtl_log(RTL_LOG_ERROR, "direct");
	cr_expect_eq(n_seen, 3, "detached: the handler is called at once");
	rtl_log_set_handler(NULL, NULL);
	rtl_log_queue_destroy(q);
}

Test(log, full_queue_drops_and_counts_never_blocks)
{
	struct rtl_log_queue *q = NULL;

	n_seen = 0;
	cr_assert_eq(rtl_log_queue_create(&q, 4, NULL), 0);
	rtl_log_set_handler(collect, NULL);
	rtl_log_queue_attach(q);
	for (int i = 0; i < 10; i++)
		rtl_log(RTL_LOG_INFO, "line %d", i);
	rtl_log_queue_attach(NULL);
	cr_expect_eq(rtl_log_queue_dropped(q), 6, "4 slots: 6 of 10 dropped");
	cr_expect_eq(rtl_log_queue_drain(q), 4);
	cr_expect_str_eq(seen[3], "info:line 3", "the oldest four are kept");
	rtl_log_set_handler(NULL, NULL);
	rtl_log_queue_destroy(q);
}

Test(log, queue_cuts_long_lines_and_refuses_bad_sizes)
{
	struct rtl_log_queue *q = NULL;
	char big[2000];

	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cr_expect_eq(rtl_log_queue_create(&q, 3, NULL), -EINVAL, "not a power of two");
	cr_expect_eq(rtl_log_queue_create(NULL, 4, NULL), -EINVAL);
	cr_assert_eq(rtl_log_queue_create(&q, 0, NULL), 0, "0: the default size");
	rtl_log_set_handler(capture, &calls);
	rtl_log_queue_attach(q);
	rtl_log(RTL_LOG_INFO, "%s", big);
	rtl_log_queue_attach(NULL);
	cr_expect_eq(rtl_log_queue_drain(q), 1);
	cr_expect_eq(strlen(last), RTL_LOG_LINE - 1);
	rtl_log_set_handler(NULL, NULL);
	rtl_log_queue_destroy(q);
	cr_expect_eq(rtl_log_queue_drain(NULL), 0);
	cr_expect_eq(rtl_log_queue_dropped(NULL), 0);
}
