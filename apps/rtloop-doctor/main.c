// SPDX-License-Identifier: MIT
/*
 * rtloop-doctor: is this machine ready for a real-time loop?
 *
 * A thin driver over rtl_doctor_run(): parse the options, run the checks,
 * print the findings as aligned text (fixes under each warning) or as JSON,
 * and exit 0 when nothing is bad, 1 when something is, 2 on a usage error.
 * It needs no privileges; run it as the user who will run the loop, since
 * limits and capabilities are those of the calling process.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/doctor.h>

#include "cli.h"

#define PROG "rtloop-doctor"

enum { EXIT_OK = 0, EXIT_BAD = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
	fprintf(f, "Usage: " PROG " [--json] [--root DIR]\n"
		   "       " PROG " --help | --version\n"
		   "\n"
		   "Check the kernel, limits and tuning this machine offers a real-time loop:\n"
		   "preemption model, RLIMIT_RTPRIO and RLIMIT_MEMLOCK, CAP_SYS_NICE and\n"
		   "CAP_IPC_LOCK, CPU frequency governor, isolcpus/nohz_full/rcu_nocbs, NUMA\n"
		   "nodes, transparent huge pages, swap, /dev/cpu_dma_latency and timer slack.\n"
		   "Each finding gets a verdict (ok, warn, bad) and, unless ok, a fix.\n"
		   "\n"
		   "Options:\n"
		   "  -j, --json       print one JSON object instead of text\n"
		   "  -r, --root DIR   read /proc, /sys and /dev below DIR (for tests)\n"
		   "  -h, --help       print this help and exit\n"
		   "  -V, --version    print the version and exit\n"
		   "\n"
		   "Exit status: 0 nothing is bad, 1 at least one finding is bad,\n"
		   "2 usage error or the checks could not run.\n");
}

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse(int argc, char **argv, struct rtl_doctor_opts *d, bool *json)
{
	const struct cli_opt opts[] = {
		CLI_FLAG('j', "json", json),
		CLI_TEXT('r', "root", &d->root),
		CLI_HELP,
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };

	/* No option of ours is handled here: every row stores its value. */
	if (cli_next(&p, argc, argv) < 0)
		return p.status;
	return cli_extra_args(PROG, optind, argc, argv) ? CLI_EXIT_USAGE : CLI_RUN;
}

int main(int argc, char **argv)
{
	struct rtl_doctor_finding findings[RTL_DOCTOR_MAX_FINDINGS];
	struct rtl_doctor_opts opts = { .size = sizeof(opts) };
	bool json = false;
	int n, err;

	/* Parse (an empty --root is refused there), run. */
	err = parse(argc, argv, &opts, &json);
	if (err != CLI_RUN)
		return err;
	n = rtl_doctor_run(findings, RTL_DOCTOR_MAX_FINDINGS, &opts);
	if (n < 0) {
		if (opts.root)
			fprintf(stderr, PROG ": --root %s: %s\n", opts.root, strerror(-n));
		else
			fprintf(stderr, PROG ": cannot run the checks: %s\n", strerror(-n));
		return EXIT_USAGE;
	}

	/* Report. */
	if (json)
		err = rtl_doctor_write_json(stdout, findings, (size_t)n);
	else
		err = rtl_doctor_write_text(stdout, findings, (size_t)n);
	if (err == 0 && fflush(stdout) != 0)
		err = -errno;
	if (err) {
		fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(-err));
		return EXIT_USAGE;
	}
	return rtl_doctor_worst(findings, (size_t)n) == RTL_DOCTOR_BAD ? EXIT_BAD : EXIT_OK;
}
