// SPDX-License-Identifier: MIT
/*
 * The library's only way to say something: format into a stack buffer and
 * hand the text to the application's handler. No handler, no output.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/log.h>

static rtl_log_fn log_fn;
static void *log_user;

RTL_API void rtl_log_set_handler(rtl_log_fn fn, void *user)
{
	log_fn = fn;
	log_user = user;
}

RTL_API const char *rtl_log_level_name(enum rtl_log_level level)
{
	switch (level) {
	case RTL_LOG_ERROR:
		return "error";
	case RTL_LOG_WARN:
		return "warning";
	case RTL_LOG_INFO:
		return "info";
	case RTL_LOG_DEBUG:
		return "debug";
	}
	return "unknown";
}

RTL_API void rtl_log_stderr(void *user, enum rtl_log_level level, const char *msg)
{
	enum rtl_log_level max = (enum rtl_log_level)(intptr_t)user;

	if (level > max)
		return;
	fprintf(stderr, "rtloop: %s: %s\n", rtl_log_level_name(level), msg);
}

RTL_API void rtl_log(enum rtl_log_level level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_fn(log_user, level, buf);
}
