/* SPDX-License-Identifier: MIT */
/*
 * rtl_error: the one error type of rtloop's API. A fallible call returns 0
 * (or a count) or -errno, and, where it takes a struct rtl_error *, fills
 * it with the same code and one sentence that names the cause and the fix.
 * Structures that carry more about an error (where in a stream, whether it
 * ends the connection) hold a struct rtl_error for the code and the text.
 * It lives with ring/ because ring/ is the leaf every module depends on.
 */
#ifndef RTLOOP_ERROR_H
#define RTLOOP_ERROR_H

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/* Bytes of an error message, terminating NUL included: longer ones are cut. */
#define RTL_ERROR_MSG 1024

struct rtl_error {
	int code;		 /* 0 or -errno */
	char msg[RTL_ERROR_MSG]; /* cause and fix; empty when code == 0 */
};

/*
 * Fill @err (may be NULL) with @code and the printf-formatted message, cut
 * to fit. Returns @code, so that a failure path reads
 * "return rtl_error_set(err, -EINVAL, ...);". Logs nothing. Not RT-safe
 * (set-up and error paths only).
 */
RTL_API int rtl_error_set(struct rtl_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

RTL_END_DECLS

#endif /* RTLOOP_ERROR_H */
