// SPDX-License-Identifier: MIT
/*
 * rtde-sim: a simulated Universal Robots controller that speaks RTDE.
 *
 * A thin driver over the server (server.h), which is a thin driver over the
 * controller and its sessions (sim.h, session.h): parse the options,
 * validate them, lock memory, set the priority, create the server, run it
 * until SIGINT, SIGTERM or --duration, then print the report (text, and
 * JSON with --json). While it runs on a terminal, one status line is
 * refreshed twice a second. docs/rtde-sim.md is the manual.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/hist.h>
#include <rtloop/mem.h>
#include <rtloop/thread.h>
#include <rtloop/time.h>

#include "cli.h"
#include "server.h"
#include "udp.h"

#define PROG "rtde-sim"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [options]\n"
		"\n"
		"A simulated Universal Robots controller on the RTDE port: protocol v1 and v2,\n"
		"CB3 / e-Series / PolyScope X version profiles, a UR5e that executes the\n"
		"register commands of <rtloop/rtde_cmd.h>, fault injection, and the round trip\n"
		"from a data package to the input package that echoes its timestamp.\n"
		"\n"
		"Network:\n"
		"  -p, --port N              TCP port (default 30004; 0 = any free port)\n"
		"  -b, --bind ADDR           IPv4 address to listen on (default 127.0.0.1)\n"
		"      --max-clients N       clients served at once; more are told so, then\n"
		"                            closed after 1 s (default 16; UR's forum says 3)\n"
		"      --handshake-timeout S a connection that sends no whole package for S s\n"
		"                            before its first START is closed (default 5;\n"
		"                            0 = never)\n"
		"      --send-buffer BYTES   per-client send queue: a client that lets it\n"
		"                            overflow is disconnected (default 262144)\n"
		"      --sndbuf BYTES        SO_SNDBUF of client sockets (default: kernel's)\n"
		"      --udp                 serve rtloop's 1 kHz UDP stream (Doosan v1.0 state\n"
		"                            layout, docs/udp.md) instead of RTDE; --skip-every,\n"
		"                            --skip-count, --start-time, --bind, --duration,\n"
		"                            --json and the robot options apply\n"
		"      --udp-port N          UDP port (default 12347; 0 = any free port)\n"
		"\n"
		"Controller:\n"
		"  -P, --profile NAME        cb3 (3.15.8, 125 Hz), eseries (5.26.0, 500 Hz) or\n"
		"                            polyscope-x (10.13.0, 500 Hz); default eseries\n"
		"      --controller-version V  answer version V (X.Y.Z[.B]) of the profile's\n"
		"                            line instead; fields follow it\n"
		"      --max-protocol 1|2    highest RTDE protocol accepted (default 2)\n"
		"      --fieldbus            an EtherNet/IP adapter owns registers 0-23 and the\n"
		"                            standard inputs: they answer IN_USE\n"
		"      --start-time S        timestamp of the first cycle (default 42)\n"
		"      --text-v2             send text messages in the v2 layout even to v1\n"
		"                            sessions\n"
		"\n"
		"Faults (each counted in the report; --seed makes them repeat):\n"
		"      --jitter-us N         delay each cycle's send by 0..N us\n"
		"      --skip-every N        skip packages in every N cycles, as a busy\n"
		"      --skip-count K        controller does (K per N, default 1; never resent)\n"
		"      --stall-ms N          every --stall-every S seconds, stall N ms, then send\n"
		"      --stall-every S       the held packages back to back\n"
		"      --burst N             every --burst-every S seconds (default 1), hold N\n"
		"      --burst-every S       packages and write them together\n"
		"      --fragment            write the stream in random small pieces\n"
		"      --fragment-max N      largest piece in bytes (default 7)\n"
		"      --reset-after N       reset (RST) each connection after N data packages\n"
		"      --text-every N        an INFO text message after every N-th data package\n"
		"      --seed N              seed of the fault generator (default 1)\n"
		"\n"
		"Robot (a UR5e running <rtloop/rtde_cmd.h>'s executor):\n"
		"      --contact-z Z         a horizontal contact plane at height Z m (base "
		"frame):\n"
		"                            pressing into it gives actual_TCP_force\n"
		"      --contact-stiffness K  N/m (default 5000)\n"
		"      --contact-damping D   N s/m (default 50)\n"
		"      --force-noise N       standard deviation of the force [N] (torque: N/10)\n"
		"      --watchdog-ms MS      heartbeat timeout when the client asks for the\n"
		"                            default (default 100; 0 = off)\n"
		"\n");
	/* Two strings: one would pass the 4095 bytes C17 compilers must take. */
	fprintf(f,
		"Measurement and run:\n"
		"      --echo-register N     clients echo timestamps in input_double_register_N\n"
		"                            (rtloop's layout: 47); report the round trip\n"
		"  -d, --duration S          stop after S seconds (default: at SIGINT/SIGTERM)\n"
		"  -j, --json FILE           also write the report as JSON to FILE ('-': stdout,\n"
		"                            the text report then goes to stderr)\n"
		"  -q, --quiet               no live status line\n"
		"      --priority N          run under SCHED_FIFO N (best effort; default: no)\n"
		"      --no-mlock            do not lock memory\n"
		"  -h, --help                print this help and exit\n"
		"  -V, --version             print the version and exit\n"
		"\n"
		"Exit status: 0 ran and stopped cleanly, 1 could not run, 2 usage error.\n");
}

enum {
	OPT_MAX_CLIENTS = 256,
	OPT_HANDSHAKE_TIMEOUT,
	OPT_SEND_BUFFER,
	OPT_SNDBUF,
	OPT_CONTROLLER_VERSION,
	OPT_MAX_PROTOCOL,
	OPT_FIELDBUS,
	OPT_START_TIME,
	OPT_TEXT_V2,
	OPT_JITTER,
	OPT_SKIP_EVERY,
	OPT_SKIP_COUNT,
	OPT_STALL_MS,
	OPT_STALL_EVERY,
	OPT_BURST,
	OPT_BURST_EVERY,
	OPT_FRAGMENT,
	OPT_FRAGMENT_MAX,
	OPT_RESET_AFTER,
	OPT_TEXT_EVERY,
	OPT_SEED,
	OPT_ECHO,
	OPT_PRIORITY,
	OPT_NO_MLOCK,
	OPT_CONTACT_Z,
	OPT_CONTACT_K,
	OPT_CONTACT_D,
	OPT_FORCE_NOISE,
	OPT_WATCHDOG,
	OPT_UDP,
	OPT_UDP_PORT,
};

struct cli {
	struct rtl_sim_opts sim;
	struct rtl_sim_server_opts srv;
	const char *json;
	bool quiet;
	int priority;
	bool mlock;
	bool udp;
	uint16_t udp_port;
};

/* ---- option values ------------------------------------------------------------- */

static const char *opt_name; /* the option being parsed, for messages */

/* rtl_cli_u64() into a 32-bit field. */
static int parse_u32(const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = rtl_cli_u64(PROG, opt_name, arg, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

static int parse_version(const char *arg, struct rtl_rtde_controller_version *v)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	int used = 0, n = sscanf(arg, "%u.%u.%u%n.%u%n", &a, &b, &c, &used, &d, &used);

	if (n < 3 || arg[used] || a == 0 || a > 255 || b > 255 || c > 65535)
		return rtl_cli_bad_value(PROG, opt_name, arg, "not a version X.Y.Z or X.Y.Z.B");
	v->major = a;
	v->minor = b;
	v->bugfix = c;
	v->build = n == 4 ? d : 0;
	return 0;
}

/* ---- parse ----------------------------------------------------------------------- */

static int parse(int argc, char **argv, struct cli *cli)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'b' },
		{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
		{ "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
		{ "send-buffer", required_argument, NULL, OPT_SEND_BUFFER },
		{ "sndbuf", required_argument, NULL, OPT_SNDBUF },
		{ "profile", required_argument, NULL, 'P' },
		{ "controller-version", required_argument, NULL, OPT_CONTROLLER_VERSION },
		{ "max-protocol", required_argument, NULL, OPT_MAX_PROTOCOL },
		{ "fieldbus", no_argument, NULL, OPT_FIELDBUS },
		{ "start-time", required_argument, NULL, OPT_START_TIME },
		{ "text-v2", no_argument, NULL, OPT_TEXT_V2 },
		{ "jitter-us", required_argument, NULL, OPT_JITTER },
		{ "skip-every", required_argument, NULL, OPT_SKIP_EVERY },
		{ "skip-count", required_argument, NULL, OPT_SKIP_COUNT },
		{ "stall-ms", required_argument, NULL, OPT_STALL_MS },
		{ "stall-every", required_argument, NULL, OPT_STALL_EVERY },
		{ "burst", required_argument, NULL, OPT_BURST },
		{ "burst-every", required_argument, NULL, OPT_BURST_EVERY },
		{ "fragment", no_argument, NULL, OPT_FRAGMENT },
		{ "fragment-max", required_argument, NULL, OPT_FRAGMENT_MAX },
		{ "reset-after", required_argument, NULL, OPT_RESET_AFTER },
		{ "text-every", required_argument, NULL, OPT_TEXT_EVERY },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "echo-register", required_argument, NULL, OPT_ECHO },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "priority", required_argument, NULL, OPT_PRIORITY },
		{ "no-mlock", no_argument, NULL, OPT_NO_MLOCK },
		{ "contact-z", required_argument, NULL, OPT_CONTACT_Z },
		{ "contact-stiffness", required_argument, NULL, OPT_CONTACT_K },
		{ "contact-damping", required_argument, NULL, OPT_CONTACT_D },
		{ "force-noise", required_argument, NULL, OPT_FORCE_NOISE },
		{ "watchdog-ms", required_argument, NULL, OPT_WATCHDOG },
		{ "udp", no_argument, NULL, OPT_UDP },
		{ "udp-port", required_argument, NULL, OPT_UDP_PORT },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rtl_sim_faults *f = &cli->sim.faults;
	struct rtl_sim_robot_config *rc = &cli->sim.robot;
	const struct rtl_sim_profile *p;
	uint64_t u64;
	uint32_t u32;
	int c, idx, err = 0;

	opterr = 0;
	for (;;) {
		static char name[40];

		idx = -1;
		c = getopt_long(argc, argv, ":hp:b:P:d:j:qV", longopts, &idx);
		if (c == -1)
			break;
		/* The option's name, for messages. */
		if (idx >= 0)
			snprintf(name, sizeof(name), "--%s", longopts[idx].name);
		else
			snprintf(name, sizeof(name), "-%c", c);
		opt_name = name;
		switch (c) {
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		case 'V':
			exit(rtl_cli_version(PROG));
		case 'p':
			err = parse_u32(optarg, 0, 65535, &u32);
			cli->srv.port = (uint16_t)u32;
			break;
		case 'b':
			cli->srv.bind = optarg;
			break;
		case OPT_MAX_CLIENTS:
			err = parse_u32(optarg, 1, RTL_SIM_MAX_SESSIONS, &cli->sim.max_clients);
			break;
		case OPT_HANDSHAKE_TIMEOUT: {
			double s;

			err = rtl_cli_double(PROG, name, optarg, 0.0, 3600.0, &s);
			if (!err)
				cli->sim.handshake_timeout_ns = s > 0 ? llround(s * 1e9) : -1;
			break;
		}
		case OPT_SEND_BUFFER:
			err = rtl_cli_u64(PROG, name, optarg, 4096, 1u << 30, &u64);
			cli->sim.send_buffer = (size_t)u64;
			break;
		case OPT_SNDBUF:
			err = parse_u32(optarg, 1, INT_MAX, &u32);
			cli->srv.sndbuf = (int)u32;
			break;
		case 'P':
			p = rtl_sim_profile_find(optarg);
			if (!p)
				return rtl_cli_bad_value(PROG, name, optarg,
							 "not cb3, eseries or polyscope-x");
			cli->sim.profile = (enum rtl_sim_profile_id)(p - rtl_sim_profile(0));
			break;
		case OPT_CONTROLLER_VERSION:
			err = parse_version(optarg, &cli->sim.version);
			break;
		case OPT_MAX_PROTOCOL:
			err = parse_u32(optarg, 1, 2, &u32);
			cli->sim.max_protocol = u32;
			break;
		case OPT_FIELDBUS:
			cli->sim.fieldbus = true;
			break;
		case OPT_START_TIME:
			err = rtl_cli_double(PROG, name, optarg, 0.0, 1e7, &cli->sim.start_time_s);
			break;
		case OPT_TEXT_V2:
			cli->sim.text_v2 = true;
			break;
		case OPT_JITTER:
			err = parse_u32(optarg, 0, 1000000, &f->jitter_us);
			break;
		case OPT_SKIP_EVERY:
			err = parse_u32(optarg, 2, 1000000, &f->skip_every);
			break;
		case OPT_SKIP_COUNT:
			err = parse_u32(optarg, 1, 1000000, &f->skip_count);
			break;
		case OPT_STALL_MS:
			err = parse_u32(optarg, 1, 60000, &f->stall_ms);
			break;
		case OPT_STALL_EVERY:
			err = rtl_cli_double(PROG, name, optarg, 0.001, 1e7, &f->stall_every_s);
			break;
		case OPT_BURST:
			err = parse_u32(optarg, 2, 10000, &f->burst);
			break;
		case OPT_BURST_EVERY:
			err = rtl_cli_double(PROG, name, optarg, 0.001, 1e7, &f->burst_every_s);
			break;
		case OPT_FRAGMENT:
			f->fragment = true;
			break;
		case OPT_FRAGMENT_MAX:
			err = parse_u32(optarg, 1, 65535, &f->fragment_max);
			break;
		case OPT_RESET_AFTER:
			err = rtl_cli_u64(PROG, name, optarg, 1, UINT64_MAX, &f->reset_after);
			break;
		case OPT_TEXT_EVERY:
			err = parse_u32(optarg, 1, UINT32_MAX, &f->text_every);
			break;
		case OPT_SEED:
			err = rtl_cli_u64(PROG, name, optarg, 0, UINT64_MAX, &f->seed);
			break;
		case OPT_ECHO:
			err = parse_u32(optarg, 0, RTL_RTDE_REG_COUNT - 1, &u32);
			cli->sim.echo_register = (int)u32;
			break;
		case 'd':
			err = rtl_cli_double(PROG, name, optarg, 0.001, 1e7, &cli->srv.duration_s);
			break;
		case 'j':
			cli->json = optarg;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case OPT_PRIORITY:
			err = parse_u32(optarg, 1, 99, &u32);
			cli->priority = (int)u32;
			break;
		case OPT_NO_MLOCK:
			cli->mlock = false;
			break;
		case OPT_CONTACT_Z:
			err = rtl_cli_double(PROG, name, optarg, -2.0, 2.0, &rc->contact.point[2]);
			rc->contact.enabled = true;
			break;
		case OPT_CONTACT_K:
			err = rtl_cli_double(PROG, name, optarg, 0.0, 1e7, &rc->contact.stiffness);
			break;
		case OPT_CONTACT_D:
			err = rtl_cli_double(PROG, name, optarg, 0.0, 1e6, &rc->contact.damping);
			break;
		case OPT_FORCE_NOISE:
			err = rtl_cli_double(PROG, name, optarg, 0.0, 1e4, &rc->force_noise);
			rc->torque_noise = rc->force_noise / 10.0;
			break;
		case OPT_UDP:
			cli->udp = true;
			break;
		case OPT_UDP_PORT:
			err = parse_u32(optarg, 0, 65535, &u32);
			cli->udp_port = (uint16_t)u32;
			break;
		case OPT_WATCHDOG:
			err = parse_u32(optarg, 0, 60000, &u32);
			rc->watchdog_ns = (int64_t)u32 * RTL_NS_PER_MS;
			break;
		default:
			return rtl_cli_getopt_error(PROG, c, argv);
		}
		if (err)
			return err;
	}
	rc->seed = f->seed;
	return rtl_cli_extra_args(PROG, optind, argc, argv);
}

/* Options that are fine one by one but not together. */
static int validate(struct cli *cli)
{
	const struct rtl_sim_faults *f = &cli->sim.faults;
	const struct rtl_sim_profile *p = rtl_sim_profile(cli->sim.profile);
	struct in_addr addr;

	if (cli->sim.version.major) {
		uint64_t v = rtl_rtde_version_pack(&cli->sim.version);
		uint64_t pv = rtl_rtde_version_pack(&p->version);

		if (rtl_rtde_version_line(v) != rtl_rtde_version_line(pv)) {
			fprintf(stderr,
				PROG ": --controller-version %u.%u.%u is not a %s version; choose "
				     "the profile of its line with --profile\n",
				cli->sim.version.major, cli->sim.version.minor,
				cli->sim.version.bugfix, p->name);
			return -EINVAL;
		}
	}
	if (f->skip_every && f->skip_count >= f->skip_every) {
		fprintf(stderr, PROG ": --skip-count %u must be below --skip-every %u\n",
			f->skip_count, f->skip_every);
		return -EINVAL;
	}
	if (!f->skip_every && f->skip_count != 1) {
		fprintf(stderr, PROG ": --skip-count needs --skip-every\n");
		return -EINVAL;
	}
	if ((f->stall_ms != 0) != (f->stall_every_s > 0)) {
		fprintf(stderr, PROG ": --stall-ms and --stall-every go together\n");
		return -EINVAL;
	}
	if (cli->sim.fieldbus && cli->sim.echo_register >= 0 &&
	    cli->sim.echo_register < RTL_RTDE_REG_FIELDBUS_END) {
		fprintf(stderr,
			PROG ": --echo-register %d is in the fieldbus range that --fieldbus "
			     "makes IN_USE; use 24..47\n",
			cli->sim.echo_register);
		return -EINVAL;
	}
	if (inet_pton(AF_INET, cli->srv.bind, &addr) != 1) {
		fprintf(stderr, PROG ": --bind %s: not an IPv4 address\n", cli->srv.bind);
		return -EINVAL;
	}
	if (cli->json && !*cli->json) {
		fprintf(stderr, PROG ": --json needs a file name ('-' for stdout)\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- run ----------------------------------------------------------------------------- */

static struct rtl_sim_server *the_server;
static struct rtl_sim_udp *the_udp;

static void on_signal(int sig)
{
	(void)sig;
	if (the_server)
		rtl_sim_server_stop(the_server);
	if (the_udp)
		rtl_sim_udp_stop(the_udp);
}

struct status {
	int64_t last_ns;
	uint64_t last_sent;
	bool shown;
};

static uint64_t faults_injected(const struct rtl_sim_stats *st)
{
	return st->jittered + st->skipped_packages + st->stalls + st->bursts + st->fragments +
	       st->resets + st->texts_injected;
}

static void on_status(void *ctx, const struct rtl_sim_stats *st, int64_t now)
{
	struct status *s = ctx;
	double rate = 0.0;

	if (s->last_ns)
		rate = (double)(st->data_sent - s->last_sent) * 1e9 / (double)(now - s->last_ns);
	s->last_ns = now;
	s->last_sent = st->data_sent;
	fprintf(stderr,
		"\r" PROG ": clients %u (%u streaming)  rate %.1f/s  sent %" PRIu64
		"  faults %" PRIu64 "  echoes %" PRIu64 "   ",
		st->clients, st->streaming, rate, st->data_sent, faults_injected(st), st->echoes);
	fflush(stderr);
	s->shown = true;
}

/* ---- report ------------------------------------------------------------------------- */

struct run_info {
	const struct rtl_sim *sim;
	const struct rtl_sim_profile *profile;
	struct rtl_sim_stats st;
	double seconds;
	uint16_t port;
	bool mem_locked;
	const char *sched;
};

static void hist_line(FILE *f, const char *title, const struct rtl_hist *h)
{
	if (!rtl_hist_count(h)) {
		fprintf(f, "  %s: no samples\n", title);
		return;
	}
	fprintf(f, "  %s [us]: n=%" PRIu64 " p50=%.1f p99=%.1f p99.9=%.1f max=%.1f\n", title,
		rtl_hist_count(h), rtl_hist_percentile(h, 50) / 1e3,
		rtl_hist_percentile(h, 99) / 1e3, rtl_hist_percentile(h, 99.9) / 1e3,
		(double)rtl_hist_max(h) / 1e3);
}

static void report_text(FILE *f, const struct run_info *ri)
{
	const struct rtl_sim_stats *st = &ri->st;
	const struct rtl_sim_faults *fl = &ri->sim->opts.faults;
	char ver[48];

	rtl_rtde_version_format(ver, sizeof(ver), ri->sim->version);
	fprintf(f, PROG ": %s profile, controller %s, %u Hz, protocol <= %u, port %u, %.3f s\n",
		ri->profile->name, ver, ri->sim->max_hz, ri->sim->opts.max_protocol, ri->port,
		ri->seconds);
	fprintf(f, "  cycles: %" PRIu64 " (%" PRIu64 " sending), %" PRIu64 " overruns\n",
		st->cycles, st->cycles_sending, st->overruns);
	fprintf(f,
		"  clients: %" PRIu64 " connections, %" PRIu64 " over the limit, %" PRIu64
		" idle closed (handshake time-out), %" PRIu64 " slow readers disconnected, %" PRIu64
		" out of sync\n",
		st->connections, st->clients_over_limit, st->idle_closed, st->slow_disconnects,
		st->desync_disconnects);
	fprintf(f,
		"  sent: %" PRIu64 " data packages, %" PRIu64 " bytes; received: %" PRIu64
		" packages, %" PRIu64 " inputs applied, %" PRIu64 " texts, %" PRIu64
		" answered with an error\n",
		st->data_sent, st->bytes_sent, st->packages_in, st->inputs_applied, st->texts_in,
		st->errors_answered);
	fprintf(f,
		"  robot: %" PRIu64 " watchdog trips, %" PRIu64 " stops (%" PRIu64
		" to rest, longest %" PRIu64 " cycles), %s at the end; %" PRIu64
		" non-finite values received\n",
		st->robot.watchdog_trips, st->robot.stops, st->robot.stops_at_rest,
		st->robot.max_stop_cycles, st->robot.at_rest ? "at rest" : "MOVING",
		st->nonfinite_in);
	fprintf(f,
		"  faults: jitter %" PRIu64 " cycles (max %.1f us), skipped %" PRIu64
		" packages in %" PRIu64 " cycles, %" PRIu64 " stalls, %" PRIu64 " bursts, %" PRIu64
		" fragmented writes, %" PRIu64 " resets, %" PRIu64 " texts\n",
		st->jittered, (double)st->jitter_max_ns / 1e3, st->skipped_packages,
		st->skipped_cycles, st->stalls, st->bursts, st->fragments, st->resets,
		st->texts_injected);
	if (fl->seed != 1 || faults_injected(st) || st->fragments)
		fprintf(f, "  seed: %" PRIu64 "\n", fl->seed);
	fprintf(f, "  host: memory %s, %s\n", ri->mem_locked ? "locked" : "not locked", ri->sched);
	hist_line(f, "cycle wake-up lateness", &ri->sim->wake_hist);
	if (ri->sim->opts.echo_register >= 0) {
		fprintf(f,
			"  echo (input_double_register_%d): %" PRIu64 " round trips, %" PRIu64
			" unmatched\n",
			ri->sim->opts.echo_register, st->echoes, st->echo_unmatched);
		if (st->echoes)
			rtl_hist_print(&ri->sim->echo_hist, f, "  echo round trip", RTL_NS_PER_US);
		else
			hist_line(f, "echo round trip", &ri->sim->echo_hist);
	}
}

static int report_json(FILE *f, const struct run_info *ri)
{
	const struct rtl_sim_stats *st = &ri->st;
	const struct rtl_sim_faults *fl = &ri->sim->opts.faults;
	char ver[48];

	rtl_rtde_version_format(ver, sizeof(ver), ri->sim->version);
	fprintf(f,
		"{\"program\":\"" PROG "\",\"profile\":\"%s\",\"controller_version\":\"%s\","
		"\"frequency_hz\":%u,\"max_protocol\":%u,\"port\":%u,\"seconds\":%.6f,"
		"\"memory_locked\":%s,\"scheduling\":\"%s\",",
		ri->profile->name, ver, ri->sim->max_hz, ri->sim->opts.max_protocol, ri->port,
		ri->seconds, ri->mem_locked ? "true" : "false", ri->sched);
	fprintf(f,
		"\"faults\":{\"seed\":%" PRIu64 ",\"jitter_us\":%u,\"skip_every\":%u,"
		"\"skip_count\":%u,\"stall_ms\":%u,\"stall_every_s\":%g,\"burst\":%u,"
		"\"burst_every_s\":%g,\"fragment\":%s,\"reset_after\":%" PRIu64
		",\"text_every\":%u},",
		fl->seed, fl->jitter_us, fl->skip_every, fl->skip_every ? fl->skip_count : 0,
		fl->stall_ms, fl->stall_every_s, fl->burst, fl->burst ? fl->burst_every_s : 0.0,
		fl->fragment ? "true" : "false", fl->reset_after, fl->text_every);
	fprintf(f,
		"\"stats\":{\"cycles\":%" PRIu64 ",\"cycles_sending\":%" PRIu64
		",\"overruns\":%" PRIu64 ",\"data_sent\":%" PRIu64 ",\"bytes_sent\":%" PRIu64
		",\"connections\":%" PRIu64 ",\"clients_over_limit\":%" PRIu64
		",\"idle_closed\":%" PRIu64 ",\"slow_disconnects\":%" PRIu64
		",\"desync_disconnects\":%" PRIu64 ",\"packages_in\":%" PRIu64
		",\"inputs_applied\":%" PRIu64 ",\"texts_in\":%" PRIu64
		",\"errors_answered\":%" PRIu64 ",\"commands_refused\":%" PRIu64
		",\"nonfinite_in\":%" PRIu64 "},\"robot\":",
		st->cycles, st->cycles_sending, st->overruns, st->data_sent, st->bytes_sent,
		st->connections, st->clients_over_limit, st->idle_closed, st->slow_disconnects,
		st->desync_disconnects, st->packages_in, st->inputs_applied, st->texts_in,
		st->errors_answered, st->commands_refused, st->nonfinite_in);
	rtl_sim_robot_summary_json(f, &st->robot);
	fputc(',', f);
	fprintf(f,
		"\"injected\":{\"jittered_cycles\":%" PRIu64 ",\"jitter_max_ns\":%" PRId64
		",\"skipped_packages\":%" PRIu64 ",\"skipped_cycles\":%" PRIu64
		",\"stalls\":%" PRIu64 ",\"bursts\":%" PRIu64 ",\"fragments\":%" PRIu64
		",\"resets\":%" PRIu64 ",\"texts\":%" PRIu64 "},",
		st->jittered, st->jitter_max_ns, st->skipped_packages, st->skipped_cycles,
		st->stalls, st->bursts, st->fragments, st->resets, st->texts_injected);
	fprintf(f, "\"wake_lateness\":");
	rtl_hist_write_json(&ri->sim->wake_hist, f);
	fprintf(f,
		",\"echo\":{\"register\":%d,\"round_trips\":%" PRIu64 ",\"unmatched\":%" PRIu64
		",\"latency\":",
		ri->sim->opts.echo_register, st->echoes, st->echo_unmatched);
	rtl_hist_write_json(&ri->sim->echo_hist, f);
	fprintf(f, "}}\n");
	return ferror(f) ? -EIO : 0;
}

/* rtde-sim --udp: the options that apply, then udp.c runs and reports. */
static int run_udp(const struct cli *cli)
{
	struct rtl_sim_udp_opts o;
	bool to_stdout = cli->json && !strcmp(cli->json, "-");
	FILE *json = NULL;
	int err;

	rtl_sim_udp_opts_default(&o);
	o.bind = cli->srv.bind;
	o.port = cli->udp_port;
	o.duration_s = cli->srv.duration_s;
	o.start_time_s = cli->sim.start_time_s;
	o.skip_every = cli->sim.faults.skip_every;
	o.skip_count = cli->sim.faults.skip_count;
	o.robot = cli->sim.robot;
	if (cli->json) {
		json = to_stdout ? stdout : fopen(cli->json, "w");
		if (!json) {
			fprintf(stderr, PROG ": --json %s: %s\n", cli->json, strerror(errno));
			return EXIT_FAIL;
		}
	}
	rtl_cli_on_stop_signals(on_signal);
	err = rtl_sim_udp_main(&o, to_stdout ? stderr : stdout, json, cli->quiet, &the_udp);
	if (json && json != stdout && fclose(json))
		err = -EIO;
	return err ? EXIT_FAIL : EXIT_OK;
}

int main(int argc, char **argv)
{
	struct cli cli = { .mlock = true };
	struct rtl_sim_server *srv = NULL;
	struct rtl_error rterr;
	struct status status = { 0 };
	struct run_info ri = { .sched = "SCHED_OTHER" };
	char sched[64];
	int64_t t_start;
	int err;

	/* Parse and validate. */
	rtl_sim_opts_default(&cli.sim);
	cli.sim.robot.contact.stiffness = 5000.0;
	cli.sim.robot.contact.damping = 50.0;
	cli.srv.bind = "127.0.0.1";
	cli.srv.port = RTL_RTDE_PORT;
	cli.udp_port = RTL_UDP_DEFAULT_PORT;
	if (parse(argc, argv, &cli) || validate(&cli))
		return EXIT_USAGE;

	/* Lock memory (best effort: the simulator is not the loop under test,
	 * but page faults in it would show up as latency in every client). */
	if (cli.mlock)
		ri.mem_locked = rtl_mem_lock_all(&rterr) == 0;

	/* Priority, if asked for (best effort, reported). */
	if (cli.priority) {
		struct rtl_thread_attr a = {
			.policy = SCHED_FIFO,
			.priority = cli.priority,
			.cpu = -1,
			.best_effort = true,
		};
		struct rtl_thread_info ti;

		err = rtl_thread_apply_self(&a, &ti, NULL);
		if (err || ti.degraded) {
			fprintf(stderr,
				PROG ": warning: SCHED_FIFO %d refused, running SCHED_OTHER: %s\n",
				cli.priority, err ? strerror(-err) : ti.why.msg);
		} else {
			snprintf(sched, sizeof(sched), "SCHED_FIFO %d", cli.priority);
			ri.sched = sched;
		}
	}

	/* UDP mode (udp.h): its own server over the same robot options. */
	if (cli.udp)
		return run_udp(&cli);

	/* Allocate: the server binds now, so a busy port fails before we run. */
	if (!cli.quiet && isatty(STDERR_FILENO)) {
		cli.srv.status = on_status;
		cli.srv.status_ctx = &status;
	}
	err = rtl_sim_server_create(&srv, &cli.sim, &cli.srv);
	if (err) {
		if (err == -EINVAL)
			fprintf(stderr, PROG ": the simulator refused these options (robot or "
					     "fault settings out of range)\n");
		else
			fprintf(stderr, PROG ": cannot listen on %s:%u: %s\n", cli.srv.bind,
				cli.srv.port, strerror(-err));
		return EXIT_FAIL;
	}
	ri.port = rtl_sim_server_port(srv);
	ri.sim = rtl_sim_server_sim(srv);
	ri.profile = rtl_sim_profile(cli.sim.profile);
	if (!cli.quiet)
		fprintf(stderr, PROG ": listening on %s:%u (%s, %u Hz)\n", cli.srv.bind, ri.port,
			ri.profile->name, ri.sim->max_hz);

	/* Run until a signal or the duration. */
	the_server = srv;
	rtl_cli_on_stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);
	t_start = rtl_time_now();
	err = rtl_sim_server_run(srv);
	ri.seconds = (double)(rtl_time_now() - t_start) / 1e9;
	the_server = NULL;
	if (status.shown)
		fputc('\n', stderr);
	if (err)
		fprintf(stderr, PROG ": the server loop failed: %s\n", strerror(-err));

	/* Report. */
	rtl_sim_server_stats(srv, &ri.st);
	/* With the JSON on stdout, the text goes to stderr. */
	report_text(cli.json && !strcmp(cli.json, "-") ? stderr : stdout, &ri);
	if (cli.json) {
		FILE *f = strcmp(cli.json, "-") ? fopen(cli.json, "w") : stdout;

		if (!f) {
			fprintf(stderr, PROG ": --json %s: %s\n", cli.json, strerror(errno));
			err = -errno;
		} else {
			if (report_json(f, &ri))
				err = -EIO;
			if (f != stdout && fclose(f))
				err = -EIO;
		}
	}
	fflush(stdout);
	rtl_sim_server_destroy(srv);
	return err ? EXIT_FAIL : EXIT_OK;
}
