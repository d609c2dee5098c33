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
#include <getopt.h>
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
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [options] (--config FILE | --fields LIST)\n"
		"       " PROG " --dump FILE [--output CSV] [--no-extra-columns]\n"
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "frequency", required_argument, NULL, OPT_FREQUENCY },
		{ "config", required_argument, NULL, 'c' },
		{ "recipe", required_argument, NULL, OPT_RECIPE },
		{ "fields", required_argument, NULL, OPT_FIELDS },
		{ "samples", required_argument, NULL, OPT_SAMPLES },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "output", required_argument, NULL, 'o' },
		{ "binary", no_argument, NULL, 'b' },
		{ "no-extra-columns", no_argument, NULL, OPT_NO_EXTRA },
		{ "dump", required_argument, NULL, OPT_DUMP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "no-rt", no_argument, NULL, OPT_NO_RT },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "buffered", no_argument, NULL, OPT_BUFFERED },
		{ "data-timeout", required_argument, NULL, OPT_DATA_TIMEOUT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char outputs[RTL_RTDE_CLIENT_TX_SIZE];
	struct rec_config cfg = { 0 };
	struct rec_result res;
	struct rec_error err = { 0 };
	struct rec *rec = NULL;
	const char *config = NULL, *fields = NULL, *key = NULL, *output = NULL, *dump_in = NULL;
	bool binary = false, json = false, added_ts = false;
	uint64_t u;
	double d;
	int c, idx, ret;

	/* Parse: we print our own messages, naming the flag. */
	cfg.host = "localhost";
	cfg.port = 30004;
	cfg.frequency = 125;
	cfg.rt_mode = RTL_LOOP_RT_DEGRADE;
	cfg.rx_cpu = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hc:o:bvV", longopts, &idx)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			return cli_version(PROG);
		case OPT_HOST:
			if (!optarg[0])
				return cli_usage_error(PROG, "--host needs an address");
			cfg.host = optarg;
			break;
		case OPT_PORT:
			if (cli_parse_u64(optarg, 1, 65535, &u))
				return cli_bad_value(PROG, "--port", optarg,
						     "not a port number (1-65535)");
			cfg.port = (uint16_t)u;
			break;
		case OPT_FREQUENCY:
			if (cli_parse_double(optarg, 0, HUGE_VAL, &d) || (d > 0 && d < 1))
				return cli_bad_value(PROG, "--frequency", optarg,
						     "not a rate in Hz (>= 1, or 0 for the "
						     "maximum)");
			cfg.frequency = d;
			break;
		case 'c':
			config = optarg;
			break;
		case OPT_RECIPE:
			key = optarg;
			break;
		case OPT_FIELDS:
			fields = optarg;
			break;
		case OPT_SAMPLES:
			if (cli_parse_u64(optarg, 0, UINT64_MAX, &u))
				return cli_bad_value(PROG, "--samples", optarg, "not a count");
			cfg.samples = u;
			break;
		case OPT_DURATION:
			if (cli_parse_double(optarg, 0, 1e9, &d))
				return cli_bad_value(PROG, "--duration", optarg,
						     "not a time in seconds");
			cfg.duration_ns = (int64_t)(d * 1e9);
			if (d > 0 && cfg.duration_ns == 0)
				cfg.duration_ns = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 'b':
			binary = true;
			break;
		case OPT_NO_EXTRA:
			cfg.no_extra_columns = true;
			break;
		case OPT_DUMP:
			dump_in = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_NO_RT:
			cfg.rt_mode = RTL_LOOP_RT_OFF;
			break;
		case OPT_CPU:
			if (cli_parse_u64(optarg, 0, 4095, &u))
				return cli_bad_value(PROG, "--cpu", optarg, "not a CPU number");
			cfg.rx_cpu = (int)u;
			break;
		case OPT_BUFFERED:
			break;
		case OPT_DATA_TIMEOUT:
			if (cli_parse_double(optarg, 0, 1e6, &d))
				return cli_bad_value(PROG, "--data-timeout", optarg,
						     "not a time in seconds (0: no limit)");
			cfg.data_timeout_ns = d > 0 ? (int64_t)(d * 1e9) : -1;
			if (d > 0 && cfg.data_timeout_ns == 0)
				cfg.data_timeout_ns = 1;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			return cli_getopt_error(PROG, c, argv);
		}
	}
	if (optind < argc)
		return cli_extra_args(PROG, optind, argc, argv);
	rtl_log_set_handler(log_handler, NULL);

	/* Validate. */
	if (dump_in) {
		if (config || fields || binary)
			return cli_usage_error(PROG, "--dump converts a file: it takes no %s",
					       config	? "--config"
					       : fields ? "--fields"
							: "--binary");
		return dump(dump_in, output ? output : "-", !cfg.no_extra_columns);
	}
	if (config && fields)
		return cli_usage_error(PROG, "give --config or --fields, not both");
	if (!config && !fields)
		return cli_usage_error(PROG,
				       "nothing to record: give --config FILE or --fields LIST");
	if (key && !config)
		return cli_usage_error(PROG, "--recipe '%s' selects a recipe of an XML --config",
				       key);
	ret = rec_outputs(outputs, sizeof(outputs), fields, config, key, &added_ts, &err);
	if (ret < 0) {
		rec_error_print(stderr, PROG ": ", &err);
		return EXIT_FAIL;
	}
	if (added_ts)
		fprintf(stderr,
			PROG ": note: 'timestamp' added as the first column: controller skips "
			     "are counted from it\n");
	cfg.outputs = outputs;
	if (!output)
		output = binary ? "robot_data.rtlrec" : "robot_data.csv";
	if (binary)
		cfg.bin_path = output;
	else
		cfg.csv_path = output;
	cfg.progress = verbose ? stderr : NULL;
	if (verbose)
		fprintf(stderr, PROG ": recording %s from %s:%u at %g Hz to %s (%s)\n", outputs,
			cfg.host, cfg.port, cfg.frequency, output, binary ? "binary" : "CSV");

	/* Allocate (the outputs, the loop and its ring); the loop locks
	 * memory and sets priorities when it starts. */
	ret = rec_create(&rec, &cfg, &err);
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
	rec_summary(stderr, &res, json);
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
