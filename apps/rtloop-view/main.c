// SPDX-License-Identifier: MIT
/*
 * rtloop-view NAME: watch a loop's telemetry (/dev/shm/rtloop-NAME) live in
 * the browser, and optionally in PlotJuggler. view.h has the design; this
 * file parses the options, resolves the addresses, starts the three parts
 * and waits for a signal or the --duration.
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rtloop/time.h>

#include "cli.h"
#include "view.h"

#ifndef VIEW_CHARTJS
#define VIEW_CHARTJS "/usr/share/javascript/chart.js/chart.min.js"
#endif
#define DEFAULT_PORT 8070

enum { EXIT_OK = 0, EXIT_FAIL = 1 };

struct opts {
	const char *name;
	const char *bind;
	unsigned port;
	const char *chartjs;
	const char *pj;
	double pj_rate;
	double duration; /* 0: until a signal */
};

static volatile sig_atomic_t stop_asked;

static void on_signal(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [OPTIONS] NAME\n"
		"\n"
		"Serve a live page of a loop's telemetry, the shared-memory object\n"
		"/dev/shm/rtloop-NAME that a loop run with --telemetry NAME publishes: its\n"
		"signals as scrolling plots, the latency histograms on a log scale, the\n"
		"counters with their rates and the robot's state, updated 20 times a second.\n"
		"It waits for the loop to start, keeps the last figures when it ends, and\n"
		"follows the next loop of that name.\n"
		"\n"
		"  -p, --port N            HTTP port (default %d; 0: any free port)\n"
		"  -b, --bind ADDR         address to serve on (default 127.0.0.1: this\n"
		"                          machine only); any other address prints what\n"
		"                          anyone on that network can see\n"
		"      --chartjs PATH      Chart.js to serve (default " VIEW_CHARTJS ",\n"
		"                          Debian's libjs-chart.js)\n"
		"  -J, --plotjuggler HOST[:PORT]\n"
		"                          also send the records as JSON datagrams to\n"
		"                          PlotJuggler's UDP server (port default %d)\n"
		"      --pj-rate HZ        records a second to PlotJuggler at most (default\n"
		"                          %d; 1..10000); the counters go 10 times a second\n"
		"  -d, --duration S        stop after S seconds (default: at SIGINT/SIGTERM)\n"
		"  -h, --help              print this help and exit\n"
		"  -V, --version           print the version and exit\n"
		"\n"
		"Exit status: 0 stopped, 1 could not serve, 2 usage error.\n",
		DEFAULT_PORT, PJ_DEFAULT_PORT, PJ_DEFAULT_RATE);
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > RTL_TELEMETRY_NAME_MAX)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int parse(int argc, char **argv, struct opts *o)
{
	enum { OPT_CHARTJS = 256, OPT_PJ_RATE };
	const struct cli_opt opts[] = {
		CLI_UINT('p', "port", &o->port, 0, 65535, NULL),
		CLI_TEXT('b', "bind", &o->bind),
		CLI_TEXT(OPT_CHARTJS, "chartjs", &o->chartjs),
		CLI_TEXT('J', "plotjuggler", &o->pj),
		CLI_REAL(OPT_PJ_RATE, "pj-rate", &o->pj_rate, 1, 10000, NULL),
		CLI_REAL('d', "duration", &o->duration, 0.1, 1e7, NULL),
		CLI_HELP,
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	int c = cli_next(&p, argc, argv);

	if (c < 0)
		return p.status;
	if (optind >= argc)
		return cli_usage_error(PROG, "the telemetry's NAME is missing (the loop's "
					     "--telemetry NAME)");
	o->name = argv[optind];
	if (!valid_name(o->name))
		return cli_bad_value(PROG, "NAME", o->name,
				     "expected 1 to 48 of A-Z a-z 0-9 _ . -");
	if (cli_extra_args(PROG, optind + 1, argc, argv))
		return CLI_EXIT_USAGE;
	return CLI_RUN;
}

/* Resolve @host (numeric for --bind) and @port into @out. */
static int resolve(const char *flag, const char *host, unsigned port, bool numeric, int socktype,
		   struct sockaddr_storage *out, socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = socktype };
	struct addrinfo *res = NULL;
	char service[8];
	int ret;

	if (numeric)
		hints.ai_flags = AI_NUMERICHOST;
	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(host, service, &hints, &res);
	if (ret || !res) {
		fprintf(stderr, PROG ": %s %s: %s%s\n", flag, host, gai_strerror(ret),
			numeric ? " (an IPv4 or IPv6 address, e.g. 127.0.0.1 or ::1)" : "");
		return -EINVAL;
	}
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* HOST[:PORT], [V6]:PORT or V6 alone, for --plotjuggler. */
static int split_host_port(const char *s, char *host, size_t cap, unsigned *port)
{
	const char *colon = strrchr(s, ':');
	uint64_t p = PJ_DEFAULT_PORT;
	size_t n;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		n = (size_t)(end - s - 1);
		if (end[1] == ':' && cli_parse_u64(end + 2, 1, 65535, &p))
			return -EINVAL;
		s++;
	} else if (colon && strchr(s, ':') == colon) { /* one colon: HOST:PORT */
		n = (size_t)(colon - s);
		if (cli_parse_u64(colon + 1, 1, 65535, &p))
			return -EINVAL;
	} else {
		n = strlen(s); /* a host, or an IPv6 address without a port */
	}
	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	*port = (unsigned)p;
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr) >>
			24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr);
}

int main(int argc, char **argv)
{
	struct opts o = { .bind = "127.0.0.1",
			  .port = DEFAULT_PORT,
			  .chartjs = VIEW_CHARTJS,
			  .pj_rate = PJ_DEFAULT_RATE };
	static struct view_source src;
	struct view_http *http = NULL;
	struct sockaddr_storage addr, pj_addr;
	socklen_t addr_len, pj_len;
	char host[256], url_host[300];
	unsigned pj_port = PJ_DEFAULT_PORT;
	int64_t end;
	int ret = parse(argc, argv, &o);

	if (ret != CLI_RUN)
		return ret;
	if (resolve("--bind", o.bind, o.port, true, SOCK_STREAM, &addr, &addr_len) < 0)
		return CLI_EXIT_USAGE;
	if (o.pj) {
		struct view_pj_config pc;

		if (split_host_port(o.pj, host, sizeof(host), &pj_port) < 0)
			return cli_bad_value(PROG, "--plotjuggler", o.pj,
					     "expected HOST, HOST:PORT or [IPV6]:PORT");
		if (resolve("--plotjuggler", host, pj_port, false, SOCK_DGRAM, &pj_addr, &pj_len))
			return EXIT_FAIL;
		pc = (struct view_pj_config){ .addr = (const struct sockaddr *)&pj_addr,
					      .addr_len = pj_len,
					      .rate_hz = o.pj_rate,
					      .name = o.name };
		if (view_pj_open(&src.pj, &pc) < 0)
			return EXIT_FAIL;
	}
	src.name = o.name;
	signal(SIGPIPE, SIG_IGN);
	cli_on_stop_signals(on_signal);
	ret = view_source_start(&src);
	if (ret < 0) {
		fprintf(stderr, PROG ": cannot start the sampler: %s\n", strerror(-ret));
		view_pj_close(src.pj);
		return EXIT_FAIL;
	}
	ret = view_http_start(&http,
			      &(struct view_http_config){ .src = &src,
							  .chartjs = o.chartjs,
							  .addr = (const struct sockaddr *)&addr,
							  .addr_len = addr_len,
							  .ipv6 = addr.ss_family == AF_INET6 });
	if (ret < 0) {
		view_source_stop(&src);
		view_pj_close(src.pj);
		return EXIT_FAIL;
	}
	snprintf(url_host, sizeof(url_host), addr.ss_family == AF_INET6 ? "[%s]" : "%s", o.bind);
	if (!is_loopback(&addr))
		fprintf(stderr,
			PROG
			": warning: --bind %s serves the page to every host that can reach "
			"this machine on port %u: anyone there sees %s's signals (what the "
			"loop reads and commands), its counters, its latency histograms and "
			"the robot's state: read-only, but without a login and unencrypted. "
			"The default, 127.0.0.1, keeps it on this machine (ssh -L %u:127.0.0.1:%u "
			"watches it from another).\n",
			o.bind, view_http_port(http), o.name, view_http_port(http),
			view_http_port(http));
	printf(PROG ": http://%s:%u/ shows telemetry %s (/dev/shm/rtloop-%s)", url_host,
	       view_http_port(http), o.name, o.name);
	if (o.pj)
		printf("; PlotJuggler: %s port %u, %g records/s", host, pj_port, o.pj_rate);
	printf("\n");
	fflush(stdout);

	end = o.duration > 0 ? rtl_time_now() + (int64_t)(o.duration * 1e9) : INT64_MAX;
	while (!stop_asked && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 50 * RTL_NS_PER_MS);

	view_http_stop(http);
	view_source_stop(&src);
	if (src.pj) {
		uint64_t sent, failed;

		view_pj_stats(src.pj, &sent, &failed);
		printf(PROG ": PlotJuggler: %llu datagrams sent, %llu failed\n",
		       (unsigned long long)sent, (unsigned long long)failed);
		view_pj_close(src.pj);
	}
	return EXIT_OK;
}
