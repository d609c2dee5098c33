/* SPDX-License-Identifier: MIT */
/*
 * rtl_fix: a header that is never installed nor compiled, holding each
 * construct the header parser (docs/man/rtl_headers.py) must read, for
 * tests/man/check-parser.py; it also breaks call-shape rules on purpose,
 * for the self-test of tests/headers/check-call-shape.py.
 *
 * Design
 * ------
 * A paragraph of the design.
 *
 *   term one  its text,
 *             continued
 */
#ifndef RTLOOP_FIXTURE_H
#define RTLOOP_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

/* Axes of a vector. */
#define RTL_FIX_AXES 6
// clang-format off
#define RTL_FIX_TWICE(x) \
	((x) * 2) /* twice @x */
// clang-format on

/* ---- objects --------------------------------------------------------- */

/* The object: opaque. */
struct rtl_fix;

struct rtl_fix_config {
	size_t size; /* sizeof(struct rtl_fix_config) */
	/* A comment above a pair. */
	int a, b;
	int c;
	unsigned flag : 1;
	union {
		double d; /* a double */
		struct {
			int x, y;
		} p;
	} u;
	int (*cb)(struct rtl_fix *f, void *user, struct rtl_error *err);
};

enum rtl_fix_mode {
	RTL_FIX_A = 0, /* the first */
	/* The second, above it. */
	RTL_FIX_B,
};

typedef void (*rtl_fix_fn)(void *user, const double v[RTL_FIX_AXES]);

/*
 * Create a fixture from @cfg.
 * Returns 0 and sets *@out, or
 *   -EINVAL  @out or @cfg is NULL,
 *   -ENOMEM  out of memory,
 * with @err filled.
 */
RTL_API int rtl_fix_create(struct rtl_fix **out, const struct rtl_fix_config *cfg,
			   struct rtl_error *err);

/* Free @f. NULL is accepted. */
RTL_API void rtl_fix_destroy(struct rtl_fix *f);

/* Arm or disarm @f, and read it back. */
RTL_API void rtl_fix_arm(struct rtl_fix *f, bool on);
RTL_API bool rtl_fix_armed(const struct rtl_fix *f);

RTL_API const struct rtl_fix_config *
rtl_fix_config_of(const struct rtl_fix *f); /* the configuration it holds */

/* Run @fn over @v into @out: returns 1 when it ran, 0 otherwise. */
RTL_API int rtl_fix_each(struct rtl_fix *f, rtl_fix_fn fn, void *(*alloc)(size_t n),
			 const double v[RTL_FIX_AXES], double out[RTL_FIX_AXES]);

/* Log @fmt. */
RTL_API void rtl_fix_log(struct rtl_fix *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Open a second kind of handle. */
RTL_API int rtl_fix_open(const char *name, struct rtl_fix **out);

struct rtl_fix_stats {
	unsigned long runs; /* rtl_fix_each() calls */
};

/* A configuration without its size first. */
struct rtl_fix_opts {
	int level;
};

/* The counters, named as no counters call is. */
RTL_API void rtl_fix_get_stats(const struct rtl_fix *f, struct rtl_fix_stats *out);

/* The counters, with the error too early. Returns 0 or -EINVAL. */
RTL_API int rtl_fix_stats(const struct rtl_fix *f, struct rtl_error *err,
			  struct rtl_fix_stats *out);

/* The first element of @v. RT-safe. */
RTL_INLINE const double *rtl_fix_first(const double v[RTL_FIX_AXES])
{
	return v; /* a comment in a body */
}

RTL_INLINE int rtl_fix__helper(int x)
{
	return x;
}

/* The defaults. */
RTL_API extern const struct rtl_fix_config rtl_fix_defaults;

RTL_END_DECLS

#endif /* RTLOOP_FIXTURE_H */
