// SPDX-License-Identifier: MIT
/*
 * The blocking RTDE connection and the TCP transport over loopback, against
 * a tiny controller thread in this file: it listens on an ephemeral port
 * with rtl_tcp_listen(), answers the handshake with the codec, streams a
 * few data packages, then closes, once per connection it is asked to
 * serve. Every wait is bounded; each test has a 5 s limit.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/log.h>
#include <rtloop/rtde_conn.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#include "fake-rtde.h"

#define SEC RTL_NS_PER_SEC
#define MS RTL_NS_PER_MS

static struct rtl_rtde_client_config cfg;

static void setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.outputs = "timestamp,actual_q";
	cfg.inputs[0] = "input_int_register_24";
	cfg.frequency = 500;
	rtl_log_set_handler(NULL, NULL);
}

TestSuite(rtde_conn, .init = setup, .timeout = 5);

/* Take events until @n data events came, or an error or timeout. */
static int take_data(struct rtl_rtde_conn *c, int n, double *first_ts)
{
	struct rtl_rtde_client_event ev;
	int got = 0;

	while (got < n) {
		int r = rtl_rtde_conn_next_event(c, &ev, 2 * SEC);

		cr_assert_eq(r, 1, "next_event: %d", r);
		if (ev.type == RTL_RTDE_CLIENT_EV_ERROR)
			cr_assert_fail("error: %s", ev.u.error->err.msg);
		if (ev.type == RTL_RTDE_CLIENT_EV_DATA) {
			if (!got && first_ts)
				*first_ts = ev.u.data.timestamp;
			cr_assert(ev.u.data.has_timestamp);
			cr_assert_eq(ev.u.data.skipped, 0);
			got++;
		}
	}
	return got;
}

/* The peer closing shows up as one fatal error event, then -ENOTCONN. */
static void expect_closed(struct rtl_rtde_conn *c)
{
	struct rtl_rtde_client_event ev;
	int r;

	for (;;) {
		r = rtl_rtde_conn_next_event(c, &ev, 2 * SEC);
		cr_assert_eq(r, 1, "expected the close to be reported, got %d", r);
		if (ev.type == RTL_RTDE_CLIENT_EV_ERROR)
			break;
	}
	cr_assert(ev.u.error->fatal);
	cr_assert_eq(ev.u.error->err.code, -ECONNRESET);
	cr_assert(strstr(ev.u.error->err.msg, "closed the connection"), "%s", ev.u.error->err.msg);
	/* The connection's copy names the peer. */
	cr_assert(strncmp(rtl_rtde_conn_error(c)->err.msg, "RTDE ", 5) == 0, "%s",
		  rtl_rtde_conn_error(c)->err.msg);
	cr_assert_eq(rtl_rtde_conn_fd(c), -1);
	do
		r = rtl_rtde_conn_next_event(c, &ev, 100 * MS);
	while (r == 1);
	cr_assert_eq(r, -ENOTCONN);
}

static char log_text[4096];
static int log_attempts;

static void log_capture(void *user, enum rtl_log_level level, const char *msg)
{
	if (strstr(msg, "reconnecting to"))
		log_attempts++;
	snprintf(log_text + strlen(log_text), sizeof(log_text) - strlen(log_text), "%s\n", msg);
}

Test(rtde_conn, open_receive_peer_close_reconnect)
{
	static struct fake fk = { .conns = 2, .ndata = 3 };
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *c;
	const struct rtl_rtde_client_info *info;
	double ts = 0;

	log_text[0] = '\0';
	log_attempts = 0;
	rtl_log_set_handler(log_capture, NULL);
	fake_start(&fk);
	cr_assert_eq(rtl_rtde_conn_open(&c, "127.0.0.1", fk.port, &cfg, 2 * SEC, &err), 0, "%s",
		     err.err.msg);
	info = rtl_rtde_client_info(rtl_rtde_conn_client(c));
	cr_assert_eq(info->protocol, RTL_RTDE_PROTOCOL_V2);
	cr_assert_eq(info->version.major, 5);
	cr_assert_eq(info->input_ids[0], 1);
	cr_assert_eq(rtl_rtde_client_state(rtl_rtde_conn_client(c)), RTL_RTDE_CLIENT_RUNNING);
	cr_assert_eq(take_data(c, 3, &ts), 3);
	cr_assert_float_eq(ts, 42.0, 1e-9);
	expect_closed(c);

	cr_assert_eq(rtl_rtde_conn_reconnect(c, 2 * SEC), 0, "%s", rtl_rtde_conn_error(c)->err.msg);
	cr_assert_eq(rtl_rtde_client_stats(rtl_rtde_conn_client(c))->reconnects, 1);
	cr_assert_eq(take_data(c, 3, NULL), 3);
	cr_assert_eq(rtl_rtde_client_stats(rtl_rtde_conn_client(c))->data, 6);
	expect_closed(c);
	rtl_rtde_conn_close(c);
	fake_stop(&fk);
	cr_assert_eq(atomic_load(&fk.served), 2);
	cr_assert_eq(log_attempts, 1);
	cr_assert(strstr(log_text, "reconnected to 127.0.0.1"), "%s", log_text);
	rtl_log_set_handler(NULL, NULL);
}

Test(rtde_conn, send_inputs_reach_the_controller)
{
	static struct fake fk = { .conns = 1, .ndata = 1, .wait_inputs = true };
	static unsigned char store[256];
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *c;
	struct rtl_rtde_frame f;
	struct rtl_rtde_handle h;
	const struct rtl_rtde_recipe *r;

	fake_start(&fk);
	cr_assert_eq(rtl_rtde_conn_open(&c, "localhost", fk.port, &cfg, 2 * SEC, &err), 0, "%s",
		     err.err.msg);
	r = rtl_rtde_client_input_recipe(rtl_rtde_conn_client(c), 0);
	cr_assert_eq(rtl_rtde_frame_init(&f, store, sizeof(store), r), 0);
	cr_assert_eq(rtl_rtde_recipe_handle(r, "input_int_register_24", &h), 0);
	cr_assert(rtl_rtde_frame_set_int(&f, h, 4242));
	cr_assert_eq(take_data(c, 1, NULL), 1);
	cr_assert_eq(rtl_rtde_conn_send_inputs(c, 0, &f), 0);
	expect_closed(c); /* the fake closes after reading the inputs */
	cr_assert_eq(atomic_load(&fk.input_value), 4242);
	cr_assert_eq(atomic_load(&fk.input_id), 1);
	cr_assert_eq(rtl_rtde_conn_send_inputs(c, 0, &f), -ENOTCONN);
	rtl_rtde_conn_close(c);
	fake_stop(&fk);
}

Test(rtde_conn, pause_and_start_again)
{
	static struct fake fk = { .conns = 1, .ndata = 2, .wait_inputs = true };
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *c;

	fake_start(&fk);
	cr_assert_eq(rtl_rtde_conn_open(&c, "127.0.0.1", fk.port, &cfg, 2 * SEC, &err), 0, "%s",
		     err.err.msg);
	cr_assert_eq(rtl_rtde_conn_pause(c, 2 * SEC), 0);
	cr_assert_eq(rtl_rtde_client_state(rtl_rtde_conn_client(c)), RTL_RTDE_CLIENT_READY);
	cr_assert_eq(rtl_rtde_conn_start(c, 2 * SEC), 0);
	cr_assert_eq(rtl_rtde_client_state(rtl_rtde_conn_client(c)), RTL_RTDE_CLIENT_RUNNING);
	cr_assert_eq(take_data(c, 2, NULL), 2);
	rtl_rtde_conn_close(c);
	fake_stop(&fk);
}

/* A port nobody listens on: bind an ephemeral one, then close it. */
static uint16_t closed_port(void)
{
	uint16_t port;
	int fd = rtl_tcp_listen(NULL, 0, &port, NULL);

	cr_assert_geq(fd, 0);
	close(fd);
	return port;
}

Test(rtde_conn, closed_port_is_refused_with_a_clear_message)
{
	struct rtl_rtde_client_error err;
	struct rtl_error terr;
	struct rtl_rtde_conn *c = (void *)1;
	uint16_t port = closed_port();
	char want[64];

	snprintf(want, sizeof(want), "nothing listens on 127.0.0.1:%u", port);
	cr_assert_eq(rtl_tcp_connect("127.0.0.1", port, SEC, &terr), -ECONNREFUSED);
	cr_assert(strstr(terr.msg, want), "%s", terr.msg);
	cr_assert(strstr(terr.msg, "RTDE enabled"), "%s", terr.msg);

	cr_assert_eq(rtl_rtde_conn_open(&c, "127.0.0.1", port, &cfg, SEC, &err), -ECONNREFUSED);
	cr_assert_null(c);
	cr_assert_eq(err.err.code, -ECONNREFUSED);
	cr_assert(strstr(err.err.msg, want), "%s", err.err.msg);
}

Test(rtde_conn, silent_peer_times_out)
{
	static struct fake fk = { .conns = 1, .silent = true };
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *c;
	int64_t t0 = rtl_time_now();

	cfg.reply_timeout_ns = 300 * MS;
	fake_start(&fk);
	cr_assert_eq(rtl_rtde_conn_open(&c, "127.0.0.1", fk.port, &cfg, 2 * SEC, &err), -ETIMEDOUT);
	cr_assert_lt(rtl_time_now() - t0, SEC);
	cr_assert(strstr(err.err.msg, "no REQUEST_PROTOCOL_VERSION reply within 0.300 s"), "%s",
		  err.err.msg);
	cr_assert(strstr(err.err.msg, "127.0.0.1:"), "%s", err.err.msg);
	fake_stop(&fk); /* the fake sees EOF when open() gives up */
}

Test(rtde_conn, reconnect_backs_off_and_gives_up)
{
	static struct fake fk = { .conns = 1, .ndata = 1 };
	struct rtl_rtde_client_error err;
	struct rtl_rtde_conn *c;
	int64_t t0;

	fake_start(&fk);
	cr_assert_eq(rtl_rtde_conn_open(&c, "127.0.0.1", fk.port, &cfg, 2 * SEC, &err), 0, "%s",
		     err.err.msg);
	fake_stop(&fk); /* serves one connection, then stops listening */
	cr_assert_eq(take_data(c, 1, NULL), 1);
	expect_closed(c);

	log_text[0] = '\0';
	log_attempts = 0;
	rtl_log_set_handler(log_capture, NULL);
	cr_assert_eq(rtl_rtde_conn_set_backoff(c, 50 * MS, 100 * MS, 3), 0);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_rtde_conn_reconnect(c, 3 * SEC), -ECONNREFUSED);
	/* 50 ms + 100 ms of backoff between three attempts. */
	cr_assert_geq(rtl_time_now() - t0, 150 * MS);
	cr_assert_lt(rtl_time_now() - t0, 2 * SEC);
	cr_assert_eq(log_attempts, 3, "%s", log_text);
	cr_assert(strstr(log_text, "attempt 3 of 3"), "%s", log_text);
	cr_assert(strstr(rtl_rtde_conn_error(c)->err.msg, "nothing listens"), "%s",
		  rtl_rtde_conn_error(c)->err.msg);
	cr_assert_eq(rtl_rtde_client_stats(rtl_rtde_conn_client(c))->reconnects, 0);
	rtl_log_set_handler(NULL, NULL);

	/* The deadline bounds it too, without an attempt limit. */
	cr_assert_eq(rtl_rtde_conn_set_backoff(c, 0, 0, 0), 0);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_rtde_conn_reconnect(c, 500 * MS), -ECONNREFUSED);
	cr_assert_lt(rtl_time_now() - t0, SEC);
	rtl_rtde_conn_close(c);
}
