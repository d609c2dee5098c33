// SPDX-License-Identifier: MIT
/*
 * The three measured phases of rtloop-bench (see bench.h) for either
 * transport, and the core-to-core probe.
 *
 * Every phase follows the same shape: set up (sockets, threads, the
 * simulator, the loop), let it run for a warm-up that is not measured,
 * measure for cfg->phase_ns, tear down. The main thread only sleeps and
 * reports progress meanwhile; the measuring threads block in recv(2),
 * epoll_wait(2), futex(2) or clock_nanosleep(2) between events and never
 * spin, so SCHED_FIFO on a 2-CPU machine cannot starve anything. Every
 * blocking call is bounded (SO_RCVTIMEO, time-outs), so a stuck peer ends a
 * phase with an error instead of hanging the run.
 *
 * The simulator and the loop keep their histograms in live rtl_hist
 * structures that their own threads write. The window is cut out of them
 * by a snapshot after the warm-up and one at the end (bench_hist_diff()),
 * so nothing in the simulator or the loop had to change to be measured.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_recipe.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/telemetry.h>
#include <rtloop/thread.h>
#include <rtloop/time.h>
#include <rtloop/timer.h>
#include <rtloop/udp_transport.h>

#include "bench.h"
#include "benchmark.h"
#include "server.h"
#include "udp.h"

/* Stack touched before a measuring thread starts (no faults later). */
#define PREFAULT_STACK (64 * 1024)
/* No blocking call of a phase waits longer than this. */
#define IO_TIMEOUT_NS (2 * RTL_NS_PER_SEC)
/* Progress is reported this often. */
#define PROGRESS_NS (500 * RTL_NS_PER_MS)
/* Largest package the ping-pong sends (RTDE's limit). */
#define MAX_PKG 65536

/* Fill @why with "@what[: @detail]: strerror(-@err)"; returns @err. */
static int say(char *why, size_t len, int err, const char *what, const char *detail)
{
	snprintf(why, len, "%s%s%s: %s", what, detail ? ": " : "", detail ? detail : "",
		 strerror(-err));
	return err;
}

/* Record in @rt that thread @name fell back to SCHED_OTHER. */
static void note_degraded(struct bench_rt *rt, const struct rtl_thread *th, const char *name)
{
	const struct rtl_thread_info *info = rtl_thread_applied(th);
	size_t n = strlen(rt->degraded_note);

	if (!info->degraded)
		return;
	if (!rt->fifo_degraded)
		snprintf(rt->degraded_note + n, sizeof(rt->degraded_note) - n,
			 "%s runs under SCHED_OTHER: %s", name, info->why.msg);
	rt->fifo_degraded = true;
}

/* What every thread of the benchmark asks for: SCHED_FIFO with its stack
 * prefaulted, best effort (SCHED_OTHER when not permitted: noted). */
static const struct rtl_thread_attr fifo_attr = {
	.size = sizeof(struct rtl_thread_attr),
	.policy = SCHED_FIFO,
	.prefault_stack = PREFAULT_STACK,
	.best_effort = true,
};

/* Start @fn(@arg) as *@th, best effort; on failure @err says why. */
static int spawn(struct rtl_thread **th, const char *name, int prio, int cpu, void *(*fn)(void *),
		 void *arg, struct bench_rt *rt, struct rtl_error *err)
{
	struct rtl_thread_attr a = fifo_attr;
	int ret;

	a.name = name;
	a.priority = prio;
	a.cpu = cpu;
	ret = rtl_thread_create(th, &a, fn, arg, err);
	if (ret == 0)
		note_degraded(rt, *th, name);
	return ret;
}

/* Sleep until @end, reporting progress; main thread only. */
static void wait_until(int64_t end, enum bench_phase p, bench_progress_fn progress, void *pctx)
{
	for (;;) {
		int64_t now = rtl_time_now(), step;

		if (now >= end)
			return;
		if (progress)
			progress(pctx, p, end - now);
		step = end - now < PROGRESS_NS ? end - now : PROGRESS_NS;
		rtl_time_sleep_until(now + step);
	}
}

/* ---- sockets ------------------------------------------------------------------ */

static void set_timeout(int fd)
{
	struct timeval tv = { .tv_sec = IO_TIMEOUT_NS / RTL_NS_PER_SEC };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Receive exactly @len bytes: @len, 0 on EOF, or -errno. */
static ssize_t recv_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, (char *)buf + got, len - got, 0);

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static ssize_t send_all(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		put += (size_t)n;
	}
	return (ssize_t)put;
}

/* A connected TCP pair over loopback, TCP_NODELAY on both ends. */
static int tcp_pair(int *srv, int *cli)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	int one = 1, ls, c = -1, s = -1, err;

	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		return -errno;
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&sa, &salen))
		goto err_errno;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)))
		goto err_errno;
	s = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		goto err_errno;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	set_timeout(s);
	set_timeout(c);
	close(ls);
	*srv = s;
	*cli = c;
	return 0;

err_errno:
	err = -errno;
	if (c >= 0)
		close(c);
	close(ls);
	return err;
}

/* A connected UDP pair over loopback: each socket bound to an ephemeral
 * port and connect(2)ed to the other, as the transport's socket is. */
static int udp_pair(int *srv, int *cli)
{
	struct sockaddr_in sa[2];
	int fd[2] = { -1, -1 }, err;

	for (int i = 0; i < 2; i++) {
		socklen_t salen = sizeof(sa[i]);

		sa[i] = (struct sockaddr_in){ .sin_family = AF_INET,
					      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&sa[i], sizeof(sa[i])) ||
		    getsockname(fd[i], (struct sockaddr *)&sa[i], &salen))
			goto err_errno;
	}
	if (connect(fd[0], (struct sockaddr *)&sa[1], sizeof(sa[1])) ||
	    connect(fd[1], (struct sockaddr *)&sa[0], sizeof(sa[0])))
		goto err_errno;
	set_timeout(fd[0]);
	set_timeout(fd[1]);
	*srv = fd[0];
	*cli = fd[1];
	return 0;

err_errno:
	err = -errno;
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return err;
}

/* ---- P_FLOOR: bare TCP (UDP) ping-pong ------------------------------------------ */

struct pingpong {
	const struct bench_cfg *cfg;
	bool udp; /* datagrams: one recv(2) is one message */
	int srv_fd, cli_fd;
	int64_t warm_end, end;
	struct rtl_hist *h;
	uint64_t sent, bad;
	int err;
	unsigned char sbuf[MAX_PKG], cbuf[MAX_PKG];
};

/* Receive one message of @len bytes: the stream's next @len bytes, or one
 * datagram that must be @len long. Returns @len, 0 on EOF, or -errno
 * (-EMSGSIZE: a datagram of another size). */
static ssize_t recv_msg(const struct pingpong *pp, int fd, unsigned char *buf, size_t len)
{
	ssize_t n;

	if (!pp->udp)
		return recv_all(fd, buf, len);
	do {
		n = recv(fd, buf, MAX_PKG, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? n : -EMSGSIZE;
}

/* The "simulator" side: on every deadline send a data package's worth of
 * bytes and wait for the echo package's worth. */
static void *pp_server(void *arg)
{
	struct pingpong *pp = arg;
	const struct bench_cfg *cfg = pp->cfg;
	struct rtl_timer tm;
	uint64_t seq = 0;

	rtl_timer_init(&tm, rtl_time_now() + cfg->period_ns, cfg->period_ns, RTL_TIMER_SKIP);
	for (;;) {
		int64_t t0, t1, lat = rtl_timer_wait(&tm);
		uint64_t back;
		ssize_t n;

		if (lat < 0) {
			pp->err = (int)lat;
			break;
		}
		t0 = rtl_time_now();
		if (t0 >= pp->end)
			break;
		seq++;
		memcpy(pp->sbuf, &seq, sizeof(seq));
		n = send_all(pp->srv_fd, pp->sbuf, cfg->out_size);
		if (n >= 0)
			n = recv_msg(pp, pp->srv_fd, pp->sbuf, cfg->in_size);
		t1 = rtl_time_now();
		if (n <= 0) {
			pp->err = n < 0 ? (int)n : -ECONNRESET;
			break;
		}
		memcpy(&back, pp->sbuf, sizeof(back));
		if (t0 < pp->warm_end)
			continue;
		pp->sent++;
		if (back != seq)
			pp->bad++;
		rtl_hist_record(pp->h, t1 - t0);
	}
	shutdown(pp->srv_fd, SHUT_RDWR);
	return NULL;
}

/* The "loop" side: receive a package, answer with the echo package. */
static void *pp_client(void *arg)
{
	struct pingpong *pp = arg;

	for (;;) {
		ssize_t n = recv_msg(pp, pp->cli_fd, pp->cbuf, pp->cfg->out_size);

		/* UDP has no EOF: the server's shutdown(2) does not reach us, so
		 * run_floor() shuts this socket down itself; a time-out ends us too. */
		if (n <= 0)
			break;
		if (send_all(pp->cli_fd, pp->cbuf, pp->cfg->in_size) < 0)
			break;
	}
	shutdown(pp->cli_fd, SHUT_RDWR);
	return NULL;
}

static int run_floor(const struct bench_cfg *cfg, struct bench_rep *rep, struct bench_rt *rt,
		     bench_progress_fn progress, void *pctx, char *why, size_t why_len)
{
	struct pingpong *pp = calloc(1, sizeof(*pp));
	struct rtl_thread *ts, *tc;
	struct rtl_error terr;
	int ret;

	if (!pp)
		return say(why, why_len, -ENOMEM, "ping-pong", NULL);
	pp->cfg = cfg;
	pp->udp = cfg->transport == BENCH_UDP;
	pp->h = rep->h[H_RT_FLOOR];
	ret = pp->udp ? udp_pair(&pp->srv_fd, &pp->cli_fd) : tcp_pair(&pp->srv_fd, &pp->cli_fd);
	if (ret < 0) {
		say(why, why_len, ret, pp->udp ? "loopback UDP pair" : "loopback TCP pair", NULL);
		goto out_free;
	}
	pp->warm_end = rtl_time_now() + BENCH_WARMUP_NS;
	pp->end = pp->warm_end + cfg->phase_ns;
	ret = spawn(&tc, "bench-pp-cli", cfg->prio_rx, cfg->cpu_rx, pp_client, pp, rt, &terr);
	if (ret < 0) {
		say(why, why_len, ret, "ping-pong client thread", terr.msg);
		goto out_close;
	}
	ret = spawn(&ts, "bench-pp-srv", cfg->prio_rx, cfg->cpu_sim, pp_server, pp, rt, &terr);
	if (ret < 0) {
		say(why, why_len, ret, "ping-pong server thread", terr.msg);
		shutdown(pp->cli_fd, SHUT_RDWR);
		rtl_thread_join(tc, NULL);
		goto out_close;
	}
	wait_until(pp->end, P_FLOOR, progress, pctx);
	rtl_thread_join(ts, NULL);
	/* TCP: the server's shutdown ended the client with an EOF. UDP: wake
	 * its blocked recv(2) here (shutdown of a datagram socket does). */
	if (pp->udp)
		shutdown(pp->cli_fd, SHUT_RDWR);
	rtl_thread_join(tc, NULL);
	rep->floor_sent = pp->sent;
	rep->floor_bad = pp->bad;
	ret = pp->err;
	if (ret < 0)
		say(why, why_len, ret, "ping-pong", NULL);
out_close:
	close(pp->srv_fd);
	close(pp->cli_fd);
out_free:
	free(pp);
	return ret;
}

/* ---- P_TIMER: cyclictest-style timer loop ---------------------------------------- */

struct timer_floor {
	int64_t period_ns, warm_end, end;
	struct rtl_hist *h;
	int err;
};

static void *timer_main(void *arg)
{
	struct timer_floor *tf = arg;
	struct rtl_timer tm;

	rtl_timer_init(&tm, rtl_time_now() + tf->period_ns, tf->period_ns, RTL_TIMER_SKIP);
	for (;;) {
		int64_t deadline = tm.deadline_ns, lat;

		if (deadline >= tf->end)
			break;
		lat = rtl_timer_wait(&tm);
		if (lat < 0) {
			tf->err = (int)lat;
			break;
		}
		if (deadline >= tf->warm_end)
			rtl_hist_record(tf->h, lat);
	}
	return NULL;
}

static int run_timer(const struct bench_cfg *cfg, struct bench_rep *rep, struct bench_rt *rt,
		     bench_progress_fn progress, void *pctx, char *why, size_t why_len)
{
	struct timer_floor tf = { .period_ns = cfg->period_ns, .h = rep->h[H_WAKE_FLOOR] };
	struct rtl_thread *th;
	struct rtl_error terr;
	int ret;

	tf.warm_end = rtl_time_now() + BENCH_WARMUP_NS;
	tf.end = tf.warm_end + cfg->phase_ns;
	ret = spawn(&th, "bench-timer", cfg->prio_worker, cfg->cpu_worker, timer_main, &tf, rt,
		    &terr);
	if (ret < 0)
		return say(why, why_len, ret, "timer thread", terr.msg);
	wait_until(tf.end, P_TIMER, progress, pctx);
	rtl_thread_join(th, NULL);
	if (tf.err < 0)
		return say(why, why_len, tf.err, "timer loop", NULL);
	return 0;
}

/* ---- P_OURS: the simulator and the loop ---------------------------------------------- */

/* The simulator's counters that P_OURS reads, whichever transport. */
struct sim_counts {
	uint64_t sent, echoes, echo_unmatched, overruns, sessions;
};

/* The simulator of P_OURS, whichever transport: rtde-sim's RTDE server
 * @srv or its UDP mode @udp (the other one NULL), whose loop sim_start()
 * runs on a thread of its own; and what P_OURS measures of it: its live
 * histograms (rtl_hist: safe to read while its thread writes them; @wake
 * NULL where the simulator keeps none) and its counters (sim_counts()). */
struct ours_sim {
	struct sim_server *srv;
	struct sim_udp *udp;
	const struct rtl_hist *echo, *wake;
	struct rtl_thread *th; /* NULL: not running */
};

static void *sim_main(void *arg)
{
	struct ours_sim *s = arg;

	return (void *)(intptr_t)(s->udp ? sim_udp_run(s->udp) : sim_server_run(s->srv));
}

static void sim_counts(const struct ours_sim *s, struct sim_counts *c)
{
	if (s->udp) {
		struct sim_udp_stats st;

		sim_udp_stats(s->udp, &st);
		*c = (struct sim_counts){ st.states_sent, st.echoes, st.echo_unmatched, st.overruns,
					  st.sessions };
	} else {
		struct sim_stats st;

		sim_server_stats(s->srv, &st);
		*c = (struct sim_counts){ st.data_sent, st.echoes, st.echo_unmatched, st.overruns,
					  st.connections };
	}
}

/* Run @s's loop on its own thread, CPU and priority. */
static int sim_start(struct ours_sim *s, const struct bench_cfg *cfg, struct bench_rt *rt,
		     char *why, size_t why_len)
{
	struct rtl_error err = { 0 };
	int ret = spawn(&s->th, "bench-sim", cfg->prio_rx, cfg->cpu_sim, sim_main, s, rt, &err);

	return ret < 0 ? say(why, why_len, ret, "simulator thread", err.msg) : 0;
}

/* Stop @s's loop, if it runs, and join its thread. Returns @ret, or the
 * loop's failure when @ret is 0. */
static int sim_finish(struct ours_sim *s, int ret, char *why, size_t why_len)
{
	void *sim_ret = NULL;

	if (!s->th)
		return ret;
	if (s->udp)
		sim_udp_stop(s->udp);
	else
		sim_server_stop(s->srv);
	rtl_thread_join(s->th, &sim_ret);
	s->th = NULL;
	if (ret == 0 && (intptr_t)sim_ret < 0)
		ret = say(why, why_len, (int)(intptr_t)sim_ret, "simulator loop", NULL);
	return ret;
}

/* ---- P_TEL's reader: what rtloop-view's sampler does ----------------------------------- */

#define TEL_READ_MS 10
#define TEL_BATCH 256

struct tel_reader {
	const char *name;
	pthread_t th;
	bool running;
	_Atomic bool quit;
	_Atomic uint64_t read, missed; /* read by the report thread */
};

/* Every TEL_READ_MS: the new records (in batches), the counters, and every
 * tenth time the histograms, as a viewer of the loop polls them. */
static void *tel_read_main(void *arg)
{
	struct tel_reader *tr = arg;
	struct rtl_telemetry_record *batch = calloc(TEL_BATCH, sizeof(*batch));
	uint64_t counters[RTL_TELEMETRY_MAX_COUNTERS];
	struct rtl_telemetry_reader *r = NULL;
	struct rtl_telemetry_info info;
	struct rtl_hist *h = calloc(1, sizeof(*h));
	unsigned round = 0;

	while (batch && h && !atomic_load(&tr->quit)) {
		int64_t next = rtl_time_now() + TEL_READ_MS * RTL_NS_PER_MS;
		int n;

		if (!r && rtl_telemetry_reader_create(&r, tr->name, NULL) == 0)
			rtl_telemetry_reader_seek(r, UINT64_MAX);
		if (r) {
			while ((n = rtl_telemetry_reader_read(r, batch, TEL_BATCH)) > 0)
				atomic_fetch_add(&tr->read, (uint64_t)n);
			rtl_telemetry_reader_counters(r, counters, RTL_TELEMETRY_MAX_COUNTERS);
			rtl_telemetry_reader_info(r, &info);
			if (round++ % 10 == 0)
				for (unsigned i = 0; i < info.n_hists; i++)
					rtl_telemetry_reader_hist(r, i, h);
			atomic_store(&tr->missed, rtl_telemetry_reader_missed(r));
		}
		rtl_time_sleep_until(next);
	}
	rtl_telemetry_reader_destroy(r);
	free(batch);
	free(h);
	return NULL;
}

/*
 * The part of P_OURS that does not depend on the transport: with the
 * simulator running, create and start the loop of @lc (transport, step and
 * user already set), warm up, then cut the measured window out of the live
 * histograms and counters into @rep; stop the loop again.
 */
static int measure_ours(const struct bench_cfg *cfg, struct rtl_loop_config *lc,
			const struct ours_sim *sim, struct bench_rep *rep, struct bench_rt *rt,
			bench_progress_fn progress, void *pctx, char *why, size_t why_len)
{
	/* P_TEL (lc->telemetry set) fills its own histograms. */
	bool tel = lc->telemetry != NULL;
	enum bench_phase ph = tel ? P_TEL : P_OURS;
	struct tel_reader reader = { .name = cfg->tel_name };
	uint64_t rec0 = 0, read0 = 0, missed0 = 0;
	struct rtl_loop *loop = NULL;
	struct rtl_error err = { 0 };
	struct rtl_hist *snap0 = calloc(H_COUNT, sizeof(*snap0));
	struct rtl_hist *snap1 = calloc(H_COUNT, sizeof(*snap1));
	const struct rtl_hist *live[H_COUNT] = { 0 };
	struct sim_counts ss0, ss1;
	struct rtl_loop_counters ls0 = { .size = sizeof(ls0) }, ls1 = { .size = sizeof(ls1) };
	int64_t warm_end;
	int ret;

	if (!snap0 || !snap1) {
		ret = say(why, why_len, -ENOMEM, "simulator phase", NULL);
		goto out;
	}
	lc->rt_mode = RTL_LOOP_RT_DEGRADE;
	lc->rx_priority = cfg->prio_rx;
	lc->worker_priority = cfg->prio_worker;
	lc->pin_rx = cfg->cpu_rx >= 0;
	lc->rx_cpu = cfg->cpu_rx;
	lc->pin_worker = cfg->cpu_worker >= 0;
	lc->worker_cpu = cfg->cpu_worker;
	lc->spin_ns = cfg->spin_ns;
	lc->spin_lead_ns = cfg->spin_lead_ns;
	lc->inline_step = cfg->mode == BENCH_MODE_INLINE;
	lc->every_frame = true; /* every package is answered, so every one is measured */
	ret = rtl_loop_create(&loop, lc, &err);
	if (ret < 0) {
		say(why, why_len, ret, "loop", err.msg);
		goto out;
	}
	ret = rtl_loop_start(loop, &err);
	if (ret < 0) {
		say(why, why_len, ret, "loop start", err.msg);
		goto out;
	}
	if (rtl_loop_rt_notes(loop)[0] && !rt->fifo_degraded) {
		snprintf(rt->degraded_note, sizeof(rt->degraded_note), "loop: %s",
			 rtl_loop_rt_notes(loop));
		rt->degraded_note[strcspn(rt->degraded_note, "\n")] = '\0';
		rt->fifo_degraded = true;
	}

	/* The reader, unprioritised, as a viewer would be. */
	if (tel) {
		ret = pthread_create(&reader.th, NULL, tel_read_main, &reader);
		if (ret) {
			ret = say(why, why_len, -ret, "telemetry reader thread", NULL);
			goto out;
		}
		reader.running = true;
	}

	/* Warm up, then cut the window out of the live histograms. */
	if (tel) {
		live[H_RT_TEL] = sim->echo;
		live[H_RX_TO_STEP_TEL] = rtl_loop_hist(loop, RTL_LOOP_H_RX_TO_STEP);
		live[H_STEP_TEL] = rtl_loop_hist(loop, RTL_LOOP_H_STEP);
		live[H_STEP_TO_SEND_TEL] = rtl_loop_hist(loop, RTL_LOOP_H_STEP_TO_SEND);
	} else {
		live[H_RT_OURS] = sim->echo;
		live[H_SIM_WAKE] = sim->wake;
		live[H_WAKE_OURS] = rtl_loop_hist(loop, RTL_LOOP_H_WAKE);
		live[H_RX_TO_STEP] = rtl_loop_hist(loop, RTL_LOOP_H_RX_TO_STEP);
		live[H_STEP] = rtl_loop_hist(loop, RTL_LOOP_H_STEP);
		live[H_STEP_TO_SEND] = rtl_loop_hist(loop, RTL_LOOP_H_STEP_TO_SEND);
		live[H_INTERARRIVAL] = rtl_loop_hist(loop, RTL_LOOP_H_INTERARRIVAL);
	}
	warm_end = rtl_time_now() + BENCH_WARMUP_NS;
	wait_until(warm_end, ph, progress, pctx);
	for (int i = 0; i < H_COUNT; i++)
		if (live[i])
			rtl_hist_snapshot(&snap0[i], live[i]);
	sim_counts(sim, &ss0);
	rtl_loop_stats(loop, &ls0);
	if (tel) {
		rec0 = rtl_telemetry_records(lc->telemetry);
		read0 = atomic_load(&reader.read);
		missed0 = atomic_load(&reader.missed);
	}
	wait_until(warm_end + cfg->phase_ns, ph, progress, pctx);
	for (int i = 0; i < H_COUNT; i++)
		if (live[i])
			rtl_hist_snapshot(&snap1[i], live[i]);
	sim_counts(sim, &ss1);
	rtl_loop_stats(loop, &ls1);
	for (int i = 0; i < H_COUNT; i++)
		if (live[i])
			bench_hist_diff(rep->h[i], &snap1[i], &snap0[i]);
	if (tel) {
		rep->tel_records = rtl_telemetry_records(lc->telemetry) - rec0;
		rep->tel_read = atomic_load(&reader.read) - read0;
		rep->tel_missed = atomic_load(&reader.missed) - missed0;
		ret = 0;
		if (ss1.sessions != 1) {
			snprintf(why, why_len, "the loop reconnected during the measurement");
			ret = -ECONNRESET;
		}
		goto out;
	}

	rep->sim_sent = ss1.sent - ss0.sent;
	rep->echoes = ss1.echoes - ss0.echoes;
	rep->echo_unmatched = ss1.echo_unmatched - ss0.echo_unmatched;
	rep->sim_overruns = ss1.overruns - ss0.overruns;
	rep->frames = ls1.frames - ls0.frames;
	rep->steps = ls1.steps - ls0.steps;
	rep->worker_skipped = ls1.worker_skipped - ls0.worker_skipped;
	rep->ring_full = ls1.ring_full - ls0.ring_full;
	rep->would_block = ls1.would_block - ls0.would_block;
	rep->ctrl_skipped = ls1.ctrl_skipped - ls0.ctrl_skipped;
	ret = 0;
	if (ss1.sessions != 1) {
		snprintf(why, why_len, "the loop reconnected during the measurement");
		ret = -ECONNRESET;
	}

out:
	if (reader.running) {
		atomic_store(&reader.quit, true);
		pthread_join(reader.th, NULL);
	}
	if (loop) {
		rtl_loop_stop(loop);
		rtl_loop_join(loop);
		rtl_loop_destroy(loop);
	}
	free(snap0);
	free(snap1);
	return ret;
}

/* ---- P_OURS over RTDE: rtde-sim's server and the loop ---------------------------------- */

struct ours {
	struct rtl_rtde_handle ts, echo;
};

static void on_connected(struct rtl_rtde_transport *t, void *user)
{
	struct ours *o = user;

	o->ts = rtl_rtde_transport_output_handle(t, "timestamp");
	o->echo = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ECHO);
}

/* The step: echo the package's timestamp. RT-safe. */
static int echo_step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct ours *o = user;
	struct rtl_rtde_frame st = rtl_rtde_loop_state(f);
	struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, 0);

	rtl_rtde_frame_set_double(cmd, o->echo, rtl_rtde_frame_get_double(&st, o->ts));
	return 0;
}

static int run_ours_rtde(const struct bench_cfg *cfg, struct rtl_telemetry *tel,
			 struct bench_rep *rep, struct bench_rt *rt, bench_progress_fn progress,
			 void *pctx, char *why, size_t why_len)
{
	struct sim_opts so;
	struct sim_server_opts sv = { .port = 0 };
	struct sim_server *srv = NULL;
	struct rtl_rtde_transport *tr = NULL;
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	struct ours_sim os = { 0 };
	struct ours o = { 0 };
	bool tr_ready = false;
	int ret;

	/* The simulator, on its own thread, CPU and priority. */
	sim_opts_default(&so);
	so.profile = cfg->profile;
	so.echo_register = RTL_RTDE_CMD_REG_ECHO;
	ret = sim_server_create(&srv, &so, &sv);
	if (ret < 0) {
		say(why, why_len, ret, "simulator", NULL);
		goto out;
	}
	os.srv = srv;
	os.echo = sim_server_echo_hist(srv);
	os.wake = sim_server_wake_hist(srv);
	ret = sim_start(&os, cfg, rt, why, why_len);
	if (ret < 0)
		goto out;

	/* The loop: RTDE transport, echo step. */
	tc.host = "127.0.0.1";
	tc.port = sim_server_port(srv);
	cc.outputs = cfg->outputs;
	cc.inputs[0] = RTL_RTDE_CMD_ECHO_RECIPE;
	cc.frequency = cfg->rate_hz;
	tc.connected = on_connected;
	tc.user = &o;
	ret = rtl_rtde_transport_create(&tr, &tc, &err);
	if (ret < 0) {
		say(why, why_len, ret, "RTDE transport", err.msg);
		goto out;
	}
	tr_ready = true;
	/* P_TEL: the outputs and the echo the step writes, as an app would. */
	if (tel) {
		ret = rtl_rtde_transport_telemetry(tr, tel, cfg->outputs, RTL_RTDE_CMD_FIELD_ECHO,
						   &err);
		if (ret < 0) {
			say(why, why_len, ret, "telemetry", err.msg);
			goto out;
		}
	}
	lc.telemetry = tel;
	lc.transport = rtl_rtde_transport_base(tr);
	lc.step = echo_step;
	lc.user = &o;
	ret = measure_ours(cfg, &lc, &os, rep, rt, progress, pctx, why, why_len);

out:
	ret = sim_finish(&os, ret, why, why_len);
	if (tr_ready)
		rtl_rtde_transport_destroy(tr);
	sim_server_destroy(srv);
	return ret;
}

/* ---- P_OURS over UDP: rtde-sim's UDP mode and the loop ---------------------------------- */

/*
 * The step: answer every state with a command datagram (a STOP, which
 * keeps a robot at rest where it is) whose echo fields name the state.
 * The transport's send() writes the echo fields itself from the newest
 * state received, which with every_frame and one state per period is this
 * one; writing them here too keeps the step self-explanatory. RT-safe.
 */
static int udp_echo_step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	const struct rtl_udp_frame *st = rtl_udp_loop_frame(f);
	struct rtl_udp_cmd *cmd = rtl_loop_commands(loop);

	(void)user;
	cmd->mode = RTL_UDP_MODE_STOP;
	cmd->echo_seq = st->seq;
	cmd->echo_ns = st->send_ns;
	return 0;
}

static int run_ours_udp(const struct bench_cfg *cfg, struct rtl_telemetry *tel,
			struct bench_rep *rep, struct bench_rt *rt, bench_progress_fn progress,
			void *pctx, char *why, size_t why_len)
{
	struct sim_udp_opts so;
	struct sim_udp *sim = NULL;
	struct rtl_udp_transport *tr = NULL;
	struct rtl_udp_transport_config tc = { .size = sizeof(tc) };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error err = { 0 };
	struct ours_sim os = { 0 };
	bool tr_ready = false;
	int ret;

	/* rtde-sim --udp, on its own thread, CPU and priority. */
	sim_udp_opts_default(&so);
	so.port = 0;
	so.period_ns = cfg->period_ns;
	ret = sim_udp_create(&sim, &so);
	if (ret < 0) {
		say(why, why_len, ret, "UDP simulator", NULL);
		goto out;
	}
	/* The UDP mode keeps no wake-up histogram. */
	os.udp = sim;
	os.echo = sim_udp_echo_hist(sim);
	ret = sim_start(&os, cfg, rt, why, why_len);
	if (ret < 0)
		goto out;

	/* The loop: UDP transport, echo step. */
	tc.host = "127.0.0.1";
	tc.port = sim_udp_port(sim);
	tc.period_ns = cfg->period_ns;
	ret = rtl_udp_transport_create(&tr, &tc, &err);
	if (ret < 0) {
		say(why, why_len, ret, "UDP transport", err.msg);
		goto out;
	}
	tr_ready = true;
	/* P_TEL: the joints, the TCP and the command, as an app would. */
	if (tel) {
		ret = rtl_udp_transport_telemetry(
			tr, tel, "actual_joint_position,actual_tcp_position", true, &err);
		if (ret < 0) {
			say(why, why_len, ret, "telemetry", err.msg);
			goto out;
		}
	}
	lc.telemetry = tel;
	lc.transport = rtl_udp_transport_base(tr);
	lc.step = udp_echo_step;
	ret = measure_ours(cfg, &lc, &os, rep, rt, progress, pctx, why, why_len);

out:
	ret = sim_finish(&os, ret, why, why_len);
	if (tr_ready)
		rtl_udp_transport_destroy(tr);
	sim_udp_destroy(sim);
	return ret;
}

/* P_OURS, or P_TEL with @tel_on: a telemetry created for the phase and
 * destroyed after it (after the loop and the transport). */
static int run_ours(const struct bench_cfg *cfg, bool tel_on, struct bench_rep *rep,
		    struct bench_rt *rt, bench_progress_fn progress, void *pctx, char *why,
		    size_t why_len)
{
	struct rtl_telemetry_config tc = { .size = sizeof(tc),
					   .name = cfg->tel_name,
					   .label = "rtloop-bench, P_TEL",
					   .replace = true };
	struct rtl_telemetry *tel = NULL;
	struct rtl_error err = { 0 };
	int ret;

	if (tel_on) {
		ret = rtl_telemetry_create(&tel, &tc, &err);
		if (ret < 0)
			return say(why, why_len, ret, "telemetry", err.msg);
	}
	if (cfg->transport == BENCH_UDP)
		ret = run_ours_udp(cfg, tel, rep, rt, progress, pctx, why, why_len);
	else
		ret = run_ours_rtde(cfg, tel, rep, rt, progress, pctx, why, why_len);
	rtl_telemetry_destroy(tel);
	return ret;
}

int bench_run_phase(const struct bench_cfg *cfg, enum bench_phase p, struct bench_rep *rep,
		    struct bench_rt *rt, bench_progress_fn progress, void *pctx, char *why,
		    size_t why_len)
{
	switch (p) {
	case P_FLOOR:
		return run_floor(cfg, rep, rt, progress, pctx, why, why_len);
	case P_OURS:
	case P_TEL:
		return run_ours(cfg, p == P_TEL, rep, rt, progress, pctx, why, why_len);
	case P_TIMER:
		return run_timer(cfg, rep, rt, progress, pctx, why, why_len);
	default:
		return -EINVAL;
	}
}

/* ---- sizes ------------------------------------------------------------------------- */

int bench_package_size(const char *names, bool output, size_t *out)
{
	struct rtl_rtde_recipe *r = calloc(1, sizeof(*r));
	struct rtl_rtde_recipe_opts ro = {
		.size = sizeof(ro),
		.dir = output ? RTL_RTDE_RECIPE_OUTPUT : RTL_RTDE_RECIPE_INPUT,
	};
	int ret;

	if (!r)
		return -ENOMEM;
	ret = rtl_rtde_recipe_from_list(r, &ro, names, NULL);
	if (ret >= 0) {
		/* header (size, type), recipe id (protocol 2), the fields */
		*out = 3 + 1 + r->wire_size;
		ret = 0;
	}
	free(r);
	return ret;
}

/* ---- core-to-core probe --------------------------------------------------------------- */

#define PROBE_ROUNDS 20000
#define PROBE_RUNS 5
#define PROBE_LIMIT_NS (200 * RTL_NS_PER_MS)

struct probe {
	_Alignas(64) _Atomic uint64_t line;
	int64_t end;
	double ns; /* result of the initiator; NaN when it ran out of time */
};

/* The answering side: wait for an odd value, make it even. Bounded by the
 * probe's end time (read every few thousand spins, so the clock does not
 * slow the probe down), so a descheduled partner cannot hang it. */
static void *probe_echo(void *arg)
{
	struct probe *pb = arg;
	uint64_t want = 1;

	for (int i = 0; i < PROBE_ROUNDS; i++, want += 2) {
		unsigned spins = 0;

		while (atomic_load_explicit(&pb->line, memory_order_acquire) != want)
			if (++spins % 4096 == 0 && rtl_time_now() > pb->end)
				return NULL;
		atomic_store_explicit(&pb->line, want + 1, memory_order_release);
	}
	return NULL;
}

/* The initiating side: write an odd value, wait for the even answer. */
static void *probe_init(void *arg)
{
	struct probe *pb = arg;
	int64_t t0 = rtl_time_now();
	uint64_t v = 0;

	for (int i = 0; i < PROBE_ROUNDS; i++) {
		unsigned spins = 0;

		atomic_store_explicit(&pb->line, ++v, memory_order_release);
		++v;
		while (atomic_load_explicit(&pb->line, memory_order_acquire) != v)
			if (++spins % 4096 == 0 && rtl_time_now() > pb->end)
				return NULL;
	}
	pb->ns = (double)(rtl_time_now() - t0) / (2.0 * PROBE_ROUNDS);
	return NULL;
}

/* One probe run between threads on @a and @b (both created here, so the
 * caller's affinity is untouched): ns per one-way transfer, or NaN. */
static double probe_once(int a, int b)
{
	struct probe *pb = aligned_alloc(64, sizeof(*pb));
	struct rtl_thread_attr ae = {
		.size = sizeof(ae), .name = "bench-probe-b", .policy = SCHED_OTHER, .cpu = b
	};
	struct rtl_thread_attr ai = {
		.size = sizeof(ai), .name = "bench-probe-a", .policy = SCHED_OTHER, .cpu = a
	};
	struct rtl_thread *te, *ti;
	double ns = NAN;

	if (!pb)
		return NAN;
	atomic_store(&pb->line, 0);
	pb->end = rtl_time_now() + PROBE_LIMIT_NS;
	pb->ns = NAN;
	if (rtl_thread_create(&te, &ae, probe_echo, pb, NULL) == 0) {
		if (rtl_thread_create(&ti, &ai, probe_init, pb, NULL) == 0) {
			rtl_thread_join(ti, NULL);
			ns = pb->ns;
		}
		rtl_thread_join(te, NULL);
	}
	free(pb);
	return ns;
}

double bench_probe(int a, int b)
{
	double runs[PROBE_RUNS];

	if (a == b)
		return NAN;
	for (int r = 0; r < PROBE_RUNS; r++)
		runs[r] = probe_once(a, b);
	/* The median of the runs that finished (NaN: none did). */
	return bench_stat3(runs, PROBE_RUNS).med;
}
