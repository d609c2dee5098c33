// SPDX-License-Identifier: MIT
/* The apps' shared command-line helpers (apps/common/cli.h): strict number
 * and list parsing, the wording of getopt's error cases, --version. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>

#include <rtloop/version.h>

#include "cli.h"

Test(cli, lookup_finds_the_exact_word_or_none)
{
	static const char *const words[] = { "auto", "threads", "inline" };

	cr_expect_eq(cli_lookup("auto", words, 3), 0);
	cr_expect_eq(cli_lookup("inline", words, 3), 2);
	cr_expect_eq(cli_lookup("Inline", words, 3), -1, "case matters");
	cr_expect_eq(cli_lookup("inlin", words, 3), -1, "no prefixes");
	cr_expect_eq(cli_lookup("", words, 3), -1);
	cr_expect_eq(cli_lookup(NULL, words, 3), -1);
	cr_expect_eq(cli_lookup("inline", words, 2), -1, "only the first n");
}

Test(cli, u64_takes_plain_decimal_in_range)
{
	uint64_t v = 0;

	cr_assert_eq(cli_parse_u64("0", 0, 10, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(cli_parse_u64("10", 0, 10, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(cli_parse_u64("010", 0, 100, &v), 0);
	cr_assert_eq(v, 10, "decimal, never octal");
}

Test(cli, u64_refuses_signs_spaces_prefixes_and_junk)
{
	const char *bad[] = { "", "-1", "+1", " 1", "1 ", "0x10", "1k", "1.0", "x" };
	uint64_t v = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(cli_parse_u64(bad[i], 0, UINT64_MAX, &v), -EINVAL, "'%s'", bad[i]);
	cr_assert_eq(v, 42, "not written on failure");
}

Test(cli, u64_out_of_range_is_erange)
{
	uint64_t v = 42;

	cr_assert_eq(cli_parse_u64("0", 1, 10, &v), -ERANGE);
	cr_assert_eq(cli_parse_u64("11", 1, 10, &v), -ERANGE);
	cr_assert_eq(cli_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	cr_assert_eq(v, 42);
}

Test(cli, double_takes_finite_numbers_in_range)
{
	double d = 0;

	cr_assert_eq(cli_parse_double("0.5", 0, 1, &d), 0);
	cr_assert_float_eq(d, 0.5, 1e-12);
	cr_assert_eq(cli_parse_double("1e3", 0, HUGE_VAL, &d), 0);
	cr_assert_float_eq(d, 1000.0, 1e-9);
	cr_assert_eq(cli_parse_double("-2", -2, 2, &d), 0);
	cr_assert_float_eq(d, -2.0, 1e-12);
}

Test(cli, double_refuses_junk_nan_inf_and_range)
{
	double d = 7;

	cr_assert_eq(cli_parse_double("", 0, 1, &d), -EINVAL);
	cr_assert_eq(cli_parse_double("soon", 0, 1, &d), -EINVAL);
	cr_assert_eq(cli_parse_double("1s", 0, 1, &d), -EINVAL);
	cr_assert_eq(cli_parse_double("nan", -HUGE_VAL, HUGE_VAL, &d), -EINVAL);
	cr_assert_eq(cli_parse_double("inf", -HUGE_VAL, HUGE_VAL, &d), -EINVAL);
	cr_assert_eq(cli_parse_double("1.5", 0, 1, &d), -ERANGE);
	cr_assert_eq(d, 7);
}

Test(cli, list_counts_and_bounds)
{
	uint64_t v[3];

	cr_assert_eq(cli_parse_list("0,1", 4095, v, 2, 3), 2);
	cr_assert_eq(v[0], 0);
	cr_assert_eq(v[1], 1);
	cr_assert_eq(cli_parse_list("2,3,3", 4095, v, 2, 3), 3);
	cr_assert_eq(v[2], 3);
	cr_assert_eq(cli_parse_list("1", 4095, v, 2, 3), -EINVAL, "too few");
	cr_assert_eq(cli_parse_list("1,2,3,4", 4095, v, 2, 3), -EINVAL, "too many");
	cr_assert_eq(cli_parse_list("0,4096", 4095, v, 2, 3), -EINVAL, "above max");
	cr_assert_eq(cli_parse_list("0,x", 4095, v, 2, 3), -EINVAL);
	cr_assert_eq(cli_parse_list("0,", 4095, v, 2, 3), -EINVAL);
	cr_assert_eq(cli_parse_list(",1", 4095, v, 2, 3), -EINVAL);
	cr_assert_eq(cli_parse_list("0;1", 4095, v, 2, 3), -EINVAL);
	cr_assert_eq(cli_parse_list("0,-1", 4095, v, 2, 3), -EINVAL);
}

Test(cli, bad_value_names_flag_and_value, .init = cr_redirect_stderr)
{
	uint64_t v;
	double d;

	cr_assert_eq(cli_u64("app", "--port", "70000", 1, 65535, &v), CLI_EXIT_USAGE);
	cr_assert_eq(cli_double("app", "--duration", "soon", 0.1, 10, &d), CLI_EXIT_USAGE);
	cr_assert_eq(cli_u64("app", "--reps", "3", 1, 9, &v), 0);
	cr_assert_eq(v, 3);
	fflush(stderr);
	cr_assert_stderr_eq_str("app: bad --port '70000': out of range [1, 65535]; see app --help\n"
				"app: bad --duration 'soon': not a number; see app --help\n");
}

Test(cli, version_names_the_program_and_the_project_version, .init = cr_redirect_stdout)
{
	char want[64];

	snprintf(want, sizeof(want), "app (rtloop) %s\n", RTL_VERSION_STRING);
	cr_assert_eq(cli_version("app"), 0);
	fflush(stdout);
	cr_assert_stdout_eq_str(want);
}

/* Runs getopt_long over @argv (opterr 0, leading ':') until its first error
 * and reports it. */
static int first_error(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qd:", longopts, NULL)) != -1)
		if (c == ':' || c == '?')
			return cli_getopt_error("app", c, argv);
	return cli_extra_args("app", optind, argc, argv);
}

Test(cli, getopt_errors_name_the_flag, .init = cr_redirect_stderr)
{
	char *a1[] = { "app", "--bogus", NULL };
	char *a2[] = { "app", "-x", NULL };
	char *a3[] = { "app", "-xq", NULL };
	char *a4[] = { "app", "--quick", "-qx", NULL };
	char *a5[] = { "app", "--duration", NULL };
	char *a6[] = { "app", "--quick=1", NULL };
	char *a7[] = { "app", "-q", "stray", NULL };
	char *a8[] = { "app", "-q", "-d", "1", NULL };

	cr_assert_eq(first_error(2, a1), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(2, a2), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(2, a3), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(3, a4), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(2, a5), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(2, a6), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(3, a7), CLI_EXIT_USAGE);
	cr_assert_eq(first_error(4, a8), 0);
	fflush(stderr);
	cr_assert_stderr_eq_str("app: unknown option '--bogus'; see app --help\n"
				"app: unknown option '-x'; see app --help\n"
				"app: unknown option '-x'; see app --help\n"
				"app: unknown option '-x'; see app --help\n"
				"app: option '--duration' needs an argument; see app --help\n"
				"app: option '--quick=1' takes no argument; see app --help\n"
				"app: unexpected argument 'stray'; see app --help\n");
}
