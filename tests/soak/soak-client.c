// SPDX-License-Identifier: MIT
/*
 * soak-client: one light RTDE client for tests/soak/sim-soak.sh.
 *
 * It is a program as users write them: the RTDE transport under the
 * control loop (plain threads: five of them share the machine with the
 * simulator), a step that stamps `timestamp` at the controller's rate and
 * ends the loop when the time is up. It prints one line of key=value
 * pairs:
 *
 *   packages skipped resets reconnects text malformed first_ts last_ts wall_s
 *   drift_ms
 *
 * (skipped, resets, reconnects, text and malformed: the RTDE client's own
 * counters; packages + skipped spans [first_ts, last_ts] exactly.)
 *
 * drift = (last_ts - first_ts) - (arrival of the last package - arrival of
 * the first), both in the same run: the controller's timestamp (whole
 * control periods of the simulator's absolute-deadline timer) against this
 * process's CLOCK_MONOTONIC (when the receive returned the package). A simulator that accumulated
 * its period, or lost cycles without saying so, drifts; one that schedules from absolute deadlines
 * stays within a period or two of 0 however long it runs.
 *
 * Usage: soak-client [-h HOST] [-p PORT] [-d SECONDS]
 * Exit status: 0 when the client streamed until the end, 1 on a
 * connection failure, 2 for bad arguments.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/loop.h>
#include <rtloop/rtde.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

struct soak {
	int64_t end; /* CLOCK_MONOTONIC: the step ends the loop from here */
	uint64_t packages;
	double first_ts, last_ts;
	int64_t first_ns, last_ns;
};

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct soak *s = user;

	(void)loop;
	/* Counted before the time is checked: the client's skip count covers
	 * the gap before this package, so [first_ts, last_ts] must include it
	 * for packages + skipped to span the window exactly. */
	if (!isnan(f->ctrl_time)) {
		s->last_ns = f->rx_ns;
		s->last_ts = f->ctrl_time;
		if (s->packages++ == 0) {
			s->first_ns = s->last_ns;
			s->first_ts = s->last_ts;
		}
	}
	if (f->rx_ns >= s->end)
		return -ECANCELED; /* the time is up: stop, not an error */
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: soak-client [-h HOST] [-p PORT] [-d SECONDS]\n", f);
}

int main(int argc, char **argv)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc), .outputs = "timestamp" };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_rtde_client_counters st = { .size = sizeof(st) };
	struct rtl_rtde_transport *tr;
	struct rtl_error err = { 0 };
	struct rtl_loop *loop;
	struct soak s = { 0 };
	const char *host = "127.0.0.1";
	unsigned long port = RTL_RTDE_PORT;
	double duration = 600;
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

	tc.host = host;
	tc.port = (uint16_t)port;
	tc.connect_timeout_ns = 5 * RTL_NS_PER_SEC;
	rc = rtl_rtde_transport_create(&tr, &tc, &err);
	if (rc < 0) {
		fprintf(stderr, "soak-client: %s\n", err.msg);
		return 1;
	}
	lc.transport = rtl_rtde_transport_base(tr);
	lc.step = step;
	lc.user = &s;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.inline_step = true; /* every package stamped as it is received */
	lc.every_frame = true;
	lc.watchdog_periods = -1; /* a reader: no commands to guard */
	rc = rtl_loop_create(&loop, &lc, &err);
	if (rc == 0) {
		s.end = rtl_time_now() + (int64_t)(duration * 1e9);
		rc = rtl_loop_run(loop, &err);
		if (rc == -ECANCELED)
			rc = 0;
		else if (rc < 0 && !err.msg[0])
			snprintf(err.msg, sizeof(err.msg),
				 "the stream ended: %s (see the log above)", strerror(-rc));
	}
	if (rc < 0)
		fprintf(stderr, "soak-client: %s\n", err.msg);
	rtl_rtde_client_stats(rtl_rtde_transport_client(tr), &st);
	printf("packages=%llu skipped=%llu resets=%llu reconnects=%llu text=%llu malformed=%llu "
	       "first_ts=%.6f last_ts=%.6f wall_s=%.6f drift_ms=%.3f\n",
	       (unsigned long long)s.packages, (unsigned long long)st.skipped,
	       (unsigned long long)st.resets, (unsigned long long)st.reconnects,
	       (unsigned long long)st.text, (unsigned long long)st.malformed, s.first_ts, s.last_ts,
	       (double)(s.last_ns - s.first_ns) / 1e9,
	       ((s.last_ts - s.first_ts) - (double)(s.last_ns - s.first_ns) / 1e9) * 1e3);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(tr);
	return rc < 0 ? 1 : 0;
}
