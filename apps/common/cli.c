// SPDX-License-Identifier: MIT
/*
 * rtl_cli: the command-line plumbing the apps share (see cli.h).
 *
 * The number parsers are strict on purpose: strtoull() alone takes "-1"
 * (and wraps it), " 7", "0x10" with base 0, and "" as 0, and strtod() takes
 * "nan"; an option value that is not plainly what the help says is a usage
 * error that names it. The getopt reporter works from getopt_long()'s
 * globals, because with opterr = 0 they are all that is left of the error:
 * optopt holds the short option (or the val of a long option given an
 * argument it does not take, 0 for an unknown long option) and optind has
 * moved past the offending word unless a short option sits inside a group.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/version.h>

/* One decimal integer at @s, ending at *@end. 0, -EINVAL or -ERANGE. */
static int parse_digits(const char *s, char **end, uint64_t *out)
{
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	uint64_t v;
	int err = parse_digits(s, &end, &v);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_parse_list(const char *s, uint64_t max, uint64_t *v, int min_n, int max_n)
{
	char *end;
	int n = 0;

	for (;;) {
		if (n == max_n || parse_digits(s, &end, &v[n]) || v[n] > max)
			return -EINVAL;
		n++;
		if (!*end)
			break;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
	return n < min_n ? -EINVAL : n;
}

int cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see %s --help\n", prog);
	return CLI_EXIT_USAGE;
}

int cli_lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (s && !strcmp(s, names[i]))
			return i;
	return -1;
}

int cli_bad_value(const char *prog, const char *flag, const char *value, const char *why)
{
	return cli_usage_error(prog, "bad %s '%s': %s", flag, value ? value : "", why);
}

int cli_u64(const char *prog, const char *flag, const char *s, uint64_t min, uint64_t max,
	    uint64_t *out)
{
	char why[96];
	int err = cli_parse_u64(s, min, max, out);

	if (!err)
		return 0;
	if (err == -ERANGE)
		snprintf(why, sizeof(why), "out of range [%" PRIu64 ", %" PRIu64 "]", min, max);
	else
		snprintf(why, sizeof(why), "not an integer");
	return cli_bad_value(prog, flag, s, why);
}

int cli_double(const char *prog, const char *flag, const char *s, double min, double max,
	       double *out)
{
	char why[96];
	int err = cli_parse_double(s, min, max, out);

	if (!err)
		return 0;
	if (err == -ERANGE)
		snprintf(why, sizeof(why), "out of range [%g, %g]", min, max);
	else
		snprintf(why, sizeof(why), "not a number");
	return cli_bad_value(prog, flag, s, why);
}

/* Is @arg a group of short options ("-x", "-qx") that holds @ch? */
static bool in_short_group(const char *arg, int ch)
{
	return arg && arg[0] == '-' && arg[1] && arg[1] != '-' && strchr(arg + 1, ch);
}

int cli_getopt_error(const char *prog, int c, char **argv)
{
	const char *word = argv[optind - 1];

	if (c == ':')
		return cli_usage_error(prog, "option '%s' needs an argument", word);
	/* A short option: its group is the word before optind, or, when the
	 * group goes on after it, the word at optind. */
	if (optopt > 0 && optopt < 128 &&
	    (in_short_group(word, optopt) || in_short_group(argv[optind], optopt)))
		return cli_usage_error(prog, "unknown option '-%c'", optopt);
	if (optopt)
		return cli_usage_error(prog, "option '%s' takes no argument", word);
	return cli_usage_error(prog, "unknown option '%s'", word);
}

int cli_extra_args(const char *prog, int first, int argc, char **argv)
{
	if (first >= argc)
		return 0;
	return cli_usage_error(prog, "unexpected argument '%s'", argv[first]);
}

int cli_version(const char *prog)
{
	const char *lib = rtl_version();

	if (strcmp(lib, RTL_VERSION_STRING) != 0)
		printf("%s (rtloop) %s, library %s\n", prog, RTL_VERSION_STRING, lib);
	else
		printf("%s (rtloop) %s\n", prog, RTL_VERSION_STRING);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int cli_on_stop_signals(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	return 0;
}
