// SPDX-License-Identifier: MIT
/*
 * The rtloop RTDE client against rtde-sim over loopback: the simulator's
 * server runs in a thread of the test on an ephemeral port, and the client
 * is the one programs use (rtl_rtde_conn, the blocking driver; the step
 * function itself where the test wants to own the socket). Where
 * test-sim-server.c checks the bytes the simulator writes, this file checks
 * what the client makes of them: versions, rates, errors, loss counts,
 * reconnects, and the robot moving under register commands.
 *
 * The assertions are exact and independent of timing wherever the protocol
 * allows: timestamps advance in whole control periods computed from the
 * cycle number, faults follow documented rules (docs/rtde-sim.md, "Fault
 * semantics"), and motion is measured between the controller cycles in
 * which the executor reports a mode change (output register 24), not
 * between moments of the test's clock. Every wait is bounded; each test
 * streams for a few seconds at most.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_client.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_conn.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#include "server.h"
#include "sim.h"

#define HOST "127.0.0.1"
#define OPEN_TIMEOUT (3 * RTL_NS_PER_SEC)
/* The simulator's clock starts at 42 s (sim.h). */
#define START_TS 42.0

/* ---- server ------------------------------------------------------------------------------ */

static struct rtl_sim_server *serve(const struct rtl_sim_opts *o,
				    const struct rtl_sim_server_opts *so)
{
	struct rtl_sim_server_opts def = { 0 };
	struct rtl_sim_server *srv = NULL;
	int err;

	err = rtl_sim_server_create(&srv, o, so ? so : &def);
	cr_assert_eq(err, 0, "server: %s", strerror(-err));
	cr_assert_eq(rtl_sim_server_start(srv), 0);
	return srv;
}

/* Stop the server, then take its final statistics (exact from here on). */
static void finish(struct rtl_sim_server *srv, struct rtl_sim_stats *st)
{
	rtl_sim_server_stop(srv);
	cr_assert_eq(rtl_sim_server_join(srv), 0);
	if (st)
		rtl_sim_server_stats(srv, st);
	rtl_sim_server_destroy(srv);
}

static struct rtl_sim_opts sim_opts(enum rtl_sim_profile_id p)
{
	struct rtl_sim_opts o;

	rtl_sim_opts_default(&o);
	o.profile = p;
	return o;
}

/* ---- client ------------------------------------------------------------------------------ */

static struct rtl_rtde_conn *dial(struct rtl_sim_server *srv,
				  const struct rtl_rtde_client_config *cfg)
{
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *conn = NULL;
	int r = rtl_rtde_conn_open(&conn, HOST, rtl_sim_server_port(srv), cfg, OPEN_TIMEOUT, &err);

	cr_assert_eq(r, 0, "open: %d: %s", r, err.err.msg);
	cr_assert_not_null(conn);
	return conn;
}

/* Open expecting failure: returns the code, the message in @err. */
static int dial_fails(struct rtl_sim_server *srv, const struct rtl_rtde_client_config *cfg,
		      struct rtl_rtde_client_error *err)
{
	struct rtl_rtde_conn *conn = NULL;
	int r = rtl_rtde_conn_open(&conn, HOST, rtl_sim_server_port(srv), cfg, OPEN_TIMEOUT, err);

	cr_assert_null(conn);
	cr_assert_eq(r, err->err.code, "the code returned is the code reported");
	return r;
}

static const struct rtl_rtde_client_info *info_of(struct rtl_rtde_conn *conn)
{
	return rtl_rtde_client_info(rtl_rtde_conn_client(conn));
}

static const struct rtl_rtde_client_stats *stats_of(struct rtl_rtde_conn *conn)
{
	return rtl_rtde_client_stats(rtl_rtde_conn_client(conn));
}

static bool contains(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

/* What a stream of data packages looked like. */
#define MAX_PKGS 2048
struct stream {
	size_t n;
	double ts[MAX_PKGS];
	uint64_t cs[MAX_PKGS];
	uint64_t skipped[MAX_PKGS]; /* the event's count of packages skipped before it */
	uint64_t skipped_sum;
	bool has_cs;
	int end; /* 0, or the fatal error code that ended it */
	char end_msg[RTL_RTDE_CLIENT_ERROR_MAX];
	unsigned texts;
};

static struct stream S, S2;

/*
 * Take up to @want data packages from @conn, within @timeout_ns in all;
 * stops early at a fatal error (kept in s->end). Returns the count.
 */
static size_t collect(struct rtl_rtde_conn *conn, struct stream *s, size_t want, int64_t timeout_ns)
{
	int64_t end = rtl_time_now() + timeout_ns;
	struct rtl_rtde_client_event ev;

	memset(s, 0, sizeof(*s));
	cr_assert_leq(want, MAX_PKGS);
	while (s->n < want && rtl_time_now() < end) {
		int r = rtl_rtde_conn_next_event(conn, &ev, end - rtl_time_now());

		if (r <= 0)
			break;
		if (ev.type == RTL_RTDE_CLIENT_EV_TEXT)
			s->texts++;
		if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal) {
			s->end = ev.u.error->err.code;
			memcpy(s->end_msg, ev.u.error->err.msg, sizeof(s->end_msg));
			break;
		}
		if (ev.type != RTL_RTDE_CLIENT_EV_DATA)
			continue;
		cr_assert(ev.u.data.has_timestamp);
		s->ts[s->n] = ev.u.data.timestamp;
		s->has_cs = ev.u.data.has_control_step;
		s->cs[s->n] = ev.u.data.control_step;
		s->skipped[s->n] = ev.u.data.skipped;
		s->skipped_sum += ev.u.data.skipped;
		s->n++;
	}
	return s->n;
}

/* Every timestamp step of @s is exactly @steps control periods of @hz. */
static void assert_steps(const struct stream *s, double hz, long steps)
{
	for (size_t i = 1; i < s->n; i++)
		cr_assert_eq(lround((s->ts[i] - s->ts[i - 1]) * hz), steps,
			     "package %zu: %.6f -> %.6f is not %ld periods", i, s->ts[i - 1],
			     s->ts[i], steps);
}

/* The control cycle of timestamp @ts (cycle 0 at START_TS). */
static long cycle_of(double ts, double hz)
{
	return lround((ts - START_TS) * hz);
}

/* ---- versions, rates, protocols ------------------------------------------------------------ */

Test(sim_client, every_profile_reports_its_version_and_streams_at_its_rate)
{
	for (int p = 0; p < RTL_SIM_PROFILE_COUNT; p++) {
		const struct rtl_sim_profile *prof = rtl_sim_profile((enum rtl_sim_profile_id)p);
		struct rtl_sim_opts o = sim_opts((enum rtl_sim_profile_id)p);
		struct rtl_sim_server *srv = serve(&o, NULL);
		/* control_step is newer than CB3: dropped there, kept elsewhere. */
		struct rtl_rtde_client_config cfg = {
			.outputs = "timestamp,control_step",
			.recipe_flags = RTL_RTDE_RECIPE_DROP_UNAVAILABLE,
		};
		struct rtl_rtde_conn *conn = dial(srv, &cfg);
		const struct rtl_rtde_client_info *in = info_of(conn);
		const double hz = prof->frequency_hz;
		struct rtl_rtde_handle h;

		cr_assert_eq(in->protocol, RTL_RTDE_PROTOCOL_V2, "%s", prof->name);
		cr_assert_eq(in->version.major, prof->version.major, "%s", prof->name);
		cr_assert_eq(in->version.minor, prof->version.minor, "%s", prof->name);
		cr_assert_eq(in->version.bugfix, prof->version.bugfix, "%s", prof->name);
		cr_assert_eq(in->max_frequency, hz, "%s: %g Hz", prof->name, in->max_frequency);
		cr_assert_eq(in->divisor, 1);
		cr_assert_eq(in->frequency, hz);
		cr_assert_eq(in->period_ns, llround(1e9 / hz));
		cr_assert_eq(in->output_id, 1);
		cr_assert_eq(rtl_rtde_recipe_handle(
				     rtl_rtde_client_output_recipe(rtl_rtde_conn_client(conn)),
				     "control_step", &h),
			     p == RTL_SIM_PROFILE_CB3 ? -ENOENT : 0, "%s: control_step",
			     prof->name);

		cr_assert_eq(collect(conn, &S, 50, 2 * RTL_NS_PER_SEC), 50, "%s: %zu packages",
			     prof->name, S.n);
		cr_assert_geq(S.ts[0], START_TS);
		assert_steps(&S, hz, 1);
		cr_assert_eq(S.has_cs, p != RTL_SIM_PROFILE_CB3);
		for (size_t i = 0; S.has_cs && i < S.n; i++)
			cr_assert_eq(S.cs[i], (uint64_t)llround(S.ts[i] * hz),
				     "control_step counts periods since the controller start");
		cr_assert_eq(stats_of(conn)->skipped, 0);
		cr_assert_eq(stats_of(conn)->malformed, 0);
		rtl_rtde_conn_close(conn);
		finish(srv, NULL);
	}
}

Test(sim_client, falls_back_to_v1_and_streams_at_the_maximum_rate)
{
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config cfg = { .outputs = "timestamp,actual_q", .frequency = 25 };
	struct rtl_sim_server *srv;
	struct rtl_rtde_conn *conn;
	const struct rtl_rtde_client_info *in;

	/* An old controller: V 2 is refused, the client asks for 1. */
	o.max_protocol = 1;
	srv = serve(&o, NULL);
	conn = dial(srv, &cfg);
	in = info_of(conn);
	cr_assert_eq(in->protocol, RTL_RTDE_PROTOCOL_V1);
	cr_assert_eq(in->output_id, 0, "no recipe id in v1");
	cr_assert_eq(in->requested_frequency, 0, "v1 sends no frequency");
	cr_assert_eq(in->divisor, 1, "v1 streams at the maximum rate whatever was asked");
	cr_assert_eq(in->frequency, 500);
	cr_assert_eq(collect(conn, &S, 100, 2 * RTL_NS_PER_SEC), 100);
	assert_steps(&S, 500, 1);
	cr_assert_eq(stats_of(conn)->skipped, 0, "a 25 Hz request in v1 is not a loss of 19/20");
	cr_assert_eq(stats_of(conn)->wrong_recipe, 0);
	rtl_rtde_conn_close(conn);
	finish(srv, NULL);

	/* A client told to speak v1 to a v2 controller. */
	srv = serve(NULL, NULL);
	cfg.protocol = 1;
	conn = dial(srv, &cfg);
	cr_assert_eq(info_of(conn)->protocol, RTL_RTDE_PROTOCOL_V1);
	cr_assert_eq(collect(conn, &S, 20, 2 * RTL_NS_PER_SEC), 20);
	assert_steps(&S, 500, 1);
	rtl_rtde_conn_close(conn);
	finish(srv, NULL);
}

Test(sim_client, output_rate_follows_the_floor_rule)
{
	static const struct {
		enum rtl_sim_profile_id p;
		double asked;
		unsigned n; /* max(1, floor(max / asked)) */
		double hz;  /* max / n */
	} cases[] = {
		{ RTL_SIM_PROFILE_ESERIES, 25, 20, 25 },
		{ RTL_SIM_PROFILE_ESERIES, 200, 2, 250 },
		{ RTL_SIM_PROFILE_ESERIES, 300, 1, 500 },
		{ RTL_SIM_PROFILE_ESERIES, 499, 1, 500 },
		{ RTL_SIM_PROFILE_ESERIES, 2000, 1, 500 },
		{ RTL_SIM_PROFILE_ESERIES, 1, 500, 1 },
		{ RTL_SIM_PROFILE_CB3, 50, 2, 62.5 },
		{ RTL_SIM_PROFILE_CB3, 125, 1, 125 },
		{ RTL_SIM_PROFILE_POLYSCOPE_X, 100, 5, 100 },
	};
	struct rtl_sim_server *srv[RTL_SIM_PROFILE_COUNT];

	for (int p = 0; p < RTL_SIM_PROFILE_COUNT; p++) {
		struct rtl_sim_opts o = sim_opts((enum rtl_sim_profile_id)p);

		srv[p] = serve(&o, NULL);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rtl_rtde_client_config cfg = { .outputs = "timestamp",
						      .frequency = cases[i].asked };
		struct rtl_rtde_conn *conn = dial(srv[cases[i].p], &cfg);
		const struct rtl_rtde_client_info *in = info_of(conn);
		double max = rtl_sim_profile(cases[i].p)->frequency_hz;
		/* Two packages at 1 Hz; about a quarter second otherwise. */
		size_t want = cases[i].hz < 10 ? 2 : (size_t)(cases[i].hz / 4) + 2;

		cr_assert_eq(in->divisor, cases[i].n, "%g Hz asked: N %u", cases[i].asked,
			     in->divisor);
		cr_assert_eq(in->frequency, cases[i].hz, "%g Hz asked: %g Hz", cases[i].asked,
			     in->frequency);
		cr_assert_eq(in->requested_frequency, fmin(cases[i].asked, max));
		cr_assert_eq(collect(conn, &S, want, 4 * RTL_NS_PER_SEC), want);
		assert_steps(&S, max, cases[i].n);
		cr_assert_eq(stats_of(conn)->skipped, 0, "%g Hz asked", cases[i].asked);
		rtl_rtde_conn_close(conn);
	}
	for (int p = 0; p < RTL_SIM_PROFILE_COUNT; p++)
		finish(srv[p], NULL);
}

/* ---- errors as the client reports them ------------------------------------------------------ */

Test(sim_client, a_field_the_controller_lacks_is_reported_by_name)
{
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_CB3);
	struct rtl_sim_server *srv = serve(&o, NULL);
	struct rtl_rtde_client_config cfg = { .outputs = "timestamp,actual_current_as_torque" };
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *conn;
	struct rtl_sim_stats st;

	/* The controller (3.15.8) answers NOT_FOUND for this field; the client
	 * knows it from the registry and the version before it asks. */
	cr_assert_eq(dial_fails(srv, &cfg, &err), -EPROTO, "%s", err.err.msg);
	cr_assert(err.fatal);
	cr_assert(contains(err.err.msg, "'actual_current_as_torque'"), "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "3.15.8"), "names the controller: %s", err.err.msg);
	cr_assert(contains(err.err.msg, "RTDE " HOST ":"), "names host:port: %s", err.err.msg);

	/* With the drop flag the field goes and the rest streams. */
	cfg.recipe_flags = RTL_RTDE_RECIPE_DROP_UNAVAILABLE;
	conn = dial(srv, &cfg);
	cr_assert_eq(rtl_rtde_client_output_recipe(rtl_rtde_conn_client(conn))->n, 1);
	cr_assert_eq(collect(conn, &S, 10, 2 * RTL_NS_PER_SEC), 10);
	rtl_rtde_conn_close(conn);

	/* A name no controller has fails before any connection, with a hint. */
	cfg.outputs = "timestamp,actual_tcp_pose";
	cr_assert_eq(dial_fails(srv, &cfg, &err), -ENOENT, "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "'actual_tcp_pose'"), "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "actual_TCP_pose"), "suggests the name: %s", err.err.msg);
	finish(srv, &st);
	cr_assert_eq(st.connections, 2, "the misspelt recipe never connected");
}

Test(sim_client, inputs_in_use_are_reported_by_name)
{
	struct rtl_sim_server *srv = serve(NULL, NULL);
	struct rtl_rtde_client_config cfg = {
		.outputs = "timestamp",
		.inputs = { RTL_RTDE_CMD_FIELD_MODE "," RTL_RTDE_CMD_FIELD_PARAM0 },
	};
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *owner = dial(srv, &cfg), *conn;
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_ESERIES);

	/* The same inputs from a second connection. */
	cr_assert_eq(dial_fails(srv, &cfg, &err), -EBUSY, "%s", err.err.msg);
	cr_assert(err.fatal);
	cr_assert_eq(err.state, RTL_RTDE_CLIENT_INPUTS);
	cr_assert(contains(err.err.msg, "IN_USE"), "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "'" RTL_RTDE_CMD_FIELD_MODE "'"), "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "'" RTL_RTDE_CMD_FIELD_PARAM0 "'"), "%s", err.err.msg);
	rtl_rtde_conn_close(owner);
	finish(srv, NULL);

	/* A fieldbus adapter owns registers 0-23 for everyone. */
	o.fieldbus = true;
	srv = serve(&o, NULL);
	cfg.inputs[0] = "input_int_register_3";
	cr_assert_eq(dial_fails(srv, &cfg, &err), -EBUSY, "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "'input_int_register_3'"), "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "fieldbus") || contains(err.err.msg, "EtherNet/IP"),
		  "names the likely owner: %s", err.err.msg);
	/* The external-client range is free. */
	cfg.inputs[0] = RTL_RTDE_CMD_FIELD_MODE;
	conn = dial(srv, &cfg);
	rtl_rtde_conn_close(conn);
	finish(srv, NULL);
}

Test(sim_client, two_clients_with_overlapping_inputs)
{
	struct rtl_sim_server *srv = serve(NULL, NULL);
	struct rtl_rtde_client_config ca = {
		.outputs = "timestamp,input_int_register_27",
		.inputs = { "input_int_register_24,input_int_register_25,input_int_register_26" },
	};
	struct rtl_rtde_client_config cb = {
		.outputs = "timestamp",
		.inputs = { "input_int_register_26,input_int_register_27" },
	};
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *a = dial(srv, &ca), *b;
	struct rtl_rtde_client_event ev;
	const struct rtl_rtde_recipe *r;
	struct rtl_rtde_frame f;
	struct rtl_rtde_handle h;
	int64_t end;
	uint64_t frame[4];
	int32_t seen = 0;
	int tries = 0, rc;

	/* B overlaps A in register 26 only: that one, and only that, is named. */
	cr_assert_eq(dial_fails(srv, &cb, &err), -EBUSY, "%s", err.err.msg);
	cr_assert(contains(err.err.msg, "'input_int_register_26'"), "%s", err.err.msg);
	cr_assert_not(contains(err.err.msg, "'input_int_register_27'"), "%s", err.err.msg);

	/* Without the overlap B gets its register, and A reads what B writes. */
	cb.inputs[0] = "input_int_register_27";
	b = dial(srv, &cb);
	r = rtl_rtde_client_input_recipe(rtl_rtde_conn_client(b), 0);
	cr_assert_eq(rtl_rtde_frame_init(&f, frame, sizeof(frame), r), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(r, "input_int_register_27", &h), 0);
	rtl_rtde_frame_set_int(&f, h, 1234);
	cr_assert_eq(rtl_rtde_conn_send_inputs(b, 0, &f), 0);
	r = rtl_rtde_client_output_recipe(rtl_rtde_conn_client(a));
	cr_assert_eq(rtl_rtde_recipe_handle(r, "input_int_register_27", &h), 0);
	end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	while (seen != 1234 && rtl_rtde_conn_next_event(a, &ev, end - rtl_time_now()) == 1) {
		if (ev.type != RTL_RTDE_CLIENT_EV_DATA)
			continue;
		cr_assert_eq(rtl_rtde_frame_init(&f, frame, sizeof(frame), r), 0);
		cr_assert_eq(rtl_rtde_client_decode(rtl_rtde_conn_client(a), &ev, &f), 0);
		seen = rtl_rtde_frame_get_int(&f, h);
	}
	cr_assert_eq(seen, 1234, "A reads back the register B writes");
	rtl_rtde_conn_close(b);

	/* When A closes, its registers are free again (the server sees the
	 * close at its next read: retry, as a reconnecting client does). */
	rtl_rtde_conn_close(a);
	cb.inputs[0] = "input_int_register_26,input_int_register_27";
	do {
		b = NULL;
		rc = rtl_rtde_conn_open(&b, HOST, rtl_sim_server_port(srv), &cb, OPEN_TIMEOUT,
					&err);
		if (rc == -EBUSY)
			usleep(10000);
	} while (rc == -EBUSY && ++tries < 200);
	cr_assert_eq(rc, 0, "%s", err.err.msg);
	rtl_rtde_conn_close(b);
	finish(srv, NULL);
}

/* ---- loss, faults, reconnects ---------------------------------------------------------------- */

/*
 * With --skip-every 25 --skip-count 4, cycles k with k mod 25 >= 21 send
 * nothing. Between two packages the client received, the number it counts
 * must be the number of gaps in the timestamps and the number of cycles the
 * rule skipped, whether it counts from `timestamp` or from `control_step`.
 */
static void check_skips(const struct stream *s, uint64_t counted)
{
	uint64_t gaps = 0, rule = 0;
	long k0 = cycle_of(s->ts[0], 500), k1 = cycle_of(s->ts[s->n - 1], 500);

	for (size_t i = 1; i < s->n; i++) {
		long steps = lround((s->ts[i] - s->ts[i - 1]) * 500);

		cr_assert(steps == 1 || steps == 5, "a gap of exactly 4 packages, not %ld",
			  steps - 1);
		gaps += (uint64_t)steps - 1;
		cr_assert_eq(s->skipped[i], (uint64_t)steps - 1, "package %zu", i);
	}
	for (long k = k0 + 1; k < k1; k++)
		rule += k % 25 >= 21;
	cr_assert_gt(gaps, 0);
	cr_assert_eq(s->skipped[0], 0, "nothing is counted before the first package");
	cr_assert_eq(counted, gaps, "client %llu, timestamps %llu", (unsigned long long)counted,
		     (unsigned long long)gaps);
	cr_assert_eq(gaps, rule, "timestamps %llu, injected %llu", (unsigned long long)gaps,
		     (unsigned long long)rule);
	cr_assert_eq(s->n + gaps, (uint64_t)(k1 - k0 + 1), "every cycle received or counted");
}

Test(sim_client, skipped_packages_are_counted_exactly_as_injected)
{
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config by_ts = { .outputs = "timestamp" };
	struct rtl_rtde_client_config by_cs = { .outputs = "timestamp,control_step" };
	struct rtl_sim_server *srv;
	struct rtl_rtde_conn *a, *b;
	struct rtl_sim_stats st;

	o.faults.skip_every = 25;
	o.faults.skip_count = 4;
	srv = serve(&o, NULL);
	a = dial(srv, &by_ts);
	b = dial(srv, &by_cs);
	cr_assert_eq(collect(a, &S, 400, 4 * RTL_NS_PER_SEC), 400);
	cr_assert_eq(collect(b, &S2, 400, 4 * RTL_NS_PER_SEC), 400);
	cr_assert_not(S.has_cs);
	cr_assert(S2.has_cs);
	check_skips(&S, stats_of(a)->skipped);
	check_skips(&S2, stats_of(b)->skipped);
	cr_assert_eq(S.skipped_sum, stats_of(a)->skipped);
	cr_assert_eq(S2.skipped_sum, stats_of(b)->skipped);
	cr_assert_eq(stats_of(a)->resets + stats_of(b)->resets, 0);
	finish(srv, &st);
	/* The simulator counts every package it did not send to a started
	 * client: those in the windows, and more before and after them. */
	cr_assert_geq(st.skipped_packages, S.skipped_sum + S2.skipped_sum);
	rtl_rtde_conn_close(a);
	rtl_rtde_conn_close(b);
}

/* The home pose of the simulated UR5e (robot.h). */
static const double home[6] = { 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 };

Test(sim_client, a_fragmented_stream_is_reassembled_by_the_step_function)
{
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config cfg = { .outputs = "timestamp,actual_q,actual_TCP_pose" };
	struct rtl_error cerr;
	struct rtl_error terr;
	struct rtl_sim_server *srv;
	struct rtl_rtde_client *c;
	struct rtl_rtde_handle hq;
	struct rtl_sim_stats st;
	struct rtl_rtde_frame f;
	uint64_t storage[32];
	uint8_t buf[3];
	size_t n = 0, recvs = 0;
	double last = 0;
	int64_t end;
	int fd;

	o.faults.fragment = true;
	o.faults.fragment_max = 3;
	srv = serve(&o, NULL);
	cr_assert_eq(rtl_rtde_client_create(&c, &cfg, &cerr), 0, "%s", cerr.msg);
	fd = rtl_tcp_connect(HOST, rtl_sim_server_port(srv), OPEN_TIMEOUT, &terr);
	cr_assert_geq(fd, 0, "%s", terr.msg);
	cr_assert_eq(rtl_rtde_client_connected(c, rtl_time_now()), 0);
	/* The driver loop of rtde_client.h, reading at most 3 bytes at a time
	 * on top of the simulator's own 1..3-byte writes. */
	end = rtl_time_now() + 4 * RTL_NS_PER_SEC;
	while (n < 300 && rtl_time_now() < end) {
		struct rtl_rtde_client_event ev;
		const uint8_t *out;
		size_t len = rtl_rtde_client_tx(c, &out);
		ssize_t got;

		if (len) {
			cr_assert_eq(rtl_tcp_send_all(fd, out, len, end), 0);
			rtl_rtde_client_tx_done(c, len);
		}
		if (rtl_tcp_wait(fd, POLLIN, end) <= 0)
			break;
		got = recv(fd, buf, sizeof(buf), 0);
		cr_assert_gt(got, 0, "the stream goes on");
		recvs++;
		cr_assert_eq(rtl_rtde_client_feed(c, buf, (size_t)got), 0);
		while (rtl_rtde_client_next(c, rtl_time_now(), &ev) == 1) {
			cr_assert_neq(ev.type, RTL_RTDE_CLIENT_EV_ERROR, "%s", ev.u.error->err.msg);
			if (ev.type != RTL_RTDE_CLIENT_EV_DATA)
				continue;
			if (n == 0) {
				cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage),
								 rtl_rtde_client_output_recipe(c)),
					     0);
				cr_assert_eq(
					rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(c),
							       "actual_q", &hq),
					0);
			} else {
				cr_assert_eq(lround((ev.u.data.timestamp - last) * 500), 1);
			}
			last = ev.u.data.timestamp;
			cr_assert_eq(rtl_rtde_client_decode(c, &ev, &f), 0);
			{
				double q[6];

				cr_assert(rtl_rtde_frame_get_vec6(&f, hq, q));
				for (int j = 0; j < 6; j++)
					cr_assert_float_eq(q[j], home[j], 1e-12, "joint %d", j);
			}
			n++;
		}
	}
	cr_assert_eq(n, 300, "%zu packages", n);
	cr_assert_eq(rtl_rtde_client_state(c), RTL_RTDE_CLIENT_RUNNING);
	cr_assert_eq(rtl_rtde_client_stats(c)->malformed, 0);
	cr_assert_eq(rtl_rtde_client_stats(c)->wrong_recipe, 0);
	cr_assert_eq(rtl_rtde_client_stats(c)->unexpected, 0);
	cr_assert_eq(rtl_rtde_client_stats(c)->skipped, 0);
	close(fd);
	rtl_rtde_client_destroy(c);
	finish(srv, &st);
	/* 3 + 1 + 8 + 48 + 48 = 108-byte packages in pieces of at most 3. */
	cr_assert_geq(st.fragments, 300 * 108 / 3);
	cr_assert_geq(recvs, 300 * 108 / 3);
}

Test(sim_client, a_reset_is_reported_and_reconnect_resumes_the_stream)
{
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config cfg = { .outputs = "timestamp,control_step" };
	struct rtl_rtde_client_event ev;
	struct rtl_sim_server *srv;
	struct rtl_rtde_conn *conn;
	struct rtl_sim_stats st;
	double last_before;

	o.faults.reset_after = 100;
	srv = serve(&o, NULL);
	conn = dial(srv, &cfg);
	cr_assert_eq(rtl_rtde_conn_set_backoff(conn, 20 * RTL_NS_PER_MS, 200 * RTL_NS_PER_MS, 20),
		     0);

	collect(conn, &S, MAX_PKGS, 4 * RTL_NS_PER_SEC);
	cr_assert_eq(S.end, -ECONNRESET, "the reset is reported (%d: %s)", S.end, S.end_msg);
	cr_assert(contains(S.end_msg, "reset"), "%s", S.end_msg);
	cr_assert(contains(S.end_msg, "RUNNING"), "names the state: %s", S.end_msg);
	cr_assert_eq(S.n, 100, "%zu", S.n);
	assert_steps(&S, 500, 1);
	last_before = S.ts[S.n - 1];
	/* After the error event: the state change to CLOSED, then nothing. */
	cr_assert_eq(rtl_rtde_conn_next_event(conn, &ev, 0), 1);
	cr_assert_eq(ev.type, RTL_RTDE_CLIENT_EV_STATE);
	cr_assert_eq(ev.u.state.to, RTL_RTDE_CLIENT_CLOSED);
	cr_assert_eq(rtl_rtde_conn_next_event(conn, &ev, 0), -ENOTCONN);
	cr_assert_eq(rtl_rtde_conn_error(conn)->err.code, -ECONNRESET);
	cr_assert_eq(rtl_rtde_conn_fd(conn), -1);

	cr_assert_eq(rtl_rtde_conn_reconnect(conn, 3 * RTL_NS_PER_SEC), 0, "%s",
		     rtl_rtde_conn_error(conn)->err.msg);
	cr_assert_eq(stats_of(conn)->reconnects, 1);
	cr_assert_eq(rtl_rtde_client_state(rtl_rtde_conn_client(conn)), RTL_RTDE_CLIENT_RUNNING);
	collect(conn, &S2, MAX_PKGS, 4 * RTL_NS_PER_SEC);
	cr_assert_eq(S2.end, -ECONNRESET, "and again after 100 more");
	cr_assert_eq(S2.n, 100, "%zu", S2.n);
	cr_assert_gt(S2.ts[0], last_before, "time went on across the reconnect");
	assert_steps(&S2, 500, 1);
	/* A new START sets a new baseline: the reconnect gap is no loss and no
	 * controller restart. */
	cr_assert_eq(stats_of(conn)->skipped, 0);
	cr_assert_eq(stats_of(conn)->resets, 0);
	rtl_rtde_conn_close(conn);
	finish(srv, &st);
	cr_assert_eq(st.resets, 2);
	cr_assert_eq(st.connections, 2);
}

Test(sim_client, a_client_that_stops_reading_is_dropped_while_another_keeps_its_rate)
{
	struct rtl_sim_opts o = sim_opts(RTL_SIM_PROFILE_ESERIES);
	struct rtl_sim_server_opts so = { .sndbuf = 8192 };
	/* About 2 KiB per package: 1 MB/s into a client that reads nothing. */
	struct rtl_rtde_client_config heavy = {
		.outputs = "timestamp,actual_q,actual_qd,target_q,target_qd,target_qdd,"
			   "target_current,target_moment,actual_current,joint_control_output,"
			   "actual_TCP_pose,actual_TCP_speed,actual_TCP_force,target_TCP_pose,"
			   "target_TCP_speed,joint_temperatures,actual_joint_voltage,tcp_offset,"
			   "ft_raw_wrench,elbow_position,elbow_velocity",
	};
	struct rtl_rtde_client_config light = { .outputs = "timestamp" };
	struct rtl_rtde_conn *slow, *fast;
	struct rtl_sim_server *srv;
	struct rtl_sim_stats st;
	int64_t end;
	int rcvbuf = 4096;

	o.send_buffer = 32768;
	srv = serve(&o, &so);
	slow = dial(srv, &heavy);
	setsockopt(rtl_rtde_conn_fd(slow), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	fast = dial(srv, &light);
	/* One second of the fast client: every package, on time. */
	cr_assert_eq(collect(fast, &S, 500, 3 * RTL_NS_PER_SEC), 500);
	assert_steps(&S, 500, 1);
	cr_assert_eq(stats_of(fast)->skipped, 0);
	end = rtl_time_now() + 3 * RTL_NS_PER_SEC;
	do {
		rtl_sim_server_stats(srv, &st);
		if (!st.slow_disconnects)
			usleep(10000);
	} while (!st.slow_disconnects && rtl_time_now() < end);
	cr_assert_eq(st.slow_disconnects, 1, "the reader that stopped was closed");

	/* The slow one gets what was buffered, whole, then the explanation. */
	collect(slow, &S2, MAX_PKGS, 3 * RTL_NS_PER_SEC);
	cr_assert_eq(S2.end, -ECONNRESET, "%d: %s", S2.end, S2.end_msg);
	cr_assert(contains(S2.end_msg, "closed"), "an orderly close, not a reset: %s", S2.end_msg);
	cr_assert(contains(S2.end_msg, "reads too slowly"), "says why: %s", S2.end_msg);
	cr_assert_gt(S2.n, 0);
	cr_assert_eq(stats_of(slow)->malformed, 0, "only whole packages");
	/* ... and the fast one is still streaming. */
	cr_assert_eq(collect(fast, &S, 50, 2 * RTL_NS_PER_SEC), 50);
	assert_steps(&S, 500, 1);
	rtl_rtde_conn_close(slow);
	rtl_rtde_conn_close(fast);
	finish(srv, NULL);
}

/* ---- motion -------------------------------------------------------------------------------- */

#define MOTION_OUTPUTS "timestamp,actual_q,actual_qd,actual_TCP_pose," RTL_RTDE_CMD_STATUS_OUTPUTS

/* A client that commands the robot through the registers of rtde_cmd.h. */
struct rig {
	struct rtl_sim_server *srv;
	struct rtl_rtde_conn *conn;
	struct rtl_rtde_frame st, cmd;
	uint64_t st_mem[64], cmd_mem[16];
	struct rtl_rtde_handle ts, q, qd, pose, out_mode, out_seq, trips, status;
	struct rtl_rtde_handle mode, seq, wd, param[6], acc, time, look, gain;
	int32_t hb;
	/* The latest state. */
	double t, q_now[6], qd_now[6], pose_now[6];
	int32_t mode_now, seq_now, trips_now;
	uint32_t status_now;
	unsigned texts;
	char text[256];
};

static struct rig G;

static struct rtl_rtde_handle handle(const struct rtl_rtde_recipe *r, const char *name)
{
	struct rtl_rtde_handle h;

	cr_assert_eq(rtl_rtde_recipe_handle(r, name, &h), 0, "%s", name);
	return h;
}

static void rig_open(struct rig *g)
{
	static const char *params[6] = { RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1,
					 RTL_RTDE_CMD_FIELD_PARAM2, RTL_RTDE_CMD_FIELD_PARAM3,
					 RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5 };
	struct rtl_rtde_client_config cfg = { .outputs = MOTION_OUTPUTS,
					      .inputs = { RTL_RTDE_CMD_RECIPE } };
	const struct rtl_rtde_recipe *out, *in;
	struct rtl_rtde_client *c;

	memset(g, 0, sizeof(*g));
	g->srv = serve(NULL, NULL);
	g->conn = dial(g->srv, &cfg);
	c = rtl_rtde_conn_client(g->conn);
	out = rtl_rtde_client_output_recipe(c);
	in = rtl_rtde_client_input_recipe(c, 0);
	cr_assert_eq(rtl_rtde_frame_init(&g->st, g->st_mem, sizeof(g->st_mem), out), 0);
	cr_assert_eq(rtl_rtde_frame_init(&g->cmd, g->cmd_mem, sizeof(g->cmd_mem), in), 0);
	g->ts = handle(out, "timestamp");
	g->q = handle(out, "actual_q");
	g->qd = handle(out, "actual_qd");
	g->pose = handle(out, "actual_TCP_pose");
	g->out_mode = handle(out, RTL_RTDE_CMD_FIELD_OUT_MODE);
	g->out_seq = handle(out, RTL_RTDE_CMD_FIELD_OUT_SEQ);
	g->trips = handle(out, RTL_RTDE_CMD_FIELD_OUT_WD_TRIPS);
	g->status = handle(out, RTL_RTDE_CMD_FIELD_OUT_STATUS);
	g->mode = handle(in, RTL_RTDE_CMD_FIELD_MODE);
	g->seq = handle(in, RTL_RTDE_CMD_FIELD_SEQ);
	g->wd = handle(in, RTL_RTDE_CMD_FIELD_WATCHDOG_MS);
	for (int i = 0; i < 6; i++)
		g->param[i] = handle(in, params[i]);
	g->acc = handle(in, RTL_RTDE_CMD_FIELD_ACCEL);
	g->time = handle(in, RTL_RTDE_CMD_FIELD_TIME);
	g->look = handle(in, RTL_RTDE_CMD_FIELD_LOOKAHEAD);
	g->gain = handle(in, RTL_RTDE_CMD_FIELD_GAIN);
}

static void rig_close(struct rig *g)
{
	rtl_rtde_conn_close(g->conn);
	finish(g->srv, NULL);
}

/* Wait for the next data package (bounded) and take its state. */
static void rig_next(struct rig *g)
{
	struct rtl_rtde_client_event ev;
	int64_t end = rtl_time_now() + 2 * RTL_NS_PER_SEC;

	for (;;) {
		int r = rtl_rtde_conn_next_event(g->conn, &ev, end - rtl_time_now());

		cr_assert_eq(r, 1, "a data package within 2 s (%d)", r);
		if (ev.type == RTL_RTDE_CLIENT_EV_TEXT) {
			size_t n = ev.u.text.message_len < sizeof(g->text) - 1
					   ? ev.u.text.message_len
					   : sizeof(g->text) - 1;

			memcpy(g->text, ev.u.text.message, n);
			g->text[n] = '\0';
			g->texts++;
		}
		cr_assert(ev.type != RTL_RTDE_CLIENT_EV_ERROR || !ev.u.error->fatal, "%s",
			  ev.u.error->err.msg);
		if (ev.type == RTL_RTDE_CLIENT_EV_DATA)
			break;
	}
	cr_assert_eq(rtl_rtde_client_decode(rtl_rtde_conn_client(g->conn), &ev, &g->st), 0);
	g->t = rtl_rtde_frame_get_double(&g->st, g->ts);
	rtl_rtde_frame_get_vec6(&g->st, g->q, g->q_now);
	rtl_rtde_frame_get_vec6(&g->st, g->qd, g->qd_now);
	rtl_rtde_frame_get_vec6(&g->st, g->pose, g->pose_now);
	g->mode_now = rtl_rtde_frame_get_int(&g->st, g->out_mode);
	g->seq_now = rtl_rtde_frame_get_int(&g->st, g->out_seq);
	g->trips_now = rtl_rtde_frame_get_int(&g->st, g->trips);
	g->status_now = (uint32_t)rtl_rtde_frame_get_int(&g->st, g->status);
}

/*
 * Send a command; a new heartbeat unless @stale. Watchdog timeout @wd_ms
 * (0: the default 100 ms).
 */
static void rig_send(struct rig *g, int32_t mode, const double p[6], double acc, int32_t wd_ms,
		     bool stale)
{
	if (!stale)
		g->hb++;
	rtl_rtde_frame_set_int(&g->cmd, g->mode, mode);
	rtl_rtde_frame_set_int(&g->cmd, g->seq, g->hb);
	rtl_rtde_frame_set_int(&g->cmd, g->wd, wd_ms);
	for (int i = 0; i < 6; i++)
		rtl_rtde_frame_set_double(&g->cmd, g->param[i], p ? p[i] : 0.0);
	rtl_rtde_frame_set_double(&g->cmd, g->acc, acc);
	cr_assert_eq(rtl_rtde_conn_send_inputs(g->conn, 0, &g->cmd), 0);
}

/* At rest: a stop and a converged servoj leave joint velocities of about
 * 1e-14 rad/s (rounding in the ramps and the tracking loops) for a while. */
static bool at_rest(const struct rig *g)
{
	for (int j = 0; j < 6; j++)
		if (fabs(g->qd_now[j]) > 1e-12)
			return false;
	return true;
}

/* A generous watchdog for the motion tests: a loaded machine must not trip it. */
#define WD_MS 500

/*
 * Command @mode with @p and @acc for @hold seconds of controller time,
 * counted from the cycle in which the executor reports that mode, then
 * STOP until the robot is at rest. Returns the controller time between the
 * cycle that started @mode and the one that started STOP.
 */
static double run_then_stop(struct rig *g, int32_t mode, const double p[6], double acc, double hold)
{
	double t_on = -1, t_off = -1;
	int n;

	for (n = 0; n < 5000; n++) {
		rig_send(g, mode, p, acc, WD_MS, false);
		rig_next(g);
		if (t_on < 0 && g->mode_now == mode)
			t_on = g->t;
		if (t_on >= 0 && g->t >= t_on + hold)
			break;
	}
	cr_assert_geq(t_on, 0, "the executor took mode %d", mode);
	for (n = 0; n < 5000; n++) {
		rig_send(g, RTL_RTDE_CMD_STOP, NULL, acc, WD_MS, false);
		rig_next(g);
		if (t_off < 0 && g->mode_now == RTL_RTDE_CMD_STOP)
			t_off = g->t;
		if (t_off >= 0 && at_rest(g))
			break;
	}
	cr_assert(at_rest(g), "the robot came to rest: qd %g %g %g %g %g %g", g->qd_now[0],
		  g->qd_now[1], g->qd_now[2], g->qd_now[3], g->qd_now[4], g->qd_now[5]);
	return t_off - t_on;
}

Test(sim_client, speedj_moves_the_joint_by_v_times_t)
{
	const double v = 0.3, a = 2.0;
	double p[6] = { v, 0, 0, 0, 0, 0 }, q0[6], t, moved;

	rig_open(&G);
	rig_next(&G);
	memcpy(q0, G.q_now, sizeof(q0));
	for (int j = 0; j < 6; j++)
		cr_assert_float_eq(q0[j], home[j], 1e-12);
	/* The ramp up loses v^2 / 2a against a step; the ramp down (STOP at
	 * the same a) gives it back, so the whole move is v times the time
	 * between the two mode changes, to within a cycle. */
	t = run_then_stop(&G, RTL_RTDE_CMD_SPEEDJ, p, a, 0.6);
	moved = G.q_now[0] - q0[0];
	cr_assert_geq(t, 0.6);
	cr_assert_float_eq(moved, v * t, v * 0.004, "moved %.5f rad in %.3f s, expected %.5f",
			   moved, t, v * t);
	for (int j = 1; j < 6; j++)
		cr_assert_float_eq(G.q_now[j], q0[j], 1e-12, "joint %d stays", j);
	cr_assert_eq(G.trips_now, 0);
	cr_assert(G.status_now & RTL_RTDE_CMD_STATUS_READY);
	rig_close(&G);
}

/* Distance between the positions of two poses [m]. */
static double dist3(const double a[6], const double b[6])
{
	return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
		    (a[2] - b[2]) * (a[2] - b[2]));
}

Test(sim_client, speedl_moves_the_tcp_along_the_commanded_axis)
{
	static const int axes[2] = { 0, 2 }; /* x, then z */
	const double v = 0.05, a = 0.5;

	rig_open(&G);
	rig_next(&G);
	for (size_t i = 0; i < 2; i++) {
		double p[6] = { 0 }, p0[6], off[6], r0[9], r1[9], t, along;
		int ax = axes[i];

		memcpy(p0, G.pose_now, sizeof(p0));
		p[ax] = v;
		t = run_then_stop(&G, RTL_RTDE_CMD_SPEEDL, p, a, 0.5);
		along = G.pose_now[ax] - p0[ax];
		cr_assert_float_eq(along, v * t, v * 0.004, "axis %d: %.5f m in %.3f s", ax, along,
				   t);
		memcpy(off, G.pose_now, sizeof(off));
		off[ax] = p0[ax];
		cr_assert_lt(dist3(off, p0), 2e-4, "axis %d: off the line by %g m", ax,
			     dist3(off, p0));
		/* Compare orientations as matrices: at an angle of pi the
		 * rotation vector may flip sign and still be the same. */
		rtl_sim_robot_rotvec_to_matrix(p0 + 3, r0);
		rtl_sim_robot_rotvec_to_matrix(G.pose_now + 3, r1);
		for (int k = 0; k < 9; k++)
			cr_assert_float_eq(r1[k], r0[k], 1e-4,
					   "axis %d: the tool turned (%g %g %g -> %g %g %g)", ax,
					   p0[3], p0[4], p0[5], G.pose_now[3], G.pose_now[4],
					   G.pose_now[5]);
	}
	rig_close(&G);
}

Test(sim_client, servoj_converges_to_the_target_without_overshoot)
{
	double target[6];
	int n;

	rig_open(&G);
	rig_next(&G);
	for (int j = 0; j < 6; j++)
		target[j] = home[j] + 0.02 * (j + 1) * (j % 2 ? -1 : 1);
	rtl_rtde_frame_set_double(&G.cmd, G.time, 0.002);
	rtl_rtde_frame_set_double(&G.cmd, G.look, 0.1);
	rtl_rtde_frame_set_double(&G.cmd, G.gain, 300);
	for (n = 0; n < 1500; n++) {
		bool there = true;

		rig_send(&G, RTL_RTDE_CMD_SERVOJ, target, 0, WD_MS, false);
		rig_next(&G);
		for (int j = 0; j < 6; j++) {
			double d = target[j] - home[j], done = G.q_now[j] - home[j];

			/* Never past the target, never backwards. */
			cr_assert_leq(done * (d > 0 ? 1 : -1), fabs(d) + 1e-9,
				      "joint %d overshot: %.6f of %.6f", j, done, d);
			there = there && fabs(G.q_now[j] - target[j]) < 1e-5;
		}
		if (there && fabs(G.qd_now[0]) < 1e-4)
			break;
	}
	cr_assert_eq(G.mode_now, RTL_RTDE_CMD_SERVOJ);
	for (int j = 0; j < 6; j++)
		cr_assert_float_eq(G.q_now[j], target[j], 1e-5, "joint %d", j);
	cr_assert_lt(n, 1500, "converged in %d cycles; qd0 %g", n, G.qd_now[0]);
	rig_close(&G);
}

Test(sim_client, the_watchdog_stops_the_robot_when_the_heartbeat_stops)
{
	const double v = 0.2;
	double p[6] = { v, 0, 0, 0, 0, 0 }, t_last = 0, t_trip = -1, q_rest;
	int n;

	rig_open(&G);
	/* Moving at v with a 150 ms watchdog and a fresh heartbeat each cycle. */
	for (n = 0; n < 2000 && fabs(G.qd_now[0] - v) > 1e-9; n++) {
		rig_send(&G, RTL_RTDE_CMD_SPEEDJ, p, 5.0, 150, false);
		rig_next(&G);
	}
	cr_assert_float_eq(G.qd_now[0], v, 1e-9, "at speed");
	cr_assert_eq(G.trips_now, 0);
	cr_assert(G.seq_now > 0 && G.seq_now <= G.hb, "the executor saw our heartbeat");
	t_last = G.t;

	/* Silence: the robot must stop by itself. */
	for (n = 0; n < 2000; n++) {
		rig_next(&G);
		if (t_trip < 0 && (G.status_now & RTL_RTDE_CMD_STATUS_WATCHDOG))
			t_trip = G.t;
		if (t_trip >= 0 && at_rest(&G))
			break;
	}
	cr_assert_geq(t_trip, 0, "the executor reports the watchdog");
	/* Not before the timeout (less the simulator's wake-up lateness). */
	cr_assert_geq(t_trip - t_last, 0.1, "tripped %.3f s after the last heartbeat",
		      t_trip - t_last);
	cr_assert(at_rest(&G), "every joint velocity is zero");
	cr_assert_eq(G.mode_now, RTL_RTDE_CMD_STOP);
	cr_assert_eq(G.trips_now, 1);
	cr_assert(G.status_now & RTL_RTDE_CMD_STATUS_WATCHDOG);
	cr_assert_geq(G.texts, 1, "the controller says so");
	cr_assert(contains(G.text, "watchdog"), "%s", G.text);
	q_rest = G.q_now[0];

	/* The stale heartbeat does not restart the motion... */
	for (n = 0; n < 50; n++) {
		rig_send(&G, RTL_RTDE_CMD_SPEEDJ, p, 5.0, 150, true);
		rig_next(&G);
	}
	cr_assert(at_rest(&G));
	cr_assert_eq(G.q_now[0], q_rest);
	cr_assert(G.status_now & RTL_RTDE_CMD_STATUS_WATCHDOG);
	/* ... a new one does, and clears the bit. */
	for (n = 0; n < 2000 && fabs(G.qd_now[0] - v) > 1e-9; n++) {
		rig_send(&G, RTL_RTDE_CMD_SPEEDJ, p, 5.0, 150, false);
		rig_next(&G);
	}
	cr_assert_float_eq(G.qd_now[0], v, 1e-9, "moving again");
	cr_assert_eq(G.mode_now, RTL_RTDE_CMD_SPEEDJ);
	cr_assert_not(G.status_now & RTL_RTDE_CMD_STATUS_WATCHDOG);
	cr_assert_eq(G.trips_now, 1);
	rig_close(&G);
}
