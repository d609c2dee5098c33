// SPDX-License-Identifier: MIT
/*
 * Hostile UDP peers (issue #13): the loop's transport against a fake
 * controller made of one socket in this test, and rtde-sim's UDP side
 * against a fake client. The fake controller answers the HELLO from a
 * thread (connect blocks in it) and is then driven by the test itself, one
 * datagram per receive, so every count is exact; every wait is bounded by
 * poll() or the transport's own time-outs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/time.h>
#include <rtloop/udp.h>
#include <rtloop/udp_transport.h>

#include "udp.h"

#define FIRST_STATES 5
#define TIMEOUT_NS (100 * RTL_NS_PER_MS)

/* ---- the fake controller ------------------------------------------------------------- */

struct peer {
	int fd;
	uint16_t port;
	struct sockaddr_in client; /* learnt from the HELLO */
	pthread_t thread;
	int result;
};

static struct rtl_udp_state zero_state;
static uint8_t dg[RTL_UDP_MAX_DATAGRAM];

static void to_client(struct peer *p, const void *b, size_t n)
{
	cr_assert_eq(sendto(p->fd, b, n, 0, (const struct sockaddr *)&p->client, sizeof(p->client)),
		     (ssize_t)n, "sendto: %s", strerror(errno));
}

static void send_state(struct peer *p, uint64_t seq, const struct rtl_udp_state *s)
{
	int n = rtl_udp_encode_state(dg, sizeof(dg), seq, rtl_time_now(), s);

	cr_assert_gt(n, 0);
	to_client(p, dg, (size_t)n);
}

/* A datagram with a wrong magic: malformed. */
static void send_garbage(struct peer *p)
{
	int n = rtl_udp_encode_state(dg, sizeof(dg), 1, 0, &zero_state);

	dg[0] = 'X';
	to_client(p, dg, (size_t)n);
}

/* Wait (at most 3 s) for the HELLO, answer it with a WELCOME and states
 * 1 .. FIRST_STATES. */
static void *peer_main(void *arg)
{
	struct peer *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	struct rtl_udp_hello w = { .period_ns = RTL_NS_PER_MS };
	uint8_t buf[256];
	socklen_t sl = sizeof(p->client);
	struct rtl_udp_header h;
	int n;

	p->result = -ETIMEDOUT;
	if (poll(&pfd, 1, 3000) != 1)
		return NULL;
	n = (int)recvfrom(p->fd, buf, sizeof(buf), 0, (struct sockaddr *)&p->client, &sl);
	if (n <= 0 || rtl_udp_decode_header(&h, buf, (size_t)n) < 0 || h.type != RTL_UDP_HELLO) {
		p->result = -EPROTO;
		return NULL;
	}
	memcpy(w.schema, RTL_UDP_SCHEMA, sizeof(RTL_UDP_SCHEMA));
	n = rtl_udp_encode_hello(buf, sizeof(buf), RTL_UDP_WELCOME, 1, rtl_time_now(), &w);
	sendto(p->fd, buf, (size_t)n, 0, (struct sockaddr *)&p->client, sizeof(p->client));
	for (uint64_t seq = 1; seq <= FIRST_STATES; seq++) {
		n = rtl_udp_encode_state(dg, sizeof(dg), seq, rtl_time_now(), &zero_state);
		sendto(p->fd, dg, (size_t)n, 0, (struct sockaddr *)&p->client, sizeof(p->client));
	}
	p->result = 0;
	return NULL;
}

static void peer_open(struct peer *p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(p->fd, 0);
	cr_assert_eq(bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(getsockname(p->fd, (struct sockaddr *)&sa, &sl), 0);
	p->port = ntohs(sa.sin_port);
	cr_assert_eq(pthread_create(&p->thread, NULL, peer_main, p), 0);
}

/* ---- the transport under test, driven as the loop's rx thread does ----------------------- */

struct rx {
	struct rtl_udp_transport *tr;
	struct rtl_transport *t;
	struct rtl_loop_frame *f;
	size_t cap;
};

static void connect_to(struct rx *r, struct peer *p)
{
	struct rtl_udp_transport_config tc = { .size = sizeof(tc),
					       .host = "127.0.0.1",
					       .rx_timeout_ns = TIMEOUT_NS };
	struct rtl_error err = { 0 };

	peer_open(p);
	tc.port = p->port;
	cr_assert_eq(rtl_udp_transport_create(&r->tr, &tc, &err), 0, "%s", err.msg);
	r->t = rtl_udp_transport_base(r->tr);
	cr_assert_eq(r->t->ops->connect(r->t, &err), 0, "%s", err.msg);
	pthread_join(p->thread, NULL);
	cr_assert_eq(p->result, 0, "the fake controller: %d", p->result);
	r->cap = sizeof(struct rtl_udp_frame);
	r->f = calloc(1, sizeof(*r->f) + r->cap);
	cr_assert_not_null(r->f);
}

/* One receive and its frame: 1 (a frame), 0 (dropped), or -errno. */
static int receive(struct rx *r)
{
	int n = r->t->ops->recv(r->t);

	if (n < 0)
		return n;
	r->f->rx_ns = rtl_time_now();
	return r->t->ops->next(r->t, r->f, r->cap);
}

static void finish(struct rx *r, struct peer *p)
{
	r->t->ops->disconnect(r->t);
	rtl_udp_transport_destroy(r->tr);
	free(r->f);
	close(p->fd);
}

static void take_first_states(struct rx *r)
{
	for (uint64_t seq = 1; seq <= FIRST_STATES; seq++) {
		cr_assert_eq(receive(r), 1, "state %llu", (unsigned long long)seq);
		cr_assert_eq(rtl_udp_loop_frame(r->f)->seq, seq);
	}
}

/* ---- the loop's transport ------------------------------------------------------------- */

Test(udp_hostile, deadline_counts_from_the_last_valid_state_while_garbage_keeps_coming)
{
	struct peer p = { 0 };
	struct rx r = { 0 };
	struct rtl_udp_state nan_state = zero_state;
	struct rtl_udp_transport_counters ts = { .size = sizeof(ts) };
	char want[256];
	uint64_t garbage = 0;
	int64_t t0, deadline;
	int ret = 0;

	connect_to(&r, &p);
	take_first_states(&r);
	t0 = rtl_time_now();
	/* Stale (2, 3, 4), duplicate (5, 5), non-finite (6, 7: never taken). */
	for (uint64_t seq = 2; seq <= 4; seq++)
		send_state(&p, seq, &zero_state);
	send_state(&p, 5, &zero_state);
	send_state(&p, 5, &zero_state);
	nan_state.actual_tcp_position[2] = NAN;
	send_state(&p, 6, &nan_state);
	send_state(&p, 7, &nan_state);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(receive(&r), 0, "dropped %d", i);
	/* Then garbage, one datagram per receive, until the transport gives
	 * up (bounded: 3 s, 30 times the time-out). */
	deadline = t0 + 3 * RTL_NS_PER_SEC;
	while (rtl_time_now() < deadline) {
		send_garbage(&p);
		garbage++;
		ret = receive(&r);
		if (ret != 0)
			break;
	}
	cr_assert_eq(ret, -ETIMEDOUT, "the stream is given up while garbage arrives (%d)", ret);
	cr_assert_geq(rtl_time_now() - t0, TIMEOUT_NS);
	snprintf(want, sizeof(want),
		 "UDP peer 127.0.0.1:%u: no valid state datagram for 0.10 s (%llu malformed, 3 "
		 "stale, 2 duplicate, 2 non-finite received meanwhile)",
		 p.port, (unsigned long long)garbage);
	cr_assert_str_eq(r.t->ops->error(r.t), want);
	rtl_udp_transport_stats(r.tr, &ts);
	cr_assert_eq(ts.malformed, garbage);
	cr_assert_eq(ts.stale, 3);
	cr_assert_eq(ts.duplicate, 2);
	cr_assert_eq(ts.nonfinite_state, 2);
	cr_assert_eq(ts.rx_deadline, 1);
	cr_assert_eq(ts.states, FIRST_STATES);
	cr_assert_eq(ts.bad, garbage, "bad: the sum, as before");
	cr_assert_eq(ts.reordered, 5, "reordered: stale + duplicate, as before");
	finish(&r, &p);
}

Test(udp_hostile, a_silent_peer_ends_the_stream_with_what_it_sent_last)
{
	struct peer p = { 0 };
	struct rx r = { 0 };
	int64_t t0;
	char want[256];
	int ret;

	connect_to(&r, &p);
	take_first_states(&r);
	t0 = rtl_time_now();
	send_state(&p, 1, &zero_state);
	send_state(&p, 2, &zero_state);
	cr_assert_eq(receive(&r), 0);
	cr_assert_eq(receive(&r), 0);
	/* Nothing more: at most 2 time-outs and a receive slice. */
	do
		ret = receive(&r);
	while (ret == -EAGAIN && rtl_time_now() - t0 < 3 * RTL_NS_PER_SEC);
	cr_assert_eq(ret, -ETIMEDOUT, "%d", ret);
	cr_assert_lt(rtl_time_now() - t0, 2 * TIMEOUT_NS + RTL_TRANSPORT_RX_SLICE_NS);
	snprintf(want, sizeof(want),
		 "UDP peer 127.0.0.1:%u: no valid state datagram for 0.10 s (0 malformed, 2 "
		 "stale, 0 duplicate, 0 non-finite received meanwhile)",
		 p.port);
	cr_assert_str_eq(r.t->ops->error(r.t), want);
	finish(&r, &p);
}

static void send_alarm(struct peer *p, uint64_t seq, unsigned level, unsigned code,
		       const char *text)
{
	struct rtl_udp_alarm a = { .level = (uint8_t)level,
				   .group = RTL_UDP_ALARM_GROUP_RT,
				   .code = code };
	int n;

	snprintf(a.text, sizeof(a.text), "%s", text);
	n = rtl_udp_encode_alarm(dg, sizeof(dg), seq, rtl_time_now(), &a);
	cr_assert_gt(n, 0);
	to_client(p, dg, (size_t)n);
}

static char logged[8][RTL_LOG_LINE];
static int n_logged;

static void capture(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	if (n_logged < 8)
		snprintf(logged[n_logged++], RTL_LOG_LINE, "%s: %s", rtl_log_level_name(level),
			 msg);
}

Test(udp_hostile, alarms_are_logged_info_repeats_once_a_second_and_a_server_bye_ends_the_stream)
{
	struct peer p = { 0 };
	struct rx r = { 0 };
	struct rtl_udp_transport_counters ts = { .size = sizeof(ts) };
	char want[256];
	int64_t t0, t1;

	rtl_log_set_handler(capture, NULL);
	connect_to(&r, &p);
	take_first_states(&r);
	t0 = rtl_time_now();
	for (int i = 0; i < 20; i++) {
		send_alarm(&p, (uint64_t)i + 1, RTL_UDP_ALARM_INFO, RTL_UDP_ALARM_ACC_LIMIT,
			   "speedj: acc[2] = 900 deg/s^2 is above the limit 500 deg/s^2: clamped");
		cr_assert_eq(receive(&r), 0, "an alarm is no frame");
	}
	t1 = rtl_time_now();
	send_alarm(&p, 21, RTL_UDP_ALARM_ERROR, RTL_UDP_ALARM_LOSS,
		   "RT input lost 5 periods in a row (loss count 4): RT session closed\x1b[31m");
	cr_assert_eq(receive(&r), 0);
	cr_assert_eq(rtl_udp_encode_bye(dg, sizeof(dg), 22, rtl_time_now()), RTL_UDP_HEADER_SIZE);
	to_client(&p, dg, RTL_UDP_HEADER_SIZE);
	cr_assert_eq(receive(&r), -ECONNRESET, "the server ended the session");
	snprintf(want, sizeof(want),
		 "UDP peer 127.0.0.1:%u ended the RT session (BYE); its last alarm: alarm 1.2: "
		 "RT input lost 5 periods in a row (loss count 4): RT session closed?[31m",
		 p.port);
	cr_assert_str_eq(r.t->ops->error(r.t), want);
	rtl_udp_transport_stats(r.tr, &ts);
	cr_assert_eq(ts.alarms, 21);
	cr_assert_eq(ts.server_byes, 1);
	/* The 20 info alarms came within t1 - t0: one logged per second begun. */
	cr_assert_eq(ts.alarms_suppressed + (uint64_t)n_logged, 21, "logged or counted");
	cr_assert_geq(n_logged, 2);
	cr_assert_leq(n_logged, 2 + (t1 - t0) / RTL_NS_PER_SEC);
	snprintf(want, sizeof(want),
		 "info: UDP peer 127.0.0.1:%u: info 1.3: speedj: acc[2] = 900 deg/s^2 is above "
		 "the limit 500 deg/s^2: clamped",
		 p.port);
	cr_assert_str_eq(logged[0], want);
	cr_assert(strstr(logged[n_logged - 1], "error: UDP peer"), "%s", logged[n_logged - 1]);
	rtl_log_set_handler(NULL, NULL);
	finish(&r, &p);
}

Test(udp_hostile, a_non_finite_state_never_reaches_the_step)
{
	static const float bad[] = { NAN, INFINITY, -INFINITY };
	struct peer p = { 0 };
	struct rx r = { 0 };
	struct rtl_udp_transport_counters ts = { .size = sizeof(ts) };
	struct rtl_udp_state s = zero_state;
	uint64_t seq = FIRST_STATES;

	connect_to(&r, &p);
	take_first_states(&r);
	for (int i = 0; i < 3; i++) {
		s = zero_state;
		s.actual_joint_position[i] = bad[i];
		send_state(&p, ++seq, &s);
		cr_assert_eq(receive(&r), 0, "non-finite state %d dropped", i);
	}
	s = zero_state;
	s.jacobian_matrix[5][5] = NAN;
	send_state(&p, ++seq, &s);
	cr_assert_eq(receive(&r), 0, "a NaN in a matrix too");
	s = zero_state;
	s.time_stamp = NAN;
	send_state(&p, ++seq, &s);
	cr_assert_eq(receive(&r), 0, "and in the time stamp");
	/* The next good one is handed on; the dropped ones are a gap. */
	send_state(&p, ++seq, &zero_state);
	cr_assert_eq(receive(&r), 1);
	cr_assert_eq(rtl_udp_loop_frame(r.f)->seq, seq);
	cr_assert_eq(r.f->ctrl_skipped, 5);
	rtl_udp_transport_stats(r.tr, &ts);
	cr_assert_eq(ts.nonfinite_state, 5);
	cr_assert_eq(ts.states, FIRST_STATES + 1);
	finish(&r, &p);
}

/* ---- rtde-sim's UDP side against a fake client ---------------------------------------------- */

/* A command datagram @seq with target_time @tt, written into the bytes
 * (the encoder refuses a bad one). */
static size_t command_bytes(uint64_t seq, double tt)
{
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDJ, .target_time = 0.01 };
	int n = rtl_udp_encode_command(dg, sizeof(dg), seq, rtl_time_now(), &c);

	cr_assert_gt(n, 0);
	memcpy(dg + RTL_UDP_HEADER_SIZE + 24, &tt, sizeof(tt)); /* little-endian host */
	return (size_t)n;
}

Test(udp_hostile, the_simulator_drops_stale_duplicate_and_bad_target_time_commands)
{
	struct sim_udp_opts o;
	struct sim_udp *u;
	struct sim_udp_stats st;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct rtl_udp_hello hi = { .period_ns = 0 };
	struct pollfd pfd;
	int fd, n;
	int64_t end;

	sim_udp_opts_default(&o);
	o.port = 0;
	cr_assert_eq(sim_udp_create(&u, &o), 0);
	cr_assert_eq(sim_udp_start(u), 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(sim_udp_port(u));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	memcpy(hi.schema, RTL_UDP_SCHEMA, sizeof(RTL_UDP_SCHEMA));
	n = rtl_udp_encode_hello(dg, sizeof(dg), RTL_UDP_HELLO, 0, rtl_time_now(), &hi);
	cr_assert_eq(send(fd, dg, (size_t)n, 0), n);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 3000), 1, "no WELCOME within 3 s");

	send(fd, dg, command_bytes(5, 0.01), 0);	 /* accepted */
	send(fd, dg, command_bytes(5, 0.01), 0);	 /* duplicate */
	send(fd, dg, command_bytes(4, 0.01), 0);	 /* stale */
	send(fd, dg, command_bytes(6, -1.0), 0);	 /* bad target time */
	send(fd, dg, command_bytes(7, NAN), 0);		 /* bad target time, non-finite */
	send(fd, dg, command_bytes(8, RTL_UDP_AUTO), 0); /* AUTO is no duration */
	send(fd, dg, command_bytes(9, 0.0), 0);		 /* 0: at once, accepted */
	dg[0] = 'X';
	send(fd, dg, 64, 0); /* malformed */
	end = rtl_time_now() + 3 * RTL_NS_PER_SEC;
	do {
		sim_udp_stats(u, &st);
	} while (st.datagrams_in < 9 && rtl_time_now() < end &&
		 rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS) == 0);
	cr_assert_eq(st.datagrams_in, 9, "HELLO and 8 more within 3 s");
	cr_assert_eq(st.commands, 2);
	cr_assert_eq(st.duplicate_in, 1);
	cr_assert_eq(st.stale_in, 1);
	cr_assert_eq(st.bad_target_time, 3);
	cr_assert_eq(st.nonfinite_in, 1);
	cr_assert_eq(st.bad_in, 1);
	cr_assert_eq(st.refused, 0);
	close(fd);
	sim_udp_stop(u);
	cr_assert_eq(sim_udp_join(u), 0);
	sim_udp_destroy(u);
}
