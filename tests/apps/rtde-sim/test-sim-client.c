// SPDX-License-Identifier: MIT
/*
 * The rtloop RTDE client against rtde-sim over loopback: the simulator's
 * server runs in a thread of the test on an ephemeral port, and the client
 * is the one programs use: the RTDE transport under the control loop
 * (rtloop/rtde_transport.h, rtloop/loop.h), driven from the test's thread
 * through the external-loop API (no step function: rtl_loop_read() takes
 * the frames, rtl_loop_write() sends the commands written into the
 * coalescer's frames). Where a test wants to own the socket (a reader
 * that stops reading, a fragmented stream) it drives the client's step
 * function itself on a socket of its own (rtl_tcp_connect()). Where
 * test-sim-server.c checks the bytes the simulator writes, this file
 * checks what the client makes of them: versions, rates, errors, loss
 * counts, reconnects, and the robot moving under register commands.
 *
 * Every loop here keeps every frame (every_frame, a ring far larger than
 * a test's stream), so the test reads each data package in order, as a
 * blocking driver would; the loop's own counters (ring_full,
 * worker_skipped, frames) prove that none was lost. Counters of the client
 * (owned by the loop's rx thread) are read only after the loop has
 * stopped. Errors at connect come back from rtl_loop_start() (or from
 * rtl_rtde_transport_create() for names no controller has); what the loop
 * and the client say while running (a lost connection, the controller's
 * text messages) is read from the log handler.
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rtloop/log.h>
#include <rtloop/loop.h>
#include <rtloop/rtde.h>
#include <rtloop/rtde_client.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_coalesce.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#include "counters.h"
#include "server.h"
#include "sim.h"

#define HOST "127.0.0.1"
#define OPEN_TIMEOUT (3 * RTL_NS_PER_SEC)
/* The simulator's clock starts at 42 s (sim.h). */
#define START_TS 42.0
/* Frames a loop keeps: 16 s at 500 Hz, more than any test streams. */
#define RING 8192

/* ---- server ------------------------------------------------------------------------------ */

static struct sim_server *serve(const struct sim_opts *o, const struct sim_server_opts *so)
{
	struct sim_server_opts def = { 0 };
	struct sim_server *srv = NULL;
	int err;

	err = sim_server_create(&srv, o, so ? so : &def);
	cr_assert_eq(err, 0, "server: %s", strerror(-err));
	cr_assert_eq(sim_server_start(srv), 0);
	return srv;
}

/* Stop the server, then take its final statistics (exact from here on). */
static void finish(struct sim_server *srv, struct sim_stats *st)
{
	sim_server_stop(srv);
	cr_assert_eq(sim_server_join(srv), 0);
	if (st)
		sim_server_stats(srv, st);
	sim_server_destroy(srv);
}

static struct sim_opts profile_opts(enum sim_profile_id p)
{
	struct sim_opts o;

	sim_opts_default(&o);
	o.profile = p;
	return o;
}

/* ---- what the library logs ------------------------------------------------------------------ */

/*
 * The loop hands what its threads log to the handler on its log thread;
 * the handshake logs on the thread that starts the loop. Both are counted
 * here.
 */
static struct {
	pthread_mutex_t lock;
	unsigned lost;		     /* the loop: "connection lost" */
	unsigned texts;		     /* the client: controller text messages */
	char lost_msg[RTL_LOG_LINE]; /* the first */
	char text[RTL_LOG_LINE];     /* the last one's message, without the client's prefix */
} L = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_log(void *user, enum rtl_log_level level, const char *msg)
{
	const char *text = strstr(msg, "RTDE controller message");

	(void)user;
	(void)level;
	pthread_mutex_lock(&L.lock);
	if (strstr(msg, "loop: connection lost: ") && L.lost++ == 0)
		snprintf(L.lost_msg, sizeof(L.lost_msg), "%s", msg);
	if (text) {
		const char *body = strstr(text, "): ");

		L.texts++;
		snprintf(L.text, sizeof(L.text), "%s", body ? body + 3 : text);
	}
	pthread_mutex_unlock(&L.lock);
}

/* Install the handler: at the start of a test, before any loop logs. */
static void capture_log(void)
{
	rtl_log_set_handler(on_log, NULL);
}

static unsigned logged(const unsigned *counter)
{
	unsigned n;

	pthread_mutex_lock(&L.lock);
	n = *counter;
	pthread_mutex_unlock(&L.lock);
	return n;
}

/* Wait (bounded) until *@counter reaches @count. */
static bool await_logged(const unsigned *counter, unsigned count, int64_t timeout_ns)
{
	int64_t end = rtl_time_now() + timeout_ns;

	while (logged(counter) < count && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + RTL_NS_PER_MS);
	return logged(counter) >= count;
}

/* ---- client ------------------------------------------------------------------------------ */

/* How a link differs from the default (NULL: none of this). */
struct link_opts {
	int reconnects;	    /* rtl_loop_config.reconnect_attempts */
	int64_t backoff_ns; /* rtl_loop_config.reconnect_backoff_ns */
	bool own_heartbeat; /* the test writes the heartbeat register itself */
};

/* A client as programs use it: the RTDE transport under a loop. */
struct link {
	struct rtl_rtde_transport *t;
	struct rtl_loop *loop;
	bool running;
	struct rtl_rtde_handle ts, cs; /* timestamp, control_step (may be invalid) */
};

/*
 * Create the transport and the loop for @cfg (which, with its names, must
 * outlive the link) and start the loop: connect, handshake, START. Returns
 * 0, or the code of what failed with @err filled; @l is then to be closed.
 */
static int link_try_open(struct link *l, struct sim_server *srv,
			 const struct rtl_rtde_client_config *cfg, const struct link_opts *o,
			 struct rtl_error *err)
{
	static const struct link_opts none = { 0 };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc) };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	int r;

	memset(l, 0, sizeof(*l));
	memset(err, 0, sizeof(*err));
	if (!o)
		o = &none;
	tc.host = HOST;
	tc.port = sim_server_port(srv);
	tc.connect_timeout_ns = OPEN_TIMEOUT;
	tc.client = cfg;
	if (o->own_heartbeat) {
		tc.heartbeat = "";
		tc.keepalive_ns = -1;
	}
	r = rtl_rtde_transport_create(&l->t, &tc, err);
	if (r < 0)
		return r;
	lc.transport = rtl_rtde_transport_base(l->t);
	lc.step = NULL; /* the external-loop API */
	lc.rt_mode = RTL_LOOP_RT_OFF;
	lc.every_frame = true;
	lc.ring_capacity = RING;
	lc.watchdog_periods = -1;
	lc.reconnect_attempts = o->reconnects;
	lc.reconnect_backoff_ns = o->backoff_ns;
	cr_assert_eq(rtl_loop_create(&l->loop, &lc, err), 0, "%s", err->msg);
	r = rtl_loop_start(l->loop, err);
	if (r < 0)
		return r;
	l->running = true;
	l->ts = rtl_rtde_transport_output_handle(l->t, "timestamp");
	l->cs = rtl_rtde_transport_output_handle(l->t, "control_step");
	return 0;
}

static void dial(struct link *l, struct sim_server *srv, const struct rtl_rtde_client_config *cfg,
		 const struct link_opts *o)
{
	struct rtl_error err;
	int r = link_try_open(l, srv, cfg, o, &err);

	cr_assert_eq(r, 0, "open: %d: %s", r, err.msg);
	cr_assert_not_null(l->loop);
}

/* Stop the loop (the stop at exit included) and join it: from here on the
 * client's counters are exact. Returns the loop's result. */
static int link_stop(struct link *l)
{
	if (!l->running)
		return 0;
	l->running = false;
	rtl_loop_stop(l->loop);
	return rtl_loop_join(l->loop);
}

static void link_close(struct link *l)
{
	link_stop(l);
	rtl_loop_destroy(l->loop);
	rtl_rtde_transport_destroy(l->t);
	memset(l, 0, sizeof(*l));
}

static struct rtl_rtde_client *client_of(struct link *l)
{
	return rtl_rtde_transport_client(l->t);
}

/*
 * Open expecting failure: returns the code, the message in @err, and the
 * client's own report of it in @cerr (zeroed when the transport could not
 * even be created).
 */
static int dial_fails(struct sim_server *srv, const struct rtl_rtde_client_config *cfg,
		      struct rtl_error *err, struct rtl_rtde_client_error *cerr)
{
	struct link l;
	int r = link_try_open(&l, srv, cfg, NULL, err);

	cr_assert_lt(r, 0, "the open fails");
	cr_assert_not(l.running);
	cr_assert_eq(r, err->code, "the code returned is the code reported");
	memset(cerr, 0, sizeof(*cerr));
	if (l.t)
		*cerr = *rtl_rtde_client_last_error(client_of(&l));
	link_close(&l);
	return r;
}

/* Valid from the open on (the handshake is done before the loop's threads
 * start; only a reconnect writes it again). */
static const struct rtl_rtde_handshake *info_of(struct link *l)
{
	return rtl_rtde_client_info(client_of(l));
}

/* The client's counters: after link_stop() only (the rx thread owns them). */
static struct rtl_rtde_client_counters stats_of(struct link *l)
{
	cr_assert_not(l->running, "the client's counters are read after the stop");
	return client_counts(client_of(l));
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
	uint64_t skipped[MAX_PKGS]; /* the frame's count of packages skipped before it */
	uint64_t skipped_sum;
	bool has_cs;
	int end; /* 0, or the fatal error code that ended it (a raw client's) */
	char end_msg[RTL_RTDE_CLIENT_ERROR_MAX];
};

static struct stream S, S2;

static void take_frame(struct link *l, struct stream *s, const struct rtl_loop_frame *f)
{
	struct rtl_rtde_frame fr = rtl_rtde_loop_state(f);

	cr_assert_lt(s->n, MAX_PKGS);
	cr_assert(rtl_rtde_handle_valid(l->ts), "the recipe has a timestamp");
	s->ts[s->n] = rtl_rtde_frame_get_double(&fr, l->ts);
	cr_assert_eq(f->ctrl_time, s->ts[s->n], "the frame's controller time is the timestamp");
	s->has_cs = rtl_rtde_handle_valid(l->cs);
	s->cs[s->n] = s->has_cs ? rtl_rtde_frame_get_uint(&fr, l->cs) : 0;
	s->skipped[s->n] = f->ctrl_skipped;
	s->skipped_sum += f->ctrl_skipped;
	s->n++;
}

/* Read frames into @s until it holds @want or @timeout_ns has passed (or
 * the loop has ended and every frame is read). Returns the count. */
static size_t collect_more(struct link *l, struct stream *s, size_t want, int64_t timeout_ns)
{
	int64_t end = rtl_time_now() + timeout_ns;

	cr_assert_leq(want, MAX_PKGS);
	while (s->n < want) {
		int64_t left = end - rtl_time_now();
		const struct rtl_loop_frame *f = rtl_loop_read(l->loop, left > 0 ? left : 0);

		if (!f)
			break;
		take_frame(l, s, f);
	}
	return s->n;
}

/* Take up to @want data packages from @l, within @timeout_ns in all.
 * Returns the count. */
static size_t collect(struct link *l, struct stream *s, size_t want, int64_t timeout_ns)
{
	memset(s, 0, sizeof(*s));
	return collect_more(l, s, want, timeout_ns);
}

/*
 * After the loop was told to stop, or its stream ended: every frame left.
 * Read until none comes (bounded), then once more: a frame committed just
 * before the rx thread stopped, while a read was looking the other way,
 * is in the ring by the time that read has seen the stop.
 */
static void collect_rest(struct link *l, struct stream *s)
{
	collect_more(l, s, MAX_PKGS, 2 * RTL_NS_PER_SEC);
	collect_more(l, s, MAX_PKGS, 0);
}

/* After link_stop(): every frame the loop received was read into @s, none
 * dropped, none skipped. */
static void assert_read_every_frame(struct link *l, const struct stream *s)
{
	struct rtl_loop_counters ls = { .size = sizeof(ls) };

	cr_assert_not(l->running);
	rtl_loop_stats(l->loop, &ls);
	cr_assert_eq(ls.ring_full, 0, "%llu frames dropped", (unsigned long long)ls.ring_full);
	cr_assert_eq(ls.worker_skipped, 0, "%llu frames skipped",
		     (unsigned long long)ls.worker_skipped);
	cr_assert_eq(ls.frames, s->n, "the loop received %llu frames, the test read %zu",
		     (unsigned long long)ls.frames, s->n);
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

/* ---- a client driven by hand ---------------------------------------------------------------- */

/* The step function on a socket of its own (the driver loop of
 * rtde_client.h), for a reader that stops reading. */
struct raw {
	int fd;
	struct rtl_rtde_client *c;
	uint8_t buf[65536]; /* what was fed last: the client reads it in place */
};

static struct raw RAW;

/* Connect and run the handshake until the client streams. Packages that
 * came with the START reply stay fed, for raw_collect(). */
static void raw_open(struct raw *r, struct sim_server *srv,
		     const struct rtl_rtde_client_config *cfg)
{
	int64_t end = rtl_time_now() + OPEN_TIMEOUT;
	struct rtl_error err;

	cr_assert_eq(rtl_rtde_client_create(&r->c, cfg, &err), 0, "%s", err.msg);
	r->fd = rtl_tcp_connect(HOST, sim_server_port(srv), OPEN_TIMEOUT, &err);
	cr_assert_geq(r->fd, 0, "%s", err.msg);
	cr_assert_eq(rtl_rtde_client_connected(r->c, rtl_time_now()), 0);
	for (;;) {
		struct rtl_rtde_client_event ev;
		const uint8_t *out;
		size_t len = rtl_rtde_client_tx(r->c, &out);
		ssize_t got;

		if (len) {
			cr_assert_eq(rtl_tcp_send_all(r->fd, out, len, end), 0);
			rtl_rtde_client_tx_done(r->c, len);
		}
		while (rtl_rtde_client_state(r->c) != RTL_RTDE_CLIENT_RUNNING &&
		       rtl_rtde_client_next(r->c, &ev, rtl_time_now()) == 1)
			cr_assert(ev.type != RTL_RTDE_CLIENT_EV_ERROR || !ev.u.error->fatal, "%s",
				  ev.u.error->err.msg);
		if (rtl_rtde_client_state(r->c) == RTL_RTDE_CLIENT_RUNNING)
			return;
		if (rtl_rtde_client_tx(r->c, &out))
			continue;
		cr_assert_gt(rtl_tcp_wait(r->fd, POLLIN, end), 0, "the handshake within 3 s");
		got = recv(r->fd, r->buf, sizeof(r->buf), 0);
		cr_assert_gt(got, 0, "the handshake goes on");
		cr_assert_eq(rtl_rtde_client_feed(r->c, r->buf, (size_t)got), 0);
	}
}

/* Take up to @want data packages within @timeout_ns; stops early at a
 * fatal error (kept in s->end). Returns the count. */
static size_t raw_collect(struct raw *r, struct stream *s, size_t want, int64_t timeout_ns)
{
	int64_t end = rtl_time_now() + timeout_ns;
	struct rtl_rtde_client_event ev;

	memset(s, 0, sizeof(*s));
	cr_assert_leq(want, MAX_PKGS);
	while (s->n < want && rtl_time_now() < end) {
		ssize_t got;

		while (s->n < want && rtl_rtde_client_next(r->c, &ev, rtl_time_now()) == 1) {
			if (ev.type == RTL_RTDE_CLIENT_EV_ERROR && ev.u.error->fatal) {
				s->end = ev.u.error->err.code;
				memcpy(s->end_msg, ev.u.error->err.msg, sizeof(s->end_msg));
				return s->n;
			}
			if (ev.type != RTL_RTDE_CLIENT_EV_DATA)
				continue;
			cr_assert(ev.u.data.has_timestamp);
			s->ts[s->n] = ev.u.data.timestamp;
			s->skipped[s->n] = ev.u.data.skipped;
			s->skipped_sum += ev.u.data.skipped;
			s->n++;
		}
		if (s->n >= want || rtl_tcp_wait(r->fd, POLLIN, end) <= 0)
			break;
		got = recv(r->fd, r->buf, sizeof(r->buf), 0);
		if (got <= 0) {
			rtl_rtde_client_closed(r->c, rtl_time_now(), got < 0 ? -errno : 0);
			continue;
		}
		cr_assert_eq(rtl_rtde_client_feed(r->c, r->buf, (size_t)got), 0);
	}
	return s->n;
}

static void raw_close(struct raw *r)
{
	close(r->fd);
	rtl_rtde_client_destroy(r->c);
	r->fd = -1;
	r->c = NULL;
}

/* ---- versions, rates, protocols ------------------------------------------------------------ */

Test(sim_client, every_profile_reports_its_version_and_streams_at_its_rate)
{
	for (int p = 0; p < SIM_PROFILE_COUNT; p++) {
		const struct sim_profile *prof = sim_profile((enum sim_profile_id)p);
		struct sim_opts o = profile_opts((enum sim_profile_id)p);
		struct sim_server *srv = serve(&o, NULL);
		/* control_step is newer than CB3: dropped there, kept elsewhere. */
		struct rtl_rtde_client_config cfg = {
			.size = sizeof(cfg),
			.outputs = "timestamp,control_step",
			.recipe_flags = RTL_RTDE_RECIPE_DROP_UNAVAILABLE,
		};
		const struct rtl_rtde_handshake *in;
		const double hz = prof->frequency_hz;
		struct rtl_rtde_handle h;
		struct link l;

		dial(&l, srv, &cfg, NULL);
		in = info_of(&l);
		cr_assert_eq(in->protocol, RTL_RTDE_PROTOCOL_V2, "%s", prof->name);
		cr_assert_eq(in->version.major, prof->version.major, "%s", prof->name);
		cr_assert_eq(in->version.minor, prof->version.minor, "%s", prof->name);
		cr_assert_eq(in->version.bugfix, prof->version.bugfix, "%s", prof->name);
		cr_assert_eq(in->max_frequency, hz, "%s: %g Hz", prof->name, in->max_frequency);
		cr_assert_eq(in->divisor, 1);
		cr_assert_eq(in->frequency, hz);
		cr_assert_eq(in->period_ns, llround(1e9 / hz));
		cr_assert_eq(in->output_id, 1);
		cr_assert_eq(rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(client_of(&l)),
						    &h, "control_step"),
			     p == SIM_PROFILE_CB3 ? -ENOENT : 0, "%s: control_step", prof->name);

		cr_assert_eq(collect(&l, &S, 50, 2 * RTL_NS_PER_SEC), 50, "%s: %zu packages",
			     prof->name, S.n);
		cr_assert_geq(S.ts[0], START_TS);
		assert_steps(&S, hz, 1);
		cr_assert_eq(S.has_cs, p != SIM_PROFILE_CB3);
		for (size_t i = 0; S.has_cs && i < S.n; i++)
			cr_assert_eq(S.cs[i], (uint64_t)llround(S.ts[i] * hz),
				     "control_step counts periods since the controller start");
		cr_assert_eq(S.skipped_sum, 0);
		link_stop(&l);
		cr_assert_eq(stats_of(&l).skipped, 0);
		cr_assert_eq(stats_of(&l).malformed, 0);
		link_close(&l);
		finish(srv, NULL);
	}
}

Test(sim_client, falls_back_to_v1_and_streams_at_the_maximum_rate)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config cfg = { .size = sizeof(cfg),
					      .outputs = "timestamp,actual_q",
					      .frequency = 25 };
	const struct rtl_rtde_handshake *in;
	struct sim_server *srv;
	struct link l;

	/* An old controller: V 2 is refused, the client asks for 1. */
	o.max_protocol = 1;
	srv = serve(&o, NULL);
	dial(&l, srv, &cfg, NULL);
	in = info_of(&l);
	cr_assert_eq(in->protocol, RTL_RTDE_PROTOCOL_V1);
	cr_assert_eq(in->output_id, 0, "no recipe id in v1");
	cr_assert_eq(in->requested_frequency, 0, "v1 sends no frequency");
	cr_assert_eq(in->divisor, 1, "v1 streams at the maximum rate whatever was asked");
	cr_assert_eq(in->frequency, 500);
	cr_assert_eq(collect(&l, &S, 100, 2 * RTL_NS_PER_SEC), 100);
	assert_steps(&S, 500, 1);
	link_stop(&l);
	cr_assert_eq(stats_of(&l).skipped, 0, "a 25 Hz request in v1 is not a loss of 19/20");
	cr_assert_eq(stats_of(&l).wrong_recipe, 0);
	link_close(&l);
	finish(srv, NULL);

	/* A client told to speak v1 to a v2 controller. */
	srv = serve(NULL, NULL);
	cfg.protocol = 1;
	dial(&l, srv, &cfg, NULL);
	cr_assert_eq(info_of(&l)->protocol, RTL_RTDE_PROTOCOL_V1);
	cr_assert_eq(collect(&l, &S, 20, 2 * RTL_NS_PER_SEC), 20);
	assert_steps(&S, 500, 1);
	link_close(&l);
	finish(srv, NULL);
}

Test(sim_client, output_rate_follows_the_floor_rule)
{
	static const struct {
		enum sim_profile_id p;
		double asked;
		unsigned n; /* max(1, floor(max / asked)) */
		double hz;  /* max / n */
	} cases[] = {
		{ SIM_PROFILE_ESERIES, 25, 20, 25 },	  { SIM_PROFILE_ESERIES, 200, 2, 250 },
		{ SIM_PROFILE_ESERIES, 300, 1, 500 },	  { SIM_PROFILE_ESERIES, 499, 1, 500 },
		{ SIM_PROFILE_ESERIES, 2000, 1, 500 },	  { SIM_PROFILE_ESERIES, 1, 500, 1 },
		{ SIM_PROFILE_CB3, 50, 2, 62.5 },	  { SIM_PROFILE_CB3, 125, 1, 125 },
		{ SIM_PROFILE_POLYSCOPE_X, 100, 5, 100 },
	};
	struct sim_server *srv[SIM_PROFILE_COUNT];

	for (int p = 0; p < SIM_PROFILE_COUNT; p++) {
		struct sim_opts o = profile_opts((enum sim_profile_id)p);

		srv[p] = serve(&o, NULL);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rtl_rtde_client_config cfg = { .size = sizeof(cfg),
						      .outputs = "timestamp",
						      .frequency = cases[i].asked };
		const struct rtl_rtde_handshake *in;
		double max = sim_profile(cases[i].p)->frequency_hz;
		/* Two packages at 1 Hz; about a quarter second otherwise. */
		size_t want = cases[i].hz < 10 ? 2 : (size_t)(cases[i].hz / 4) + 2;
		struct link l;

		dial(&l, srv[cases[i].p], &cfg, NULL);
		in = info_of(&l);
		cr_assert_eq(in->divisor, cases[i].n, "%g Hz asked: N %u", cases[i].asked,
			     in->divisor);
		cr_assert_eq(in->frequency, cases[i].hz, "%g Hz asked: %g Hz", cases[i].asked,
			     in->frequency);
		cr_assert_eq(in->requested_frequency, fmin(cases[i].asked, max));
		cr_assert_eq(collect(&l, &S, want, 4 * RTL_NS_PER_SEC), want);
		assert_steps(&S, max, cases[i].n);
		link_stop(&l);
		cr_assert_eq(stats_of(&l).skipped, 0, "%g Hz asked", cases[i].asked);
		link_close(&l);
	}
	for (int p = 0; p < SIM_PROFILE_COUNT; p++)
		finish(srv[p], NULL);
}

/* ---- errors as the client reports them ------------------------------------------------------ */

Test(sim_client, a_field_the_controller_lacks_is_reported_by_name)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_CB3);
	struct sim_server *srv = serve(&o, NULL);
	struct rtl_rtde_client_config cfg = { .size = sizeof(cfg),
					      .outputs = "timestamp,actual_current_as_torque" };
	struct rtl_rtde_client_error cerr;
	struct rtl_error err;
	struct sim_stats st;
	struct link l;

	/* The controller (3.15.8) answers NOT_FOUND for this field; the client
	 * knows it from the registry and the version before it asks. */
	cr_assert_eq(dial_fails(srv, &cfg, &err, &cerr), -EPROTO, "%s", err.msg);
	cr_assert(cerr.fatal);
	cr_assert_eq(cerr.err.code, -EPROTO, "the client's own report: %s", cerr.err.msg);
	cr_assert(contains(err.msg, "'actual_current_as_torque'"), "%s", err.msg);
	cr_assert(contains(err.msg, "3.15.8"), "names the controller: %s", err.msg);
	cr_assert(contains(err.msg, "RTDE 127.0.0.1:"), "names host:port: %s", err.msg);

	/* With the drop flag the field goes and the rest streams. */
	cfg.recipe_flags = RTL_RTDE_RECIPE_DROP_UNAVAILABLE;
	dial(&l, srv, &cfg, NULL);
	cr_assert_eq(rtl_rtde_client_output_recipe(client_of(&l))->n, 1);
	cr_assert_eq(collect(&l, &S, 10, 2 * RTL_NS_PER_SEC), 10);
	link_close(&l);

	/* A name no controller has fails before any connection, with a hint. */
	cfg.outputs = "timestamp,actual_tcp_pose";
	cr_assert_eq(dial_fails(srv, &cfg, &err, &cerr), -ENOENT, "%s", err.msg);
	cr_assert(contains(err.msg, "'actual_tcp_pose'"), "%s", err.msg);
	cr_assert(contains(err.msg, "actual_TCP_pose"), "suggests the name: %s", err.msg);
	finish(srv, &st);
	cr_assert_eq(st.connections, 2, "the misspelt recipe never connected");
}

Test(sim_client, inputs_in_use_are_reported_by_name)
{
	struct sim_server *srv = serve(NULL, NULL);
	struct rtl_rtde_client_config cfg = {
		.size = sizeof(cfg),
		.outputs = "timestamp",
		.inputs = { RTL_RTDE_CMD_FIELD_MODE "," RTL_RTDE_CMD_FIELD_PARAM0 },
	};
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_error cerr;
	struct rtl_error err;
	struct link owner, l;

	dial(&owner, srv, &cfg, NULL);
	/* The same inputs from a second connection. */
	cr_assert_eq(dial_fails(srv, &cfg, &err, &cerr), -EBUSY, "%s", err.msg);
	cr_assert(cerr.fatal);
	cr_assert_eq(cerr.state, RTL_RTDE_CLIENT_INPUTS);
	cr_assert(contains(err.msg, "IN_USE"), "%s", err.msg);
	cr_assert(contains(err.msg, "'" RTL_RTDE_CMD_FIELD_MODE "'"), "%s", err.msg);
	cr_assert(contains(err.msg, "'" RTL_RTDE_CMD_FIELD_PARAM0 "'"), "%s", err.msg);
	link_close(&owner);
	finish(srv, NULL);

	/* A fieldbus adapter owns registers 0-23 for everyone. */
	o.fieldbus = true;
	srv = serve(&o, NULL);
	cfg.inputs[0] = "input_int_register_3";
	cr_assert_eq(dial_fails(srv, &cfg, &err, &cerr), -EBUSY, "%s", err.msg);
	cr_assert(contains(err.msg, "'input_int_register_3'"), "%s", err.msg);
	cr_assert(contains(err.msg, "fieldbus") || contains(err.msg, "EtherNet/IP"),
		  "names the likely owner: %s", err.msg);
	/* The external-client range is free. */
	cfg.inputs[0] = RTL_RTDE_CMD_FIELD_MODE;
	dial(&l, srv, &cfg, NULL);
	link_close(&l);
	finish(srv, NULL);
}

Test(sim_client, two_clients_with_overlapping_inputs)
{
	struct sim_server *srv = serve(NULL, NULL);
	struct rtl_rtde_client_config ca = {
		.size = sizeof(ca),
		.outputs = "timestamp,input_int_register_27",
		.inputs = { "input_int_register_24,input_int_register_25,input_int_register_26" },
	};
	struct rtl_rtde_client_config cb = {
		.size = sizeof(cb),
		.outputs = "timestamp",
		.inputs = { "input_int_register_26,input_int_register_27" },
	};
	struct rtl_rtde_client_error cerr;
	struct rtl_error err;
	struct rtl_rtde_handle h;
	struct link a, b;
	int64_t end;
	int32_t seen = 0;
	int tries = 0, rc;

	dial(&a, srv, &ca, NULL);
	/* B overlaps A in register 26 only: that one, and only that, is named. */
	cr_assert_eq(dial_fails(srv, &cb, &err, &cerr), -EBUSY, "%s", err.msg);
	cr_assert(contains(err.msg, "'input_int_register_26'"), "%s", err.msg);
	cr_assert_not(contains(err.msg, "'input_int_register_27'"), "%s", err.msg);

	/* Without the overlap B gets its register, and A reads what B writes. */
	cb.inputs[0] = "input_int_register_27";
	dial(&b, srv, &cb, NULL);
	h = rtl_rtde_transport_input_handle(b.t, 0, "input_int_register_27");
	cr_assert(rtl_rtde_handle_valid(h));
	rtl_rtde_frame_set_int(rtl_rtde_loop_commands(b.loop, 0), h, 1234);
	rc = rtl_loop_write(b.loop);
	cr_assert_gt(rc, 0, "the register went out (%d)", rc);
	h = rtl_rtde_transport_output_handle(a.t, "input_int_register_27");
	cr_assert(rtl_rtde_handle_valid(h));
	end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	while (seen != 1234 && rtl_time_now() < end) {
		const struct rtl_loop_frame *f = rtl_loop_read(a.loop, end - rtl_time_now());
		struct rtl_rtde_frame fr;

		if (!f)
			break;
		fr = rtl_rtde_loop_state(f);
		seen = rtl_rtde_frame_get_int(&fr, h);
	}
	cr_assert_eq(seen, 1234, "A reads back the register B writes");
	link_close(&b);

	/* When A closes, its registers are free again (the server sees the
	 * close at its next read: retry, as a reconnecting client does). */
	link_close(&a);
	cb.inputs[0] = "input_int_register_26,input_int_register_27";
	do {
		rc = link_try_open(&b, srv, &cb, NULL, &err);
		if (rc == -EBUSY) {
			link_close(&b);
			usleep(10000);
		}
	} while (rc == -EBUSY && ++tries < 200);
	cr_assert_eq(rc, 0, "%s", err.msg);
	link_close(&b);
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

/*
 * The loops receive all the time, so the client counts what it received,
 * not what the test has read: the server stops at the end, each loop ends
 * with its stream, and every package either loop received is read, so the
 * streams checked are the whole of what the clients counted.
 */
Test(sim_client, skipped_packages_are_counted_exactly_as_injected)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config by_ts = { .size = sizeof(by_ts), .outputs = "timestamp" };
	struct rtl_rtde_client_config by_cs = { .size = sizeof(by_cs),
						.outputs = "timestamp,control_step" };
	struct sim_server *srv;
	struct sim_stats st;
	struct link a, b;

	o.faults.skip_every = 25;
	o.faults.skip_count = 4;
	srv = serve(&o, NULL);
	dial(&a, srv, &by_ts, NULL);
	dial(&b, srv, &by_cs, NULL);
	cr_assert_eq(collect(&a, &S, 400, 4 * RTL_NS_PER_SEC), 400);
	cr_assert_eq(collect(&b, &S2, 400, 4 * RTL_NS_PER_SEC), 400);
	finish(srv, &st);
	collect_rest(&a, &S);
	collect_rest(&b, &S2);
	cr_assert_eq(link_stop(&a), -ECONNRESET, "a's stream ended with the server");
	cr_assert_eq(link_stop(&b), -ECONNRESET, "b's stream ended with the server");
	assert_read_every_frame(&a, &S);
	assert_read_every_frame(&b, &S2);
	cr_assert_not(S.has_cs);
	cr_assert(S2.has_cs);
	cr_assert_eq(stats_of(&a).data, S.n);
	cr_assert_eq(stats_of(&b).data, S2.n);
	check_skips(&S, stats_of(&a).skipped);
	check_skips(&S2, stats_of(&b).skipped);
	cr_assert_eq(S.skipped_sum, stats_of(&a).skipped);
	cr_assert_eq(S2.skipped_sum, stats_of(&b).skipped);
	cr_assert_eq(stats_of(&a).resets + stats_of(&b).resets, 0);
	/* The simulator counts every package it did not send to a started
	 * client: those in the windows, and more before and after them. */
	cr_assert_geq(st.skipped_packages, S.skipped_sum + S2.skipped_sum);
	link_close(&a);
	link_close(&b);
}

/* The home pose of the simulated UR5e (robot.h). */
static const double home[6] = { 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 };

Test(sim_client, a_fragmented_stream_is_reassembled_by_the_step_function)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config cfg = { .size = sizeof(cfg),
					      .outputs = "timestamp,actual_q,actual_TCP_pose" };
	struct rtl_error cerr;
	struct rtl_error terr;
	struct sim_server *srv;
	struct rtl_rtde_client *c;
	struct rtl_rtde_handle hq;
	struct sim_stats st;
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
	fd = rtl_tcp_connect(HOST, sim_server_port(srv), OPEN_TIMEOUT, &terr);
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
		while (rtl_rtde_client_next(c, &ev, rtl_time_now()) == 1) {
			cr_assert_neq(ev.type, RTL_RTDE_CLIENT_EV_ERROR, "%s", ev.u.error->err.msg);
			if (ev.type != RTL_RTDE_CLIENT_EV_DATA)
				continue;
			if (n == 0) {
				cr_assert_eq(rtl_rtde_frame_init(&f, storage, sizeof(storage),
								 rtl_rtde_client_output_recipe(c)),
					     0);
				cr_assert_eq(
					rtl_rtde_recipe_handle(rtl_rtde_client_output_recipe(c),
							       &hq, "actual_q"),
					0);
			} else {
				cr_assert_eq(lround((ev.u.data.timestamp - last) * 500), 1);
			}
			last = ev.u.data.timestamp;
			cr_assert_eq(rtl_rtde_client_decode(c, &f, &ev), 0);
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
	cr_assert_eq(client_counts(c).malformed, 0);
	cr_assert_eq(client_counts(c).wrong_recipe, 0);
	cr_assert_eq(client_counts(c).unexpected, 0);
	cr_assert_eq(client_counts(c).skipped, 0);
	close(fd);
	rtl_rtde_client_destroy(c);
	finish(srv, &st);
	/* 3 + 1 + 8 + 48 + 48 = 108-byte packages in pieces of at most 3. */
	cr_assert_geq(st.fragments, 300 * 108 / 3);
	cr_assert_geq(recvs, 300 * 108 / 3);
}

static struct stream ALL;

/* @all up to its first step that is not one period of 500 Hz into @a, the
 * rest into @b. */
static void split_at_gap(const struct stream *all, struct stream *a, struct stream *b)
{
	size_t k = 1;

	cr_assert_gt(all->n, 0);
	while (k < all->n && lround((all->ts[k] - all->ts[k - 1]) * 500) == 1)
		k++;
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < all->n; i++) {
		struct stream *s = i < k ? a : b;

		s->ts[s->n] = all->ts[i];
		s->cs[s->n] = all->cs[i];
		s->skipped[s->n] = all->skipped[i];
		s->skipped_sum += all->skipped[i];
		s->has_cs = all->has_cs;
		s->n++;
	}
}

/*
 * reset_after 100: the simulator resets each connection (RST) after 100
 * packages. The loop reports the loss, reconnects once after its back-off
 * (1 s, far longer than the test takes to see the second loss and stop
 * the loop, so there is no third connection), and the stream resumes.
 * The two connections' frames are told apart by the back-off's gap in the
 * timestamps; within each, every step is one period.
 */
Test(sim_client, a_reset_is_reported_and_reconnect_resumes_the_stream)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct rtl_rtde_client_config cfg = { .size = sizeof(cfg),
					      .outputs = "timestamp,control_step" };
	struct link_opts lo = { .reconnects = 1, .backoff_ns = RTL_NS_PER_SEC };
	struct sim_server *srv;
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	struct sim_stats st;
	double last_before;
	struct link l;

	capture_log();
	o.faults.reset_after = 100;
	srv = serve(&o, NULL);
	dial(&l, srv, &cfg, &lo);

	cr_assert(await_logged(&L.lost, 1, 4 * RTL_NS_PER_SEC), "the reset is reported");
	pthread_mutex_lock(&L.lock);
	cr_assert(contains(L.lost_msg, "reset"), "%s", L.lost_msg);
	cr_assert(contains(L.lost_msg, "RUNNING"), "names the state: %s", L.lost_msg);
	cr_assert(contains(L.lost_msg, "RTDE 127.0.0.1:"), "names the peer: %s", L.lost_msg);
	pthread_mutex_unlock(&L.lock);
	cr_assert(await_logged(&L.lost, 2, 4 * RTL_NS_PER_SEC), "and again after 100 more");
	rtl_loop_stop(l.loop); /* within the back-off: no third connection */
	memset(&ALL, 0, sizeof(ALL));
	collect_rest(&l, &ALL);
	cr_assert_eq(link_stop(&l), 0);
	assert_read_every_frame(&l, &ALL);

	/* Both connections' frames: the first ends where the time jumps. */
	split_at_gap(&ALL, &S, &S2);
	cr_assert_eq(S.n, 100, "%zu", S.n);
	assert_steps(&S, 500, 1);
	last_before = S.ts[S.n - 1];
	cr_assert_eq(S2.n, 100, "%zu", S2.n);
	cr_assert_gt(S2.ts[0], last_before, "time went on across the reconnect");
	assert_steps(&S2, 500, 1);

	rtl_loop_stats(l.loop, &ls);
	cr_assert_eq(ls.reconnects, 1);
	cr_assert_eq(stats_of(&l).reconnects, 1, "the client counts it too");
	/* A new START sets a new baseline: the reconnect gap is no loss and no
	 * controller restart. */
	cr_assert_eq(stats_of(&l).skipped, 0);
	cr_assert_eq(stats_of(&l).resets, 0);
	link_close(&l);
	finish(srv, &st);
	cr_assert_eq(st.resets, 2);
	cr_assert_eq(st.connections, 2);
}

Test(sim_client, a_client_that_stops_reading_is_dropped_while_another_keeps_its_rate)
{
	struct sim_opts o = profile_opts(SIM_PROFILE_ESERIES);
	struct sim_server_opts so = { .sndbuf = 8192 };
	/* About 2 KiB per package: 1 MB/s into a client that reads nothing. */
	struct rtl_rtde_client_config heavy = {
		.size = sizeof(heavy),
		.outputs = "timestamp,actual_q,actual_qd,target_q,target_qd,target_qdd,"
			   "target_current,target_moment,actual_current,joint_control_output,"
			   "actual_TCP_pose,actual_TCP_speed,actual_TCP_force,target_TCP_pose,"
			   "target_TCP_speed,joint_temperatures,actual_joint_voltage,tcp_offset,"
			   "ft_raw_wrench,elbow_position,elbow_velocity",
		/* It stops reading on purpose, for longer than the default
		 * data time-out: the server's close is what is tested. */
		.data_timeout_ns = -1,
	};
	struct rtl_rtde_client_config light = { .size = sizeof(light), .outputs = "timestamp" };
	struct raw *slow = &RAW;
	struct sim_server *srv;
	struct rtl_loop_counters ls = { .size = sizeof(ls) };
	struct sim_stats st;
	struct link fast;
	int64_t end;
	int rcvbuf = 4096;

	o.send_buffer = 32768;
	srv = serve(&o, &so);
	/* The slow one is the step function on a socket the test owns: it
	 * stops reading as soon as it streams. */
	raw_open(slow, srv, &heavy);
	setsockopt(slow->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	dial(&fast, srv, &light, NULL);
	/* One second of the fast client: every package, on time. */
	cr_assert_eq(collect(&fast, &S, 500, 3 * RTL_NS_PER_SEC), 500);
	assert_steps(&S, 500, 1);
	cr_assert_eq(S.skipped_sum, 0);
	end = rtl_time_now() + 3 * RTL_NS_PER_SEC;
	do {
		sim_server_stats(srv, &st);
		if (!st.slow_disconnects)
			usleep(10000);
	} while (!st.slow_disconnects && rtl_time_now() < end);
	cr_assert_eq(st.slow_disconnects, 1, "the reader that stopped was closed");

	/* The slow one gets what was buffered, whole, then the explanation. */
	raw_collect(slow, &S2, MAX_PKGS, 3 * RTL_NS_PER_SEC);
	cr_assert_eq(S2.end, -ECONNRESET, "%d: %s", S2.end, S2.end_msg);
	cr_assert(contains(S2.end_msg, "closed"), "an orderly close, not a reset: %s", S2.end_msg);
	cr_assert(contains(S2.end_msg, "reads too slowly"), "says why: %s", S2.end_msg);
	cr_assert_gt(S2.n, 0);
	cr_assert_eq(client_counts(slow->c).malformed, 0, "only whole packages");
	/* ... and the fast one is still streaming: the packages that came
	 * meanwhile, in order, none lost. */
	cr_assert_eq(collect(&fast, &S, 50, 2 * RTL_NS_PER_SEC), 50);
	assert_steps(&S, 500, 1);
	link_stop(&fast);
	cr_assert_eq(stats_of(&fast).skipped, 0);
	rtl_loop_stats(fast.loop, &ls);
	cr_assert_eq(ls.ring_full + ls.worker_skipped, 0, "the fast client lost nothing");
	raw_close(slow);
	link_close(&fast);
	finish(srv, NULL);
}

/* ---- motion -------------------------------------------------------------------------------- */

#define MOTION_OUTPUTS "timestamp,actual_q,actual_qd,actual_TCP_pose," RTL_RTDE_CMD_STATUS_OUTPUTS

/*
 * A client that commands the robot through the registers of rtde_cmd.h:
 * a loop whose transport leaves the heartbeat to the test (heartbeat "",
 * no keep-alive), so that the watchdog test can let it go stale. Every
 * command carries a new heartbeat and so goes out. The loop's safe package
 * (mode STOP, the transport's own) goes first and again at the end, where
 * the loop waits for the robot to come to rest.
 */
struct rig {
	struct sim_server *srv;
	struct link l;
	struct rtl_rtde_frame *cmd; /* the command recipe's frame in the coalescer */
	struct rtl_rtde_handle ts, q, qd, pose, out_mode, out_seq, trips, status;
	struct rtl_rtde_handle mode, seq, wd, param[6], acc, time, look, gain;
	int32_t hb;
	/* The latest state. */
	double t, q_now[6], qd_now[6], pose_now[6];
	int32_t mode_now, seq_now, trips_now;
	uint32_t status_now;
};

static struct rig G;

static struct rtl_rtde_handle out_handle(struct rig *g, const char *name)
{
	struct rtl_rtde_handle h = rtl_rtde_transport_output_handle(g->l.t, name);

	cr_assert(rtl_rtde_handle_valid(h), "%s", name);
	return h;
}

static struct rtl_rtde_handle in_handle(struct rig *g, const char *name)
{
	struct rtl_rtde_handle h = rtl_rtde_transport_input_handle(g->l.t, 0, name);

	cr_assert(rtl_rtde_handle_valid(h), "%s", name);
	return h;
}

static void rig_open(struct rig *g)
{
	static const char *params[6] = { RTL_RTDE_CMD_FIELD_PARAM0, RTL_RTDE_CMD_FIELD_PARAM1,
					 RTL_RTDE_CMD_FIELD_PARAM2, RTL_RTDE_CMD_FIELD_PARAM3,
					 RTL_RTDE_CMD_FIELD_PARAM4, RTL_RTDE_CMD_FIELD_PARAM5 };
	static const struct rtl_rtde_client_config cfg = { .size = sizeof(cfg),
							   .outputs = MOTION_OUTPUTS,
							   .inputs = { RTL_RTDE_CMD_RECIPE } };
	static const struct link_opts lo = { .own_heartbeat = true };

	memset(g, 0, sizeof(*g));
	capture_log();
	g->srv = serve(NULL, NULL);
	dial(&g->l, g->srv, &cfg, &lo);
	g->cmd = rtl_rtde_loop_commands(g->l.loop, 0);
	cr_assert_not_null(g->cmd);
	g->ts = out_handle(g, "timestamp");
	g->q = out_handle(g, "actual_q");
	g->qd = out_handle(g, "actual_qd");
	g->pose = out_handle(g, "actual_TCP_pose");
	g->out_mode = out_handle(g, RTL_RTDE_CMD_FIELD_OUT_MODE);
	g->out_seq = out_handle(g, RTL_RTDE_CMD_FIELD_OUT_SEQ);
	g->trips = out_handle(g, RTL_RTDE_CMD_FIELD_OUT_WD_TRIPS);
	g->status = out_handle(g, RTL_RTDE_CMD_FIELD_OUT_STATUS);
	g->mode = in_handle(g, RTL_RTDE_CMD_FIELD_MODE);
	g->seq = in_handle(g, RTL_RTDE_CMD_FIELD_SEQ);
	g->wd = in_handle(g, RTL_RTDE_CMD_FIELD_WATCHDOG_MS);
	for (int i = 0; i < 6; i++)
		g->param[i] = in_handle(g, params[i]);
	g->acc = in_handle(g, RTL_RTDE_CMD_FIELD_ACCEL);
	g->time = in_handle(g, RTL_RTDE_CMD_FIELD_TIME);
	g->look = in_handle(g, RTL_RTDE_CMD_FIELD_LOOKAHEAD);
	g->gain = in_handle(g, RTL_RTDE_CMD_FIELD_GAIN);
}

static void rig_close(struct rig *g)
{
	link_close(&g->l);
	finish(g->srv, NULL);
}

/* Wait for the next data package (bounded) and take its state. */
static void rig_next(struct rig *g)
{
	const struct rtl_loop_frame *f = rtl_loop_read(g->l.loop, 2 * RTL_NS_PER_SEC);
	struct rtl_rtde_frame st;

	cr_assert_not_null(f, "a data package within 2 s");
	st = rtl_rtde_loop_state(f);
	g->t = rtl_rtde_frame_get_double(&st, g->ts);
	rtl_rtde_frame_get_vec6(&st, g->q, g->q_now);
	rtl_rtde_frame_get_vec6(&st, g->qd, g->qd_now);
	rtl_rtde_frame_get_vec6(&st, g->pose, g->pose_now);
	g->mode_now = rtl_rtde_frame_get_int(&st, g->out_mode);
	g->seq_now = rtl_rtde_frame_get_int(&st, g->out_seq);
	g->trips_now = rtl_rtde_frame_get_int(&st, g->trips);
	g->status_now = (uint32_t)rtl_rtde_frame_get_int(&st, g->status);
}

/*
 * Send a command; a new heartbeat unless @stale (the same package again:
 * unchanged, the coalescer would send nothing, so it is made to resend).
 * Watchdog timeout @wd_ms (0: the default 100 ms).
 */
static void rig_send(struct rig *g, int32_t mode, const double p[6], double acc, int32_t wd_ms,
		     bool stale)
{
	int r;

	if (!stale)
		g->hb++;
	rtl_rtde_frame_set_int(g->cmd, g->mode, mode);
	rtl_rtde_frame_set_int(g->cmd, g->seq, g->hb);
	rtl_rtde_frame_set_int(g->cmd, g->wd, wd_ms);
	for (int i = 0; i < 6; i++)
		rtl_rtde_frame_set_double(g->cmd, g->param[i], p ? p[i] : 0.0);
	rtl_rtde_frame_set_double(g->cmd, g->acc, acc);
	if (stale)
		cr_assert_eq(rtl_rtde_coalesce_resend(rtl_loop_commands(g->l.loop), 0), 0);
	r = rtl_loop_write(g->l.loop);
	cr_assert_gt(r, 0, "the command went out (%d)", r);
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
		sim_robot_rotvec_to_matrix(p0 + 3, r0);
		sim_robot_rotvec_to_matrix(G.pose_now + 3, r1);
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
	rtl_rtde_frame_set_double(G.cmd, G.time, 0.002);
	rtl_rtde_frame_set_double(G.cmd, G.look, 0.1);
	rtl_rtde_frame_set_double(G.cmd, G.gain, 300);
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
	struct rtl_rtde_transport_counters before = { .size = sizeof(before) },
					   after = { .size = sizeof(after) };
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
	/* The controller says so (a text message, which the client logs). */
	cr_assert(await_logged(&L.texts, 1, RTL_NS_PER_SEC), "the controller says so");
	pthread_mutex_lock(&L.lock);
	cr_assert(contains(L.text, "watchdog"), "%s", L.text);
	pthread_mutex_unlock(&L.lock);
	q_rest = G.q_now[0];

	/* The stale heartbeat does not restart the motion... */
	rtl_rtde_transport_stats(G.l.t, &before);
	for (n = 0; n < 50; n++) {
		rig_send(&G, RTL_RTDE_CMD_SPEEDJ, p, 5.0, 150, true);
		rig_next(&G);
	}
	rtl_rtde_transport_stats(G.l.t, &after);
	cr_assert_eq(after.packages - before.packages, 50, "the stale packages went out");
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
