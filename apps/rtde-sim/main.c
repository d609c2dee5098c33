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
#include "options.h"
#include "server.h"
#include "ft.h"
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
		"      --udp-port N          UDP port (default 12347; 0 = any free port)\n");
	fprintf(f,
		"      --ft-port N           also a Net F/T force/torque sensor on the flange,\n"
		"                            streaming RDT over UDP on port N (0 = any free\n"
		"                            port); it reads the arm's contact force\n"
		"      --ft-rate HZ          its RDT output rate (default 7000)\n"
		"      --ft-skip-every N     sensor faults: skip --ft-skip-count records (default\n"
		"      --ft-skip-count K     1) in every N; send every N-th record after the\n"
		"      --ft-reorder-every N  next; every --ft-stall-every S seconds send nothing\n"
		"      --ft-stall-ms N       for N ms; delay each send by 0..--ft-jitter-us us;\n"
		"      --ft-stall-every S    restart the numbering after --ft-reset-after N\n"
		"      --ft-jitter-us N      records (a rebooted sensor)\n"
		"      --ft-reset-after N\n"
		"      --dashboard-port N    the dashboard server's port; --primary-port,\n"
		"      --primary-port N      --secondary-port and --realtime-port the script\n"
		"      --secondary-port N    ports' (default 29999, 30001, 30002, 30003 when\n"
		"      --realtime-port N     --port is 30004, else any free port; 0 = any)\n"
		"      --robot-api-port N    polyscope-x: the Robot API's HTTP port (default 80\n"
		"                            when --port is 30004, else any free port)\n"
		"      --no-dashboard        serve no dashboard (a controller without one)\n"
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
		"      --boot                start as after boot: powered off, brakes on, no\n"
		"                            program; the dashboard powers on and releases the\n"
		"                            brakes, a script port takes rtloop_control.script\n"
		"                            (default: running the rtloop program already)\n"
		"      --local-control       start in local control: the dashboard refuses\n"
		"                            power, brakes, load and play (e-Series)\n"
		"      --power-on-time S     power on to IDLE (default 0.5)\n"
		"      --brake-release-time S  brake release to RUNNING (default 0.5)\n"
		"      --unlock-delay S      a protective stop can be unlocked S s after it\n"
		"                            (default 5, as UR's)\n"
		"      --control-script FILE  compare uploads with FILE instead of this build's\n"
		"                            rtloop_control.script\n"
		"      --external-control-urp NAME  the .urp holding the External Control\n"
		"                            URCap: load NAME + play fetch its program from the\n"
		"                            script sender (default external_control.urp)\n"
		"      --urcap-host ADDR     the script sender's IPv4 address (default 127.0.0.1)\n"
		"      --urcap-port N        the script sender's port (default 50002)\n"
		"\n");
	fprintf(f,
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
		"      --protective-stop-after S  a protective stop S s after the rtloop program\n"
		"                            started (once); unlock it with the dashboard\n"
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
		"\n"
		"Teach-mode push (a hand on the tool while teach mode is on):\n"
		"      --push-x N            its force along base x, y, z in N (-200..200,\n"
		"      --push-y N            default 0): the TCP moves at N/100 m/s along it\n"
		"      --push-z N\n"
		"      --push-after S        from S s after teach mode begins (default 0)\n"
		"      --push-for S          for S s (default 0: until teach mode ends)\n"
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

/* The options of main() alone; the others are the settings table's
 * (options.h), keyed OPT_TABLE + their id (--duration: 'd'). */
enum {
	OPT_PRIORITY = 256,
	OPT_NO_MLOCK,
	OPT_UDP,
	OPT_UDP_PORT,
	OPT_SVC_PORT, /* + enum sim_port_kind */
	OPT_FT_PORT = OPT_SVC_PORT + SIM_PORT_COUNT,
	OPT_FT_RATE,
	OPT_FT_SKIP_EVERY,
	OPT_FT_SKIP_COUNT,
	OPT_FT_REORDER_EVERY,
	OPT_FT_STALL_MS,
	OPT_FT_STALL_EVERY,
	OPT_FT_JITTER_US,
	OPT_FT_RESET_AFTER,
	OPT_TABLE = 512,
};

struct cli {
	struct sim_setup su; /* the controller's, the server's, the UDP port */
	const char *json;
	bool quiet;
	int priority;
	bool no_mlock;
	bool udp;
	bool svc_port_set[SIM_PORT_COUNT]; /* --dashboard-port ... given */
	bool ft;			   /* --ft-port given */
	struct sim_ft_opts ft_opts;
};

/* ---- option values ------------------------------------------------------------- */

/* A setting of the table (options.h) from its command-line text: the
 * number parsed with the command line's rules and messages, then set. */
static int parse_setting(struct cli *cli, const struct sim_option *o, const char *flag,
			 const char *arg)
{
	char why[160], what[64];
	uint64_t u;
	double d;
	int err;

	switch (o->kind) {
	case SIM_OPT_FLAG:
		err = sim_option_set_flag(&cli->su, o, SIM_STYLE_FLAG, why, sizeof(why));
		break;
	case SIM_OPT_UINT:
		if (cli_u64(PROG, flag, arg, o->min, o->max, &u))
			return CLI_EXIT_USAGE;
		err = sim_option_set_uint(&cli->su, o, u, SIM_STYLE_FLAG, why, sizeof(why));
		break;
	case SIM_OPT_DOUBLE:
		if (cli_double(PROG, flag, arg, o->dmin, o->dmax, &d))
			return CLI_EXIT_USAGE;
		err = sim_option_set_double(&cli->su, o, d, SIM_STYLE_FLAG, why, sizeof(why));
		break;
	default:
		err = sim_option_set_text(&cli->su, o, arg, SIM_STYLE_FLAG, why, sizeof(why));
		if (err) {
			snprintf(what, sizeof(what), "not %s", o->what);
			return cli_bad_value(PROG, flag, arg, what);
		}
		break;
	}
	if (err)
		return cli_usage_error(PROG, "%s", why);
	return 0;
}

/* ---- parse ----------------------------------------------------------------------- */

/* The key of the settings table's entry @i, and back. */
static int setting_key(size_t i)
{
	return i == SIM_OPT_DURATION ? 'd' : OPT_TABLE + (int)i;
}

static const struct sim_option *key_setting(int c)
{
	return c == 'd'		? sim_option_at(SIM_OPT_DURATION)
	       : c >= OPT_TABLE ? sim_option_at((size_t)(c - OPT_TABLE))
				: NULL;
}

/* A service port (--dashboard-port ...), which also keeps the controller's
 * number from replacing it; a port --no-dashboard turned off stays off. */
static int parse_svc_port(struct cli *cli, enum sim_port_kind k, const char *flag, const char *arg)
{
	uint64_t u64;

	if (cli_u64(PROG, flag, arg, 0, 65535, &u64))
		return CLI_EXIT_USAGE;
	if (cli->su.srv.service_port[k] >= 0)
		cli->su.srv.service_port[k] = (int32_t)u64;
	cli->svc_port_set[k] = true;
	return 0;
}

/* Option @c of a CLI_CASE row, named @flag: 0, or a usage error (printed). */
static int parse_case(struct cli *cli, int c, const char *flag, const char *arg)
{
	const struct sim_option *o = key_setting(c);
	const struct sim_profile *prof;

	if (o)
		return parse_setting(cli, o, flag, arg);
	if (c >= OPT_SVC_PORT && c < OPT_SVC_PORT + SIM_PORT_COUNT)
		return parse_svc_port(cli, (enum sim_port_kind)(c - OPT_SVC_PORT), flag, arg);
	if (c == OPT_FT_PORT) {
		uint64_t u64;

		if (cli_u64(PROG, flag, arg, 0, 65535, &u64))
			return CLI_EXIT_USAGE;
		cli->ft_opts.port = (uint16_t)u64;
		cli->ft = true;
		return 0;
	}
	/* -P, --profile */
	prof = sim_profile_find(arg);
	if (!prof)
		return cli_bad_value(PROG, flag, arg, "not cb3, eseries or polyscope-x");
	cli->su.sim.profile = (enum sim_profile_id)(prof - sim_profile(0));
	return 0;
}

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse(int argc, char **argv, struct cli *cli)
{
	struct sim_setup *su = &cli->su;
	/* The options of main(); the settings table's rows follow them. */
	const struct cli_opt own[] = {
		CLI_HELP,
		CLI_UINT('p', "port", &su->srv.port, 0, 65535, NULL),
		CLI_TEXT('b', "bind", &su->srv.bind),
		CLI_CASE_ARG('P', "profile"),
		CLI_TEXT('j', "json", &cli->json),
		CLI_FLAG('q', "quiet", &cli->quiet),
		CLI_UINT(OPT_PRIORITY, "priority", &cli->priority, 1, 99, NULL),
		CLI_FLAG(OPT_NO_MLOCK, "no-mlock", &cli->no_mlock),
		CLI_FLAG(OPT_UDP, "udp", &cli->udp),
		CLI_UINT(OPT_UDP_PORT, "udp-port", &su->udp_port, 0, 65535, NULL),
		CLI_CASE_ARG(OPT_FT_PORT, "ft-port"),
		CLI_REAL(OPT_FT_RATE, "ft-rate", &cli->ft_opts.rate_hz, 1.0, 7000.0, NULL),
		CLI_UINT(OPT_FT_SKIP_EVERY, "ft-skip-every", &cli->ft_opts.skip_every, 2, 1000000,
			 NULL),
		CLI_UINT(OPT_FT_SKIP_COUNT, "ft-skip-count", &cli->ft_opts.skip_count, 1, 1000000,
			 NULL),
		CLI_UINT(OPT_FT_REORDER_EVERY, "ft-reorder-every", &cli->ft_opts.reorder_every, 2,
			 1000000, NULL),
		CLI_UINT(OPT_FT_STALL_MS, "ft-stall-ms", &cli->ft_opts.stall_ms, 1, 60000, NULL),
		CLI_REAL(OPT_FT_STALL_EVERY, "ft-stall-every", &cli->ft_opts.stall_every_s, 0.001,
			 1e7, NULL),
		CLI_UINT(OPT_FT_JITTER_US, "ft-jitter-us", &cli->ft_opts.jitter_us, 0, 100000,
			 NULL),
		CLI_UINT(OPT_FT_RESET_AFTER, "ft-reset-after", &cli->ft_opts.reset_after, 1,
			 UINT64_MAX, NULL),
		CLI_CASE_ARG(OPT_SVC_PORT + SIM_PORT_DASHBOARD, "dashboard-port"),
		CLI_CASE_ARG(OPT_SVC_PORT + SIM_PORT_PRIMARY, "primary-port"),
		CLI_CASE_ARG(OPT_SVC_PORT + SIM_PORT_SECONDARY, "secondary-port"),
		CLI_CASE_ARG(OPT_SVC_PORT + SIM_PORT_REALTIME, "realtime-port"),
		CLI_CASE_ARG(OPT_SVC_PORT + SIM_PORT_ROBOT_API, "robot-api-port"),
		CLI_VERSION,
	};
	enum { N_OWN = sizeof(own) / sizeof(own[0]) };
	struct cli_opt opts[N_OWN + SIM_OPT_COUNT + 1];
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	const struct sim_option *o;
	char flag[48];
	int c, err;

	memcpy(opts, own, sizeof(own));
	for (size_t i = 0; i < SIM_OPT_COUNT; i++) {
		o = sim_option_at(i);
		opts[N_OWN + i] = o->kind == SIM_OPT_FLAG
					  ? (struct cli_opt)CLI_CASE(setting_key(i), o->name)
					  : (struct cli_opt)CLI_CASE_ARG(setting_key(i), o->name);
	}
	opts[N_OWN + SIM_OPT_COUNT] = (struct cli_opt)CLI_END;

	while ((c = cli_next(&p, argc, argv)) > 0) {
		err = parse_case(cli, c, cli_flag(&p, flag, sizeof(flag)), optarg);
		if (err)
			return err;
	}
	if (c < 0)
		return p.status;
	/* On the RTDE port of a real controller, the other services are on
	 * theirs too; with any other RTDE port (tests: 0) they are on free
	 * ports, so simulators run side by side. */
	for (int k = 0; k < SIM_PORT_COUNT; k++)
		if (!cli->svc_port_set[k] && su->srv.service_port[k] == 0 &&
		    su->srv.port == RTL_RTDE_PORT)
			su->srv.service_port[k] = sim_port_default((enum sim_port_kind)k);
	return cli_extra_args(PROG, optind, argc, argv) ? CLI_EXIT_USAGE : CLI_RUN;
}

/* Settings that are fine one by one but not together (options.h). */
static int validate(struct cli *cli)
{
	char why[200];

	if (sim_setup_check(&cli->su, SIM_STYLE_FLAG, why, sizeof(why))) {
		fprintf(stderr, PROG ": %s\n", why);
		return -EINVAL;
	}
	if (!cli->ft &&
	    (cli->ft_opts.rate_hz || cli->ft_opts.skip_every || cli->ft_opts.reorder_every ||
	     cli->ft_opts.stall_ms || cli->ft_opts.jitter_us || cli->ft_opts.reset_after)) {
		fprintf(stderr, PROG ": the --ft-* options need --ft-port (the sensor's port)\n");
		return -EINVAL;
	}
	if (cli->ft && cli->udp) {
		fprintf(stderr,
			PROG ": --ft-port is served with the RTDE server, not with --udp\n");
		return -EINVAL;
	}
	if ((cli->ft_opts.skip_count && !cli->ft_opts.skip_every) ||
	    (cli->ft_opts.skip_every && cli->ft_opts.skip_count >= cli->ft_opts.skip_every) ||
	    (!cli->ft_opts.stall_ms != !cli->ft_opts.stall_every_s)) {
		fprintf(stderr,
			PROG ": --ft-skip-count needs --ft-skip-every and must be below it; "
			     "--ft-stall-ms and --ft-stall-every go together\n");
		return -EINVAL;
	}
	if (cli->ft_opts.skip_every && !cli->ft_opts.skip_count)
		cli->ft_opts.skip_count = 1;
	return 0;
}

/* ---- run ----------------------------------------------------------------------------- */

static struct sim_server *the_server;
static struct sim_udp *the_udp;

static void on_signal(int sig)
{
	(void)sig;
	if (the_server)
		sim_server_stop(the_server);
	if (the_udp)
		sim_udp_stop(the_udp);
}

struct status {
	int64_t last_ns;
	uint64_t last_sent;
	bool shown;
};

static uint64_t faults_injected(const struct sim_stats *st)
{
	return st->jittered + st->skipped_packages + st->stalls + st->bursts + st->fragments +
	       st->resets + st->texts_injected;
}

static void on_status(void *ctx, const struct sim_stats *st, int64_t now)
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
	const struct sim *sim;
	const struct sim_profile *profile;
	struct sim_stats st;
	double seconds;
	uint16_t port;
	bool mem_locked;
	const char *sched;
	const struct sim_ft_stats *ft; /* the F/T sensor's, or NULL */
};

/* The F/T sensor's counters, after the controller's report. */
static void report_ft_text(FILE *f, const struct sim_ft_stats *ft)
{
	const uint64_t *v = (const uint64_t *)(const void *)ft;

	fputs("F/T sensor (RDT):\n", f);
	for (size_t i = 0; i < SIM_FT_N_COUNTERS; i++)
		fprintf(f, "  %-16s %" PRIu64 "\n", sim_ft_counter_names[i], v[i]);
}

/* The server's JSON report, with the F/T sensor's counters as "ft". */
static int report_json(struct sim_server *srv, FILE *f, const struct run_info *ri)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int err;

	if (!ri->ft)
		return sim_server_report_json(srv, f, ri->seconds, ri->mem_locked, ri->sched);
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	err = sim_server_report_json(srv, m, ri->seconds, ri->mem_locked, ri->sched);
	fclose(m);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '}'))
		if (buf[--len] == '}')
			break;
	if (!err) {
		const uint64_t *v = (const uint64_t *)(const void *)ri->ft;

		fwrite(buf, 1, len, f);
		fputs(",\"ft\":{", f);
		for (size_t i = 0; i < SIM_FT_N_COUNTERS; i++)
			fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", sim_ft_counter_names[i],
				v[i]);
		fputs("}}\n", f);
	}
	free(buf);
	return err;
}

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

/* The controller around the arm: its state at the end, the programs it
 * was sent, the ones it would not run. */
static void report_controller(FILE *f, const struct sim_ctrl_summary *c, const char *program_error)
{
	const struct sim_ctrl_stats *cs = &c->stats;

	fprintf(f,
		"  controller: robot %s, safety %s, program %s%s%s, %s control; %" PRIu64
		" power on, %" PRIu64 " brake release, %" PRIu64 " power off\n",
		rtl_ur_robot_mode_name(c->robot_mode), rtl_ur_safety_status_name(c->safety_mode),
		rtl_ur_program_state_name(c->program_state), c->program_name[0] ? " " : "",
		c->program_name, c->remote ? "remote" : "local", cs->power_ons, cs->brake_releases,
		cs->power_offs);
	fprintf(f,
		"  programs: %" PRIu64 " received, %" PRIu64 " rtloop started, %" PRIu64
		" rtloop refused (arm not ready), %" PRIu64 " others; %" PRIu64
		" protective stops, %" PRIu64 " unlocks; %" PRIu64
		" command packages while no program ran; %" PRIu64
		" script clients cut off (no program end)\n",
		cs->programs, cs->rtloop_started, cs->rtloop_refused, cs->others,
		cs->protective_stops, cs->unlocks, cs->commands_ignored, cs->script_floods);
	for (uint64_t i = 0; i < cs->others && i < SIM_CTRL_OTHERS; i++) {
		const struct sim_ctrl_other *o = &c->others[i];

		fprintf(f, "  other program: %s on the %s port, %zu bytes, first line '%s'\n",
			o->name[0] ? o->name : "(unnamed)",
			sim_port_name((enum sim_port_kind)o->port), o->size, o->first_line);
	}
	if (cs->others > SIM_CTRL_OTHERS)
		fprintf(f, "  (%" PRIu64 " more other programs not listed)\n",
			cs->others - SIM_CTRL_OTHERS);
	for (int i = 0; i < SIM_PROGS; i++) {
		const struct sim_prog_stats *m = &cs->model[i];

		if (!m->started && !m->refused)
			continue;
		fprintf(f,
			"  %s programs: %" PRIu64 " started, %" PRIu64
			" refused (arm not ready), %" PRIu64 " failed; %" PRIu64
			" commands, %" PRIu64 " not modelled%s%s%s, %" PRIu64
			" stopped by their watchdog%s%s\n",
			sim_progs[i]->name, m->started, m->refused, m->failed, m->commands,
			m->unmodelled, m->last_unmodelled[0] ? " (last: " : "", m->last_unmodelled,
			m->last_unmodelled[0] ? ")" : "", m->watchdog_stops,
			m->last[0] ? "; last: " : "", m->last);
	}
	if (c->last_exception.seq)
		fprintf(f, "  last runtime exception: %s, line %d: %s\n", c->last_exception.title,
			(int)c->last_exception.line, c->last_exception.text);
	if (program_error[0])
		fprintf(f, "  control script: %s\n", program_error);
}

static void report_text(FILE *f, const struct run_info *ri)
{
	const struct sim_stats *st = &ri->st;
	const struct sim_faults *fl = &ri->sim->opts.faults;
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
	report_controller(f, &st->ctrl, ri->sim->ctrl.program_error);
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
	if (ri->ft)
		report_ft_text(f, ri->ft);
}

/* rtde-sim --udp: the options that apply, then udp.c runs and reports. */
static int run_udp(const struct cli *cli)
{
	struct sim_udp_opts o;
	bool to_stdout = cli->json && !strcmp(cli->json, "-");
	FILE *json = NULL;
	int err;

	sim_setup_udp(&cli->su, &o);
	if (cli->json) {
		json = to_stdout ? stdout : fopen(cli->json, "w");
		if (!json) {
			fprintf(stderr, PROG ": --json %s: %s\n", cli->json, strerror(errno));
			return EXIT_FAIL;
		}
	}
	cli_on_stop_signals(on_signal);
	err = sim_udp_main(&o, to_stdout ? stderr : stdout, json, cli->quiet, &the_udp);
	if (json && json != stdout && fclose(json))
		err = -EIO;
	return err ? EXIT_FAIL : EXIT_OK;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	struct sim_server *srv = NULL;
	struct rtl_error rterr;
	struct status status = { 0 };
	struct run_info ri = { .sched = "SCHED_OTHER" };
	static struct sim_ft_feed ft_feed;
	struct sim_ft *ft = NULL;
	struct sim_ft_stats ft_stats;
	char sched[64];
	int64_t t_start;
	int err;

	/* Parse and validate. */
	sim_setup_default(&cli.su);
	err = parse(argc, argv, &cli);
	if (err != CLI_RUN)
		return err;
	if (validate(&cli))
		return EXIT_USAGE;

	/* Lock memory (best effort: the simulator is not the loop under test,
	 * but page faults in it would show up as latency in every client). */
	if (!cli.no_mlock)
		ri.mem_locked = rtl_mem_lock_all(&rterr) == 0;

	/* Priority, if asked for (best effort, reported). */
	if (cli.priority) {
		struct rtl_thread_attr a = {
			.size = sizeof(a),
			.policy = SCHED_FIFO,
			.priority = cli.priority,
			.cpu = -1,
			.best_effort = true,
		};
		struct rtl_thread_info ti;

		err = rtl_thread_apply_self(&ti, &a, NULL);
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
		cli.su.srv.status = on_status;
		cli.su.srv.status_ctx = &status;
	}
	err = sim_server_create(&srv, &cli.su.sim, &cli.su.srv);
	if (err) {
		if (err == -EINVAL)
			fprintf(stderr, PROG ": the simulator refused these options (robot or "
					     "fault settings out of range)\n");
		else
			fprintf(stderr, PROG ": cannot listen on %s:%u: %s\n", cli.su.srv.bind,
				cli.su.srv.port, strerror(-err));
		return EXIT_FAIL;
	}
	ri.port = sim_server_port(srv);
	ri.sim = sim_server_sim(srv);
	if (cli.ft) {
		char why[160];

		cli.ft_opts.bind = cli.su.srv.bind;
		cli.ft_opts.seed = cli.su.sim.faults.seed;
		err = sim_ft_create(&ft, &cli.ft_opts, &ft_feed, why, sizeof(why));
		if (err) {
			fprintf(stderr, PROG ": %s\n", why);
			sim_server_destroy(srv);
			return EXIT_FAIL;
		}
		/* Before the server runs: its thread publishes from the start. */
		sim_server_sim(srv)->ft_feed = &ft_feed;
	}
	ri.profile = sim_profile(cli.su.sim.profile);
	if (!cli.quiet) {
		char svc[SIM_PORT_COUNT][8];

		for (int k = 0; k < SIM_PORT_COUNT; k++) {
			uint16_t sp = sim_server_service_port(srv, (enum sim_port_kind)k);

			snprintf(svc[k], sizeof(svc[k]), sp ? "%u" : "-", sp);
		}
		fprintf(stderr, PROG ": listening on %s:%u (%s, %u Hz)\n", cli.su.srv.bind, ri.port,
			ri.profile->name, ri.sim->max_hz);
		fprintf(stderr,
			PROG ": dashboard port %s, primary %s, secondary %s, realtime %s, "
			     "robot api %s; %s\n",
			svc[SIM_PORT_DASHBOARD], svc[SIM_PORT_PRIMARY], svc[SIM_PORT_SECONDARY],
			svc[SIM_PORT_REALTIME], svc[SIM_PORT_ROBOT_API],
			cli.su.sim.ctrl.boot ? "booted: powered off, no program"
					     : "running the rtloop program");
		if (ft)
			fprintf(stderr,
				PROG ": F/T sensor (Net F/T, RDT) on UDP %s:%u at %.0f Hz, on the "
				     "flange\n",
				cli.su.srv.bind, sim_ft_port(ft), sim_ft_rate(ft));
	}
	if (ft && sim_ft_start(ft)) {
		fprintf(stderr, PROG ": cannot start the F/T sensor's thread\n");
		sim_ft_destroy(ft);
		sim_server_destroy(srv);
		return EXIT_FAIL;
	}

	/* Run until a signal or the duration. */
	the_server = srv;
	cli_on_stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);
	t_start = rtl_time_now();
	err = sim_server_run(srv);
	ri.seconds = (double)(rtl_time_now() - t_start) / 1e9;
	the_server = NULL;
	if (status.shown)
		fputc('\n', stderr);
	if (err)
		fprintf(stderr, PROG ": the server loop failed: %s\n", strerror(-err));

	/* Report. */
	sim_server_stats(srv, &ri.st);
	if (ft) {
		sim_ft_stop(ft); /* its counters are final now */
		sim_ft_stats(ft, &ft_stats);
		sim_ft_destroy(ft);
		ri.ft = &ft_stats;
	}
	/* With the JSON on stdout, the text goes to stderr. */
	report_text(cli.json && !strcmp(cli.json, "-") ? stderr : stdout, &ri);
	if (cli.json) {
		FILE *f = strcmp(cli.json, "-") ? fopen(cli.json, "w") : stdout;

		if (!f) {
			fprintf(stderr, PROG ": --json %s: %s\n", cli.json, strerror(errno));
			err = -errno;
		} else {
			if (report_json(srv, f, &ri))
				err = -EIO;
			if (f != stdout && fclose(f))
				err = -EIO;
		}
	}
	fflush(stdout);
	sim_server_destroy(srv);
	return err ? EXIT_FAIL : EXIT_OK;
}
