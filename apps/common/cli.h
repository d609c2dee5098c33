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

#include <stdbool.h>
#include <stdint.h>

/* The exit status of a usage error, as every app documents it. */
#define CLI_EXIT_USAGE 2

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

#endif /* CLI_H */
