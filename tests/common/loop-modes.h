/* SPDX-License-Identifier: MIT */
/*
 * Tests that hold in both loop modes: RTL_TEST_BOTH_MODES(SUITE, ISUITE,
 * NAME, FLAG) defines Test(SUITE, NAME), which runs NAME() with FLAG false
 * (rx thread -> ring -> worker), and Test(ISUITE, NAME), which runs it with
 * FLAG true (rtl_loop_config.inline_step). Include after the Criterion (or
 * TAP shim) header.
 */
#ifndef RTL_TEST_LOOP_MODES_H
#define RTL_TEST_LOOP_MODES_H

#define RTL_TEST_BOTH_MODES(suite, isuite, name, flag) \
	Test(suite, name)                              \
	{                                              \
		flag = false;                          \
		name();                                \
	}                                              \
	Test(isuite, name)                             \
	{                                              \
		flag = true;                           \
		name();                                \
	}

/*
 * The poisoning tests' identity: every step that wrote a NaN or an Inf was
 * rejected (at most the last one may not have reached its send before the
 * stop), and no other step was.
 */
#define RTL_TEST_EXPECT_POISON_REJECTED(rejected, poisoned)                                    \
	do {                                                                                   \
		cr_expect_geq((rejected), (poisoned)-1, "%llu rejected of %llu poisoned",      \
			      (unsigned long long)(rejected), (unsigned long long)(poisoned)); \
		cr_expect_leq((rejected), (poisoned));                                         \
	} while (0)

#endif /* RTL_TEST_LOOP_MODES_H */
