// SPDX-License-Identifier: MIT
/*
 * rtde-record: record every RTDE data package to CSV or a binary file.
 *
 * A thin driver over record.c, with the options of UR's record.py (--host,
 * --port, --frequency, --config, --samples, --output, --binary, --verbose)
 * and a few of its own. main() reads in order: parse the options, validate
 * and build the recipe, allocate (outputs, loop, ring), run (the loop
 * locks memory and raises the rx thread's priority when it may), report.
 * The summary goes to stderr (--json: one JSON object), so --output - can
 * stream the CSV to stdout.
 *
 * Exit status: 0 the recording ended as asked (samples, duration, SIGINT
 * or SIGTERM) with at least one row; 1 it could not start or the
 * connection was lost (refused, handshake, unknown field, closed); 2 usage
 * error; 3 no data (--data-timeout of silence, or no row at all); 4 a write
 * error (the message names the rows the file holds).
 *
 * Controller text must not move the cursor, ring the bell or forge an
 * "rtde-record:" line: the RTDE client escapes every byte of it
 * (rtl_rtde_text_sanitize()) before it reaches the log handler here.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/time.h>

#include "cli.h"
#include "record.h"

#define PROG "rtde-record"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NO_DATA = 3, EXIT_WRITE = 4 };

enum {
	OPT_HOST = 256,
	OPT_PORT,
	OPT_FREQUENCY,
	OPT_RECIPE,
	OPT_FIELDS,
	OPT_SAMPLES,
	OPT_DURATION,
	OPT_NO_EXTRA,
	OPT_DUMP,
	OPT_JSON,
	OPT_NO_RT,
	OPT_CPU,
	OPT_BUFFERED,
	OPT_DATA_TIMEOUT,
	OPT_PLOT,
	OPT_TITLE,
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [options] (--config FILE | --fields LIST)\n"
		"       " PROG " --dump FILE [--output CSV] [--no-extra-columns]\n"
		"       " PROG " --plot FILE [--fields LIST] [--output PREFIX] [--title TEXT]\n"
		"       " PROG " --help | --version\n"
		"\n"
		"Record every RTDE data package the controller sends, in order, to a CSV\n"
		"file that UR's record.py readers accept (space separated, vector fields\n"
		"expanded as name_0..name_5) plus the columns host_time_ns and lost, or to a\n"
		"binary file with a schema header. Controller skips are counted exactly and\n"
		"marked in the lost column. A summary goes to stderr at the end.\n"
		"\n"
		"Options:\n"
		"      --host HOST         controller address (default localhost)\n"
		"      --port PORT         RTDE port (default 30004)\n"
		"      --frequency HZ      output rate to ask for (default 125; 0: the\n"
		"                          controller's maximum, 125 or 500 Hz)\n"
		"  -c, --config FILE       recipe: UR's XML (<rtde_config>) or one name per line\n"
		"      --recipe KEY        XML recipe key (default: the only recipe, else "
		"\"out\")\n"
		"      --fields LIST       recipe as names: timestamp,actual_q,actual_TCP_pose\n"
		"      --samples N         stop after N packages (default 0: no limit)\n"
		"      --duration S        stop after S seconds (default 0: no limit)\n"
		"      --data-timeout S    end with exit 3 when no data package comes for S\n"
		"                          seconds (default 1; 0: wait for ever)\n"
		"  -o, --output FILE       file to write, '-' for stdout (default robot_data.csv,\n"
		"                          or robot_data.rtlrec with --binary)\n"
		"  -b, --binary            write the binary format (for long runs)\n"
		"      --no-extra-columns  CSV: only the recipe's columns (strict record.py "
		"layout)\n"
		"      --dump FILE         convert binary recording FILE to CSV and exit\n"
		"      --plot FILE         plot recording FILE (CSV or binary) with gnuplot:\n"
		"                          --fields (default: all, up to 8) against the\n"
		"                          controller's time, every loss and timestamp reset\n"
		"                          marked, into PREFIX.png and PREFIX.svg (--output\n"
		"                          PREFIX; default FILE without its extension)\n"
		"      --title TEXT        the plot's title (default: FILE)\n"
		"      --json              print the summary as one JSON object\n"
		"      --no-rt             plain threads, no memory locking\n"
		"      --cpu N             pin the receive thread to CPU N\n"
		"      --buffered          accepted for record.py compatibility (always exact)\n"
		"  -v, --verbose           connection details and progress every second\n"
		"  -h, --help              print this help and exit\n"
		"  -V, --version           print the version and exit\n"
		"\n"
		"The recipe always holds 'timestamp' (added first when missing): controller\n"
		"skips are counted from it. SIGINT or SIGTERM stops cleanly: every package\n"
		"received is written and the files are flushed. Rows go to FILE.partial\n"
		"(whole rows only, so it parses after a crash), renamed to FILE at the end\n"
		"when it holds a row: a run that records nothing leaves FILE as it was.\n"
		"\n"
		"Exit status: 0 the recording ended as asked (--samples, --duration, SIGINT)\n"
		"with rows; 1 it could not start or the connection was lost (refused,\n"
		"handshake, unknown field, closed); 2 usage error; 3 no data (--data-timeout,\n"
		"or no row at all); 4 write error (the file holds the complete rows named).\n"
		"See rtde-record(1): docs/rtde-record.md.\n");
}

static bool verbose;

static void log_handler(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	/* The library's errors are reported by this program with more
	 * context; show them as they happen only when asked. Bytes from the
	 * controller (its text messages, the names in its replies) reach
	 * @msg already escaped by the client (rtl_rtde_text_sanitize()):
	 * escaping again would double every backslash. */
	if (level == RTL_LOG_WARN || (verbose && level <= RTL_LOG_INFO))
		fprintf(stderr, PROG ": %s: %s\n", rtl_log_level_name(level), msg);
}

static struct rec *volatile g_rec;

static void on_signal(int sig)
{
	struct rec *rec = g_rec;

	if (rec)
		rec_stop(rec);
}

static int plot(const struct rec_plot_config *cfg)
{
	struct rec_plot_result res;
	struct rec_error err;
	int ret = rec_plot(cfg, &res, &err);

	if (ret < 0) {
		rec_error_print(stderr, PROG ": --plot: ", &err);
		return ret == -EINVAL || ret == -E2BIG ? CLI_EXIT_USAGE : EXIT_FAIL;
	}
	fprintf(stderr,
		PROG ": --plot: %llu rows, %llu packages lost in %llu gaps, %llu timestamp "
		     "resets; %u fields: %s, %s\n",
		(unsigned long long)res.rows, (unsigned long long)res.lost,
		(unsigned long long)res.gaps, (unsigned long long)res.resets, res.panels, res.png,
		res.svg);
	if (res.more)
		fprintf(stderr,
			PROG ": --plot: note: %u more fields not plotted (at most %d); "
			     "choose with --fields\n",
			res.more, REC_PLOT_MAX_PANELS);
	if (res.cut)
		fprintf(stderr, PROG ": --plot: warning: the last record is cut short: ignored\n");
	return EXIT_OK;
}

static int dump(const char *in, const char *out, bool extra)
{
	struct rec_error err = { 0 };
	uint64_t rows = 0;
	int ret = rec_dump(in, out, extra, &rows, &err);

	if (ret < 0) {
		rec_error_print(stderr, PROG ": --dump: ", &err);
		return EXIT_FAIL;
	}
	if (err.err.msg[0])
		rec_error_print(stderr, PROG ": --dump: warning: ", &err);
	if (verbose)
		fprintf(stderr, PROG ": --dump: %llu rows\n", (unsigned long long)rows);
	return EXIT_OK;
}

/* What the options give main(): the recording's configuration and the
 * choices it is made from. */
struct args {
	struct rec_config cfg;
	const char *config, *fields, *key, *output, *dump_in, *plot_in, *title;
	bool binary, json, buffered;
};

/* A time in seconds @d as ns, at least 1 when @d > 0. */
static int64_t seconds_ns(double d)
{
	int64_t ns = (int64_t)(d * 1e9);

	return d > 0 && ns == 0 ? 1 : ns;
}

/* The options whose value is checked or converted in a way of their own:
 * CLI_RUN, or a usage error (printed). */
static int parse_value(int c, const char *arg, struct rec_config *cfg)
{
	double d;

	switch (c) {
	case OPT_FREQUENCY:
		if (cli_parse_double(arg, 0, HUGE_VAL, &d) || (d > 0 && d < 1))
			return cli_bad_value(PROG, "--frequency", arg,
					     "not a rate in Hz (>= 1, or 0 for the maximum)");
		cfg->frequency = d;
		break;
	case OPT_DURATION:
		if (cli_parse_double(arg, 0, 1e9, &d))
			return cli_bad_value(PROG, "--duration", arg, "not a time in seconds");
		cfg->duration_ns = seconds_ns(d);
		break;
	case OPT_DATA_TIMEOUT:
		if (cli_parse_double(arg, 0, 1e6, &d))
			return cli_bad_value(PROG, "--data-timeout", arg,
					     "not a time in seconds (0: no limit)");
		cfg->data_timeout_ns = d > 0 ? seconds_ns(d) : -1;
		break;
	default: /* OPT_NO_RT */
		cfg->rt_mode = RTL_LOOP_RT_OFF;
		break;
	}
	return CLI_RUN;
}

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse(int argc, char **argv, struct args *a)
{
	struct rec_config *cfg = &a->cfg;
	const struct cli_opt opts[] = {
		CLI_HELP,
		CLI_TEXT(OPT_HOST, "host", &cfg->host),
		CLI_UINT(OPT_PORT, "port", &cfg->port, 1, 65535, "not a port number (1-65535)"),
		CLI_CASE_ARG(OPT_FREQUENCY, "frequency"),
		CLI_TEXT('c', "config", &a->config),
		CLI_TEXT(OPT_RECIPE, "recipe", &a->key),
		CLI_TEXT(OPT_FIELDS, "fields", &a->fields),
		CLI_UINT(OPT_SAMPLES, "samples", &cfg->samples, 0, UINT64_MAX, "not a count"),
		CLI_CASE_ARG(OPT_DURATION, "duration"),
		CLI_TEXT('o', "output", &a->output),
		CLI_FLAG('b', "binary", &a->binary),
		CLI_FLAG(OPT_NO_EXTRA, "no-extra-columns", &cfg->no_extra_columns),
		CLI_TEXT(OPT_DUMP, "dump", &a->dump_in),
		CLI_TEXT(OPT_PLOT, "plot", &a->plot_in),
		CLI_TEXT(OPT_TITLE, "title", &a->title),
		CLI_FLAG(OPT_JSON, "json", &a->json),
		CLI_CASE(OPT_NO_RT, "no-rt"),
		CLI_UINT(OPT_CPU, "cpu", &cfg->rx_cpu, 0, 4095, "not a CPU number"),
		/* record.py's; recording is always exact */
		CLI_FLAG(OPT_BUFFERED, "buffered", &a->buffered),
		CLI_CASE_ARG(OPT_DATA_TIMEOUT, "data-timeout"),
		CLI_FLAG('v', "verbose", &verbose),
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	int c, ret;

	cfg->host = "localhost";
	cfg->port = 30004;
	cfg->frequency = 125;
	cfg->rt_mode = RTL_LOOP_RT_DEGRADE;
	cfg->rx_cpu = -1;
	while ((c = cli_next(&p, argc, argv)) > 0) {
		ret = parse_value(c, optarg, cfg);
		if (ret != CLI_RUN)
			return ret;
	}
	if (c < 0)
		return p.status;
	return cli_extra_args(PROG, optind, argc, argv) ? CLI_EXIT_USAGE : CLI_RUN;
}

int main(int argc, char **argv)
{
	static char outputs[RTL_RTDE_CLIENT_TX_SIZE];
	struct args a = { 0 };
	struct rec_result res;
	struct rec_error err = { 0 };
	struct rec *rec = NULL;
	bool added_ts = false;
	int ret;

	/* Parse: the table words the messages, naming the flag. */
	ret = parse(argc, argv, &a);
	if (ret != CLI_RUN)
		return ret;
	rtl_log_set_handler(log_handler, NULL);

	/* Validate. */
	if (a.plot_in) {
		if (a.dump_in || a.config || a.binary)
			return cli_usage_error(PROG, "--plot plots a file: it takes no %s",
					       a.dump_in  ? "--dump"
					       : a.config ? "--config"
							  : "--binary");
		return plot(&(struct rec_plot_config){ .in = a.plot_in,
						       .fields = a.fields,
						       .prefix = a.output,
						       .title = a.title });
	}
	if (a.title)
		return cli_usage_error(PROG, "--title names a plot: give --plot FILE");
	if (a.dump_in) {
		if (a.config || a.fields || a.binary)
			return cli_usage_error(PROG, "--dump converts a file: it takes no %s",
					       a.config	  ? "--config"
					       : a.fields ? "--fields"
							  : "--binary");
		return dump(a.dump_in, a.output ? a.output : "-", !a.cfg.no_extra_columns);
	}
	if (a.config && a.fields)
		return cli_usage_error(PROG, "give --config or --fields, not both");
	if (!a.config && !a.fields)
		return cli_usage_error(PROG,
				       "nothing to record: give --config FILE or --fields LIST");
	if (a.key && !a.config)
		return cli_usage_error(PROG, "--recipe '%s' selects a recipe of an XML --config",
				       a.key);
	ret = rec_outputs(outputs, sizeof(outputs), a.fields, a.config, a.key, &added_ts, &err);
	if (ret < 0) {
		rec_error_print(stderr, PROG ": ", &err);
		return EXIT_FAIL;
	}
	if (added_ts)
		fprintf(stderr,
			PROG ": note: 'timestamp' added as the first column: controller skips "
			     "are counted from it\n");
	a.cfg.outputs = outputs;
	if (!a.output)
		a.output = a.binary ? "robot_data.rtlrec" : "robot_data.csv";
	if (a.binary)
		a.cfg.bin_path = a.output;
	else
		a.cfg.csv_path = a.output;
	a.cfg.progress = verbose ? stderr : NULL;
	if (verbose)
		fprintf(stderr, PROG ": recording %s from %s:%u at %g Hz to %s (%s)\n", outputs,
			a.cfg.host, a.cfg.port, a.cfg.frequency, a.output,
			a.binary ? "binary" : "CSV");

	/* Allocate (the outputs, the loop and its ring); the loop locks
	 * memory and sets priorities when it starts. */
	ret = rec_create(&rec, &a.cfg, &err);
	if (ret < 0) {
		rec_error_print(stderr, PROG ": ", &err);
		return EXIT_FAIL;
	}
	g_rec = rec;
	cli_on_stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* Run. */
	ret = rec_run(rec, &res, &err);
	g_rec = NULL;
	if (ret < 0) {
		rec_error_print(stderr, PROG ": ", &err);
		rec_destroy(rec);
		return EXIT_FAIL;
	}

	/* Report: the cause first, then the counts. */
	if (res.io_error.err.msg[0])
		rec_error_print(stderr,
				res.end == REC_END_LOST ? PROG ": recording cut short: "
							: PROG ": ",
				&res.io_error);
	rec_summary(stderr, &res, a.json);
	rec_destroy(rec);
	switch (res.end) {
	case REC_END_IO:
		return EXIT_WRITE;
	case REC_END_NO_DATA:
		return EXIT_NO_DATA;
	case REC_END_LOST:
		return EXIT_FAIL;
	default:
		return res.rows ? EXIT_OK : EXIT_NO_DATA;
	}
}
