// SPDX-License-Identifier: MIT
/*
 * rtde-sim over loopback: a server on an ephemeral port, in a thread of the
 * test, and clients made of raw sockets and the codec, so that what is
 * tested is the bytes on the wire. Each test runs for well under a second
 * of streaming.
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/time.h>

#include "server.h"
#include "sim.h"

/* ---- server -------------------------------------------------------------------------- */

static struct sim_server *serve(const struct sim_opts *o, const struct sim_server_opts *so)
{
	struct sim_server_opts def = { 0 };
	struct sim_server *srv = NULL;
	int err;

	if (!so)
		so = &def;
	err = sim_server_create(&srv, o, so);
	cr_assert_eq(err, 0, "server: %s", strerror(-err));
	cr_assert_neq(sim_server_port(srv), 0);
	cr_assert_eq(sim_server_start(srv), 0);
	return srv;
}

static void stop(struct sim_server *srv)
{
	sim_server_stop(srv);
	cr_assert_eq(sim_server_join(srv), 0);
}

static struct sim_opts profile_opts(enum sim_profile_id p)
{
	struct sim_opts o;

	sim_opts_default(&o);
	o.profile = p;
	return o;
}

/* ---- raw client ------------------------------------------------------------------------ */

struct client {
	int fd;
	enum rtl_rtde_protocol proto;
	struct rtl_rtde_framer *framer;
	uint8_t rx[65536];
	uint8_t pkg[RTL_RTDE_MAX_PACKAGE_SIZE];
	bool fed;  /* the framer holds unconsumed fed bytes */
	int error; /* -ECONNRESET, -EPIPE (EOF) once seen */
};

static struct client *dial(uint16_t port, int rcvbuf)
{
	struct client *c = calloc(1, sizeof(*c));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1;

	cr_assert_not_null(c);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(c->fd, 0);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (rcvbuf)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	cr_assert_eq(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect: %s",
		     strerror(errno));
	cr_assert_eq(rtl_rtde_framer_create(&c->framer, RTL_RTDE_MAX_PACKAGE_SIZE, NULL), 0);
	c->proto = RTL_RTDE_PROTOCOL_V1;
	return c;
}

static void hang_up(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	rtl_rtde_framer_destroy(c->framer);
	free(c);
}

static void send_all(struct client *c, const void *b, size_t n)
{
	cr_assert_eq(send(c->fd, b, n, MSG_NOSIGNAL), (ssize_t)n, "send: %s", strerror(errno));
}

/* The next package (copied to c->pkg), waiting up to @timeout_ms: its size,
 * 0 on timeout, or -ECONNRESET / -EPIPE (orderly EOF). */
static int next_pkg(struct client *c, int timeout_ms)
{
	int64_t end = rtl_time_now() + (int64_t)timeout_ms * RTL_NS_PER_MS;

	for (;;) {
		const uint8_t *p;
		size_t len;
		int r;

		if (c->fed) {
			r = rtl_rtde_framer_next(c->framer, &p, &len);
			cr_assert_geq(r, 0, "framer: %d", r);
			if (r == 1) {
				memcpy(c->pkg, p, len);
				return (int)len;
			}
			c->fed = false;
		}
		if (c->error)
			return c->error;
		{
			int left = (int)((end - rtl_time_now()) / RTL_NS_PER_MS);
			struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
			ssize_t n;

			if (left <= 0 || poll(&pfd, 1, left) <= 0)
				return 0;
			n = recv(c->fd, c->rx, sizeof(c->rx), 0);
			if (n == 0) {
				c->error = -EPIPE;
				continue;
			}
			if (n < 0) {
				c->error = -errno;
				continue;
			}
			cr_assert_eq(rtl_rtde_framer_feed(c->framer, c->rx, (size_t)n), 0);
			c->fed = true;
		}
	}
}

/* The next package of type @type, skipping data packages; its size. */
static int expect(struct client *c, int type)
{
	for (;;) {
		int n = next_pkg(c, 2000);

		cr_assert_gt(n, 0, "waiting for '%c': %d", type, n);
		if (c->pkg[2] == type)
			return n;
		cr_assert_eq(c->pkg[2], 'U', "unexpected '%c' while waiting for '%c'", c->pkg[2],
			     type);
	}
}

static bool request_version(struct client *c, uint16_t v)
{
	uint8_t b[8];
	bool ok;
	int n;

	rtl_rtde_encode_protocol_version_request(b, sizeof(b), v);
	send_all(c, b, 5);
	n = expect(c, 'V');
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, c->pkg, (size_t)n,
						    RTL_RTDE_PKG_PROTOCOL_VERSION),
		     0);
	if (ok)
		c->proto = (enum rtl_rtde_protocol)v;
	return ok;
}

static struct rtl_rtde_controller_version get_version(struct client *c)
{
	struct rtl_rtde_controller_version v;
	uint8_t b[4];
	int n;

	rtl_rtde_encode_urcontrol_version_request(b, sizeof(b));
	send_all(c, b, 3);
	n = expect(c, 'v');
	cr_assert_eq(rtl_rtde_decode_urcontrol_version_reply(&v, c->pkg, (size_t)n), 0);
	return v;
}

/* SETUP_OUTPUTS; returns the reply's types (in c->pkg) and sets *@id. */
static struct rtl_rtde_setup_reply setup_outputs(struct client *c, double hz, const char *names)
{
	static uint8_t b[70000];
	struct rtl_rtde_setup_reply r;
	int n = rtl_rtde_encode_setup_outputs(b, sizeof(b), c->proto, hz, names, strlen(names));

	send_all(c, b, (size_t)n);
	n = expect(c, 'O');
	cr_assert_eq(rtl_rtde_decode_setup_outputs_reply(&r, c->pkg, (size_t)n, c->proto), 0);
	return r;
}

static struct rtl_rtde_setup_reply setup_inputs(struct client *c, const char *names)
{
	static uint8_t b[70000];
	struct rtl_rtde_setup_reply r;
	int n = rtl_rtde_encode_setup_inputs(b, sizeof(b), names, strlen(names));

	send_all(c, b, (size_t)n);
	n = expect(c, 'I');
	cr_assert_eq(rtl_rtde_decode_setup_inputs_reply(&r, c->pkg, (size_t)n), 0);
	return r;
}

static bool types_are(const struct rtl_rtde_setup_reply *r, const char *types)
{
	return r->types_len == strlen(types) && !memcmp(r->types, types, r->types_len);
}

static bool start(struct client *c)
{
	uint8_t b[4];
	bool ok;
	int n;

	rtl_rtde_encode_start(b, sizeof(b));
	send_all(c, b, 3);
	n = expect(c, 'S');
	cr_assert_eq(rtl_rtde_decode_accepted_reply(&ok, c->pkg, (size_t)n, RTL_RTDE_PKG_START), 0);
	return ok;
}

/* V2, O (@names at @hz), S: a streaming client. */
static struct client *streaming_client(uint16_t port, double hz, const char *names, int rcvbuf)
{
	struct client *c = dial(port, rcvbuf);
	struct rtl_rtde_setup_reply r;

	cr_assert(request_version(c, 2));
	r = setup_outputs(c, hz, names);
	cr_assert_eq(r.recipe_id, 1);
	cr_assert(start(c));
	return c;
}

/* Collect the timestamps (first field) of data packages for @ms. Text
 * messages are counted in *@texts if not NULL, else fail the test. */
static size_t collect(struct client *c, int ms, double *ts, size_t max, size_t *texts)
{
	int64_t end = rtl_time_now() + (int64_t)ms * RTL_NS_PER_MS;
	size_t n = 0;

	while (rtl_time_now() < end) {
		struct rtl_rtde_data d;
		int len = next_pkg(c, 50);

		if (len <= 0) {
			cr_assert_geq(len, 0, "connection lost: %d", len);
			continue;
		}
		if (c->pkg[2] == 'M' && texts) {
			(*texts)++;
			continue;
		}
		cr_assert_eq(c->pkg[2], 'U', "got '%c'", c->pkg[2]);
		cr_assert_eq(rtl_rtde_decode_data(&d, c->pkg, (size_t)len, c->proto,
						  RTL_RTDE_FROM_CONTROLLER),
			     0);
		if (n < max)
			ts[n++] = rtl_rtde_load_f64(d.fields);
	}
	return n;
}

/* Every step between consecutive timestamps is @step (within 1e-6 s, as
 * URCL's set_target_frequency test checks). */
static void assert_steps(const double *ts, size_t n, double step)
{
	for (size_t i = 1; i < n; i++)
		cr_assert_float_eq(ts[i] - ts[i - 1], step, 1e-6, "step %zu: %.6f -> %.6f", i,
				   ts[i - 1], ts[i]);
}

static double ts_buf[4096];

/* ---- tests -------------------------------------------------------------------------------- */

Test(sim_server, every_profile_answers_its_version_and_streams_at_its_rate)
{
	static const struct {
		uint32_t major, minor, hz;
	} exp[SIM_PROFILE_COUNT] = { { 3, 15, 125 }, { 5, 26, 500 }, { 10, 13, 500 } };

	for (int p = 0; p < SIM_PROFILE_COUNT; p++) {
		struct sim_opts o = profile_opts((enum sim_profile_id)p);
		struct sim_server *srv = serve(&o, NULL);
		struct client *c = dial(sim_server_port(srv), 0);
		struct rtl_rtde_controller_version v;
		size_t n;

		cr_assert(request_version(c, 2));
		v = get_version(c);
		cr_assert_eq(v.major, exp[p].major);
		cr_assert_eq(v.minor, exp[p].minor);
		cr_assert_eq(setup_outputs(c, exp[p].hz, "timestamp").recipe_id, 1);
		cr_assert(start(c));
		n = collect(c, 300, ts_buf, 4096, NULL);
		/* 300 ms: 37 or 150 packages; allow a slow machine its due. */
		cr_assert_geq(n, exp[p].hz * 3 / 10 / 2, "%zu packages at %u Hz", n, exp[p].hz);
		cr_assert_geq(ts_buf[0], 42.0, "the clock starts at 42 s");
		assert_steps(ts_buf, n, 1.0 / exp[p].hz);
		hang_up(c);
		stop(srv);
		sim_server_destroy(srv);
	}
}

Test(sim_server, max_protocol_1_makes_clients_fall_back_to_v1)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct client *c;
	struct rtl_rtde_setup_reply r;
	int len;

	o.max_protocol = 1;
	srv = serve(&o, NULL);
	c = dial(sim_server_port(srv), 0);
	cr_assert_not(request_version(c, 2));
	cr_assert(request_version(c, 1));
	r = setup_outputs(c, 0, "timestamp,actual_q");
	cr_assert_not(r.has_recipe_id);
	cr_assert(types_are(&r, "DOUBLE,VECTOR6D"));
	cr_assert(start(c));
	len = expect(c, 'U');
	cr_assert_eq(len, 3 + 8 + 48, "v1 data packages carry no recipe id");
	cr_assert_geq(rtl_rtde_load_f64(c->pkg + 3), 42.0);
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, cb3_says_not_found_for_a_field_it_is_too_old_for)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_CB3);
	struct sim_server *srv = serve(&o, NULL);
	struct client *c = dial(sim_server_port(srv), 0);
	struct rtl_rtde_setup_reply r;

	cr_assert(request_version(c, 2));
	r = setup_outputs(c, 125, "timestamp,actual_current_as_torque,payload");
	cr_assert_eq(r.recipe_id, 0);
	cr_assert(types_are(&r, "DOUBLE,NOT_FOUND,DOUBLE"));
	cr_assert_not(start(c), "no start without a valid output recipe");
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, inputs_are_in_use_across_connections_until_the_owner_closes)
{
	struct sim_server *srv = serve(NULL, NULL);
	struct client *a = dial(sim_server_port(srv), 0);
	struct client *b = dial(sim_server_port(srv), 0);
	struct rtl_rtde_setup_reply r;
	int tries = 0;

	cr_assert(request_version(a, 2));
	cr_assert(request_version(b, 2));
	r = setup_inputs(a, "input_int_register_24,input_double_register_24");
	cr_assert_eq(r.recipe_id, 1);
	r = setup_inputs(b, "input_double_register_24,input_int_register_24");
	cr_assert_eq(r.recipe_id, 0);
	cr_assert(types_are(&r, "IN_USE,IN_USE"));
	hang_up(a);
	/* The server sees the close at its next read: retry as URCL does. */
	do {
		usleep(10000);
		r = setup_inputs(b, "input_double_register_24,input_int_register_24");
	} while (r.recipe_id == 0 && ++tries < 100);
	cr_assert_eq(r.recipe_id, 1, "released on close");
	cr_assert(types_are(&r, "DOUBLE,INT32"));
	hang_up(b);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, frequency_25_hz_on_eseries_spaces_timestamps_by_40_ms)
{
	struct sim_server *srv = serve(NULL, NULL);
	struct client *c = streaming_client(sim_server_port(srv), 25, "timestamp", 0);
	size_t n = collect(c, 250, ts_buf, 4096, NULL);

	cr_assert_geq(n, 3);
	assert_steps(ts_buf, n, 0.04);
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, skipped_packages_show_as_timestamp_gaps_of_the_injected_count)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct sim_stats st;
	struct client *c;
	size_t n, gaps = 0, missing = 0;

	o.faults.skip_every = 25;
	o.faults.skip_count = 4;
	srv = serve(&o, NULL);
	c = streaming_client(sim_server_port(srv), 500, "timestamp", 0);
	n = collect(c, 300, ts_buf, 4096, NULL);
	cr_assert_gt(n, 30);
	for (size_t i = 1; i < n; i++) {
		long steps = lround((ts_buf[i] - ts_buf[i - 1]) / 0.002);

		if (steps == 1)
			continue;
		cr_assert_eq(steps, 5, "a gap of exactly 4 skipped packages, not %ld", steps - 1);
		gaps++;
		missing += (size_t)steps - 1;
	}
	cr_assert_gt(gaps, 0);
	stop(srv);
	sim_server_stats(srv, &st);
	cr_assert_geq(st.skipped_packages, missing, "every gap is a counted skip");
	hang_up(c);
	sim_server_destroy(srv);
}

Test(sim_server, fragmented_stream_still_decodes)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct sim_stats st;
	struct client *c;
	size_t n;

	o.faults.fragment = true;
	o.faults.fragment_max = 5;
	srv = serve(&o, NULL);
	c = streaming_client(sim_server_port(srv), 500, "timestamp,actual_q,actual_TCP_pose", 0);
	n = collect(c, 300, ts_buf, 4096, NULL);
	cr_assert_gt(n, 30);
	assert_steps(ts_buf, n, 0.002);
	stop(srv);
	sim_server_stats(srv, &st);
	/* 103-byte packages in pieces of at most 5 bytes. */
	cr_assert_geq(st.fragments, n * 103 / 5);
	hang_up(c);
	sim_server_destroy(srv);
}

Test(sim_server, reset_after_n_packages_closes_with_rst)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct client *c;
	int64_t end;
	int len, data = 0;

	o.faults.reset_after = 40;
	srv = serve(&o, NULL);
	c = streaming_client(sim_server_port(srv), 500, "timestamp", 0);
	end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	while ((len = next_pkg(c, 100)) >= 0 && rtl_time_now() < end)
		if (len > 0)
			data++;
	cr_assert_eq(len, -ECONNRESET, "RST, not an orderly close (%d)", len);
	cr_assert_leq(data, 40);
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, a_client_that_stops_reading_is_dropped_and_another_keeps_its_rate)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server_opts so = { .sndbuf = 8192 };
	struct sim_server *srv;
	struct sim_stats st;
	struct client *slow, *fast;
	uint16_t port;
	size_t n;
	int len, eof_after = 0;

	o.send_buffer = 32768;
	srv = serve(&o, &so);
	port = sim_server_port(srv);
	/* About 2 KiB per package at 500 Hz: 1 MB/s into a client that reads
	 * nothing. */
	slow = streaming_client(
		port, 500,
		"actual_q,actual_qd,target_q,target_qd,target_qdd,target_current,"
		"target_moment,actual_current,joint_control_output,actual_TCP_pose,"
		"actual_TCP_speed,actual_TCP_force,target_TCP_pose,target_TCP_speed,"
		"joint_temperatures,actual_joint_voltage,tcp_offset,ft_raw_wrench,"
		"elbow_position,elbow_velocity,actual_q,actual_qd,target_q,target_qd,"
		"target_qdd,target_current,target_moment,actual_current,"
		"joint_control_output,actual_TCP_pose,actual_TCP_speed,actual_TCP_force,"
		"target_TCP_pose,target_TCP_speed,joint_temperatures,"
		"actual_joint_voltage,tcp_offset,ft_raw_wrench,elbow_position,"
		"elbow_velocity",
		4096);
	fast = streaming_client(port, 500, "timestamp", 0);
	n = collect(fast, 1000, ts_buf, 4096, NULL);
	sim_server_stats(srv, &st);
	cr_assert_eq(st.slow_disconnects, 1, "the reader that stopped was closed");
	/* The other one kept every package, on time. */
	cr_assert_gt(n, 250, "%zu packages in 1 s at 500 Hz", n);
	assert_steps(ts_buf, n, 0.002);
	/* What the slow one has buffered is whole packages, then EOF. */
	while ((len = next_pkg(slow, 1000)) > 0)
		eof_after++;
	cr_assert_eq(len, -EPIPE, "orderly close, as the controller does (%d)", len);
	cr_assert_gt(eof_after, 0);
	hang_up(slow);
	hang_up(fast);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, malformed_package_is_answered_with_a_text_and_the_connection_kept)
{
	struct sim_server *srv = serve(NULL, NULL);
	struct client *c = dial(sim_server_port(srv), 0);
	const uint8_t unknown[] = { 0x00, 0x05, 0x02, 0x00, 0x00 };
	const uint8_t bad_data[] = { 0x00, 0x08, 0x55, 0x07, 0x00, 0x00, 0x00, 0x01 };
	struct rtl_rtde_text t;
	int n;

	cr_assert(request_version(c, 2));
	send_all(c, unknown, sizeof(unknown));
	n = expect(c, 'M');
	cr_assert_eq(rtl_rtde_decode_text(&t, c->pkg, (size_t)n, RTL_RTDE_PROTOCOL_V2,
					  RTL_RTDE_FROM_CONTROLLER),
		     0);
	cr_assert_eq(t.level, RTL_RTDE_LEVEL_ERROR);
	send_all(c, bad_data, sizeof(bad_data)); /* input recipe 7 does not exist */
	expect(c, 'M');
	/* Still answering. */
	cr_assert_eq(get_version(c).major, 5);
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, echoed_timestamps_give_round_trips)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct sim_stats st;
	struct client *c;
	struct rtl_rtde_setup_reply r;
	int64_t end;
	int echoed = 0;
	const struct sim *sim;

	o.echo_register = RTL_RTDE_CMD_REG_ECHO;
	srv = serve(&o, NULL);
	c = dial(sim_server_port(srv), 0);
	cr_assert(request_version(c, 2));
	cr_assert_eq(setup_outputs(c, 500, "timestamp").recipe_id, 1);
	r = setup_inputs(c, RTL_RTDE_CMD_ECHO_RECIPE);
	cr_assert_eq(r.recipe_id, 1);
	cr_assert(start(c));
	end = rtl_time_now() + 300 * RTL_NS_PER_MS;
	while (rtl_time_now() < end) {
		uint8_t pkg[16];
		int len = next_pkg(c, 50), n;

		if (len <= 0 || c->pkg[2] != 'U')
			continue;
		/* Echo the timestamp straight back. */
		n = rtl_rtde_encode_data(pkg, sizeof(pkg), RTL_RTDE_PROTOCOL_V2,
					 RTL_RTDE_FROM_CLIENT, 1, c->pkg + 4, 8);
		send_all(c, pkg, (size_t)n);
		echoed++;
	}
	usleep(20000);
	stop(srv);
	sim_server_stats(srv, &st);
	sim = sim_server_sim(srv);
	cr_assert_gt(echoed, 30);
	cr_assert_geq(st.echoes, (uint64_t)echoed * 9 / 10, "%llu of %d echoes recorded",
		      (unsigned long long)st.echoes, echoed);
	cr_assert_eq(st.echo_unmatched, 0);
	cr_assert_eq(rtl_hist_count(&sim->echo_hist), st.echoes);
	cr_assert_gt(rtl_hist_min(&sim->echo_hist), 0);
	cr_assert_lt(rtl_hist_percentile(&sim->echo_hist, 50), 100 * RTL_NS_PER_MS);
	hang_up(c);
	sim_server_destroy(srv);
}

Test(sim_server, interleaved_text_messages_arrive_between_data_packages)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct client *c;
	size_t n, texts = 0;

	o.faults.text_every = 10;
	srv = serve(&o, NULL);
	c = streaming_client(sim_server_port(srv), 500, "timestamp", 0);
	n = collect(c, 200, ts_buf, 4096, &texts);
	cr_assert_gt(n, 20);
	cr_assert_geq(texts, n / 10 - 1);
	assert_steps(ts_buf, n, 0.002);
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

/* The next package is a controller text (v1 layout: no V was sent) with
 * @msg. */
static void expect_text(struct client *c, const char *msg)
{
	struct rtl_rtde_text t;
	int n = next_pkg(c, 2000);

	cr_assert_gt(n, 0, "a text within 2 s (%d)", n);
	cr_assert_eq(c->pkg[2], 'M', "'%c' instead of a text", c->pkg[2]);
	cr_assert_eq(rtl_rtde_decode_text(&t, c->pkg, (size_t)n, RTL_RTDE_PROTOCOL_V1,
					  RTL_RTDE_FROM_CONTROLLER),
		     0);
	cr_assert_eq(t.level, RTL_RTDE_LEVEL_ERROR);
	cr_assert_eq(t.message_len, strlen(msg), "'%.*s'", (int)t.message_len, t.message);
	cr_assert(!memcmp(t.message, msg, t.message_len), "'%.*s'", (int)t.message_len, t.message);
}

Test(sim_server, idle_connections_are_closed_by_the_handshake_timeout_and_free_their_slots)
{
	enum { N = 4 };
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct sim_stats st;
	struct client *idle[N], *late, *c;
	int64_t t0, end;
	size_t n;

	o.max_clients = N;
	o.handshake_timeout_ns = 300 * RTL_NS_PER_MS;
	srv = serve(&o, NULL);
	t0 = rtl_time_now();
	for (int i = 0; i < N; i++)
		idle[i] = dial(sim_server_port(srv), 0); /* never send a byte */
	/* Every slot taken: the next one is told, not left in silence. */
	late = dial(sim_server_port(srv), 0);
	expect_text(late, "client limit reached (4 connected, rtde-sim --max-clients 4): this "
			  "connection is closed in 1 s");
	/* Each idle one is told why, then closed (bounded: 2 s each). */
	for (int i = 0; i < N; i++) {
		expect_text(idle[i], "no complete package for 0.3 s before the stream was "
				     "started: connection closed (rtde-sim --handshake-timeout)");
		cr_assert_eq(next_pkg(idle[i], 2000), -EPIPE, "then an orderly close");
	}
	cr_assert_geq(rtl_time_now() - t0, o.handshake_timeout_ns);
	/* The slots are free: a real client is served and streams. */
	c = streaming_client(sim_server_port(srv), 500, "timestamp", 0);
	n = collect(c, 100, ts_buf, 4096, NULL);
	cr_assert_gt(n, 10);
	end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	do
		sim_server_stats(srv, &st);
	while (st.idle_closed < N + 1 && rtl_time_now() < end);
	/* The late one was idle too (it was still told, and closed). */
	cr_assert_eq(st.idle_closed, N + 1);
	cr_assert_eq(st.clients_over_limit, 1);
	for (int i = 0; i < N; i++)
		hang_up(idle[i]);
	hang_up(late);
	hang_up(c);
	stop(srv);
	sim_server_destroy(srv);
}

Test(sim_server, clients_over_the_limit_are_served_then_closed)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server *srv;
	struct client *a, *b;
	int len;

	o.max_clients = 1;
	srv = serve(&o, NULL);
	a = dial(sim_server_port(srv), 0);
	cr_assert(request_version(a, 2));
	b = dial(sim_server_port(srv), 0);
	expect_text(b, "client limit reached (1 connected, rtde-sim --max-clients 1): this "
		       "connection is closed in 1 s");
	cr_assert(request_version(b, 2), "answered like any other");
	len = next_pkg(b, 2000);
	cr_assert_eq(len, -EPIPE, "then closed after about a second (%d)", len);
	cr_assert_eq(get_version(a).major, 5, "the first one stays");
	hang_up(a);
	hang_up(b);
	stop(srv);
	sim_server_destroy(srv);
}
