// SPDX-License-Identifier: MIT
/*
 * The one handshake and reconnect of RTDE: the transport's connect() under
 * the loop, against a scripted controller (tests/common/fake-rtde.c) that
 * answers the handshake, streams a few data packages and closes, once per
 * connection it is asked to serve, or that accepts and never answers.
 * What a program sees is checked: the codes rtl_loop_start() and
 * rtl_loop_join() return, the messages (naming the peer and the fix),
 * the loop's log, the counters, and what reached the controller. Every
 * wait is bounded; each test has a 5 s limit.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#include "counters.h"
#include "fake-rtde.h"

#define SEC RTL_NS_PER_SEC
#define MS RTL_NS_PER_MS

/* ---- the log, as the loop's log thread hands it over ---------------------------------------- */

static struct {
	pthread_mutex_t lock;
	char text[8192];
	int lost, attempts, failed;
} L = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_log(void *user, enum rtl_log_level level, const char *msg)
{
	size_t n;

	(void)user;
	(void)level;
	pthread_mutex_lock(&L.lock);
	L.lost += strstr(msg, "loop: connection lost: ") != NULL;
	L.attempts += strstr(msg, "loop: reconnect attempt ") != NULL && !strstr(msg, "failed");
	L.failed += strstr(msg, " failed: ") != NULL;
	n = strlen(L.text);
	snprintf(L.text + n, sizeof(L.text) - n, "%s\n", msg);
	pthread_mutex_unlock(&L.lock);
}

static bool logged(const char *what)
{
	bool yes;

	pthread_mutex_lock(&L.lock);
	yes = strstr(L.text, what) != NULL;
	pthread_mutex_unlock(&L.lock);
	return yes;
}

static void setup(void)
{
	memset(L.text, 0, sizeof(L.text));
	L.lost = L.attempts = L.failed = 0;
	rtl_log_set_handler(on_log, NULL);
}

static void teardown(void)
{
	rtl_log_set_handler(NULL, NULL);
}

TestSuite(rtde_connect, .init = setup, .fini = teardown, .timeout = 5);

/* ---- a program: the transport, the loop and a step that records ----------------------------- */

struct prog {
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	struct rtl_rtde_handle reg; /* the input register the step writes */
	int32_t value;		    /* what it writes there */
	/* Seen in connected(): on the loop's threads, read after join. */
	int connects;
	enum rtl_rtde_protocol protocol;
	uint32_t major;
	uint8_t input_id;
	/* Seen by the step. */
	int frames;
	double first_ts;
};

static struct prog P;

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct prog *p = user;
	const struct rtl_rtde_handshake *info = rtl_rtde_client_info(rtl_rtde_transport_client(t));

	p->connects++;
	p->protocol = info->protocol;
	p->major = info->version.major;
	p->input_id = info->n_inputs ? info->input_ids[0] : 0;
	p->reg = rtl_rtde_transport_input_handle(t, 0, "input_int_register_30");
}

static int step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct prog *p = user;

	if (!p->frames++)
		p->first_ts = f->ctrl_time;
	if (rtl_rtde_handle_valid(p->reg))
		rtl_rtde_frame_set_int(rtl_rtde_loop_commands(loop, 0), p->reg, p->value);
	return 0;
}

/* A transport to @port, a loop over it that steps every frame (inline). */
static void prog_open(struct prog *p, uint16_t port, const char *inputs, int reconnects,
		      int64_t backoff_ns)
{
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };

	memset(p, 0, sizeof(*p));
	tc.port = port;
	tc.connect_timeout_ns = 2 * SEC;
	cc.outputs = "timestamp,actual_q";
	cc.inputs[0] = inputs;
	cc.frequency = 500;
	tc.connected = on_connected;
	tc.user = p;
	cr_assert_eq(rtl_rtde_transport_create(&p->tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(p->tr);
	lc.step = step;
	lc.user = p;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	/* The rx thread steps each receive's frames before it receives
	 * again: every frame is stepped, even one just before a close. */
	lc.inline_step = true;
	lc.every_frame = true;
	lc.watchdog_periods = -1;
	lc.reconnect_attempts = reconnects;
	lc.reconnect_backoff_ns = backoff_ns;
	cr_assert_eq(rtl_loop_create(&p->loop, &lc, &err), 0, "%s", err.msg);
}

static void prog_close(struct prog *p)
{
	rtl_loop_destroy(p->loop);
	rtl_rtde_transport_destroy(p->tr);
}

/* A port nobody listens on: bind an ephemeral one, then close it. */
static uint16_t closed_port(void)
{
	uint16_t port;
	int fd = rtl_tcp_listen(&port, NULL, 0, NULL);

	cr_assert_geq(fd, 0);
	close(fd);
	return port;
}

/* ---- tests ---------------------------------------------------------------------------------- */

Test(rtde_connect, handshake_stream_peer_close_and_reconnect)
{
	static struct fake fk = { .conns = 2, .ndata = 3 };
	struct rtl_error err = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char want[80];

	fake_start(&fk);
	prog_open(&P, fk.port, NULL, 2, 50 * MS);
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	/* Two connections served: the listener goes, reconnects are refused. */
	fake_stop(&fk);
	cr_assert_eq(rtl_loop_join(P.loop), -ECONNREFUSED);
	rtl_loop_stats(P.loop, &s);

	cr_assert_eq(atomic_load(&fk.served), 2);
	cr_assert_eq(P.connects, 2);
	cr_assert_eq(P.protocol, RTL_RTDE_PROTOCOL_V2);
	cr_assert_eq(P.major, 5);
	cr_assert_eq(P.frames, 6, "3 frames per connection, got %d", P.frames);
	cr_assert_float_eq(P.first_ts, 42.0, 1e-9);
	cr_assert_eq(s.frames, 6);
	cr_assert_eq(s.reconnects, 1);
	cr_assert_eq(client_counts(rtl_rtde_transport_client(P.tr)).reconnects, 1);
	cr_assert_eq(client_counts(rtl_rtde_transport_client(P.tr)).data, 6);
	/* Each close is said once, with the client's explanation and the peer;
	 * then one attempt that worked, and two that were refused. */
	cr_assert_eq(L.lost, 2, "%s", L.text);
	snprintf(want, sizeof(want), "RTDE 127.0.0.1:%u: ", fk.port);
	cr_assert(logged(want), "names the peer: %s", L.text);
	cr_assert(logged("closed the connection"), "%s", L.text);
	cr_assert(logged("reconnect attempt 2 of 2"), "%s", L.text);
	cr_assert(logged("loop: reconnected"), "%s", L.text);
	cr_assert(logged("nothing listens"), "%s", L.text);
	cr_assert_eq(L.attempts, 3, "%s", L.text);
	cr_assert_eq(L.failed, 2, "%s", L.text);
	prog_close(&P);
}

Test(rtde_connect, the_step_commands_reach_the_controller)
{
	static struct fake fk = { .conns = 1, .ndata = 1, .wait_inputs = true };
	struct rtl_error err = { 0 };

	fake_start(&fk);
	/* A register of no command layout: no safe package, no heartbeat,
	 * so the first input package is the step's own. */
	prog_open(&P, fk.port, "input_int_register_30", 0, 0);
	P.value = 4242;
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	/* The fake closes after reading the inputs: the loop ends. */
	cr_assert_eq(rtl_loop_join(P.loop), -ECONNRESET);
	fake_stop(&fk);
	cr_assert_eq(P.input_id, 1);
	cr_assert_eq(atomic_load(&fk.input_id), 1);
	cr_assert_eq(atomic_load(&fk.input_value), 4242);
	cr_assert(logged("(the loop ends: no reconnect_attempts)"), "%s", L.text);
	prog_close(&P);
}

Test(rtde_connect, a_closed_port_is_refused_with_a_clear_message)
{
	struct rtl_error err = { 0 };
	uint16_t port = closed_port();
	char want[64];

	snprintf(want, sizeof(want), "nothing listens on 127.0.0.1:%u", port);
	cr_assert_eq(rtl_tcp_connect("127.0.0.1", port, SEC, &err), -ECONNREFUSED);
	cr_assert(strstr(err.msg, want), "%s", err.msg);
	cr_assert(strstr(err.msg, "RTDE enabled"), "names the fix: %s", err.msg);

	prog_open(&P, port, NULL, 0, 0);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(rtl_loop_start(P.loop, &err), -ECONNREFUSED);
	cr_assert_eq(err.code, -ECONNREFUSED);
	cr_assert(strstr(err.msg, want), "%s", err.msg);
	cr_assert_eq(P.connects, 0);
	prog_close(&P);
}

Test(rtde_connect, a_silent_peer_times_out_at_the_first_reply)
{
	static struct fake fk = { .conns = 1, .silent = true };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	struct rtl_rtde_transport *tr;
	struct rtl_loop *loop;
	int64_t t0;

	fake_start(&fk);
	tc.port = fk.port;
	tc.connect_timeout_ns = 4 * SEC;
	cc.outputs = "timestamp";
	cc.reply_timeout_ns = 300 * MS;
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), 0, "%s", err.msg);
	lc.transport = rtl_rtde_transport_base(tr);
	lc.step = step;
	lc.user = &P;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	cr_assert_eq(rtl_loop_create(&loop, &lc, &err), 0, "%s", err.msg);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_loop_start(loop, &err), -ETIMEDOUT, "%s", err.msg);
	/* The reply time-out, not the whole handshake's 4 s, ends it. */
	cr_assert_lt(rtl_time_now() - t0, 4 * SEC);
	cr_assert(strstr(err.msg, "no REQUEST_PROTOCOL_VERSION reply within 0.300 s"), "%s",
		  err.msg);
	cr_assert(strstr(err.msg, "RTDE 127.0.0.1:"), "names the peer: %s", err.msg);
	rtl_loop_destroy(loop);
	rtl_rtde_transport_destroy(tr);
	fake_stop(&fk); /* the fake sees EOF when the connect gives up */
}

/*
 * A controller that accepts START, then sends nothing and keeps the
 * socket open: the client's data time-out (1 s by default) ends the
 * session, and the loop's log says what the controller did.
 */
Test(rtde_connect, a_controller_that_stops_sending_ends_the_session)
{
	static struct fake fk = { .conns = 1, .ndata = 0, .hold = true };
	struct rtl_error err = { 0 };
	char want[256];
	int64_t t0;

	fake_start(&fk);
	prog_open(&P, fk.port, NULL, 0, 0);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_join(P.loop), -ETIMEDOUT);
	cr_assert_lt(rtl_time_now() - t0, 2 * SEC, "bounded by the 1 s data time-out");
	fake_stop(&fk);
	snprintf(want, sizeof(want),
		 "loop: connection lost: RTDE 127.0.0.1:%u: no data package for 1.0 s after "
		 "START (the controller stopped sending; raise data_timeout_ns if it is expected "
		 "to pause)",
		 fk.port);
	cr_assert(logged(want), "%s", L.text);
	cr_assert_eq(P.frames, 0);
	prog_close(&P);
}

/*
 * 2,000 data packages of the wrong size and nothing else: no frame, and
 * the session ends after the data time-out with every package counted
 * under its name (none as a controller skip).
 */
Test(rtde_connect, only_wrong_size_packages_end_the_session)
{
	static struct fake fk = { .conns = 1, .ndata = 2000, .hold = true, .wrong_size = true };
	struct rtl_rtde_client_counters cs;
	struct rtl_error err = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	char want[512];

	fake_start(&fk);
	prog_open(&P, fk.port, NULL, 0, 0);
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_join(P.loop), -ETIMEDOUT);
	fake_stop(&fk);
	rtl_loop_stats(P.loop, &s);
	cs = client_counts(rtl_rtde_transport_client(P.tr));
	cr_assert_eq(cs.wrong_size, 2000);
	cr_assert_eq(cs.malformed, 0);
	cr_assert_eq(cs.wrong_recipe, 0);
	cr_assert_eq(cs.data, 0);
	cr_assert_eq(cs.skipped, 0);
	cr_assert_eq(s.frames, 0);
	cr_assert_eq(s.ctrl_skipped, 0);
	snprintf(want, sizeof(want),
		 "loop: connection lost: RTDE 127.0.0.1:%u: no valid data package for 1.0 s "
		 "after START: the controller sent 2000 data packages in that time and every one "
		 "was dropped (2000 of the wrong size (the last with 48 bytes of fields, the "
		 "recipe has 56)): it streams something else than the recipe set up; reconnect",
		 fk.port);
	cr_assert(logged(want), "%s", L.text);
	prog_close(&P);
}

/*
 * A timestamp that jumps 10^7 s (5 * 10^9 cycles at 500 Hz): the client
 * counts all 64 bits, the loop's 32-bit frame field saturates instead of
 * wrapping to a small, plausible number.
 */
Test(rtde_connect, a_timestamp_jump_saturates_the_frame_skip_count)
{
	static struct fake fk = { .conns = 1, .ndata = 5, .jump_at = 3, .jump_s = 1e7 };
	struct rtl_error err = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };

	fake_start(&fk);
	prog_open(&P, fk.port, NULL, 0, 0);
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_loop_join(P.loop), -ECONNRESET);
	fake_stop(&fk);
	rtl_loop_stats(P.loop, &s);
	cr_assert_eq(s.frames, 5);
	cr_assert_eq(client_counts(rtl_rtde_transport_client(P.tr)).skipped, UINT64_C(5000000000),
		     "%llu",
		     (unsigned long long)client_counts(rtl_rtde_transport_client(P.tr)).skipped);
	cr_assert_eq(s.ctrl_skipped, UINT32_MAX, "%llu", (unsigned long long)s.ctrl_skipped);
	prog_close(&P);
}

Test(rtde_connect, reconnect_backs_off_and_gives_up)
{
	static struct fake fk = { .conns = 1, .ndata = 1 };
	struct rtl_error err = { 0 };
	struct rtl_loop_counters s = { .size = sizeof(s) };
	int64_t t0;

	fake_start(&fk);
	prog_open(&P, fk.port, NULL, 3, 50 * MS);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	fake_stop(&fk); /* serves one connection, then stops listening */
	cr_assert_eq(rtl_loop_join(P.loop), -ECONNREFUSED);
	/* 50 + 100 + 200 ms of back-off before the three attempts. */
	cr_assert_geq(rtl_time_now() - t0, 350 * MS);
	rtl_loop_stats(P.loop, &s);
	cr_assert_eq(s.reconnects, 0);
	cr_assert_eq(P.connects, 1);
	cr_assert_eq(P.frames, 1, "%d frames: %s", P.frames, L.text);
	cr_assert_eq(L.lost, 1, "%s", L.text);
	cr_assert_eq(L.attempts, 3, "%s", L.text);
	cr_assert_eq(L.failed, 3, "%s", L.text);
	cr_assert(logged("reconnect attempt 3 of 3"), "%s", L.text);
	cr_assert(logged("nothing listens"), "%s", L.text);
	prog_close(&P);
}

Test(rtde_connect, a_stop_during_the_back_off_ends_it_at_once)
{
	static struct fake fk = { .conns = 1, .ndata = 1 };
	struct rtl_error err = { 0 };
	int64_t t0;

	fake_start(&fk);
	/* A back-off far longer than the test may take. */
	prog_open(&P, fk.port, NULL, 1, 60 * SEC);
	cr_assert_eq(rtl_loop_start(P.loop, &err), 0, "%s", err.msg);
	fake_stop(&fk);
	/* The loss is logged when the loop has gone into its back-off. */
	t0 = rtl_time_now();
	while (!logged("reconnect attempt 1 of 1") && rtl_time_now() - t0 < 3 * SEC)
		usleep(1000);
	cr_assert(logged("reconnect attempt 1 of 1"), "%s", L.text);
	rtl_loop_stop(P.loop);
	cr_assert_eq(rtl_loop_join(P.loop), 0);
	cr_assert_eq(L.failed, 0, "no attempt after the stop: %s", L.text);
	prog_close(&P);
}
