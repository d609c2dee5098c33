// SPDX-License-Identifier: MIT
/*
 * rtloop-bench: the loop against its floors, in one run.
 *
 * Runs the simulator (rtde-sim's RTDE server, or with --transport udp its
 * 1 kHz UDP mode, in this process on an ephemeral port) and the loop (rx
 * thread, ring, worker) in one process tree, and measures, against floors
 * measured in the same run:
 *   - the end-to-end round trip: the simulator sends a data package (a
 *     state datagram), the loop's step echoes it (RTDE: its `timestamp`
 *     into input_double_register_47; UDP: its sequence number and send time
 *     in the command datagram's echo fields), the simulator receives it
 *     (its echo histogram); floor: a bare TCP (UDP) ping-pong over loopback
 *     with the same message sizes, rate, CPUs and priorities;
 *   - the worker's wake-up (ring commit to worker running); floor: a
 *     cyclictest-style absolute-deadline timer loop at the worker's
 *     priority on the worker's CPU;
 *   - the loop's per-stage histograms (rx_to_step, step, step_to_send,
 *     interarrival).
 * The phases run one at a time, interleaved over --reps repetitions with a
 * rotating order (docs/benchmarks.md); the table gives p50/p99/p99.9/max and
 * the ratios to the floors as the median of the per-repetition ratios with
 * their range. The design is in bench.h; the measurement in phases.c; the
 * report in report.c.
 *
 * main() reads in order: parse options, validate, lock memory, check the
 * priorities, allocate, run, report.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/doctor.h>
#include <rtloop/mem.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/udp.h>
#include <rtloop/rtde_client.h>
#include <rtloop/thread.h>
#include <rtloop/time.h>

#include "bench.h"
#include "benchmark.h"
#include "cli.h"

#define PROG BENCH_PROG

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define DEFAULT_DURATION_S 20.0
#define QUICK_DURATION_S 4.0
#define DEFAULT_REPS 7
#define QUICK_REPS 3
#define DEFAULT_PRIORITY 80
#define DEFAULT_OUTPUTS "timestamp,actual_q,actual_qd"
/* rtloop's UDP stream: Doosan's 1 kHz, and at most this fast. */
#define UDP_DEFAULT_HZ 1000.0
#define UDP_MAX_HZ 1000.0
/* A phase shorter than this measures too few packages to mean anything. */
#define MIN_PHASE_NS (100 * RTL_NS_PER_MS)

/* The phases of a repetition: P_TEL only with --telemetry. */
static unsigned n_phases(const struct bench_cfg *cfg)
{
	return cfg->telemetry ? P_COUNT : P_TEL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS]\n"
		"\n"
		"Measure the loop against floors measured in the same run: the round trip\n"
		"simulator -> loop -> simulator (RTDE: the step echoes each package's timestamp\n"
		"into input_double_register_%d; UDP: each state's number and send time go back\n"
		"in the command datagram) against a bare TCP (UDP) ping-pong of the same sizes;\n"
		"the worker's wake-up against a cyclictest-style timer loop; and the loop's\n"
		"stage histograms. Phases run one at a time, interleaved over the repetitions.\n"
		"\n"
		"Options:\n"
		"  -t, --transport T    rtde (default: RTDE over TCP, rtde-sim's server) or udp\n"
		"                       (rtloop's 1 kHz UDP stream, rtde-sim's UDP mode; floor:\n"
		"                       a bare UDP ping-pong of %d- and %d-byte datagrams)\n"
		"  -d, --duration S     measured time of the whole run, split evenly over the\n"
		"                       repetitions and the phases (default %.0f)\n"
		"  -q, --quick          a %.0f s smoke run with %d repetitions\n"
		"  -n, --reps N         repetitions (default %d; --quick %d; at most %d)\n"
		"  -r, --rate HZ        output rate asked of the simulator (default: the\n"
		"                       profile's maximum; the controller's divisor rule applies;\n"
		"                       udp: 1..1000, default 1000)\n"
		"  -P, --profile NAME   cb3 (125 Hz), eseries (500 Hz, default), polyscope-x\n"
		"                       (rtde only)\n"
		"  -c, --cpus LIST      SIM,LOOP (rx and worker share LOOP) or SIM,RX,WORKER\n"
		"                       (default 0,1; 0,0 on one CPU)\n"
		"  -p, --priority N     SCHED_FIFO priority of the worker and the timer floor\n"
		"                       (default %d); rx, simulator and ping-pong threads run at\n"
		"                       N+10 (at most 99). Best effort: refused means "
		"SCHED_OTHER,\n"
		"                       and the report says so\n"
		"  -m, --mode MODE      how the loop steps: threads (rx thread -> ring -> "
		"worker),\n"
		"                       inline (the rx thread runs the step itself), or auto\n"
		"                       (default: inline when rx and worker share a CPU and no\n"
		"                       --spin-us/--spin-lead-us is given, threads otherwise)\n"
		"      --spin-us US     the worker spins this long for a frame before it sleeps\n"
		"                       on the futex (default 0; spinning wants a CPU of its own\n"
		"                       or one it shares only with higher priorities)\n"
		"      --spin-lead-us US  the worker sleeps until US before the next frame is\n"
		"                       due and spins from there (for --spin-us, or 2 x US when\n"
		"                       that is 0); default 0 (off)\n"
		"      --outputs NAMES  output recipe (must hold timestamp; default %s;\n"
		"                       rtde only)\n"
		"  -T, --telemetry      a fourth phase: the loop again with its telemetry on\n"
		"                       (each step published to shared memory, a reader\n"
		"                       polling it every 10 ms, as rtloop-view does), against\n"
		"                       the loop without it in the same repetition\n"
		"      --rig            instead: how a loop over several sources scales (the\n"
		"                       one-source loop, rigs of 1, 2 and 4 arms, an arm with\n"
		"                       an F/T sensor at 1, 2 and 7 kHz), as ratios to the\n"
		"                       one-source loop; --duration, --reps and --json apply\n"
		"  -j, --json FILE      write every figure as JSON (- for stdout)\n"
		"  -o, --plot FILE      draw the round-trip and wake-up histograms (log y) to a "
		"PNG\n"
		"                       with gnuplot\n"
		"  -h, --help           print this help and exit\n"
		"  -V, --version        print the version and exit\n"
		"\n"
		"Exit status: 0 measured (whether or not the target was met), 1 could not run,\n"
		"2 usage error.\n",
		RTL_RTDE_CMD_REG_ECHO, RTL_UDP_MAX_DATAGRAM,
		RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE, DEFAULT_DURATION_S, QUICK_DURATION_S,
		QUICK_REPS, DEFAULT_REPS, QUICK_REPS, BENCH_MAX_REPS, DEFAULT_PRIORITY,
		DEFAULT_OUTPUTS);
}

struct opts {
	struct bench_cfg cfg;
	bool quick, have_duration, have_reps, have_cpus, have_profile, have_outputs;
	bool rig; /* --rig: the scaling of several sources instead */
};

/* In enum bench_transport's order. */
static const char *const transports[] = { "rtde", "udp" };
/* In enum bench_mode's order. */
static const char *const modes[] = { "auto", "threads", "inline" };

enum { OPT_OUTPUTS = 256, OPT_SPIN, OPT_SPIN_LEAD, OPT_RIG };

/* Option @key's argument, for the rows whose handling is the app's own
 * (a bound, a list or a "given" flag of their own). Returns 0 or
 * CLI_EXIT_USAGE (message printed). */
static int parse_case(int key, const char *arg, struct opts *o)
{
	struct bench_cfg *c = &o->cfg;
	const struct sim_profile *prof;
	uint64_t u, cpu[3];
	double d;
	int n;

	switch (key) {
	case 'd':
		if (cli_parse_double(arg, 0, 86400, &d) || d <= 0)
			return cli_bad_value(PROG, "--duration", arg, "seconds in (0, 86400]");
		c->duration_s = d;
		o->have_duration = true;
		return 0;
	case 'n':
		if (cli_parse_u64(arg, 1, BENCH_MAX_REPS, &u))
			return cli_bad_value(PROG, "--reps", arg, "an integer from 1 to 51");
		c->reps = (unsigned)u;
		o->have_reps = true;
		return 0;
	case 'P':
		prof = sim_profile_find(arg);
		if (!prof)
			return cli_bad_value(PROG, "--profile", arg,
					     "one of cb3, eseries, polyscope-x");
		for (int i = 0; i < SIM_PROFILE_COUNT; i++)
			if (sim_profile((enum sim_profile_id)i) == prof)
				c->profile = (enum sim_profile_id)i;
		o->have_profile = true;
		return 0;
	case 'c':
		/* SIM,LOOP means rx and worker both on LOOP. */
		n = cli_parse_list(arg, CPU_SETSIZE - 1, cpu, 2, 3);
		if (n < 0)
			return cli_bad_value(PROG, "--cpus", arg,
					     "SIM,LOOP or SIM,RX,WORKER CPU numbers");
		c->cpu_sim = (int)cpu[0];
		c->cpu_rx = (int)cpu[1];
		c->cpu_worker = (int)cpu[n - 1];
		o->have_cpus = true;
		return 0;
	case OPT_SPIN:
	case OPT_SPIN_LEAD:
		/* Microseconds, 0..100 ms, for either field. */
		if (cli_u64(PROG, key == OPT_SPIN ? "--spin-us" : "--spin-lead-us", arg, 0, 100000,
			    &u))
			return CLI_EXIT_USAGE;
		*(key == OPT_SPIN ? &c->spin_ns : &c->spin_lead_ns) = (int64_t)u * RTL_NS_PER_US;
		return 0;
	default: /* OPT_OUTPUTS */
		c->outputs = arg;
		o->have_outputs = true;
		return 0;
	}
}

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	struct bench_cfg *c = &o->cfg;
	const struct cli_opt opts[] = {
		CLI_HELP,
		CLI_CHOICE('t', "transport", &c->transport, transports, 2, "rtde or udp"),
		CLI_CASE_ARG('d', "duration"),
		CLI_FLAG('q', "quick", &o->quick),
		CLI_CASE_ARG('n', "reps"),
		CLI_REAL('r', "rate", &c->rate_hz, 1, HUGE_VAL, "a rate in Hz, at least 1"),
		CLI_CASE_ARG('P', "profile"),
		CLI_CASE_ARG('c', "cpus"),
		CLI_UINT('p', "priority", &c->prio_worker, 1, 99,
			 "a SCHED_FIFO priority from 1 to 99"),
		CLI_CASE_ARG(OPT_OUTPUTS, "outputs"),
		CLI_CHOICE('m', "mode", &c->mode, modes, 3, "one of auto, threads, inline"),
		CLI_CASE_ARG(OPT_SPIN, "spin-us"),
		CLI_CASE_ARG(OPT_SPIN_LEAD, "spin-lead-us"),
		CLI_TEXT('j', "json", &c->json),
		CLI_TEXT('o', "plot", &c->plot),
		CLI_FLAG('T', "telemetry", &c->telemetry),
		CLI_FLAG(OPT_RIG, "rig", &o->rig),
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	int ch;

	memset(o, 0, sizeof(*o));
	c->profile = SIM_PROFILE_ESERIES;
	c->prio_worker = DEFAULT_PRIORITY;
	c->outputs = DEFAULT_OUTPUTS;
	while ((ch = cli_next(&p, argc, argv)) > 0)
		if (parse_case(ch, optarg, o))
			return CLI_EXIT_USAGE;
	if (ch < 0)
		return p.status;
	return cli_extra_args(PROG, optind, argc, argv) ? CLI_EXIT_USAGE : CLI_RUN;
}

/* Fill the derived fields; on a bad combination print why and return 2. */
static int validate(struct opts *o)
{
	struct bench_cfg *c = &o->cfg;
	const struct sim_profile *prof = sim_profile(c->profile);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t allowed;
	char buf[64];
	int ret;

	if (!o->have_duration)
		c->duration_s = o->quick ? QUICK_DURATION_S : DEFAULT_DURATION_S;
	if (!o->have_reps)
		c->reps = o->quick ? QUICK_REPS : DEFAULT_REPS;
	snprintf(c->tel_name, sizeof(c->tel_name), "rtloop-bench-%d", (int)getpid());
	c->phase_ns = llround(c->duration_s * 1e9 / ((double)n_phases(c) * c->reps));
	if (c->phase_ns < MIN_PHASE_NS) {
		snprintf(buf, sizeof(buf), "%g", c->duration_s);
		return cli_bad_value(
			PROG, "--duration", buf,
			"each phase of each repetition needs at least 0.1 s (duration >= "
			"0.3 s times --reps)");
	}

	if (c->transport == BENCH_UDP) {
		if (o->have_profile)
			return cli_bad_value(PROG, "--profile", sim_profile(c->profile)->name,
					     "applies to --transport rtde only");
		if (o->have_outputs)
			return cli_bad_value(PROG, "--outputs", c->outputs,
					     "applies to --transport rtde only");
		c->rate_hz = c->rate_hz > 0 ? c->rate_hz : UDP_DEFAULT_HZ;
		if (c->rate_hz > UDP_MAX_HZ) {
			snprintf(buf, sizeof(buf), "%g", c->rate_hz);
			return cli_bad_value(PROG, "--rate", buf, "above the UDP stream's 1000 Hz");
		}
		/* The simulator streams at any period: no divisor rule. */
		c->divisor = 1;
		c->period_ns = llround(1e9 / c->rate_hz);
		c->eff_hz = 1e9 / (double)c->period_ns;
		c->outputs = "Doosan v1.0 RT state";
	} else {
		c->rate_hz = c->rate_hz > 0 ? c->rate_hz : (double)prof->frequency_hz;
		if (c->rate_hz > prof->frequency_hz) {
			snprintf(buf, sizeof(buf), "%g", c->rate_hz);
			return cli_bad_value(PROG, "--rate", buf,
					     "above the profile's maximum rate");
		}
		c->divisor = rtl_rtde_output_divisor((double)prof->frequency_hz, c->rate_hz);
		c->eff_hz = (double)prof->frequency_hz / c->divisor;
		c->period_ns = (int64_t)(RTL_NS_PER_SEC / prof->frequency_hz) * c->divisor;
	}

	c->prio_rx = c->prio_worker + 10 > 99 ? 99 : c->prio_worker + 10;

	if (!o->have_cpus) {
		c->cpu_sim = 0;
		c->cpu_rx = c->cpu_worker = ncpu > 1 ? 1 : 0;
	}
	if (c->mode == BENCH_MODE_INLINE && (c->spin_ns || c->spin_lead_ns)) {
		fprintf(stderr,
			"%s: --spin-us and --spin-lead-us set the worker's wait, and --mode "
			"inline has no worker: drop them or use --mode threads\n",
			PROG);
		return 2;
	}
	if (c->mode == BENCH_MODE_AUTO)
		c->mode = c->cpu_rx == c->cpu_worker && !c->spin_ns && !c->spin_lead_ns
				  ? BENCH_MODE_INLINE
				  : BENCH_MODE_THREADS;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
		int cpus[3] = { c->cpu_sim, c->cpu_rx, c->cpu_worker };

		for (int i = 0; i < 3; i++)
			if (!CPU_ISSET(cpus[i], &allowed)) {
				snprintf(buf, sizeof(buf), "%d,%d,%d", c->cpu_sim, c->cpu_rx,
					 c->cpu_worker);
				return cli_bad_value(PROG, "--cpus", buf,
						     "a CPU this process may not run on");
			}
	}

	if (c->transport == BENCH_UDP) {
		/* The datagrams of docs/udp.md: header + state, header + command. */
		c->out_size = RTL_UDP_HEADER_SIZE + RTL_UDP_STATE_SIZE;
		c->in_size = RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE;
	} else {
		if (!strstr(c->outputs, "timestamp"))
			return cli_bad_value(PROG, "--outputs", c->outputs,
					     "the recipe must hold timestamp (the echo)");
		ret = bench_package_size(c->outputs, true, &c->out_size);
		if (ret < 0)
			return cli_bad_value(PROG, "--outputs", c->outputs,
					     "not a valid output recipe");
		ret = bench_package_size(RTL_RTDE_CMD_ECHO_RECIPE, false, &c->in_size);
		if (ret < 0) {
			fprintf(stderr, PROG ": the echo recipe does not build: %s\n",
				strerror(-ret));
			return EXIT_FAIL;
		}
	}
	if (c->plot && !*c->plot)
		return cli_bad_value(PROG, "--plot", c->plot, "needs a file name");
	if (c->json && !*c->json)
		return cli_bad_value(PROG, "--json", c->json, "needs a file name");
	return -1;
}

/* Whether @prog is an executable in PATH. */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (n && access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* ---- progress ---------------------------------------------------------------------- */

struct progress {
	const struct bench_cfg *cfg;
	bool tty;
	unsigned rep, reps, done; /* phases finished */
	int64_t start;
};

static const char *phase_name(const struct bench_cfg *cfg, enum bench_phase p)
{
	switch (p) {
	case P_FLOOR:
		return cfg->transport == BENCH_UDP ? "floor: bare UDP ping-pong"
						   : "floor: bare TCP ping-pong";
	case P_OURS:
		return "ours: simulator + loop";
	case P_TEL:
		return "ours + telemetry";
	default:
		return "floor: timer loop";
	}
}

static void on_progress(void *ctx, enum bench_phase p, int64_t left_ns)
{
	struct progress *pr = ctx;
	unsigned total = pr->reps * n_phases(pr->cfg);

	if (!pr->tty)
		return;
	fprintf(stderr, "\r" PROG ": rep %u/%u  %-26s %4.1f s left in phase  %3u%% done  ",
		pr->rep + 1, pr->reps, phase_name(pr->cfg, p), (double)left_ns / 1e9,
		100u * pr->done / total);
	fflush(stderr);
}

/* ---- main -------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct opts o;
	struct bench_cfg *cfg = &o.cfg;
	struct bench_rt rt = { .probe_ns = NAN };
	struct bench_rep *reps = NULL;
	struct rtl_hist *total[H_COUNT] = { 0 };
	struct rtl_doctor_finding findings[RTL_DOCTOR_MAX_FINDINGS];
	struct rtl_error err = { 0 };
	struct progress pr = { 0 };
	const struct sim_profile *prof;
	char machine[512], cpu_model[128], why[1200];
	char *doctor_json = NULL;
	size_t doctor_len = 0;
	FILE *out, *jf;
	int ret, nf, status = EXIT_FAIL, latency_fd;

	/* 1. Parse and validate. */
	ret = parse_opts(argc, argv, &o);
	if (ret != CLI_RUN)
		return ret;
	ret = validate(&o);
	if (ret >= 0)
		return ret;
	if (o.rig) {
		/* The scaling of several sources: a run of its own. */
		if (rtl_mem_lock_all(&err) < 0)
			fprintf(stderr, PROG ": %s (running unlocked)\n", err.msg);
		return bench_rig(cfg, cfg->json && !strcmp(cfg->json, "-") ? stderr : stdout)
			       ? EXIT_FAIL
			       : EXIT_OK;
	}
	if (cfg->plot && !in_path("gnuplot")) {
		fprintf(stderr, PROG ": --plot needs gnuplot, which is not in PATH (install "
				     "gnuplot, or drop --plot)\n");
		return EXIT_FAIL;
	}
	out = cfg->json && !strcmp(cfg->json, "-") ? stderr : stdout;
	prof = sim_profile(cfg->profile);

	/* 2. Lock memory: every later allocation is locked and faulted in. */
	if (rtl_mem_lock_all(&err) == 0) {
		rt.mlocked = true;
		snprintf(rt.mlock_note, sizeof(rt.mlock_note), "memory locked");
	} else {
		snprintf(rt.mlock_note, sizeof(rt.mlock_note), "%.250s", err.msg);
	}

	/* Shallow C-states for the whole run. The loop holds
	 * /dev/cpu_dma_latency at 0 while it runs (rtl_loop_start()), and on a
	 * VM whose idle vCPUs halt that alone shortens every wake-up by tens
	 * of us: the floors must run under the same request, or they measure
	 * the idle states instead of the network path. */
	latency_fd = rtl_thread_hold_cpu_latency(0, &err);
	rt.cpu_latency_held = latency_fd >= 0;
	snprintf(rt.cpu_latency_note, sizeof(rt.cpu_latency_note), "%.250s",
		 latency_fd >= 0 ? "0 us held for the whole run" : err.msg);

	/* 3. Priorities: may we? The threads ask for SCHED_FIFO themselves,
	 * best effort, and the report says what they got. */
	rt.fifo_permitted = rtl_thread_rt_permitted(cfg->prio_rx, &err);
	if (!rt.fifo_permitted)
		snprintf(rt.fifo_note, sizeof(rt.fifo_note), "%s", err.msg);

	/* 4. Allocate. */
	reps = calloc(cfg->reps, sizeof(*reps));
	if (!reps)
		goto err_oom;
	for (unsigned r = 0; r < cfg->reps; r++)
		for (int h = 0; h < H_COUNT; h++)
			if (!(reps[r].h[h] = calloc(1, sizeof(struct rtl_hist))))
				goto err_oom;
	for (int h = 0; h < H_COUNT; h++)
		if (!(total[h] = calloc(1, sizeof(struct rtl_hist))))
			goto err_oom;

	/* The context first: machine, kernel, CPUs, what real time we got. */
	bench_machine(machine, sizeof(machine), true);
	bench_cpu_model(cpu_model, sizeof(cpu_model));
	fprintf(out, PROG ": %s\n  cpu: %s\n", machine, cpu_model);
	nf = rtl_doctor_run(findings, RTL_DOCTOR_MAX_FINDINGS, NULL);
	if (nf > 0) {
		FILE *m = open_memstream(&doctor_json, &doctor_len);

		if (m) {
			rtl_doctor_write_json(m, findings, (size_t)nf);
			fclose(m);
		}
		for (int i = 0; i < nf; i++)
			if (findings[i].verdict != RTL_DOCTOR_OK)
				fprintf(out, "  doctor: %-4s %-15s %s\n",
					rtl_doctor_verdict_name(findings[i].verdict),
					findings[i].id, findings[i].found);
		fprintf(out, "  doctor: %d checks, worst %s (rtloop-doctor for the fixes)\n", nf,
			rtl_doctor_verdict_name(rtl_doctor_worst(findings, (size_t)nf)));
	}
	fprintf(out, "  mlockall: %s\n", rt.mlocked ? "applied" : rt.mlock_note);
	fprintf(out, "  cpu_dma_latency: %s\n", rt.cpu_latency_note);
	fprintf(out, "  SCHED_FIFO: %s\n", rt.fifo_permitted ? "permitted" : rt.fifo_note);
	rt.probe_ns = bench_probe(cfg->cpu_sim, cfg->cpu_rx);
	if (isnan(rt.probe_ns))
		fprintf(out,
			"  core-to-core probe: not measured (simulator and loop share CPU %d)\n",
			cfg->cpu_sim);
	else
		fprintf(out, "  core-to-core probe (cpu %d <-> %d): %.0f ns one way\n",
			cfg->cpu_sim, cfg->cpu_rx, rt.probe_ns);
	if (cfg->transport == BENCH_UDP)
		fprintf(out,
			"  transport udp (rtde-sim --udp in process), %.1f Hz (asked %.1f), state "
			"datagram %zu B, command datagram %zu B\n",
			cfg->eff_hz, cfg->rate_hz, cfg->out_size, cfg->in_size);
	else
		fprintf(out,
			"  transport rtde, profile %s, %.1f Hz (asked %.1f), data package %zu B "
			"(%s), echo package %zu B (" RTL_RTDE_CMD_ECHO_RECIPE ")\n",
			prof->name, cfg->eff_hz, cfg->rate_hz, cfg->out_size, cfg->outputs,
			cfg->in_size);
	fprintf(out,
		"  cpus: simulator %d, rx %d, worker %d; SCHED_FIFO %d (rx, simulator, "
		"ping-pong), %d (worker, timer)\n",
		cfg->cpu_sim, cfg->cpu_rx, cfg->cpu_worker, cfg->prio_rx, cfg->prio_worker);
	if (cfg->mode == BENCH_MODE_INLINE)
		fputs("  loop mode: inline (the rx thread runs the step; the worker CPU keeps only "
		      "the watchdog)\n",
		      out);
	else if (cfg->spin_lead_ns)
		fprintf(out,
			"  loop mode: threads (rx thread -> ring -> worker); the worker spins %.0f "
			"us "
			"from %.0f us before each frame is due\n",
			(double)(cfg->spin_ns ? cfg->spin_ns : 2 * cfg->spin_lead_ns) / 1e3,
			(double)cfg->spin_lead_ns / 1e3);
	else if (cfg->spin_ns)
		fprintf(out,
			"  loop mode: threads (rx thread -> ring -> worker); the worker spins %.0f "
			"us "
			"after each step\n",
			(double)cfg->spin_ns / 1e3);
	else
		fputs("  loop mode: threads (rx thread -> ring -> worker); the worker sleeps on "
		      "the "
		      "futex (no spin)\n",
		      out);
	fprintf(out,
		"  %u repetitions of %u phases x %.2f s (+%.1f s warm-up each), order rotating; "
		"about %.0f s\n",
		cfg->reps, n_phases(cfg), (double)cfg->phase_ns / 1e9,
		(double)BENCH_WARMUP_NS / 1e9,
		cfg->reps * (double)n_phases(cfg) *
			((double)(cfg->phase_ns + BENCH_WARMUP_NS) / 1e9 + 0.05));
	fflush(out);

	/* 5. Run: A B C, B C A, C A B, ... */
	pr.cfg = cfg;
	pr.tty = isatty(STDERR_FILENO);
	pr.reps = cfg->reps;
	pr.start = rtl_time_now();
	for (unsigned r = 0; r < cfg->reps; r++) {
		pr.rep = r;
		for (unsigned k = 0; k < n_phases(cfg); k++) {
			enum bench_phase p = (enum bench_phase)((r + k) % n_phases(cfg));

			why[0] = '\0';
			ret = bench_run_phase(cfg, p, &reps[r], &rt, on_progress, &pr, why,
					      sizeof(why));
			if (ret < 0) {
				if (pr.tty)
					fputc('\n', stderr);
				fprintf(stderr, PROG ": repetition %u, %s: %s\n", r + 1,
					phase_name(cfg, p), why[0] ? why : strerror(-ret));
				goto out;
			}
			pr.done++;
		}
		for (int h = 0; h < H_COUNT; h++)
			rtl_hist_merge(total[h], reps[r].h[h]);
	}
	if (pr.tty)
		fprintf(stderr, "\r%*s\r", 100, "");
	if (rt.fifo_degraded)
		fprintf(out, "  note: %s\n", rt.degraded_note);

	/* 6. Report. */
	bench_report_text(out, cfg, reps, total);
	fflush(out);
	status = EXIT_OK;
	if (cfg->json) {
		jf = strcmp(cfg->json, "-") ? fopen(cfg->json, "w") : stdout;
		if (!jf) {
			fprintf(stderr, PROG ": cannot write %s: %s\n", cfg->json, strerror(errno));
			status = EXIT_FAIL;
		} else {
			ret = bench_report_json(jf, cfg, &rt, machine, cpu_model, doctor_json, reps,
						total);
			if ((jf != stdout ? fclose(jf) : fflush(jf)) != 0 || ret < 0) {
				fprintf(stderr, PROG ": cannot write %s\n", cfg->json);
				status = EXIT_FAIL;
			}
		}
	}
	if (cfg->plot) {
		ret = bench_plot(cfg->plot, cfg, total, why, sizeof(why));
		if (ret < 0) {
			fprintf(stderr, PROG ": --plot %s: %s\n", cfg->plot, why);
			status = EXIT_FAIL;
		} else {
			fprintf(out, "plot: %s\n", cfg->plot);
		}
	}
	goto out;

err_oom:
	fprintf(stderr, PROG ": out of memory\n");
out:
	if (reps)
		for (unsigned r = 0; r < cfg->reps; r++)
			for (int h = 0; h < H_COUNT; h++)
				free(reps[r].h[h]);
	for (int h = 0; h < H_COUNT; h++)
		free(total[h]);
	free(reps);
	free(doctor_json);
	rtl_thread_release_cpu_latency(latency_fd);
	return status;
}
