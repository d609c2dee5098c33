/* SPDX-License-Identifier: MIT */
/*
 * Logging: the library never prints. It hands each message to a handler the
 * application installs (default: none, messages are dropped), so programs
 * decide where text goes and RT threads never block on a terminal.
 */
#ifndef RTLOOP_LOG_H
#define RTLOOP_LOG_H

#include <rtloop/compiler.h>

enum rtl_log_level {
	RTL_LOG_ERROR = 0,
	RTL_LOG_WARN = 1,
	RTL_LOG_INFO = 2,
	RTL_LOG_DEBUG = 3,
};

/* A log handler receives one complete, NUL-terminated message without a
 * trailing newline. It may be called from any thread, but never from the
 * hot path of the receive thread or the worker. */
typedef void (*rtl_log_fn)(void *user, enum rtl_log_level level, const char *msg);

/* Install @fn (NULL to drop messages) with its @user pointer. Not
 * thread-safe with respect to concurrent logging: call during set-up. */
RTL_API void rtl_log_set_handler(rtl_log_fn fn, void *user);

/* A ready-made handler that writes "rtloop: <level>: <msg>\n" to stderr
 * for messages at or above the level passed (cast) as @user. */
RTL_API void rtl_log_stderr(void *user, enum rtl_log_level level, const char *msg);

/* "error", "warning", "info", "debug". */
RTL_API const char *rtl_log_level_name(enum rtl_log_level level);

/* Emit a message through the installed handler (printf format). Not RT-safe
 * (formats into a stack buffer; the handler may block). */
RTL_API void rtl_log(enum rtl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* RTLOOP_LOG_H */
