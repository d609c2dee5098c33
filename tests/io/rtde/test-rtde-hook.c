// SPDX-License-Identifier: MIT
/*
 * The hook of the RTDE transport's connect (struct
 * rtl_rtde_transport_hook_ops, <rtloop/rtde_transport.h>), with a hook of
 * the test's own against rtde-sim in this process on a free port: the
 * table's size is checked at create; connected runs at every connect
 * with its output fields in the recipe and may send the safe package and
 * receive data packages; its failure fails the start with its sentence;
 * frame ends the stream with its sentence (and the reconnect calls
 * connected again); finish runs once, at destroy. io/ur's upload is the
 * hook of tests/io/rtde/test-rtde-upload.c.
 *
 * Only the Criterion macros the TSan shim provides: the same tests run
 * under ThreadSanitizer (the hook's frame runs on the rx thread).
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "server.h"

#define WAIT_NS (10 * RTL_NS_PER_SEC)

/* What the hook saw and does. */
struct probe {
	_Atomic int connects, finishes, frames;
	int end_after; /* frame: end the stream at this frame (0: never) */
	int fail_code; /* connected: fail with this (0: succeed) */
	bool runtime_in_recipe, received, beat_sent;
	uint32_t beat;
	int received_n;
	uint32_t received_size, recipe_size;
	unsigned char buf[RTL_RTDE_MAX_PACKAGE_SIZE];
};

static struct sim_server *srv;
static struct rtl_rtde_transport *tr;
static struct rtl_loop *loop;
static struct probe P;
static char logbuf[4096];
static size_t log_len;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_log(void *ctx, enum rtl_log_level lvl, const char *msg)
{
	size_t n = strlen(msg);

	(void)ctx;
	(void)lvl;
	pthread_mutex_lock(&log_lock);
	if (log_len + n + 2 < sizeof(logbuf)) {
		memcpy(logbuf + log_len, msg, n);
		log_len += n;
		logbuf[log_len++] = '\n';
		logbuf[log_len] = '\0';
	}
	pthread_mutex_unlock(&log_lock);
}

static bool log_has(const char *what)
{
	bool has;

	pthread_mutex_lock(&log_lock);
	has = strstr(logbuf, what) != NULL;
	pthread_mutex_unlock(&log_lock);
	return has;
}

static int hook_connected(struct rtl_rtde_transport *t, void *ctx, struct rtl_error *err)
{
	struct probe *p = ctx;
	struct rtl_rtde_frame fr = { p->buf, 0, sizeof(p->buf) };
	struct rtl_rtde_handle h = rtl_rtde_transport_output_handle(t, "runtime_state");
	struct rtl_error rerr = { 0 };

	atomic_fetch_add(&p->connects, 1);
	if (p->fail_code)
		return rtl_error_set(err, p->fail_code, "the test's hook says no");
	p->runtime_in_recipe = rtl_rtde_handle_valid(h);
	p->recipe_size = rtl_rtde_client_output_recipe(rtl_rtde_transport_client(t))->host_size;
	p->beat_sent = rtl_rtde_transport_has_safe_heartbeat(t) &&
		       rtl_rtde_transport_send_safe(t, &p->beat) > 0;
	p->received_n = rtl_rtde_transport_receive(t, &fr, rtl_time_now() + RTL_NS_PER_SEC, &rerr);
	p->received_size = fr.size;
	return 0;
}

/* rx thread. */
static int hook_frame(struct rtl_rtde_transport *t, const struct rtl_rtde_frame *fr, void *ctx,
		      struct rtl_error *why)
{
	struct probe *p = ctx;
	int n = atomic_fetch_add(&p->frames, 1) + 1;

	(void)t;
	(void)fr;
	if (p->end_after && n == p->end_after)
		return rtl_error_set(why, -ESRCH, "the test's hook ended the stream at frame %d",
				     n);
	return 0;
}

static void hook_finish(struct rtl_rtde_transport *t, void *ctx)
{
	struct probe *p = ctx;

	(void)t;
	atomic_fetch_add(&p->finishes, 1);
}

static const struct rtl_rtde_transport_hook_ops hook = {
	.size = sizeof(struct rtl_rtde_transport_hook_ops),
	.name = "test",
	.outputs = "runtime_state, " RTL_RTDE_CMD_FIELD_OUT_SEQ,
	.connected = hook_connected,
	.frame = hook_frame,
	.finish = hook_finish,
};

static int step(struct rtl_loop *l, const struct rtl_loop_frame *f, void *user)
{
	(void)l;
	(void)f;
	(void)user;
	return 0;
}

static void teardown(void)
{
	rtl_loop_destroy(loop);
	loop = NULL;
	rtl_rtde_transport_destroy(tr);
	tr = NULL;
	if (srv) {
		sim_server_stop(srv);
		sim_server_join(srv);
		sim_server_destroy(srv);
		srv = NULL;
	}
	rtl_log_set_handler(NULL, NULL);
	pthread_mutex_lock(&log_lock);
	log_len = 0;
	logbuf[0] = '\0';
	pthread_mutex_unlock(&log_lock);
	memset(&P, 0, sizeof(P));
}

static void config(struct rtl_rtde_transport_config *tc,
		   const struct rtl_rtde_transport_hook_ops *h)
{
	static const struct rtl_rtde_client_config cc = {
		.size = sizeof(cc),
		.outputs = "timestamp,actual_q",
		.inputs = { RTL_RTDE_CMD_RECIPE },
	};

	memset(tc, 0, sizeof(*tc));
	tc->size = sizeof(*tc);
	tc->port = srv ? sim_server_port(srv) : 30004;
	tc->client = &cc;
	tc->hook = h;
	tc->hook_ctx = &P;
}

/* rtde-sim (the quick start state), the transport with the hook (whose
 * connected fails with @fail_code, 0: succeeds; whose frame ends the stream
 * at frame @end_after, 0: never), the loop with @reconnects, started;
 * returns what the start returned. */
static int start(int reconnects, int fail_code, int end_after, struct rtl_error *err)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct rtl_rtde_transport_config tc;
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	int ret;

	teardown(); /* what a failed test left (the shim runs no fini) */
	P.fail_code = fail_code;
	P.end_after = end_after;
	sim_opts_default(&so);
	cr_assert_eq(sim_server_create(&srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(srv), 0);
	config(&tc, &hook);
	rtl_log_set_handler(on_log, NULL);
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, err), 0, "%s", err->msg);
	lc.transport = rtl_rtde_transport_base(tr);
	lc.step = step;
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.reconnect_attempts = reconnects;
	cr_assert_eq(rtl_loop_create(&loop, &lc, err), 0, "%s", err->msg);
	ret = rtl_loop_start(loop, err);
	if (ret)
		fprintf(stderr, "# the loop's start: %d: %s\n", ret, err->msg);
	return ret;
}

/* A table without .size, or too small, is refused; one larger than this
 * library knows passes when the extra bytes are zero, else -E2BIG. */
Test(rtde_hook, create_checks_the_tables_size, .fini = teardown)
{
	struct {
		struct rtl_rtde_transport_hook_ops ops;
		unsigned char more[16];
	} big;
	struct rtl_rtde_transport_hook_ops small = hook;
	struct rtl_rtde_transport_config tc;
	struct rtl_error err = { 0 };

	config(&tc, &small);
	small.size = 0;
	tr = (struct rtl_rtde_transport *)&err; /* create must set it to NULL */
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), -EINVAL);
	cr_assert(tr == NULL);
	cr_assert(strstr(err.msg, "set .size = sizeof(struct rtl_rtde_transport_hook_ops)"), "%s",
		  err.msg);
	/* A table of an older rtloop, without finish: accepted, and the call
	 * it does not have is not made. */
	small.size = offsetof(struct rtl_rtde_transport_hook_ops, finish);
	/* small.finish is still set: the library must not read past .size */
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), 0, "%s", err.msg);
	rtl_rtde_transport_destroy(tr);
	tr = NULL;
	cr_assert_eq(atomic_load(&P.finishes), 0, "no finish past the table's size");
	small.size = sizeof(small);
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), 0, "%s", err.msg);
	rtl_rtde_transport_destroy(tr);
	tr = NULL;
	cr_assert_eq(atomic_load(&P.finishes), 1, "destroy calls finish");
	atomic_store(&P.finishes, 0);

	memset(&big, 0, sizeof(big));
	big.ops = hook;
	big.ops.size = sizeof(big);
	config(&tc, &big.ops);
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), 0, "%s", err.msg);
	rtl_rtde_transport_destroy(tr);
	tr = NULL;
	cr_assert_eq(atomic_load(&P.finishes), 1, "destroy calls finish");
	big.more[7] = 1;
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), -E2BIG);
	cr_assert(tr == NULL);
	cr_assert(strstr(err.msg, "struct rtl_rtde_transport_hook_ops"), "%s", err.msg);
}

/* Before a connect there is no safe package and nothing to receive. */
Test(rtde_hook, the_calls_for_a_hook_need_a_connection, .fini = teardown)
{
	struct rtl_rtde_transport_config tc;
	struct rtl_error err = { 0 };
	unsigned char buf[64];
	struct rtl_rtde_frame fr = { buf, 0, sizeof(buf) };
	uint32_t beat;

	config(&tc, &hook);
	tc.host = "localhost";
	cr_assert_eq(rtl_rtde_transport_create(&tr, &tc, &err), 0, "%s", err.msg);
	cr_assert(strcmp(rtl_rtde_transport_host(tr), "localhost") == 0);
	cr_assert(rtl_rtde_transport_address(tr)[0] != '\0');
	cr_assert(!rtl_rtde_transport_has_safe_heartbeat(tr));
	cr_assert_eq(rtl_rtde_transport_send_safe(tr, &beat), -ENOTSUP);
	cr_assert_eq(rtl_rtde_transport_receive(tr, &fr, rtl_time_now(), &err), -ENOTCONN);
	cr_assert(rtl_rtde_transport_host(NULL) == NULL);
	cr_assert_eq(rtl_rtde_transport_send_safe(NULL, NULL), -EINVAL);
}

/* connected runs at the connect, with its fields in the output recipe; it
 * sends the safe package with a beat and receives a data package; the loop
 * then takes the stream; finish runs once, at destroy. */
Test(rtde_hook, connected_runs_with_its_fields_and_may_send_and_receive, .fini = teardown,
     .timeout = 60)
{
	struct rtl_error err = { 0 };
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	int64_t until;

	cr_assert_eq(start(0, 0, 0, &err), 0, "%s", err.msg);
	cr_assert_eq(atomic_load(&P.connects), 1);
	cr_assert(P.runtime_in_recipe, "the hook's outputs are in the output recipe");
	cr_assert(P.beat_sent, "the safe package went out with a beat");
	cr_assert_geq(P.received_n, 1, "receive() found a data package within 1 s");
	cr_assert_eq(P.received_size, P.recipe_size);
	cr_assert(strcmp(rtl_rtde_transport_host(tr), "127.0.0.1") == 0);
	cr_assert(strcmp(rtl_rtde_transport_address(tr), "127.0.0.1") == 0);
	until = rtl_time_now() + WAIT_NS;
	do {
		rtl_loop_stats(loop, &ls);
		rtl_time_sleep_until(rtl_time_now() + 10 * RTL_NS_PER_MS);
	} while ((ls.steps < 50 || atomic_load(&P.frames) < 50) && rtl_time_now() < until);
	cr_assert_geq(ls.steps, 50);
	cr_assert_geq(atomic_load(&P.frames), 50, "frame runs for each data package");
	rtl_loop_stop(loop);
	rtl_loop_join(loop);
	cr_assert_eq(atomic_load(&P.finishes), 0);
	rtl_loop_destroy(loop);
	loop = NULL;
	rtl_rtde_transport_destroy(tr);
	tr = NULL;
	cr_assert_eq(atomic_load(&P.finishes), 1);
}

/* connected's failure fails the start with its code and sentence, and
 * the controller named. */
Test(rtde_hook, a_failing_connected_fails_the_start_with_its_sentence, .fini = teardown,
     .timeout = 60)
{
	struct rtl_error err = { 0 };

	cr_assert_eq(start(0, -EPERM, 0, &err), -EPERM, "%s", err.msg);
	cr_assert(strstr(err.msg, "the test's hook says no"), "%s", err.msg);
	cr_assert(strstr(err.msg, "RTDE 127.0.0.1:"), "%s", err.msg);
}

/* frame ends the stream with its sentence in the loop's log; the
 * reconnect calls connected again. */
Test(rtde_hook, frame_ends_the_stream_with_its_sentence, .fini = teardown, .timeout = 60)
{
	struct rtl_error err = { 0 };
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	int64_t until;

	cr_assert_eq(start(1, 0, 20, &err), 0, "%s", err.msg);
	until = rtl_time_now() + WAIT_NS;
	do {
		rtl_loop_stats(loop, &ls);
		rtl_time_sleep_until(rtl_time_now() + 10 * RTL_NS_PER_MS);
	} while (ls.reconnects < 1 && rtl_time_now() < until);
	cr_assert_eq(ls.reconnects, 1);
	cr_assert_eq(atomic_load(&P.connects), 2);
	rtl_loop_stop(loop);
	rtl_loop_join(loop);
	cr_assert(log_has("the test's hook ended the stream at frame 20"),
		  "the loop's log has the hook's sentence");
}
