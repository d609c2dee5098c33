// SPDX-License-Identifier: MIT
/* The one error type (design in <rtloop/error.h>). */
#include <stdarg.h>
#include <stdio.h>

#include <rtloop/error.h>
#include <rtloop/version.h>

RTL_API int rtl_error_set(struct rtl_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

RTL_API const char *rtl_version(void)
{
	return RTL_VERSION_STRING;
}
