// SPDX-License-Identifier: MIT
/*
 * The byte vectors and sequences of docs/udp.md against both ends of
 * rtloop's UDP stream, on loopback, in this process:
 *
 * - the client: the loop's transport (rtloop/udp_transport.h), driven
 *   through its ops as the loop's rx and step threads drive it, against a
 *   scripted server made of one socket. The script is the page's "client"
 *   sequence: the server's datagrams are the page's vectors, byte for byte,
 *   and what the client sends (its HELLO, its COMMANDs, its safe STOP, its
 *   BYE) must be the page's vectors but for seq and send_ns;
 * - the server: rtde-sim's UDP mode (apps/rtde-sim/udp.h) on an ephemeral
 *   port, sent the page's "server" sequence from two sockets; its WELCOME
 *   must be the page's and its counters must move as the page says.
 *
 * Every datagram is answered or counted before the next is sent, so each
 * count is exact; every wait is bounded (poll(), or a published counter
 * reaching its value within seconds); nothing is measured against a clock
 * but the take-over rule, whose one-second window the server sequence
 * guards (it skips, never fails, on a host stalled that long).
 *
 * The last tests hold the server to docs/udp.md 7.3 and 9 with the page's
 * vectors: the loss count (WELCOME, ALARM code 2, BYE), the command
 * time-out (ALARM code 1), servol (ALARM code 5) and LIMITS (a clamp and
 * one INFO ALARM in under a second, counted on the server's own cycles).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/loop.h>
#include <rtloop/time.h>
#include <rtloop/udp.h>
#include <rtloop/udp_transport.h>

#include "udp-spec.h"
#include "udp.h"

#define WAIT_MS 5000

static char why[256];

static const struct udp_spec_vector *vec(const char *name)
{
	const struct udp_spec_vector *v = udp_spec_vector(name);

	cr_assert_not_null(v, "docs/udp.md has no vector %s", name);
	return v;
}

static void fields_of(const struct udp_spec_vector *v, struct udp_spec_msg *m)
{
	cr_assert_eq(udp_spec_fields(v, m, why, sizeof(why)), 0, "%s", why);
}

static const struct udp_spec_sequence *sequence(const char *name)
{
	const struct udp_spec_sequence *s = udp_spec_sequence(name);

	cr_assert_not_null(s, "docs/udp.md has no sequence %s", name);
	return s;
}

/* A UDP socket bound to an ephemeral loopback port. */
static int loopback_socket(uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	if (port)
		*port = ntohs(sa.sin_port);
	return fd;
}

/* One datagram within @ms: its length, or -ETIMEDOUT. */
static int recv_within(int fd, uint8_t *buf, size_t cap, int ms, struct sockaddr_in *from)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	socklen_t sl = sizeof(*from);
	ssize_t n;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	n = from ? recvfrom(fd, buf, cap, 0, (struct sockaddr *)from, &sl) : recv(fd, buf, cap, 0);
	return n < 0 ? -errno : (int)n;
}

/* The header of @buf, which must be a well-formed datagram of @type. */
static struct rtl_udp_header header_of(const uint8_t *buf, int n, unsigned type)
{
	struct rtl_udp_header h;

	cr_assert_gt(n, 0, "no datagram: %d", n);
	cr_assert_eq(rtl_udp_decode_header(&h, buf, (size_t)n), RTL_UDP_HEADER_SIZE);
	cr_assert_eq(h.type, type, "a %s, not a %s", rtl_udp_type_name((enum rtl_udp_type)h.type),
		     rtl_udp_type_name((enum rtl_udp_type)type));
	return h;
}

/* @buf (@n bytes) is @v but for seq and send_ns. */
static void expect_vector(const uint8_t *buf, int n, const struct udp_spec_vector *v,
			  const char *what)
{
	long d;

	cr_assert_gt(n, 0, "%s: nothing received (%d)", what, n);
	d = udp_spec_diff_but_stamps(buf, (size_t)n, v->bytes, v->len);
	cr_expect_eq(d, -1,
		     "%s: %d bytes, differing from docs/udp.md:%u (%s, %zu bytes) at byte %ld "
		     "(%02x, the page %02x)",
		     what, n, v->line, v->name, v->len, d, d >= 0 && d < n ? buf[d] : 0,
		     d >= 0 && (size_t)d < v->len ? v->bytes[d] : 0);
}

/* ---- the client: rtloop's transport against a scripted server ----------------------- */

/* clang-format off */
static const char *const client_counters[] = {
	"states", "malformed", "stale", "duplicate", "other", "resyncs", "nonfinite_state",
	"alarms", "alarms_suppressed", "server_byes", NULL
};
/* clang-format on */
static const char *const client_keys[] = { "seq", "skipped", "error", NULL };

static uint64_t client_counter(const struct rtl_udp_transport_counters *s, const char *name)
{
	if (strcmp(name, "states") == 0)
		return s->states;
	if (strcmp(name, "malformed") == 0)
		return s->malformed;
	if (strcmp(name, "stale") == 0)
		return s->stale;
	if (strcmp(name, "duplicate") == 0)
		return s->duplicate;
	if (strcmp(name, "other") == 0)
		return s->other;
	if (strcmp(name, "resyncs") == 0)
		return s->resyncs;
	if (strcmp(name, "nonfinite_state") == 0)
		return s->nonfinite_state;
	if (strcmp(name, "alarms") == 0)
		return s->alarms;
	if (strcmp(name, "alarms_suppressed") == 0)
		return s->alarms_suppressed;
	if (strcmp(name, "server_byes") == 0)
		return s->server_byes;
	cr_assert_fail("no client counter %s", name);
	return 0;
}

struct fake_server {
	int fd;
	uint16_t port;
	struct sockaddr_in client; /* learnt from the HELLO */
	const struct udp_spec_sequence *seq;
	size_t handshake; /* steps sent in answer to the HELLO */
	uint8_t hello[RTL_UDP_MAX_DATAGRAM + 1];
	int hello_len;
	pthread_t thread;
};

struct client {
	struct fake_server srv;
	struct rtl_udp_transport *tr;
	struct rtl_transport *t;
	struct rtl_loop_frame *f;
	size_t cap;
};

/* Wait for the HELLO and answer it with the sequence's handshake. */
static void *fake_main(void *arg)
{
	struct fake_server *s = arg;

	s->hello_len = recv_within(s->fd, s->hello, sizeof(s->hello), WAIT_MS, &s->client);
	if (s->hello_len <= 0)
		return NULL;
	for (size_t i = 0; i < s->handshake; i++) {
		const struct udp_spec_vector *v = udp_spec_vector(s->seq->steps[i].vector);

		sendto(s->fd, v->bytes, v->len, 0, (struct sockaddr *)&s->client,
		       sizeof(s->client));
	}
	return NULL;
}

static void to_client(struct client *c, const struct udp_spec_vector *v)
{
	cr_assert_eq(sendto(c->srv.fd, v->bytes, v->len, 0, (struct sockaddr *)&c->srv.client,
			    sizeof(c->srv.client)),
		     (ssize_t)v->len, "sendto: %s", strerror(errno));
}

/* The HELLO vector @hello_name (its period and loss count) and the page's
 * safe STOP configure the transport, so that what it sends can be compared
 * with the page. */
static void client_connect(struct client *c, const char *hello_name)
{
	const struct udp_spec_sequence *seq = sequence("client");
	struct udp_spec_msg hello, stop;
	struct rtl_udp_transport_config tc = { .size = sizeof(tc), .host = "127.0.0.1" };
	struct rtl_error err = { 0 };

	fields_of(vec(hello_name), &hello);
	fields_of(vec("command-stop"), &stop);
	memset(&c->srv, 0, sizeof(c->srv));
	c->srv.seq = seq;
	/* The handshake ends with the first state handed on. */
	while (c->srv.handshake < seq->n &&
	       !udp_spec_outcome_has(&seq->steps[c->srv.handshake], "states"))
		c->srv.handshake++;
	cr_assert_lt(c->srv.handshake, seq->n, "docs/udp.md:%u: no state in the sequence",
		     seq->line);
	c->srv.handshake++;
	c->srv.fd = loopback_socket(&c->srv.port);
	cr_assert_eq(pthread_create(&c->srv.thread, NULL, fake_main, &c->srv), 0);

	tc.port = c->srv.port;
	tc.period_ns = hello.hello.period_ns;
	tc.loss_count = hello.hello.loss_count;
	tc.connect_timeout_ns = WAIT_MS * RTL_NS_PER_MS;
	tc.rx_timeout_ns = 30 * RTL_NS_PER_SEC; /* never, within a test */
	tc.safe_decel = stop.cmd.acc[0];
	cr_assert_eq(rtl_udp_transport_create(&c->tr, &tc, &err), 0, "%s", err.msg);
	c->t = rtl_udp_transport_base(c->tr);
	cr_assert_eq(c->t->ops->connect(c->t, &err), 0, "%s", err.msg);
	pthread_join(c->srv.thread, NULL);
	c->cap = sizeof(struct rtl_udp_frame);
	c->f = calloc(1, sizeof(*c->f) + c->cap);
	cr_assert_not_null(c->f);
}

/* One receive and its frame, as the loop's rx thread does it: 1 (a frame),
 * 0 (dropped), or -errno. */
static int client_receive(struct client *c)
{
	int n = c->t->ops->recv(c->t);

	if (n < 0)
		return n;
	c->f->rx_ns = rtl_time_now();
	return c->t->ops->next(c->t, c->f, c->cap);
}

static void client_finish(struct client *c)
{
	c->t->ops->disconnect(c->t);
	rtl_udp_transport_destroy(c->tr);
	free(c->f);
	close(c->srv.fd);
}

/* After @st's datagram: the frame's checks, and the listed counters one up
 * from @before, every other one as it was. */
static void expect_client_step(struct client *c, const struct udp_spec_step *st,
			       const struct rtl_udp_transport_counters *before,
			       const struct rtl_udp_transport_counters *now, int ret)
{
	const struct rtl_udp_frame *fr = rtl_udp_loop_frame(c->f);
	const char *unknown = udp_spec_outcome_unknown(st, client_counters, client_keys);
	bool frame = udp_spec_outcome_has(st, "states");
	int want_ret = frame ? 1 : 0;
	char val[32];

	cr_assert_null(unknown, "docs/udp.md:%u: '%s' is no outcome of the client", st->line,
		       unknown);
	if (udp_spec_outcome_value(st, "error", val, sizeof(val))) {
		cr_assert_neq(udp_spec_errno(val), 0, "docs/udp.md:%u: error=%s", st->line, val);
		want_ret = -udp_spec_errno(val);
	}
	cr_expect_eq(ret, want_ret, "docs/udp.md:%u: %s: next() returns %d, not %d", st->line,
		     st->vector, ret, want_ret);
	for (const char *const *k = client_counters; *k; k++) {
		uint64_t want = client_counter(before, *k) + (udp_spec_outcome_has(st, *k) ? 1 : 0);

		cr_expect_eq(client_counter(now, *k), want,
			     "docs/udp.md:%u: %s: %s is %llu, not %llu", st->line, st->vector, *k,
			     (unsigned long long)client_counter(now, *k), (unsigned long long)want);
	}
	if (udp_spec_outcome_value(st, "seq", val, sizeof(val)))
		cr_expect_eq(fr->seq, strtoull(val, NULL, 0), "docs/udp.md:%u: frame seq %llu",
			     st->line, (unsigned long long)fr->seq);
	if (udp_spec_outcome_value(st, "skipped", val, sizeof(val)))
		cr_expect_eq(c->f->ctrl_skipped, strtoul(val, NULL, 0),
			     "docs/udp.md:%u: ctrl_skipped %u", st->line, c->f->ctrl_skipped);
	if (frame && ret == 1) {
		/* The frame holds what the page says the state holds. */
		struct udp_spec_msg want, got;

		fields_of(vec(st->vector), &want);
		memset(&got, 0, sizeof(got));
		got.type = RTL_UDP_STATE;
		got.h = want.h;
		got.h.seq = fr->seq;
		got.h.send_ns = fr->send_ns;
		got.state = fr->rt;
		cr_expect(udp_spec_same(&want, &got, why, sizeof(why)), "docs/udp.md:%u: %s: %s",
			  st->line, st->vector, why);
	}
}

Test(udp_spec_client, hello_is_the_vector_and_the_client_sequence_is_counted_as_written)
{
	static struct client c;
	const struct udp_spec_sequence *seq;
	struct rtl_udp_transport_counters before = { .size = sizeof(before) },
					  now = { .size = sizeof(now) };

	client_connect(&c, "hello-basic");
	seq = c.srv.seq;
	expect_vector(c.srv.hello, c.srv.hello_len, vec("hello-basic"), "the client's HELLO");
	for (size_t i = 0; i < seq->n; i++) {
		const struct udp_spec_step *st = &seq->steps[i];
		int ret = 0;

		if (i >= c.srv.handshake)
			to_client(&c, vec(st->vector));
		/* The handshake's datagrams were read by connect; its state is
		 * handed on by the first next(). */
		if (i >= c.srv.handshake || udp_spec_outcome_has(st, "states"))
			ret = client_receive(&c);
		rtl_udp_transport_stats(c.tr, &now);
		expect_client_step(&c, st, &before, &now, ret);
		if (i >= c.srv.handshake)
			cr_expect_eq(now.datagrams, before.datagrams + 1, "docs/udp.md:%u",
				     st->line);
		before = now;
	}
	client_finish(&c);
}

Test(udp_spec_client, hello_with_a_loss_count_is_the_vector)
{
	static struct client c;

	client_connect(&c, "hello-loss");
	expect_vector(c.srv.hello, c.srv.hello_len, vec("hello-loss"), "the client's HELLO");
	client_finish(&c);
}

/* The commands the page gives, as the step would write them. */
static bool sendable_command(const struct udp_spec_vector *v, struct udp_spec_msg *m)
{
	if (v->decode[0] || v->encode[0])
		return false;
	fields_of(v, m);
	return m->type == RTL_UDP_COMMAND;
}

Test(udp_spec_client, commands_safe_stop_and_bye_are_the_vectors)
{
	static struct client c;
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	const struct udp_spec_vector *stop_v = vec("command-stop");
	const struct udp_spec_step *first;
	struct udp_spec_msg m, first_state, stop;
	struct rtl_udp_cmd *cmd;
	struct rtl_udp_header h;
	size_t n, sent = 0;
	const struct udp_spec_vector *v = udp_spec_vectors(&n);
	uint64_t last_seq = 0;
	int len;

	client_connect(&c, "hello-basic");
	first = &c.srv.seq->steps[c.srv.handshake - 1];
	fields_of(vec(first->vector), &first_state);
	cr_assert_eq(client_receive(&c), 1, "the handshake's state");
	cmd = rtl_udp_transport_command(c.tr);
	for (size_t i = 0; i < n; i++) {
		char what[64];

		if (!sendable_command(&v[i], &m))
			continue;
		/* The echo is the newest state's: the page's commands answer
		 * the handshake's state. */
		cr_expect(m.cmd.echo_seq == first_state.h.seq &&
				  m.cmd.echo_ns == first_state.h.send_ns,
			  "docs/udp.md:%u: %s echoes %llu/%lld, not the state %s", v[i].line,
			  v[i].name, (unsigned long long)m.cmd.echo_seq, (long long)m.cmd.echo_ns,
			  first->vector);
		*cmd = m.cmd;
		cmd->echo_seq = 0;
		cmd->echo_ns = 0;
		cr_expect_eq(c.t->ops->check(c.t, why, sizeof(why)), 0, "%s: %s", v[i].name, why);
		cr_assert_gt(c.t->ops->send(c.t, rtl_time_now()), 0, "%s not sent", v[i].name);
		len = recv_within(c.srv.fd, buf, sizeof(buf), WAIT_MS, NULL);
		snprintf(what, sizeof(what), "the client's %s", v[i].name);
		expect_vector(buf, len, &v[i], what);
		h = header_of(buf, len, RTL_UDP_COMMAND);
		cr_expect(!sent || h.seq == last_seq + 1, "%s: seq %llu after %llu", v[i].name,
			  (unsigned long long)h.seq, (unsigned long long)last_seq);
		last_seq = h.seq;
		sent++;
	}
	cr_expect_geq(sent, 5, "the page's commands: one per mode");

	/* The safe STOP: the page's command-stop, configured at connect. */
	fields_of(stop_v, &stop);
	cr_assert_gt(c.t->ops->send_safe(c.t), 0);
	len = recv_within(c.srv.fd, buf, sizeof(buf), WAIT_MS, NULL);
	expect_vector(buf, len, stop_v, "the client's safe STOP");
	h = header_of(buf, len, RTL_UDP_COMMAND);
	cr_expect_eq(h.seq, last_seq + 1);
	last_seq = h.seq;

	/* What a sender must refuse never passes the check. */
	fields_of(vec("reject-target-time"), &m);
	*cmd = m.cmd;
	cr_expect_eq(c.t->ops->check(c.t, why, sizeof(why)), -EDOM, "a target_time of %g",
		     m.cmd.target_time);
	memset(cmd, 0, sizeof(*cmd));
	cmd->mode = vec("reject-mode")->bytes[RTL_UDP_HEADER_SIZE];
	cr_expect_eq(c.t->ops->check(c.t, why, sizeof(why)), -EDOM, "mode %u", cmd->mode);

	/* The BYE, numbered as the next command would be. */
	c.t->ops->disconnect(c.t);
	len = recv_within(c.srv.fd, buf, sizeof(buf), WAIT_MS, NULL);
	expect_vector(buf, len, vec("bye-client"), "the client's BYE");
	h = header_of(buf, len, RTL_UDP_BYE);
	cr_expect_eq(h.seq, last_seq + 1);
	client_finish(&c);
}

/* ---- the server: rtde-sim's UDP mode against the page's client datagrams -------------- */

/* clang-format off */
static const char *const server_counters[] = {
	"hellos", "sessions", "rejected", "byes", "timeouts", "commands", "bad_in", "stale_in",
	"duplicate_in", "bad_target_time", "unsupported", "refused", "commands_lost",
	"limits_in", "bad_limits", "alarms_sent", "byes_sent", "loss_closed", "vel_clamped",
	"acc_clamped", "limit_alarms_suppressed", "unsupported_alarms_suppressed", NULL
};
/* clang-format on */
static const char *const server_keys[] = { "reply", NULL };

static uint64_t server_counter(const struct sim_udp_stats *s, const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} c[] = {
#define C(x) { #x, offsetof(struct sim_udp_stats, x) }
		/* clang-format off */
		C(hellos), C(sessions), C(rejected), C(byes), C(timeouts), C(commands), C(bad_in),
		C(stale_in), C(duplicate_in), C(bad_target_time), C(unsupported), C(refused),
		C(commands_lost), C(limits_in), C(bad_limits), C(alarms_sent), C(byes_sent),
		C(loss_closed), C(vel_clamped), C(acc_clamped), C(limit_alarms_suppressed),
		C(unsupported_alarms_suppressed),
	/* clang-format on */
#undef C
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (strcmp(c[i].name, name) == 0) {
			uint64_t v;

			memcpy(&v, (const char *)s + c[i].off, sizeof(v));
			return v;
		}
	cr_assert_fail("no server counter %s", name);
	return 0;
}

struct server {
	struct sim_udp *u;
	int client, second; /* sockets connected to the simulator */
};

static int connected_socket(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = loopback_socket(NULL);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void server_start(struct server *s)
{
	struct sim_udp_opts o;

	sim_udp_opts_default(&o);
	o.port = 0;
	cr_assert_eq(sim_udp_create(&s->u, &o), 0);
	cr_assert_eq(sim_udp_start(s->u), 0);
	s->client = connected_socket(sim_udp_port(s->u));
	s->second = connected_socket(sim_udp_port(s->u));
}

static void server_finish(struct server *s)
{
	close(s->client);
	close(s->second);
	sim_udp_stop(s->u);
	cr_assert_eq(sim_udp_join(s->u), 0);
	sim_udp_destroy(s->u);
}

/* The simulator's counters once it has taken @datagrams datagrams (it
 * publishes them every cycle); bounded by WAIT_MS. */
static void server_stats_after(struct server *s, uint64_t datagrams, struct sim_udp_stats *st)
{
	int64_t end = rtl_time_now() + WAIT_MS * RTL_NS_PER_MS;

	for (;;) {
		sim_udp_stats(s->u, st);
		if (st->datagrams_in >= datagrams || rtl_time_now() > end)
			break;
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS / 2);
	}
	cr_assert_eq(st->datagrams_in, datagrams, "the simulator took %llu datagrams, not %llu",
		     (unsigned long long)st->datagrams_in, (unsigned long long)datagrams);
}

/* The simulator's counters once it has published cycles past the snapshot
 * read first: everything the test saw it do (a datagram it sent) is in
 * them, as a cycle's effects are published at the end of its wake-up, after
 * its datagrams went out. Bounded by WAIT_MS. */
static void server_settled(struct server *s, struct sim_udp_stats *st)
{
	int64_t end = rtl_time_now() + WAIT_MS * RTL_NS_PER_MS;
	uint64_t c0;

	sim_udp_stats(s->u, st);
	c0 = st->cycles;
	while (st->cycles < c0 + 2 && rtl_time_now() < end) {
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS / 2);
		sim_udp_stats(s->u, st);
	}
	cr_assert_geq(st->cycles, c0 + 2, "the simulator stopped cycling");
}

static void to_server(int fd, const struct udp_spec_vector *v)
{
	cr_assert_eq(send(fd, v->bytes, v->len, 0), (ssize_t)v->len, "send: %s", strerror(errno));
}

/* The STATE that follows on @fd within WAIT_MS, its header in *@h. */
static void next_state(int fd, struct rtl_udp_header *h, struct rtl_udp_state *st)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	static struct rtl_udp_state scratch;
	int n = recv_within(fd, buf, sizeof(buf), WAIT_MS, NULL);

	cr_assert_gt(n, 0, "no STATE within %d ms", WAIT_MS);
	cr_assert_eq(rtl_udp_decode_state(h, st ? st : &scratch, buf, (size_t)n), n,
		     "a datagram of type %u where a STATE was due", buf[5]);
}

/* HELLO @hello from the client socket: the WELCOME is @welcome but for seq
 * and send_ns, and the STATEs start at number 1. */
static void server_session(struct server *s, const char *hello, const char *welcome)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	struct rtl_udp_header h;
	int n;

	to_server(s->client, vec(hello));
	n = recv_within(s->client, buf, sizeof(buf), WAIT_MS, NULL);
	expect_vector(buf, n, vec(welcome), "rtde-sim's WELCOME");
	next_state(s->client, &h, NULL);
	cr_expect_eq(h.seq, 1, "the first STATE of a session is number 1, not %llu",
		     (unsigned long long)h.seq);
}

/* After the BYE: the simulator sends no more STATEs, over 20 cycles. */
static void expect_stream_stopped(struct server *s, const struct sim_udp_stats *at_bye)
{
	struct sim_udp_stats st;
	int64_t end = rtl_time_now() + WAIT_MS * RTL_NS_PER_MS;

	do {
		sim_udp_stats(s->u, &st);
		if (st.cycles >= at_bye->cycles + 20)
			break;
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	} while (rtl_time_now() < end);
	cr_assert_geq(st.cycles, at_bye->cycles + 20, "the simulator stopped cycling");
	cr_expect_eq(st.states_sent, at_bye->states_sent, "STATEs after the BYE: %llu",
		     (unsigned long long)(st.states_sent - at_bye->states_sent));
	cr_expect(!st.client, "a session after the BYE");
}

/* The next datagram on @fd that is not a STATE, within WAIT_MS: its length
 * (or -ETIMEDOUT); the last STATE's seq seen on the way in *@last. */
static int next_non_state(int fd, uint8_t *buf, size_t cap, uint64_t *last)
{
	int64_t end = rtl_time_now() + WAIT_MS * RTL_NS_PER_MS;

	for (;;) {
		int ms = (int)((end - rtl_time_now()) / RTL_NS_PER_MS);
		int n = recv_within(fd, buf, cap, ms > 0 ? ms : 0, NULL);
		struct rtl_udp_header h;

		if (n < 0)
			return n;
		if (rtl_udp_decode_header(&h, buf, (size_t)n) == RTL_UDP_HEADER_SIZE &&
		    h.type == RTL_UDP_STATE) {
			if (last)
				*last = h.seq;
			continue;
		}
		return n;
	}
}

/* Does the client's datagram @v refresh the take-over timer (a HELLO, or a
 * COMMAND that decodes)? */
static bool heard(const struct udp_spec_vector *v)
{
	struct udp_spec_msg m;

	fields_of(v, &m);
	return !v->decode[0] && (m.type == RTL_UDP_HELLO || m.type == RTL_UDP_COMMAND);
}

Test(udp_spec_server, welcome_and_the_server_sequence_are_counted_as_written)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	const struct udp_spec_sequence *seq = sequence("server");
	struct sim_udp_stats before = { 0 }, now;
	struct server s;
	int64_t last_heard = 0;

	server_start(&s);
	for (size_t i = 0; i < seq->n; i++) {
		const struct udp_spec_step *st = &seq->steps[i];
		const struct udp_spec_vector *v = vec(st->vector);
		const char *unknown = udp_spec_outcome_unknown(st, server_counters, server_keys);
		bool second = strcmp(st->from, "second") == 0;
		int fd = second ? s.second : s.client;
		char reply[64];

		cr_assert_null(unknown, "docs/udp.md:%u: '%s' is no outcome of the server",
			       st->line, unknown);
		/* The take-over rule is a second of the client's silence: a
		 * host that stalled that long skips, it does not fail. */
		if (second && last_heard && rtl_time_now() - last_heard > 900 * RTL_NS_PER_MS) {
			server_finish(&s);
			cr_skip_test("the host stalled for 0.9 s: the take-over rule applies");
		}
		to_server(fd, v);
		if (!second && heard(v))
			last_heard = rtl_time_now();
		server_stats_after(&s, before.datagrams_in + 1, &now);
		for (const char *const *k = server_counters; *k; k++) {
			uint64_t want = server_counter(&before, *k) +
					(udp_spec_outcome_has(st, *k) ? 1 : 0);

			cr_expect_eq(server_counter(&now, *k), want,
				     "docs/udp.md:%u: %s from %s: %s is %llu, not %llu", st->line,
				     st->vector, second ? "the second socket" : "the client", *k,
				     (unsigned long long)server_counter(&now, *k),
				     (unsigned long long)want);
		}
		if (udp_spec_outcome_value(st, "reply", reply, sizeof(reply))) {
			struct rtl_udp_header h;
			int n = next_non_state(fd, buf, sizeof(buf), NULL);

			expect_vector(buf, n, vec(reply), "rtde-sim's reply");
			/* A WELCOME starts the session: its STATEs from 1. */
			if (n > 0 && buf[5] == RTL_UDP_WELCOME) {
				next_state(fd, &h, NULL);
				cr_expect_eq(h.seq, 1,
					     "the first STATE of a session is number 1, not %llu",
					     (unsigned long long)h.seq);
			}
		}
		if (udp_spec_outcome_has(st, "byes"))
			expect_stream_stopped(&s, &now);
		before = now;
	}
	/* Nothing went to the second socket: its HELLO was ignored, and the
	 * simulator answers in the cycle that counted it. */
	cr_expect_eq(recv(s.second, buf, sizeof(buf), MSG_DONTWAIT), -1,
		     "the rejected client got an answer");
	server_finish(&s);
}

/* ---- the server's loss count, time-out, alarms and limits (docs/udp.md 7.3, 9, 10) ---- */

/* The ALARM in @buf is of group 1, @code and @level. */
static void expect_alarm(const uint8_t *buf, int n, uint32_t code, uint8_t level)
{
	struct rtl_udp_alarm a;

	cr_assert_gt(n, 0, "no ALARM within %d ms", WAIT_MS);
	cr_assert_eq(rtl_udp_decode_alarm(NULL, &a, buf, (size_t)n), n,
		     "a datagram of type %u where an ALARM was due", buf[5]);
	cr_expect_eq(a.group, RTL_UDP_ALARM_GROUP_RT, "group %u (%s)", a.group, a.text);
	cr_expect_eq(a.code, code, "code %u, not %u (%s)", a.code, code, a.text);
	cr_expect_eq(a.level, level, "level %u, not %u (%s)", a.level, level, a.text);
}

Test(udp_spec_server, welcome_carries_the_loss_count)
{
	struct server s;

	server_start(&s);
	server_session(&s, "hello-loss", "welcome-loss");
	server_finish(&s);
}

Test(udp_spec_server, more_than_loss_count_periods_without_a_command_end_the_session)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	struct udp_spec_msg welcome;
	struct sim_udp_stats st;
	struct rtl_udp_header h;
	struct server s;
	uint64_t s0, last = 0;
	int n;

	fields_of(vec("welcome-loss"), &welcome);
	cr_assert_gt(welcome.hello.loss_count, 0);
	server_start(&s);
	server_session(&s, "hello-loss", "welcome-loss");
	next_state(s.client, &h, NULL);
	s0 = h.seq;
	to_server(s.client, vec("command-speedj"));
	/* One command, then none: ALARM code 2, then BYE. The server cannot
	 * end before loss_count periods after the one the command came in. */
	n = next_non_state(s.client, buf, sizeof(buf), &last);
	expect_alarm(buf, n, RTL_UDP_ALARM_LOSS, RTL_UDP_ALARM_ERROR);
	cr_expect_geq(last, s0 + (uint64_t)welcome.hello.loss_count,
		      "the session ended at STATE %llu, %d periods after %llu",
		      (unsigned long long)last, welcome.hello.loss_count, (unsigned long long)s0);
	n = next_non_state(s.client, buf, sizeof(buf), NULL);
	header_of(buf, n, RTL_UDP_BYE);
	server_settled(&s, &st);
	cr_expect_eq(st.loss_closed, 1);
	cr_expect_eq(st.byes_sent, 1);
	expect_stream_stopped(&s, &st);
	/* The session is over: a command is from no session. */
	server_settled(&s, &st);
	to_server(s.client, vec("command-stop"));
	{
		uint64_t rejected = st.rejected;

		server_stats_after(&s, st.datagrams_in + 1, &st);
		cr_expect_eq(st.rejected, rejected + 1);
	}
	server_finish(&s);
}

Test(udp_spec_server, the_command_time_out_stops_the_robot_with_alarm_1)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	static struct rtl_udp_state state;
	struct sim_udp_stats st;
	struct rtl_udp_header h;
	struct server s;
	int64_t end;
	int n;

	server_start(&s);
	server_session(&s, "hello-basic", "welcome-basic");
	to_server(s.client, vec("command-speedj"));
	n = next_non_state(s.client, buf, sizeof(buf), NULL);
	expect_alarm(buf, n, RTL_UDP_ALARM_CMD_TIMEOUT, RTL_UDP_ALARM_ERROR);
	/* The session goes on, the robot in SAFE_STOP. */
	end = rtl_time_now() + WAIT_MS * RTL_NS_PER_MS;
	do
		next_state(s.client, &h, &state);
	while (state.robot_state != 5 && rtl_time_now() < end);
	cr_expect_eq(state.robot_state, 5, "robot_state %u after the time-out", state.robot_state);
	server_settled(&s, &st);
	cr_expect(st.client, "the time-out ended the session");
	cr_expect_geq(st.watchdog_trips, 1);
	server_finish(&s);
}

Test(udp_spec_server, limits_clamp_speedj_with_one_info_alarm_a_second)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	static struct rtl_udp_state state;
	struct udp_spec_msg lim;
	struct sim_udp_stats st, after;
	struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDJ, .target_time = 0.001 };
	struct server s;
	uint64_t s0 = 0, seq = 100;
	unsigned alarms = 0;
	double limit, max_v = 0, last_v = 0;
	int64_t end;

	fields_of(vec("limits-basic"), &lim);
	limit = lim.limits.velj[0];
	cr_assert_gt(limit, 0);
	server_start(&s);
	server_session(&s, "hello-basic", "welcome-basic");
	server_settled(&s, &st);
	to_server(s.client, vec("limits-basic"));
	server_stats_after(&s, st.datagrams_in + 1, &after);
	cr_expect_eq(after.limits_in, st.limits_in + 1, "LIMITS not taken");
	cr_expect_eq(after.bad_in + after.bad_limits, st.bad_in + st.bad_limits, "LIMITS dropped");
	/* Twice the limit on joint 1, one command per STATE, for less than
	 * a second of the server's cycles (its numbers count them). */
	c.vel[0] = 2 * limit;
	for (int i = 0; i < 6; i++)
		c.acc[i] = RTL_UDP_AUTO;
	end = rtl_time_now() + 10 * RTL_NS_PER_SEC;
	for (;;) {
		int n = recv_within(s.client, buf, sizeof(buf), WAIT_MS, NULL);
		struct rtl_udp_header h;

		cr_assert_gt(n, 0, "the stream stopped");
		if (rtl_udp_decode_header(&h, buf, (size_t)n) < 0)
			cr_assert_fail("a malformed datagram from the server");
		if (h.type == RTL_UDP_ALARM) {
			struct rtl_udp_alarm a;

			cr_assert_eq(rtl_udp_decode_alarm(NULL, &a, buf, (size_t)n), n);
			if (a.group == RTL_UDP_ALARM_GROUP_RT &&
			    a.code == RTL_UDP_ALARM_VEL_LIMIT) {
				cr_expect_eq(a.level, RTL_UDP_ALARM_INFO, "%s", a.text);
				alarms++;
			}
			continue;
		}
		if (h.type != RTL_UDP_STATE)
			continue;
		cr_assert_eq(rtl_udp_decode_state(&h, &state, buf, (size_t)n), n);
		if (!s0)
			s0 = h.seq;
		if (h.seq - s0 >= 900 || rtl_time_now() > end)
			break;
		max_v = fmax(max_v, state.target_joint_velocity[0]);
		last_v = state.target_joint_velocity[0];
		c.echo_seq = h.seq;
		c.echo_ns = h.send_ns;
		n = rtl_udp_encode_command(buf, sizeof(buf), seq++, rtl_time_now(), &c);
		cr_assert_eq(send(s.client, buf, (size_t)n, 0), n);
	}
	cr_expect_eq(alarms, 1, "%u velocity-limit ALARMs in under a second", alarms);
	cr_expect_leq(max_v, limit * (1 + 1e-4), "joint 1 at %g deg/s, the limit %g", max_v, limit);
	cr_expect_geq(last_v, 0.9 * limit, "joint 1 at %g deg/s: not clamped, stopped", last_v);
	server_finish(&s);
}

Test(udp_spec_server, servol_is_unsupported_with_a_warn_alarm)
{
	static uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
	struct sim_udp_stats st;
	struct server s;
	int n;

	server_start(&s);
	server_session(&s, "hello-basic", "welcome-basic");
	to_server(s.client, vec("command-servol"));
	n = next_non_state(s.client, buf, sizeof(buf), NULL);
	expect_alarm(buf, n, RTL_UDP_ALARM_UNSUPPORTED, RTL_UDP_ALARM_WARN);
	server_settled(&s, &st);
	cr_expect_eq(st.unsupported, 1);
	server_finish(&s);
}
