// SPDX-License-Identifier: MIT
/* struct rtl_error filled in one call: code, formatted text, cut to fit. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <rtloop/mem.h>

Test(rt_error, set_fills_code_and_formatted_message)
{
	struct rtl_error err = { 0 };

	cr_assert_eq(rtl_error_set(&err, -ENOENT, "field '%s' at %d", "speed", 3), -ENOENT);
	cr_assert_eq(err.code, -ENOENT);
	cr_assert_str_eq(err.msg, "field 'speed' at 3");
}

Test(rt_error, set_cuts_a_long_message_to_fit)
{
	static char big[3000];
	struct rtl_error err;

	memset(big, 'a', sizeof(big) - 1);
	memset(&err, 'x', sizeof(err));
	cr_assert_eq(rtl_error_set(&err, -EINVAL, "%s", big), -EINVAL);
	cr_assert_eq(strlen(err.msg), sizeof(err.msg) - 1);
	cr_assert_eq(err.code, -EINVAL);
}

Test(rt_error, set_accepts_null_and_still_returns_the_code)
{
	cr_assert_eq(rtl_error_set(NULL, -EPROTO, "ignored %d", 1), -EPROTO);
}
