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

#include <rtloop/telemetry.h>
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

/* The reason of a failed cli_parse_*() @err: "out of range @range", or
 * @not_what ("not an integer"). Returns CLI_EXIT_USAGE. */
static int bad_number(const char *prog, const char *flag, const char *s, int err, const char *range,
		      const char *not_what)
{
	char why[96];

	if (err == -ERANGE)
		snprintf(why, sizeof(why), "out of range %s", range);
	else
		snprintf(why, sizeof(why), "%s", not_what);
	return cli_bad_value(prog, flag, s, why);
}

int cli_u64(const char *prog, const char *flag, const char *s, uint64_t min, uint64_t max,
	    uint64_t *out)
{
	char range[48];
	int err = cli_parse_u64(s, min, max, out);

	snprintf(range, sizeof(range), "[%" PRIu64 ", %" PRIu64 "]", min, max);
	return err ? bad_number(prog, flag, s, err, range, "not an integer") : 0;
}

int cli_double(const char *prog, const char *flag, const char *s, double min, double max,
	       double *out)
{
	char range[48];
	int err = cli_parse_double(s, min, max, out);

	snprintf(range, sizeof(range), "[%g, %g]", min, max);
	return err ? bad_number(prog, flag, s, err, range, "not a number") : 0;
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

int cli_telemetry(const char *prog, const char *name, const char *label, struct rtl_telemetry **out)
{
	struct rtl_telemetry_config tc = { .size = sizeof(tc), .name = name, .label = label };
	struct rtl_error err = { 0 };
	int ret;

	*out = NULL;
	if (!name)
		return CLI_RUN;
	ret = rtl_telemetry_create(out, &tc, &err);
	if (ret == -EINVAL)
		return cli_bad_value(prog, "--telemetry", name,
				     "expected 1 to 48 of A-Z a-z 0-9 _ . -");
	if (ret < 0) {
		fprintf(stderr, "%s: --telemetry %s: %s\n", prog, name, err.msg);
		return 1;
	}
	fprintf(stderr, "%s: telemetry in /dev/shm/rtloop-%s; watch it live: rtloop-view %s\n",
		prog, name, name);
	return CLI_RUN;
}

/* ---- the option table ------------------------------------------------------------ */

const char *cli_flag(const struct cli_parser *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "--%s", p->row && p->row->name ? p->row->name : "?");
	return buf;
}

static bool takes_arg(const struct cli_opt *o)
{
	switch (o->kind) {
	case CLI_OPT_CASE:
		return o->arg;
	case CLI_OPT_TEXT:
	case CLI_OPT_UINT:
	case CLI_OPT_REAL:
	case CLI_OPT_CHOICE:
		return true;
	default:
		return false;
	}
}

/* The table's bug, named: the app cannot run with it. */
static int bad_table(struct cli_parser *p, const struct cli_opt *o, const char *what)
{
	fprintf(stderr, "%s: bug: option table row '--%s': %s\n", p->prog,
		o && o->name ? o->name : "?", what);
	p->status = 70;
	return -1;
}

/* Fill the option string and the long options from the rows, once. */
static int build(struct cli_parser *p)
{
	char *s = p->optstring;
	size_t n = 0;

	*s++ = p->stop_at_operand ? '+' : ':';
	if (p->stop_at_operand)
		*s++ = ':';
	for (const struct cli_opt *o = p->opts; o->kind != CLI_OPT_END; o++, n++) {
		if (n == CLI_MAX_OPTS)
			return bad_table(p, o, "more rows than CLI_MAX_OPTS");
		if (!o->name || o->key <= 0 || o->key == ':' || o->key == '?' ||
		    (o->key >= 128 && o->key < 256))
			return bad_table(p, o, "needs a long name and a key (a letter or >= 256)");
		if ((o->kind == CLI_OPT_UINT || o->kind == CLI_OPT_CHOICE) && o->dst_size != 1 &&
		    o->dst_size != 2 && o->dst_size != 4 && o->dst_size != 8)
			return bad_table(p, o, "stores into an integer of unknown size");
		if (o->kind == CLI_OPT_HELP && !p->usage)
			return bad_table(p, o, "CLI_HELP without a usage function");
		for (const struct cli_opt *q = p->opts; q < o; q++)
			if (q->key == o->key || strcmp(q->name, o->name) == 0)
				return bad_table(p, o, "its key or name is used twice");
		p->longopts[n] =
			(struct option){ o->name, takes_arg(o) ? required_argument : no_argument,
					 NULL, o->key };
		if (o->key < 128) {
			*s++ = (char)o->key;
			if (takes_arg(o))
				*s++ = ':';
		}
	}
	*s = '\0';
	p->longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	p->built = true;
	return 0;
}

static void store_uint(void *dst, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)dst = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)dst = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)dst = (uint32_t)v;
		break;
	default:
		*(uint64_t *)dst = v;
		break;
	}
}

/* A word that is none of row @o's: its reason, or "not A, B or C". */
static void choice_error(struct cli_parser *p, const struct cli_opt *o, const char *flag)
{
	char why[256];
	size_t len = 0;

	if (o->why) {
		cli_bad_value(p->prog, flag, optarg, o->why);
		return;
	}
	len = (size_t)snprintf(why, sizeof(why), "not");
	for (int i = 0; i < o->n_names && len < sizeof(why); i++)
		len += (size_t)snprintf(why + len, sizeof(why) - len, "%s %s",
					i == 0		      ? ""
					: i == o->n_names - 1 ? " or"
							      : ",",
					o->names[i]);
	cli_bad_value(p->prog, flag, optarg, why);
}

/* A number cli_parse_*() refused with @err: the row's reason, or the
 * generic one of cli_u64() and cli_double(). Returns -1. */
static int number_error(struct cli_parser *p, const struct cli_opt *o, const char *flag, int err)
{
	bool integer = o->kind == CLI_OPT_UINT;
	char range[48];

	if (o->why) {
		cli_bad_value(p->prog, flag, optarg, o->why);
		return -1;
	}
	if (integer)
		snprintf(range, sizeof(range), "[%" PRIu64 ", %" PRIu64 "]", o->umin, o->umax);
	else
		snprintf(range, sizeof(range), "[%g, %g]", o->min, o->max);
	bad_number(p->prog, flag, optarg, err, range, integer ? "not an integer" : "not a number");
	return -1;
}

/* Store the value of row @o from optarg. 0, or -1 with the error printed. */
static int store(struct cli_parser *p, const struct cli_opt *o)
{
	char flag[80];
	uint64_t u;
	double d;
	int ret;

	cli_flag(p, flag, sizeof(flag));
	switch (o->kind) {
	case CLI_OPT_FLAG:
		*(bool *)o->dst = true;
		return 0;
	case CLI_OPT_TEXT:
		if (!optarg[0])
			return cli_bad_value(p->prog, flag, optarg, "empty"), -1;
		*(const char **)o->dst = optarg;
		return 0;
	case CLI_OPT_UINT:
		ret = cli_parse_u64(optarg, o->umin, o->umax, &u);
		if (ret)
			return number_error(p, o, flag, ret);
		store_uint(o->dst, o->dst_size, u);
		return 0;
	case CLI_OPT_REAL:
		ret = cli_parse_double(optarg, o->min, o->max, &d);
		if (ret)
			return number_error(p, o, flag, ret);
		*(double *)o->dst = d;
		return 0;
	case CLI_OPT_CHOICE:
		ret = cli_lookup(optarg, o->names, o->n_names);
		if (ret < 0)
			return choice_error(p, o, flag), -1;
		store_uint(o->dst, o->dst_size, (uint64_t)ret);
		return 0;
	default:
		return 0;
	}
}

int cli_next(struct cli_parser *p, int argc, char **argv)
{
	int c;

	p->status = CLI_EXIT_USAGE;
	if (!p->built && build(p) < 0)
		return -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, p->optstring, p->longopts, NULL)) != -1) {
		const struct cli_opt *o = p->opts;

		while (o->kind != CLI_OPT_END && o->key != c)
			o++;
		if (o->kind == CLI_OPT_END) {
			cli_getopt_error(p->prog, c, argv);
			return -1;
		}
		p->row = o;
		switch (o->kind) {
		case CLI_OPT_CASE:
			return c;
		case CLI_OPT_HELP:
			p->usage(stdout);
			p->status = fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
			return -1;
		case CLI_OPT_VERSION:
			p->status = cli_version(p->prog);
			return -1;
		default:
			if (store(p, o) < 0)
				return -1;
		}
	}
	return 0;
}
