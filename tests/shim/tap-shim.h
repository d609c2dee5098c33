/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the few Criterion macros the threaded tests use, for the
 * ThreadSanitizer build: Criterion's process sandbox (BoxFort) cannot map its
 * arena under TSan's address-space layout, so those tests are compiled
 * against this header instead and run in-process, sequentially, printing TAP.
 * The same test source serves both builds; only the include changes.
 */
#ifndef RTL_TAP_SHIM_H
#define RTL_TAP_SHIM_H

#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct shim_test {
	const char *suite;
	const char *name;
	void (*fn)(void);
	struct shim_test *next;
};

void shim_register(struct shim_test *t);
void shim_check(bool ok, bool fatal, const char *file, int line, const char *expr);
/* Ends the test as skipped, with the reason (TAP's "# SKIP"). */
__attribute__((noreturn, format(printf, 1, 2))) void shim_skip(const char *fmt, ...);

#define SHIM_CAT_(a, b) a##b
#define SHIM_CAT(a, b) SHIM_CAT_(a, b)

#define Test(...) SHIM_TEST_(__VA_ARGS__, )
#define SHIM_TEST_(suite_, name_, ...)                                                        \
	static void suite_##_##name_(void);                                                   \
	static struct shim_test suite_##_##name_##_reg = { #suite_, #name_, suite_##_##name_, \
							   NULL };                            \
	__attribute__((constructor)) static void suite_##_##name_##_ctor(void)                \
	{                                                                                     \
		shim_register(&suite_##_##name_##_reg);                                       \
	}                                                                                     \
	static void suite_##_##name_(void)

/* The message arguments of Criterion's macros are accepted and ignored; the
 * failing expression and its line are printed instead. */
#define shim_first_(c, ...) (c)
#define shim_eq_(a, b, ...) ((a) == (b))
#define cr_skip_test(...) shim_skip(__VA_ARGS__)
#define cr_assert(...) \
	shim_check(shim_first_(__VA_ARGS__, ""), true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_expect(...) \
	shim_check(shim_first_(__VA_ARGS__, ""), false, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_assert_eq(...) \
	shim_check(shim_eq_(__VA_ARGS__, ""), true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_expect_eq(...) \
	shim_check(shim_eq_(__VA_ARGS__, ""), false, __FILE__, __LINE__, #__VA_ARGS__)
#define shim_cmp_(op, a, b, ...) ((a)op(b))
#define SHIM_CMP(fatal, op, ...) \
	shim_check(shim_cmp_(op, __VA_ARGS__, ""), fatal, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_assert_neq(...) SHIM_CMP(true, !=, __VA_ARGS__)
#define cr_assert_gt(...) SHIM_CMP(true, >, __VA_ARGS__)
#define cr_assert_geq(...) SHIM_CMP(true, >=, __VA_ARGS__)
#define cr_assert_lt(...) SHIM_CMP(true, <, __VA_ARGS__)
#define cr_assert_leq(...) SHIM_CMP(true, <=, __VA_ARGS__)
#define cr_expect_neq(...) SHIM_CMP(false, !=, __VA_ARGS__)
#define cr_expect_gt(...) SHIM_CMP(false, >, __VA_ARGS__)
#define cr_expect_geq(...) SHIM_CMP(false, >=, __VA_ARGS__)
#define cr_expect_lt(...) SHIM_CMP(false, <, __VA_ARGS__)
#define cr_expect_leq(...) SHIM_CMP(false, <=, __VA_ARGS__)
#define cr_assert_not(...) \
	shim_check(!shim_first_(__VA_ARGS__, ""), true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_expect_not(...) \
	shim_check(!shim_first_(__VA_ARGS__, ""), false, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_assert_not_null(...) \
	shim_check(shim_first_(__VA_ARGS__, "") != NULL, true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_assert_fail(...) shim_check(false, true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_expect_null(...) \
	shim_check(shim_first_(__VA_ARGS__, "") == NULL, false, __FILE__, __LINE__, #__VA_ARGS__)
/* |a - b| <= eps, and two strings equal */
#define shim_float_eq_(a, b, eps, ...) (fabs((double)(a) - (double)(b)) <= (eps))
#define cr_assert_float_eq(...) \
	shim_check(shim_float_eq_(__VA_ARGS__, ""), true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_expect_float_eq(...) \
	shim_check(shim_float_eq_(__VA_ARGS__, ""), false, __FILE__, __LINE__, #__VA_ARGS__)
#define shim_str_eq_(a, b, ...) (strcmp((a), (b)) == 0)
#define cr_assert_str_eq(...) \
	shim_check(shim_str_eq_(__VA_ARGS__, ""), true, __FILE__, __LINE__, #__VA_ARGS__)
#define cr_expect_str_eq(...) \
	shim_check(shim_str_eq_(__VA_ARGS__, ""), false, __FILE__, __LINE__, #__VA_ARGS__)

#endif /* RTL_TAP_SHIM_H */
