/* SPDX-License-Identifier: MIT */
/*
 * Structs that can grow: the library side of the rule in docs/api.md
 * ("Room to grow"). Every public configuration, ops table and counters
 * snapshot starts with `size_t size`, which the caller sets to the sizeof
 * it was compiled with. The library then knows how much of the struct the
 * caller has:
 *   - in (a configuration, an ops table): a caller's struct smaller than
 *     the library's is copied and the rest zero-filled: an older program
 *     gets the defaults of the fields it did not know (zero means default
 *     in every configuration; in every ops table a NULL call is one the
 *     caller does not offer, which the library skips, or refuses at
 *     create when the call is required);
 *     a larger one (a program built against newer headers, run on an older
 *     library) is accepted when the bytes the library does not know are
 *     all zero, and refused (-E2BIG) otherwise: a setting asked for would
 *     otherwise be silently ignored. A size of 0 (a zeroed struct whose
 *     size was never set) is refused with the fix.
 *   - out (a counters snapshot): the library writes at most the caller's
 *     size: an older program's smaller snapshot is not overrun.
 * The same test the Linux kernel applies to its extensible structs
 * (sched_attr, clone_args, open_how), without its "0 means the first
 * version": here 0 is a forgotten size.
 *
 * Internal: compiled into the library, not installed.
 */
#ifndef RTLOOP_SIZED_H
#define RTLOOP_SIZED_H

#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

/*
 * Copy the caller's sized struct @src into the library's @dst of @dst_size
 * bytes (whose first member is the size_t size). @what names the struct in
 * the error ("struct rtl_loop_config"). Returns 0, or -EINVAL (@src NULL,
 * or its size 0 or smaller than the size member) or -E2BIG (larger, with a
 * non-zero byte past what this library knows), with @err filled. Not
 * RT-safe (set-up time).
 */
int rtl__sized_in(void *dst, size_t dst_size, const void *src, const char *what,
		  struct rtl_error *err);

/*
 * Copy the library's snapshot @src of @src_size bytes into the caller's
 * @dst, at most dst's own size; dst->size is kept. Returns 0, or -EINVAL
 * (@dst NULL or its size below the size member). RT-safe.
 */
int rtl__sized_out(void *dst, const void *src, size_t src_size);

/* The size member of a sized struct. */
static inline size_t rtl__size_of(const void *sized)
{
	return *(const size_t *)sized;
}

struct rtl_stat_field;

/*
 * The body of a module's rtl_<module>_counter_fields(): its table @fields
 * (an array of struct rtl_stat_field), with the number of entries through
 * @n (may be NULL). RT-safe.
 */
static inline const struct rtl_stat_field *rtl__fields_out(const struct rtl_stat_field *fields,
							   size_t count, size_t *n)
{
	if (n)
		*n = count;
	return fields;
}
#define RTL__FIELDS_OUT(fields, n) rtl__fields_out(fields, sizeof(fields) / sizeof((fields)[0]), n)

/*
 * The counters' public pair of a module, defined in one place instead of
 * eight. RTL__DEFINE_COUNTER_FIELDS(rtl_x, RTL_X_COUNTERS) defines, from the
 * module's X-macro list of counters:
 *   - static const struct rtl_stat_field counter_fields[], one entry per
 *     counter of struct rtl_x_counters, in the list's order (the module may
 *     use it, as the loop's report does);
 *   - RTL_API const struct rtl_stat_field *rtl_x_counter_fields(size_t *n).
 * RTL__DEFINE_COUNTERS(rtl_x, RTL_X_COUNTERS, member) defines those and
 *   - RTL_API int rtl_x_stats(const struct rtl_x *obj,
 *				struct rtl_x_counters *out): -EINVAL when
 *     @obj is NULL, else a snapshot s of struct rtl_x_counters (zeroed, its
 *     size set) with each counter read from obj->member.<name> (atomic, by
 *     rtl_stat_get(), or a plain uint64_t of a module whose counters one
 *     thread owns), copied out by rtl__sized_out().
 * RTL__DEFINE_COUNTERS_THEN(rtl_x, RTL_X_COUNTERS, member, statements...)
 * runs @statements (which may use obj and s) after the copy of the list and
 * before the copy-out: for what the list does not hold (an array, a count
 * kept elsewhere). The header declaring the functions must be included, and
 * <rtloop/stat.h>. Use once per file: each also typedefs rtl__counters.
 */
#define RTL__COUNTER_FIELD_(member, what) \
	{ .name = #member, .doc = what, .offset = offsetof(rtl__counters, member) },
#define RTL__DEFINE_COUNTER_FIELDS(prefix, LIST)                                             \
	typedef struct prefix##_counters rtl__counters;                                      \
	static const struct rtl_stat_field counter_fields[] = { LIST(RTL__COUNTER_FIELD_) }; \
	RTL_API const struct rtl_stat_field *prefix##_counter_fields(size_t *n)              \
	{                                                                                    \
		return RTL__FIELDS_OUT(counter_fields, n);                                   \
	}

/* A counter of a module's live counters: atomic, or one thread's plain one. */
static inline uint64_t rtl__counter_plain(const uint64_t *c)
{
	return *c;
}
#define RTL__COUNTER_GET(p) \
	_Generic((p), const uint64_t *: rtl__counter_plain, uint64_t *: rtl__counter_plain,       \
		 default: rtl_stat_get)(p)
#define RTL__COUNTER_COPY_(name, doc) s.name = RTL__COUNTER_GET(&rtl__src->name);

#define RTL__DEFINE_COUNTERS_THEN(prefix, LIST, member, ...)                                \
	RTL__DEFINE_COUNTER_FIELDS(prefix, LIST)                                            \
	RTL_API int prefix##_stats(const struct prefix *obj, struct prefix##_counters *out) \
	{                                                                                   \
		struct prefix##_counters s = { .size = sizeof(s) };                         \
                                                                                            \
		if (!obj)                                                                   \
			return -EINVAL;                                                     \
		{                                                                           \
			__typeof__(&obj->member) rtl__src = &obj->member;                   \
                                                                                            \
			LIST(RTL__COUNTER_COPY_)                                            \
		}                                                                           \
		__VA_ARGS__                                                                 \
		return rtl__sized_out(out, &s, sizeof(s));                                  \
	}
#define RTL__DEFINE_COUNTERS(prefix, LIST, member) RTL__DEFINE_COUNTERS_THEN(prefix, LIST, member, )

/*
 * The name of enum value @v in @names, a table of @n strings indexed by the
 * enum ([RTL_X_A] = "a", ...: a value the enum skips is a NULL hole), or
 * @fallback when @v is negative, past the end of the table or a hole. The
 * body of each rtl_<module>_<enum>_name(): a table and one checked lookup
 * instead of a switch per enum. RTL__NAME_OF() passes the table's length
 * (@names must be an array, not a pointer). RT-safe.
 */
static inline const char *rtl__name_of(const char *const *names, size_t n, long v,
				       const char *fallback)
{
	return v >= 0 && (unsigned long)v < n && names[v] ? names[v] : fallback;
}
#define RTL__NAME_OF(names, v, fallback) \
	rtl__name_of(names, sizeof(names) / sizeof((names)[0]), (long)(v), fallback)

#endif /* RTLOOP_SIZED_H */
