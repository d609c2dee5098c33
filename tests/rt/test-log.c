// SPDX-License-Identifier: MIT
/* The log hook: nothing printed without a handler, everything with one. */
#include <criterion/criterion.h>
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
	cr_assert_eq(strlen(last), 511);
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
