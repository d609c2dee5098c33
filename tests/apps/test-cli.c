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

/* ---- the option table ---- */

struct table_opts {
	bool quiet;
	const char *host;
	uint16_t port;
	unsigned reps;
	uint64_t big;
	double gain;
	enum { T_UDP, T_RTDE, T_DRFL } transport;
};

static const char *const transports[] = { "udp", "rtde", "drfl" };

enum { OPT_MODE = 256 };

static void table_usage(FILE *out)
{
	fputs("usage: app [options]\n", out);
}

/* Parses @argv with a table of every kind; returns cli_next()'s last result
 * and, through @cases, the CLI_CASE keys it handed back in order. */
static int run_table(int argc, char **argv, struct table_opts *o, char *cases, int *status)
{
	const struct cli_opt opts[] = {
		CLI_FLAG('q', "quiet", &o->quiet),
		CLI_TEXT('H', "host", &o->host),
		CLI_UINT('p', "port", &o->port, 1, 65535, NULL),
		CLI_UINT('n', "reps", &o->reps, 3, 99, "want 3 to 99 repetitions"),
		CLI_UINT(300, "big", &o->big, 0, UINT64_MAX, NULL),
		CLI_REAL('g', "gain", &o->gain, 0, 10, NULL),
		CLI_CHOICE('t', "transport", &o->transport, transports, 3, NULL),
		CLI_CASE_ARG(OPT_MODE, "mode"),
		CLI_CASE('x', "extra"),
		CLI_HELP,
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = "app", .opts = opts, .usage = table_usage };
	int c;

	optind = 0;
	while ((c = cli_next(&p, argc, argv)) > 0) {
		*cases++ = c == OPT_MODE ? (optarg[0] ? optarg[0] : '!') : (char)c;
		*cases = '\0';
	}
	*status = p.status;
	return c;
}

Test(cli, table_stores_every_kind_and_returns_the_cases)
{
	char *argv[] = { "app",	     "-q",	"--host",
			 "ctl",	     "-p",	"30004",
			 "--reps=7", "--big",	"18446744073709551615",
			 "-g",	     "2.5",	"--mode",
			 "m",	     "-x",	"-t",
			 "drfl",     "operand", NULL };
	struct table_opts o = { 0 };
	char cases[8] = "";
	int status;

	cr_assert_eq(run_table(17, argv, &o, cases, &status), 0);
	cr_assert(o.quiet);
	cr_assert_str_eq(o.host, "ctl");
	cr_assert_eq(o.port, 30004);
	cr_assert_eq(o.reps, 7);
	cr_assert_eq(o.big, UINT64_MAX);
	cr_assert_eq(o.gain, 2.5);
	cr_assert_eq(o.transport, T_DRFL);
	cr_assert_str_eq(cases, "mx", "the CASE rows come back, in order");
	cr_assert_eq(optind, 16, "optind is at the operand");
}

Test(cli, table_refuses_bad_values_with_the_flag_named, .init = cr_redirect_stderr)
{
	char *a1[] = { "app", "--port", "0", NULL };
	char *a2[] = { "app", "-n", "100", NULL };
	char *a3[] = { "app", "--host", "", NULL };
	char *a4[] = { "app", "-g", "nan", NULL };
	char *a5[] = { "app", "--bogus", NULL };
	char *a6[] = { "app", "--quiet=yes", NULL };
	char *a7[] = { "app", "--mode", NULL };
	char *a8[] = { "app", "-t", "tcp", NULL };
	struct table_opts o = { .port = 9 };
	char cases[8];
	int status;

	cr_assert_eq(run_table(3, a1, &o, cases, &status), -1);
	cr_assert_eq(status, CLI_EXIT_USAGE);
	cr_assert_eq(o.port, 9, "not written on failure");
	cr_assert_eq(run_table(3, a2, &o, cases, &status), -1);
	cr_assert_eq(run_table(3, a3, &o, cases, &status), -1);
	cr_assert(o.host == NULL);
	cr_assert_eq(run_table(3, a4, &o, cases, &status), -1);
	cr_assert_eq(run_table(2, a5, &o, cases, &status), -1);
	cr_assert_eq(run_table(2, a6, &o, cases, &status), -1);
	cr_assert_eq(run_table(2, a7, &o, cases, &status), -1);
	cr_assert_eq(status, CLI_EXIT_USAGE);
	cr_assert_eq(run_table(3, a8, &o, cases, &status), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"app: bad --port '0': out of range [1, 65535]; see app --help\n"
		"app: bad --reps '100': want 3 to 99 repetitions; see app --help\n"
		"app: bad --host '': empty; see app --help\n"
		"app: bad --gain 'nan': not a number; see app --help\n"
		"app: unknown option '--bogus'; see app --help\n"
		"app: option '--quiet=yes' takes no argument; see app --help\n"
		"app: option '--mode' needs an argument; see app --help\n"
		"app: bad --transport 'tcp': not udp, rtde or drfl; see app --help\n");
}

Test(cli, table_answers_help_and_version, .init = cr_redirect_stdout)
{
	char *a1[] = { "app", "-q", "--help", "-p", "0", NULL };
	char *a2[] = { "app", "-V", NULL };
	struct table_opts o = { 0 };
	char cases[8], want[96];
	int status = -5;

	cr_assert_eq(run_table(5, a1, &o, cases, &status), -1);
	cr_assert_eq(status, 0, "--help stops with success, before the bad port");
	cr_assert_eq(run_table(2, a2, &o, cases, &status), -1);
	cr_assert_eq(status, 0);
	fflush(stdout);
	snprintf(want, sizeof(want), "usage: app [options]\napp (rtloop) %s\n", RTL_VERSION_STRING);
	cr_assert_stdout_eq_str(want);
}

Test(cli, table_stops_at_the_operand_when_asked)
{
	const struct cli_opt opts[] = { CLI_CASE('v', "verbose"), CLI_END };
	struct cli_parser p = { .prog = "app", .opts = opts, .stop_at_operand = true };
	char *argv[] = { "app", "-v", "record", "-v", NULL };

	optind = 0;
	cr_assert_eq(cli_next(&p, 4, argv), 'v');
	cr_assert_eq(cli_next(&p, 4, argv), 0);
	cr_assert_eq(optind, 2, "the subcommand's -v is left to it");
}

Test(cli, table_with_a_bug_is_named_not_run, .init = cr_redirect_stderr)
{
	bool a = false, b = false;
	const struct cli_opt twice[] = { CLI_FLAG('a', "all", &a), CLI_FLAG('a', "any", &b),
					 CLI_END };
	const struct cli_opt help_alone[] = { CLI_HELP, CLI_END };
	struct cli_parser p1 = { .prog = "app", .opts = twice };
	struct cli_parser p2 = { .prog = "app", .opts = help_alone };
	char *argv[] = { "app", "-a", NULL };

	optind = 0;
	cr_assert_eq(cli_next(&p1, 2, argv), -1);
	cr_assert_eq(p1.status, 70);
	cr_assert(!a, "nothing parsed with a broken table");
	optind = 0;
	cr_assert_eq(cli_next(&p2, 2, argv), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"app: bug: option table row '--any': its key or name is used twice\n"
		"app: bug: option table row '--help': CLI_HELP without a usage function\n");
}
