// SPDX-License-Identifier: MIT
/*
 * rtloop-trace: record an LTTng trace of an rtloop program, and tell where
 * the time of each frame went.
 *
 *   rtloop-trace record [--output DIR] [--] COMMAND [ARG...]
 *   rtloop-trace report [--json] [--worst N] [--pid PID] [--plot FILE.png] DIR
 *
 * record wraps one command in an LTTng session that enables the rtloop
 * provider (record.c). report reads the trace with libbabeltrace2 (ctf.c),
 * pairs the events of each frame by (vpid, seq) and measures the six
 * intervals between the stages of the loop plus the end to end time
 * (analysis.c), then prints percentiles, the slowest frames with their
 * breakdown and the losses, as text or one JSON object, and optionally a
 * PNG of the histograms (plot.c). This file only parses and validates the
 * options and hands over: the usual driver of docs/style.md, with one option
 * table (cli.h) for the global options and one per subcommand.
 *
 * Exit status: see usage(). Usage errors name the offending flag and exit 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace.h"

#define WORST_MAX 10000

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " RTT_PROG " record [OPTIONS] [--] COMMAND [ARG...]\n"
		"       " RTT_PROG " report [OPTIONS] DIR\n"
		"       " RTT_PROG " --help | record --help | report --help | --version\n"
		"\n"
		"record: run COMMAND in an LTTng session that records the rtloop provider\n"
		"(rtloop:*, with the vpid and vtid contexts), starting a session daemon if none\n"
		"runs; the session is stopped and destroyed when the command ends or on\n"
		"SIGINT/SIGTERM (forwarded to the command).\n"
		"  -o, --output DIR          trace directory, new or empty\n"
		"                            (default ./rtloop-trace-YYYYmmdd-HHMMSS)\n"
		"  -s, --subbuf-size SIZE    channel sub-buffer size (default 4M)\n"
		"  -n, --num-subbuf N        sub-buffers per CPU, a power of two (default 8)\n"
		"  -t, --register-timeout MS LTTNG_UST_REGISTER_TIMEOUT for the command\n"
		"                            (default: the environment's, else 3000)\n"
		"\n"
		"report: read the trace in DIR (libbabeltrace2), pair each frame's events by\n"
		"seq, and print per-stage latency percentiles (count, p50, p99, p99.9, max in\n"
		"us), the slowest frames end to end with their breakdown, and the losses\n"
		"(skipped frames by reason, watchdog, reconnects, frames with missing stages,\n"
		"seq gaps, events the tracer discarded).\n"
		"  -j, --json                one JSON object instead of text\n"
		"  -w, --worst N             how many slowest frames to list (default 5)\n"
		"  -p, --pid PID             only the events of process PID (vpid)\n"
		"  -P, --plot FILE.png       also draw the histograms (log axes) with gnuplot\n"
		"\n"
		"  -h, --help                print this help and exit\n"
		"  -V, --version             (before the subcommand) print the version and exit\n"
		"\n"
		"Exit status: record: the command's (128 + signal if killed), 125 if the\n"
		"recording could not be set up, 126/127 if the command could not be run;\n"
		"report: 0, or 1 if the trace could not be read or the plot drawn;\n"
		"both: 2 on a usage error.\n");
}

/* Messages of a subcommand start "rtloop-trace record: " and point at its
 * --help, which prints the same usage. */
#define RECORD RTT_PROG " record"
#define REPORT RTT_PROG " report"

/* "4M", "262144", "64k": digits and an optional k/M/G suffix, as lttng takes. */
static bool valid_size(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && (s[n] == '\0' || (strchr("kKmMgG", s[n]) && s[n + 1] == '\0'));
}

/* The value of record's -s, -n or -t (@c) into @o: CLI_RUN, or a usage
 * error. -t is checked as a number but kept as text for the environment. */
static int record_value(int c, const char *arg, struct rtt_record_opts *o)
{
	uint64_t v;

	switch (c) {
	case 's':
		if (!valid_size(arg))
			return cli_bad_value(RECORD, "--subbuf-size", arg,
					     "not a size such as 4M or 262144");
		o->subbuf_size = arg;
		break;
	case 'n':
		if (cli_parse_u64(arg, 1, 1u << 20, &v) || (v & (v - 1)))
			return cli_bad_value(RECORD, "--num-subbuf", arg, "not a power of two");
		o->num_subbuf = (unsigned)v;
		break;
	default:
		if (cli_parse_u64(arg, 0, 3600000, &v))
			return cli_bad_value(RECORD, "--register-timeout", arg,
					     "not a count of ms (0..3600000)");
		o->register_timeout = arg;
		break;
	}
	return CLI_RUN;
}

static int cmd_record(int argc, char **argv)
{
	struct rtt_record_opts o = { .subbuf_size = "4M", .num_subbuf = 8 };
	const struct cli_opt opts[] = {
		CLI_HELP,
		CLI_TEXT('o', "output", &o.output),
		CLI_CASE_ARG('s', "subbuf-size"),
		CLI_CASE_ARG('n', "num-subbuf"),
		CLI_CASE_ARG('t', "register-timeout"),
		CLI_END,
	};
	/* Options end at COMMAND, whose own options are not ours. */
	struct cli_parser p = {
		.prog = RECORD, .opts = opts, .usage = usage, .stop_at_operand = true
	};
	int c, ret;

	optind = 0;
	while ((c = cli_next(&p, argc, argv)) > 0) {
		ret = record_value(c, optarg, &o);
		if (ret != CLI_RUN)
			return ret;
	}
	if (c < 0)
		return p.status;
	if (optind >= argc)
		return cli_usage_error(RECORD,
				       "no command given (record [OPTIONS] -- COMMAND [ARG...])");
	o.argv = argv + optind;
	return rtt_record(&o);
}

static int cmd_report(int argc, char **argv)
{
	struct rtt_analysis a;
	const char *dir, *plot = NULL;
	uint64_t worst = 5;
	int64_t pid = -1;
	bool json = false;
	const struct cli_opt opts[] = {
		CLI_HELP,
		CLI_FLAG('j', "json", &json),
		CLI_UINT('w', "worst", &worst, 0, WORST_MAX, NULL),
		CLI_UINT('p', "pid", &pid, 1, INT32_MAX, "not a process id"),
		CLI_TEXT('P', "plot", &plot),
		CLI_END,
	};
	struct cli_parser p = { .prog = REPORT, .opts = opts, .usage = usage };
	char msg[2048];
	int err;

	optind = 0;
	if (cli_next(&p, argc, argv) < 0)
		return p.status;
	if (optind >= argc)
		return cli_usage_error(REPORT, "no trace directory given (report [OPTIONS] DIR)");
	if (argc - optind > 1)
		return cli_extra_args(REPORT, optind + 1, argc, argv);
	dir = argv[optind];

	if (rtt_analysis_init(&a, pid)) {
		fprintf(stderr, RTT_PROG ": out of memory\n");
		return RTT_EXIT_FAIL;
	}
	err = rtt_ctf_read(dir, &a, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, RTT_PROG ": %s\n", msg);
		goto fail;
	}
	err = rtt_analysis_finish(&a, (size_t)worst);
	if (err) {
		fprintf(stderr, RTT_PROG ": %s: %s\n", dir, strerror(-err));
		goto fail;
	}
	if (pid >= 0 && a.events == 0) {
		fprintf(stderr, RTT_PROG ": %s: no event of pid %" PRId64 " in the trace\n", dir,
			pid);
		goto fail;
	}
	err = json ? rtt_report_json(&a, stdout, dir) : rtt_report_text(&a, stdout, dir);
	if (!err && fflush(stdout) != 0)
		err = -errno;
	if (err) {
		fprintf(stderr, RTT_PROG ": cannot write the report: %s\n", strerror(-err));
		goto fail;
	}
	if (plot) {
		char title[PATH_MAX + 32];

		snprintf(title, sizeof(title), RTT_PROG ": %s", dir);
		err = rtt_plot(&a, plot, title, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, RTT_PROG ": %s\n", msg);
			goto fail;
		}
	}
	rtt_analysis_free(&a);
	return RTT_EXIT_OK;
fail:
	rtt_analysis_free(&a);
	return RTT_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	const struct cli_opt opts[] = { CLI_HELP, CLI_VERSION, CLI_END };
	/* Global options end at the subcommand. */
	struct cli_parser p = {
		.prog = RTT_PROG, .opts = opts, .usage = usage, .stop_at_operand = true
	};
	const char *sub;

	if (cli_next(&p, argc, argv) < 0)
		return p.status;
	if (optind >= argc)
		return cli_usage_error(RTT_PROG, "no subcommand given (record or report)");
	sub = argv[optind];
	/* Each subcommand parses its own argv, whose argv[0] is its name. */
	if (strcmp(sub, "record") == 0)
		return cmd_record(argc - optind, argv + optind);
	if (strcmp(sub, "report") == 0)
		return cmd_report(argc - optind, argv + optind);
	return cli_usage_error(RTT_PROG, "unknown subcommand '%s' (record or report)", sub);
}
