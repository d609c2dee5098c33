// SPDX-License-Identifier: MIT
/*
 * soak-client: one light RTDE client for tests/soak/sim-soak.sh.
 *
 * It connects with rtl_rtde_conn (the blocking driver every simple program
 * uses), streams `timestamp` at the controller's rate for a given time and
 * prints one line of key=value pairs:
 *
 *   packages skipped resets first_ts last_ts wall_s drift_ms
 *
 * drift = (last_ts - first_ts) - (arrival of the last package - arrival of
 * the first), both in the same run: the controller's timestamp (whole
 * control periods of the simulator's absolute-deadline timer) against this
 * process's CLOCK_MONOTONIC. A simulator that accumulated its period, or
 * lost cycles without saying so, drifts; one that schedules from absolute
 * deadlines stays within a period or two of 0 however long it runs.
 *
 * Usage: soak-client [-h HOST] [-p PORT] [-d SECONDS]
 * Exit status: 0 when the client streamed until the end, 1 on a
 * connection failure, 2 for bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_conn.h>
#include <rtloop/time.h>

static void usage(FILE *f)
{
	fputs("usage: soak-client [-h HOST] [-p PORT] [-d SECONDS]\n", f);
}

int main(int argc, char **argv)
{
	struct rtl_rtde_client_config cfg = { .outputs = "timestamp" };
	struct rtl_rtde_client_error err = { 0 };
	const struct rtl_rtde_client_stats *st;
	struct rtl_rtde_client_event ev;
	struct rtl_rtde_conn *conn;
	const char *host = "127.0.0.1";
	unsigned long port = RTL_RTDE_PORT;
	double duration = 600, first_ts = 0, last_ts = 0;
	int64_t first_ns = 0, last_ns = 0, end;
	uint64_t packages = 0;
	char *endp;
	int opt, rc;

	while ((opt = getopt(argc, argv, "h:p:d:")) != -1) {
		switch (opt) {
		case 'h':
			host = optarg;
			break;
		case 'p':
			port = strtoul(optarg, &endp, 10);
			if (*endp || port == 0 || port > 65535) {
				fprintf(stderr, "soak-client: bad port '%s'\n", optarg);
				return 2;
			}
			break;
		case 'd':
			duration = strtod(optarg, &endp);
			if (*endp || !(duration > 0)) {
				fprintf(stderr, "soak-client: bad duration '%s'\n", optarg);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}

	rc = rtl_rtde_conn_open(&conn, host, (uint16_t)port, &cfg, 5 * RTL_NS_PER_SEC, &err);
	if (rc < 0) {
		fprintf(stderr, "soak-client: %s\n", err.err.msg);
		return 1;
	}
	end = rtl_time_now() + (int64_t)(duration * 1e9);
	while (rtl_time_now() < end) {
		rc = rtl_rtde_conn_next_event(conn, &ev, RTL_NS_PER_SEC);
		if (rc == 0)
			continue;
		if (rc < 0)
			break;
		if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal) {
			fprintf(stderr, "soak-client: %s\n", ev.u.error->err.msg);
			rc = ev.u.error->err.code;
			break;
		}
		if (ev.type != RTL_RTDE_CLIENT_EV_DATA || !ev.u.data.has_timestamp)
			continue;
		last_ns = rtl_time_now();
		last_ts = ev.u.data.timestamp;
		if (packages++ == 0) {
			first_ns = last_ns;
			first_ts = last_ts;
		}
	}
	st = rtl_rtde_client_stats(rtl_rtde_conn_client(conn));
	printf("packages=%llu skipped=%llu resets=%llu first_ts=%.6f last_ts=%.6f wall_s=%.6f "
	       "drift_ms=%.3f\n",
	       (unsigned long long)packages, (unsigned long long)st->skipped,
	       (unsigned long long)st->resets, first_ts, last_ts,
	       (double)(last_ns - first_ns) / 1e9,
	       ((last_ts - first_ts) - (double)(last_ns - first_ns) / 1e9) * 1e3);
	rtl_rtde_conn_close(conn);
	return rc < 0 ? 1 : 0;
}
