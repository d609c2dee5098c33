// SPDX-License-Identifier: MIT
/*
 * rtl_cli: the command-line plumbing the apps share.
 *
 * Every app parses its options with getopt_long (opterr = 0, a leading ':'
 * in the option string) and words its own errors, so that a bad flag or
 * value is named and the exit status is 2 (docs/style.md, "Apps are small
 * drivers"). What was written again in each app lives here: strict number
 * parsing, CPU-style lists, the getopt error cases, stray operands, the one
 * wording of a usage error, --version, and the SIGINT/SIGTERM hook.
 *
 * Two layers: cli_parse_*() only parse and return 0 or -errno (for an
 * app that words its own reason); cli_u64() and cli_double() parse
 * and, on failure, print the generic reason. The reporting functions print
 * one line to stderr, "PROG: ...; see PROG --help", and return
 * CLI_EXIT_USAGE, so a parser can end with `return cli_...(...)`.
 *
 * Internal to apps/ (a static library, not part of librtloop). Not RT-safe:
 * for option parsing before the loop starts.
 */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The exit status of a usage error, as every app documents it. */
#define CLI_EXIT_USAGE 2

/* What an app's parse() returns to go on running: anything else is the
 * exit status to stop with (after --help, --version or a usage error). */
#define CLI_RUN (-1)

/*
 * Parse @s as a decimal integer in [@min, @max] into @out. The whole string
 * must be digits: no sign, no space, no base prefix, no suffix.
 * Returns 0, -EINVAL (not such an integer) or -ERANGE (outside the range,
 * or past UINT64_MAX). @out is written only on success.
 */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * Parse @s as a finite floating-point number (strtod syntax) in [@min, @max]
 * into @out; "nan" and "inf" are refused.
 * Returns 0, -EINVAL (not a finite number) or -ERANGE (outside the range).
 * @out is written only on success.
 */
int cli_parse_double(const char *s, double min, double max, double *out);

/*
 * The index of @s in @names[0..n), or -1: for options that take one of a
 * few words (--mode threads, --rt off), mapped onto an enum in that order.
 */
int cli_lookup(const char *s, const char *const *names, int n);

/*
 * Parse a comma-separated list of decimal integers, each at most @max
 * ("0,1" or "2,3,3", as --cpus takes), into @v[0..n). The list must hold
 * @min_n to @max_n numbers, with no empty element and no spaces.
 * Returns the count n, or -EINVAL. @v may be written on failure.
 */
int cli_parse_list(const char *s, uint64_t max, uint64_t *v, int min_n, int max_n);

/*
 * Print "PROG: MESSAGE; see PROG --help" (MESSAGE from @fmt) to stderr.
 * Returns CLI_EXIT_USAGE.
 */
int cli_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Print "PROG: bad FLAG 'VALUE': WHY; see PROG --help" to stderr.
 * Returns CLI_EXIT_USAGE.
 */
int cli_bad_value(const char *prog, const char *flag, const char *value, const char *why);

/*
 * cli_parse_u64() for option @flag: on failure prints, through
 * cli_bad_value(), "not an integer" or "out of range [MIN, MAX]".
 * Returns 0 or CLI_EXIT_USAGE.
 */
int cli_u64(const char *prog, const char *flag, const char *s, uint64_t min, uint64_t max,
	    uint64_t *out);

/*
 * cli_parse_double() for option @flag: on failure prints "not a number"
 * or "out of range [MIN, MAX]". Returns 0 or CLI_EXIT_USAGE.
 */
int cli_double(const char *prog, const char *flag, const char *s, double min, double max,
	       double *out);

/*
 * Report getopt_long()'s error return @c (with opterr = 0 and a leading ':'
 * in the option string), naming the flag from optopt, optind and @argv:
 * ':' "option '--x' needs an argument"; '?' "unknown option '-x'" (or
 * '--x'), or "option '--x=V' takes no argument". Returns CLI_EXIT_USAGE.
 */
int cli_getopt_error(const char *prog, int c, char **argv);

/*
 * Refuse operands: with @first < @argc, print "unexpected argument
 * 'ARGV[FIRST]'" and return CLI_EXIT_USAGE; otherwise return 0.
 * Pass optind after the getopt loop.
 */
int cli_extra_args(const char *prog, int first, int argc, char **argv);

/*
 * The answer to --version (and -V): print "PROG (rtloop) VERSION" to stdout,
 * VERSION being RTL_VERSION_STRING of <rtloop/version.h>, and, should the
 * library linked report another one (rtl_version()), ", library VERSION"
 * after it. Returns 0, the exit status of --version, or 1 if stdout cannot
 * be written (a full disk, a closed pipe).
 */
int cli_version(const char *prog);

/*
 * Call @handler on SIGINT and SIGTERM (sigaction, empty mask, no flags: a
 * blocking call is interrupted). @handler must be async-signal-safe; the
 * apps' handlers set a flag or call a stop function that is.
 * Returns 0 or -errno.
 */
int cli_on_stop_signals(void (*handler)(int));

struct rtl_telemetry;

/* --telemetry NAME's lines of an app's --help. */
#define CLI_TELEMETRY_HELP                                                                  \
	"      --telemetry NAME    publish each step's values, the counters and the\n"      \
	"                          latency histograms as /dev/shm/rtloop-NAME, for\n"       \
	"                          rtloop-view NAME (a live page), PlotJuggler or Python\n" \
	"                          (docs/telemetry.md)\n"

/*
 * --telemetry NAME: create the loop's telemetry /dev/shm/rtloop-@name
 * (<rtloop/telemetry.h>), shown as @label, replacing an object whose
 * producer has ended, and say on stderr how to watch it. NULL @name: none
 * (*@out = NULL). Returns CLI_RUN, or the exit status to stop with, the
 * reason printed: CLI_EXIT_USAGE for a name the format refuses, 1 when the
 * object cannot be made (another producer runs under that name: its
 * reason names the fix).
 */
int cli_telemetry(const char *prog, const char *name, const char *label,
		  struct rtl_telemetry **out);

/*
 * The option table. An app describes its options once, as rows of
 * struct cli_opt ending in CLI_END, and cli_next() runs getopt_long over
 * them: it builds the option string and the long-option array from the
 * rows, parses and range-checks the values the rows store themselves
 * (CLI_FLAG, CLI_TEXT, CLI_UINT, CLI_REAL, CLI_CHOICE), answers --help and --version,
 * words every usage error, and hands the caller only the options its own
 * switch must handle (CLI_CASE, CLI_CASE_ARG). One row per option: the
 * option string, the long name, the parse and its message cannot drift
 * apart, and no app writes the getopt loop's common cases again.
 */
enum cli_opt_kind {
	CLI_OPT_END = 0,
	CLI_OPT_CASE,	 /* returned to the caller, optarg set if it takes one */
	CLI_OPT_FLAG,	 /* no argument: sets a bool */
	CLI_OPT_TEXT,	 /* a non-empty string, stored as a const char * */
	CLI_OPT_UINT,	 /* an integer in [min, max], stored in an unsigned */
	CLI_OPT_REAL,	 /* a finite number in [min, max], stored in a double */
	CLI_OPT_CHOICE,	 /* one of n words, its index stored in an integer */
	CLI_OPT_HELP,	 /* prints the parser's usage to stdout, stops with 0 */
	CLI_OPT_VERSION, /* prints cli_version(), stops with its status */
};

struct cli_opt {
	int key;	  /* the short letter, or a value >= 256 for a long-only one */
	const char *name; /* the long name, without "--" */
	enum cli_opt_kind kind;
	bool arg;		  /* CLI_OPT_CASE: takes an argument */
	void *dst;		  /* where FLAG, TEXT, UINT and REAL store */
	size_t dst_size;	  /* UINT: 1, 2, 4 or 8 bytes */
	uint64_t umin, umax;	  /* UINT: the accepted range */
	double min, max;	  /* REAL: the accepted range */
	const char *const *names; /* CHOICE: the words, in the order of their index */
	int n_names;
	const char *why; /* UINT, REAL, CHOICE: the reason a bad value gets, or NULL */
};

/* @p must have the type named: the conditional makes the compiler check it. */
#define CLI__PTR(type, p) ((void *)(1 ? (p) : (type *)0))

#define CLI_CASE(key_, name_)                                        \
	{                                                            \
		.key = (key_), .name = (name_), .kind = CLI_OPT_CASE \
	}
#define CLI_CASE_ARG(key_, name_)                                                 \
	{                                                                         \
		.key = (key_), .name = (name_), .kind = CLI_OPT_CASE, .arg = true \
	}
#define CLI_FLAG(key_, name_, p)                                                               \
	{                                                                                      \
		.key = (key_), .name = (name_), .kind = CLI_OPT_FLAG, .dst = CLI__PTR(bool, p) \
	}
#define CLI_TEXT(key_, name_, p)                                      \
	{                                                             \
		.key = (key_), .name = (name_), .kind = CLI_OPT_TEXT, \
		.dst = CLI__PTR(const char *, p)                      \
	}
/* @p points to any unsigned integer (or to a non-negative int within @hi). */
#define CLI_UINT(key_, name_, p, lo, hi, why_)                                            \
	{                                                                                 \
		.key = (key_), .name = (name_), .kind = CLI_OPT_UINT, .dst = (void *)(p), \
		.dst_size = sizeof(*(p)), .umin = (lo), .umax = (hi), .why = (why_)       \
	}
#define CLI_REAL(key_, name_, p, lo, hi, why_)                                                    \
	{                                                                                         \
		.key = (key_), .name = (name_), .kind = CLI_OPT_REAL, .dst = CLI__PTR(double, p), \
		.min = (lo), .max = (hi), .why = (why_)                                           \
	}
/* @p points to an integer or an enum (the words in the enum's order). */
#define CLI_CHOICE(key_, name_, p, names_, n, why_)                                         \
	{                                                                                   \
		.key = (key_), .name = (name_), .kind = CLI_OPT_CHOICE, .dst = (void *)(p), \
		.dst_size = sizeof(*(p)), .names = (names_), .n_names = (n), .why = (why_)  \
	}
#define CLI_HELP                                                 \
	{                                                        \
		.key = 'h', .name = "help", .kind = CLI_OPT_HELP \
	}
#define CLI_VERSION                                                    \
	{                                                              \
		.key = 'V', .name = "version", .kind = CLI_OPT_VERSION \
	}
#define CLI_END                     \
	{                           \
		.kind = CLI_OPT_END \
	}

/* The most rows a table may have (CLI_END not counted). */
#define CLI_MAX_OPTS 96

struct cli_parser {
	const char *prog;
	const struct cli_opt *opts;
	void (*usage)(FILE *out); /* for CLI_HELP */
	bool stop_at_operand;	  /* '+': options end at the first operand */
	int status;		  /* after cli_next() < 0: the exit status */
	/* Built by the first cli_next() from @opts. */
	bool built;
	const struct cli_opt *row; /* the row of the option last returned */
	struct option longopts[CLI_MAX_OPTS + 1];
	char optstring[3 * CLI_MAX_OPTS + 3];
};

/*
 * The next option of @argv that the caller must handle. Set prog, opts,
 * usage (if a row is CLI_HELP) and stop_at_operand in @p first, with
 * optind at the first word to parse (getopt's own state: set optind = 0
 * to parse a new vector); the other members are cli_next()'s.
 * Returns the key of a CLI_CASE or CLI_CASE_ARG row (optarg holds its
 * argument), 0 when the options end (optind is then the first operand),
 * or -1 when the caller must stop and exit with p->status: 0 after --help
 * or --version, 1 if their output could not be written, CLI_EXIT_USAGE
 * after a usage error, which is printed. A table the parser cannot take
 * (too many rows, a key used twice, an unknown size) is a bug of the app:
 * its message names the row and the status is 70 (EX_SOFTWARE).
 */
int cli_next(struct cli_parser *p, int argc, char **argv);

/* The long name of the option cli_next() returned last, as "--name". */
const char *cli_flag(const struct cli_parser *p, char *buf, size_t cap);

#endif /* CLI_H */
