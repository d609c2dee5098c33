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
 * options and hands over: the usual driver of docs/style.md, with one getopt
 * pass for the global options and one per subcommand.
 *
 * Exit status: see usage(). Usage errors name the offending flag and exit 2.
 */
#include <errno.h>
#include <getopt.h>
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

static int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "subbuf-size", required_argument, NULL, 's' },
		{ "num-subbuf", required_argument, NULL, 'n' },
		{ "register-timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct rtt_record_opts o = { .subbuf_size = "4M", .num_subbuf = 8 };
	uint64_t v;
	int c;

	/* '+': stop at COMMAND, whose own options are not ours */
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:ho:s:n:t:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return RTT_EXIT_OK;
		case 'o':
			if (!*optarg)
				return cli_usage_error(RECORD, "--output needs a directory");
			o.output = optarg;
			break;
		case 's':
			if (!valid_size(optarg))
				return cli_bad_value(RECORD, "--subbuf-size", optarg,
						     "not a size such as 4M or 262144");
			o.subbuf_size = optarg;
			break;
		case 'n':
			if (cli_parse_u64(optarg, 1, 1u << 20, &v) || (v & (v - 1)))
				return cli_bad_value(RECORD, "--num-subbuf", optarg,
						     "not a power of two");
			o.num_subbuf = (unsigned)v;
			break;
		case 't':
			if (cli_parse_u64(optarg, 0, 3600000, &v))
				return cli_bad_value(RECORD, "--register-timeout", optarg,
						     "not a count of ms (0..3600000)");
			o.register_timeout = optarg;
			break;
		default:
			return cli_getopt_error(RECORD, c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error(RECORD,
				       "no command given (record [OPTIONS] -- COMMAND [ARG...])");
	o.argv = argv + optind;
	return rtt_record(&o);
}

static int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },	   { "json", no_argument, NULL, 'j' },
		{ "worst", required_argument, NULL, 'w' }, { "pid", required_argument, NULL, 'p' },
		{ "plot", required_argument, NULL, 'P' },  { NULL, 0, NULL, 0 },
	};
	struct rtt_analysis a;
	const char *dir, *plot = NULL;
	uint64_t worst = 5, v;
	int64_t pid = -1;
	bool json = false;
	char msg[2048];
	int c, err;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":hjw:p:P:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return RTT_EXIT_OK;
		case 'j':
			json = true;
			break;
		case 'w':
			if (cli_u64(REPORT, "--worst", optarg, 0, WORST_MAX, &worst))
				return RTT_EXIT_USAGE;
			break;
		case 'p':
			if (cli_parse_u64(optarg, 1, INT32_MAX, &v))
				return cli_bad_value(REPORT, "--pid", optarg, "not a process id");
			pid = (int64_t)v;
			break;
		case 'P':
			if (!*optarg)
				return cli_usage_error(REPORT,
						       "--plot needs a file name (FILE.png)");
			plot = optarg;
			break;
		default:
			return cli_getopt_error(REPORT, c, argv);
		}
	}
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
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub;
	int c;

	/* Global options end at the subcommand ('+'); we word our own errors. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return RTT_EXIT_OK;
		case 'V':
			return cli_version(RTT_PROG);
		default:
			return cli_getopt_error(RTT_PROG, c, argv);
		}
	}
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
