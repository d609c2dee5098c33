// SPDX-License-Identifier: MIT
/*
 * The socket driver of rtde-sim (see server.h for the design).
 *
 * One loop iteration: wait in epoll_wait (for a client, the listener, the
 * cycle timer or the stop event), read what came in and feed it to the
 * sessions, run every control cycle that is due, write what the sessions
 * queued, close the connections that asked for it, re-arm the timer at the
 * next cycle's wake time. Reading before the cycle keeps the controller's
 * promise that inputs are processed in the cycle they arrive in.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <rtloop/json.h>
#include <rtloop/time.h>

#include "driver.h"
#include "server.h"
#include "timer.h"

/* epoll tags beyond the session ids: the RTDE listener, the timer, the
 * stop event, the service listeners, then the service connections. */
enum {
	TAG_LISTEN = SIM_MAX_SESSIONS,
	TAG_TIMER,
	TAG_STOP,
	TAG_SVC_LISTEN,
	TAG_SVC_CONN = TAG_SVC_LISTEN + SIM_PORT_COUNT,
	TAG_END = TAG_SVC_CONN + SIM_MAX_CONNS,
};

#define READ_CHUNK 65536
/* Reads per readable client per iteration, so one chatty client cannot
 * hold up the cycle. */
#define READS_PER_EVENT 4

struct conn {
	int fd;
	bool want_out; /* EPOLLOUT is registered */
};

/* A service connection, accepted on a port or made for a program
 * (outgoing): its socket, its callbacks and what the service sees. */
struct svc_conn {
	int fd; /* -1: free */
	bool want_out;
	const struct sim_port_ops *ops;
	int dial;	  /* outgoing: its sim->dials[] index; -1 otherwise */
	bool connecting;  /* outgoing: connect() under way */
	int64_t deadline; /* ... until then */
	struct sim_conn c;
};

struct sim_server {
	struct sim *sim;
	struct sim_server_opts opts;
	struct sim_driver drv; /* epoll, timer, stop, thread */
	int listen_fd;
	uint16_t port;
	struct conn conns[SIM_MAX_SESSIONS];
	int svc_listen_fd[SIM_PORT_COUNT];
	uint16_t svc_port[SIM_PORT_COUNT];
	struct svc_conn svc[SIM_MAX_CONNS];
	int64_t armed; /* wake time the timer is armed for */
	uint8_t rx[READ_CHUNK];

	pthread_mutex_t lock; /* guards snap and panel */
	struct sim_stats snap;
	struct sim_panel panel; /* the dashboard's state, for the report */
};

static int ep_ctl(struct sim_server *srv, int op, int fd, uint32_t events, uint64_t tag)
{
	return sim_driver_watch(&srv->drv, op, fd, events, tag);
}

/* Listen on @addr's address, port @port (0: ephemeral). */
static int listen_on(struct sim_server *srv, const struct sockaddr_in *addr, uint16_t port,
		     int *fd_out, uint16_t *port_out)
{
	struct sockaddr_in sa = *addr;
	socklen_t salen = sizeof(sa);
	int one = 1, fd;

	(void)srv;
	sa.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &salen)) {
		int err = -errno;

		close(fd);
		return err;
	}
	*fd_out = fd;
	*port_out = ntohs(sa.sin_port);
	return 0;
}

int sim_server_create(struct sim_server **out, const struct sim_opts *sim_opts,
		      const struct sim_server_opts *opts)
{
	struct sim_server *srv;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	int one = 1, err;

	if (!out)
		return -EINVAL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->listen_fd = -1;
	sim_driver_init(&srv->drv);
	for (int i = 0; i < SIM_MAX_SESSIONS; i++)
		srv->conns[i].fd = -1;
	for (int i = 0; i < SIM_PORT_COUNT; i++)
		srv->svc_listen_fd[i] = -1;
	for (int i = 0; i < SIM_MAX_CONNS; i++) {
		srv->svc[i].fd = -1;
		srv->svc[i].dial = -1;
	}
	pthread_mutex_init(&srv->lock, NULL);
	if (opts)
		srv->opts = *opts;
	if (!srv->opts.bind)
		srv->opts.bind = "127.0.0.1";
	if (srv->opts.status_interval_ns <= 0)
		srv->opts.status_interval_ns = 500 * RTL_NS_PER_MS;
	if (srv->opts.duration_s < 0 || srv->opts.sndbuf < 0) {
		err = -EINVAL;
		goto err_close;
	}
	srv->sim = sim_new(sim_opts, rtl_time_now(), &err);
	if (!srv->sim)
		goto err_close;
	srv->panel = srv->sim->panel;

	if (inet_pton(AF_INET, srv->opts.bind, &sa.sin_addr) != 1) {
		err = -EINVAL;
		goto err_close;
	}
	sa.sin_port = htons(srv->opts.port);
	srv->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0)
		goto err_errno;
	setsockopt(srv->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(srv->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(srv->listen_fd, 16) ||
	    getsockname(srv->listen_fd, (struct sockaddr *)&sa, &salen))
		goto err_errno;
	srv->port = ntohs(sa.sin_port);

	if ((err = sim_driver_open(&srv->drv, TAG_TIMER, TAG_STOP)) ||
	    (err = ep_ctl(srv, EPOLL_CTL_ADD, srv->listen_fd, EPOLLIN, TAG_LISTEN)))
		goto err_close;
	for (int k = 0; k < SIM_PORT_COUNT; k++) {
		int32_t want = srv->opts.service_port[k];

		bool psx = srv->sim->opts.profile == SIM_PROFILE_POLYSCOPE_X;

		/* PolyScope X has the Robot API instead of the dashboard. */
		if (want < 0 || want > 65535 || (k == SIM_PORT_DASHBOARD && psx) ||
		    (k == SIM_PORT_ROBOT_API && !psx))
			continue;
		err = listen_on(srv, &sa, (uint16_t)want, &srv->svc_listen_fd[k],
				&srv->svc_port[k]);
		if (!err)
			err = ep_ctl(srv, EPOLL_CTL_ADD, srv->svc_listen_fd[k], EPOLLIN,
				     TAG_SVC_LISTEN + (uint64_t)k);
		if (err)
			goto err_close;
	}
	*out = srv;
	return 0;

err_errno:
	err = -errno;
err_close:
	sim_server_destroy(srv);
	return err;
}

uint16_t sim_server_port(const struct sim_server *srv)
{
	return srv->port;
}

uint16_t sim_server_service_port(const struct sim_server *srv, enum sim_port_kind k)
{
	return (unsigned)k < SIM_PORT_COUNT ? srv->svc_port[k] : 0;
}

struct sim *sim_server_sim(struct sim_server *srv)
{
	return srv->sim;
}

/* ---- connections ---------------------------------------------------------------- */

static void conn_close(struct sim_server *srv, struct sim_session *s)
{
	struct conn *c = &srv->conns[s->id];

	if (c->fd >= 0) {
		if (s->close == SIM_CLOSE_RESET) {
			/* SO_LINGER 0: close() aborts with RST, as a
			 * connection reset mid-stream looks to the client. */
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			srv->sim->stats.resets++;
		}
		epoll_ctl(srv->drv.epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
	c->want_out = false;
	sim_session_close(srv->sim, s);
}

static void accept_all(struct sim_server *srv, int64_t now)
{
	int one = 1;

	for (;;) {
		struct sim_session *s;
		int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a connection that died meanwhile */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (srv->opts.sndbuf)
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &srv->opts.sndbuf,
				   sizeof(srv->opts.sndbuf));
		s = sim_session_open(srv->sim, now);
		if (!s) {
			close(fd);
			continue;
		}
		srv->conns[s->id].fd = fd;
		if (ep_ctl(srv, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP, s->id)) {
			conn_close(srv, s);
			continue;
		}
	}
}

/* One receive: the bytes read, 0 when nothing is there now, -1 when the
 * client closed or the connection is gone. */
static ssize_t recv_some(int fd, void *buf, size_t cap)
{
	ssize_t n = recv(fd, buf, cap, 0);

	if (n > 0)
		return n;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return -1;
}

/* Read what the client sent; false when the connection is gone. */
static bool conn_read(struct sim_server *srv, struct sim_session *s, int64_t now)
{
	int fd = srv->conns[s->id].fd;

	for (int i = 0; i < READS_PER_EVENT; i++) {
		ssize_t n = recv_some(fd, srv->rx, sizeof(srv->rx));

		if (n <= 0)
			return n == 0;
		sim_session_feed(srv->sim, s, srv->rx, (size_t)n, now);
		if ((size_t)n < sizeof(srv->rx))
			break;
	}
	return true;
}

/* One non-blocking send: the bytes taken, 0 when the socket is full, -1
 * when the connection is gone. */
static ssize_t send_some(int fd, const void *p, size_t n)
{
	for (;;) {
		ssize_t r = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	}
}

/* Write what the session queued, as far as the socket takes it. */
static bool conn_flush(struct sim_server *srv, struct sim_session *s)
{
	struct conn *c = &srv->conns[s->id];
	const uint8_t *p;
	size_t len;
	bool more;

	while ((len = sim_session_pending(s, &p)) > 0) {
		size_t piece = len;
		ssize_t n;

		if (srv->sim->opts.faults.fragment)
			piece = sim_fragment_len(srv->sim, len);
		n = send_some(c->fd, p, piece);
		if (n < 0)
			return false;
		if (n == 0)
			break;
		if (srv->sim->opts.faults.fragment)
			srv->sim->stats.fragments++;
		sim_session_consumed(s, (size_t)n);
	}
	more = s->out.len > 0;
	if (more != c->want_out) {
		ep_ctl(srv, EPOLL_CTL_MOD, c->fd, EPOLLIN | EPOLLRDHUP | (more ? EPOLLOUT : 0),
		       s->id);
		c->want_out = more;
	}
	return true;
}

/* ---- service connections (ports.h) ------------------------------------------------- */

/* Close @sc; an outgoing connection's close() learns sc->c.error, unless
 * the controller dropped it. */
static void svc_close(struct sim_server *srv, struct svc_conn *sc)
{
	const struct sim_port_ops *ops = sc->ops;
	bool tell = true;

	if (sc->fd < 0)
		return;
	if (sc->dial >= 0) {
		struct sim_dial *d = &srv->sim->dials[sc->dial];

		/* Free before the callback, so that it may dial again. */
		tell = d->state != SIM_DIAL_DROP;
		d->state = SIM_DIAL_FREE;
		d->slot = -1;
	}
	if (tell && ops && ops->close)
		ops->close(srv->sim, &sc->c);
	epoll_ctl(srv->drv.epoll_fd, EPOLL_CTL_DEL, sc->fd, NULL);
	close(sc->fd);
	free(sc->c.out);
	sc->fd = -1;
	sc->want_out = false;
	sc->ops = NULL;
	sc->dial = -1;
	sc->connecting = false;
	memset(&sc->c, 0, sizeof(sc->c));
}

static void svc_accept(struct sim_server *srv, enum sim_port_kind k, int64_t now)
{
	const struct sim_port_ops *ops = sim_port_ops(k);
	int one = 1;

	for (;;) {
		int fd = accept4(srv->svc_listen_fd[k], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct svc_conn *sc = NULL;

		if (fd < 0)
			return;
		for (unsigned i = 0; i < SIM_MAX_CONNS && !sc; i++)
			if (srv->svc[i].fd < 0)
				sc = &srv->svc[i];
		if (!sc) {
			close(fd); /* all slots taken */
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		sc->fd = fd;
		sc->ops = ops;
		sc->dial = -1;
		sc->c = (struct sim_conn){
			.kind = k,
			.id = (unsigned)(sc - srv->svc),
			.opened_ns = now,
		};
		if (ep_ctl(srv, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP, TAG_SVC_CONN + sc->c.id) ||
		    (ops && ops->open && ops->open(srv->sim, &sc->c, now) < 0)) {
			svc_close(srv, sc);
			continue;
		}
	}
}

/* Write what the service queued; false when the connection is gone. */
static bool svc_flush(struct sim_server *srv, struct svc_conn *sc)
{
	struct sim_conn *c = &sc->c;
	bool more;

	while (c->len > c->off) {
		ssize_t n = send_some(sc->fd, c->out + c->off, c->len - c->off);

		if (n < 0)
			return false;
		if (n == 0)
			break;
		c->off += (size_t)n;
		c->bytes_out += (uint64_t)n;
	}
	if (c->off == c->len)
		c->off = c->len = 0;
	more = c->len > c->off;
	if (more != sc->want_out) {
		ep_ctl(srv, EPOLL_CTL_MOD, sc->fd, EPOLLIN | EPOLLRDHUP | (more ? EPOLLOUT : 0),
		       TAG_SVC_CONN + c->id);
		sc->want_out = more;
	}
	return true;
}

/* Read what the client sent; false when the connection is gone (why in
 * sc->c.error: 0 for an orderly close by the peer). */
static bool svc_read(struct sim_server *srv, struct svc_conn *sc, int64_t now)
{
	const struct sim_port_ops *ops = sc->ops;

	for (int i = 0; i < READS_PER_EVENT; i++) {
		ssize_t n = recv(sc->fd, srv->rx, sizeof(srv->rx), 0);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return true;
		if (n <= 0) {
			sc->c.error = n < 0 ? -errno : 0;
			return false;
		}
		sc->c.bytes_in += (uint64_t)n;
		if (ops && ops->feed)
			ops->feed(srv->sim, &sc->c, srv->rx, (size_t)n, now);
		if ((size_t)n < sizeof(srv->rx))
			break;
	}
	return true;
}

/* ---- outgoing connections (ports.h) ------------------------------------------------ */

/* The request @d could not be made: tell its ops, free the slot. */
static void dial_failed(struct sim_server *srv, struct sim_dial *d, int err)
{
	struct sim_conn c = { .kind = SIM_PORT_COUNT, .outgoing = true, .error = err };
	const struct sim_port_ops *ops = d->ops;

	c.state = d->ctx;
	d->state = SIM_DIAL_FREE;
	if (ops->close)
		ops->close(srv->sim, &c);
}

/* The connection is made: from now on it is a service connection. */
static void dial_opened(struct sim_server *srv, struct svc_conn *sc, int64_t now)
{
	int one = 1;

	sc->connecting = false;
	setsockopt(sc->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ep_ctl(srv, EPOLL_CTL_MOD, sc->fd, EPOLLIN | EPOLLRDHUP, TAG_SVC_CONN + sc->c.id) ||
	    (sc->ops->open && sc->ops->open(srv->sim, &sc->c, now) < 0)) {
		sc->c.error = -EIO;
		svc_close(srv, sc);
	}
}

/* Make the connections the controller queued; close those it dropped. */
static void dial_all(struct sim_server *srv, int64_t now)
{
	for (int i = 0; i < SIM_MAX_DIALS; i++) {
		struct sim_dial *d = &srv->sim->dials[i];
		struct sockaddr_in sa = { .sin_family = AF_INET };
		struct svc_conn *sc = NULL;
		int fd;

		if (d->state == SIM_DIAL_DROP && d->slot >= 0) {
			svc_close(srv, &srv->svc[d->slot]); /* silent: dropped */
			continue;
		}
		if (d->state != SIM_DIAL_QUEUED)
			continue;
		for (unsigned k = 0; k < SIM_MAX_CONNS && !sc; k++)
			if (srv->svc[k].fd < 0)
				sc = &srv->svc[k];
		if (!sc) {
			dial_failed(srv, d, -EMFILE);
			continue;
		}
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			dial_failed(srv, d, -errno);
			continue;
		}
		sa.sin_addr.s_addr = d->addr;
		sa.sin_port = htons(d->port);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
			int err = -errno;

			close(fd);
			dial_failed(srv, d, err);
			continue;
		}
		sc->fd = fd;
		sc->ops = d->ops;
		sc->dial = i;
		sc->connecting = true;
		sc->deadline = now + SIM_DIAL_TIMEOUT_NS;
		sc->c = (struct sim_conn){
			.kind = SIM_PORT_COUNT,
			.id = (unsigned)(sc - srv->svc),
			.opened_ns = now,
			.state = d->ctx,
			.outgoing = true,
		};
		d->state = SIM_DIAL_ACTIVE;
		d->slot = (int)sc->c.id;
		/* Writable once the connect() has an answer, either way. */
		if (ep_ctl(srv, EPOLL_CTL_ADD, fd, EPOLLOUT, TAG_SVC_CONN + sc->c.id)) {
			sc->c.error = -errno;
			svc_close(srv, sc);
		}
	}
}

/* The answer to an outgoing connect(): made, or why not. */
static void dial_answer(struct sim_server *srv, struct svc_conn *sc, int64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(sc->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err) {
		sc->c.error = -err;
		svc_close(srv, sc);
		return;
	}
	dial_opened(srv, sc, now);
}

static void publish_stats(struct sim_server *srv, bool panel);

/* Every service connection: tick, then (the report published first, so
 * that it already shows what an answer says was done) write, and close
 * what asked for it. */
static void svc_service(struct sim_server *srv, int64_t now)
{
	dial_all(srv, now);
	for (unsigned i = 0; i < SIM_MAX_CONNS; i++) {
		struct svc_conn *sc = &srv->svc[i];

		if (sc->fd < 0)
			continue;
		if (sc->connecting) {
			if (now >= sc->deadline) {
				sc->c.error = -ETIMEDOUT;
				svc_close(srv, sc);
			}
			continue;
		}
		if (sc->ops && sc->ops->tick && !sc->c.close)
			sc->ops->tick(srv->sim, &sc->c, now);
	}
	publish_stats(srv, true);
	for (unsigned i = 0; i < SIM_MAX_CONNS; i++) {
		struct svc_conn *sc = &srv->svc[i];

		if (sc->fd < 0 || sc->connecting)
			continue;
		if (!svc_flush(srv, sc) || (sc->c.close && sc->c.len == sc->c.off))
			svc_close(srv, sc);
	}
}

static void arm_timer(struct sim_server *srv)
{
	sim_timer_arm(srv->drv.timer_fd, &srv->armed, sim_next_wake(srv->sim));
}

/* The report's snapshot, for other threads; @panel: the dashboard's
 * state too (it changes only in the services' turn, not at a send). */
static void publish_stats(struct sim_server *srv, bool panel)
{
	struct sim_stats st;

	sim_get_stats(srv->sim, &st);
	pthread_mutex_lock(&srv->lock);
	srv->snap = st;
	if (panel)
		srv->panel = srv->sim->panel;
	pthread_mutex_unlock(&srv->lock);
}

/* ---- the loop ----------------------------------------------------------------------- */

int sim_server_run(struct sim_server *srv)
{
	struct sim *sim = srv->sim;
	struct epoll_event evs[TAG_END];
	int64_t now = rtl_time_now(), end = 0, next_status;
	bool quit = false;
	int err = 0;

	/* A sleeping server thread is woken on time, not up to 50 us late. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	/* Cycle 0 is due one period from now (the controller was idle). */
	if (sim->cycle == 0) {
		sim->t0 = now + sim->period_ns;
		sim->wake_known = false;
	}
	if (srv->opts.duration_s > 0)
		end = now + llround(srv->opts.duration_s * 1e9);
	next_status = now + srv->opts.status_interval_ns;
	srv->armed = -1;

	while (!quit) {
		int timeout_ms, n, ran;

		arm_timer(srv);
		now = rtl_time_now();
		timeout_ms = (int)((next_status - now) / RTL_NS_PER_MS) + 1;
		if (timeout_ms < 0)
			timeout_ms = 0;
		n = epoll_wait(srv->drv.epoll_fd, evs, (int)(sizeof(evs) / sizeof(evs[0])),
			       timeout_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		now = rtl_time_now();
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64, dummy;
			struct sim_session *s;

			if (tag == TAG_LISTEN) {
				accept_all(srv, now);
			} else if (tag == TAG_TIMER) {
				if (read(srv->drv.timer_fd, &dummy, sizeof(dummy)) < 0)
					(void)0; /* EAGAIN: nothing to clear */
				srv->armed = -1;
			} else if (tag == TAG_STOP) {
				quit = true;
			} else if (tag >= TAG_SVC_LISTEN && tag < TAG_SVC_CONN) {
				svc_accept(srv, (enum sim_port_kind)(tag - TAG_SVC_LISTEN), now);
			} else if (tag >= TAG_SVC_CONN && tag < TAG_END) {
				struct svc_conn *sc = &srv->svc[tag - TAG_SVC_CONN];
				bool alive = sc->fd >= 0;

				if (alive && sc->connecting) {
					dial_answer(srv, sc, now);
					continue;
				}
				/* What was owed goes first; the answers to what is
				 * read now wait for the services' turn. */
				if (alive && (evs[i].events & EPOLLOUT))
					alive = svc_flush(srv, sc);
				if (alive &&
				    (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
					alive = svc_read(srv, sc, now);
				if (!alive)
					svc_close(srv, sc);
			} else if (tag < SIM_MAX_SESSIONS && (s = sim->sessions[tag])) {
				bool alive = true;

				if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
					alive = conn_read(srv, s, now);
				if (alive && (evs[i].events & EPOLLOUT))
					alive = conn_flush(srv, s);
				if (!alive)
					conn_close(srv, s);
			}
		}

		now = rtl_time_now();
		ran = sim_run_due(sim, now);
		/* The timer goes to the next cycle before the packages are
		 * flushed: after the send the thread only waits, so the
		 * client's answer meets no timer work of ours. */
		arm_timer(srv);
		if (ran) {
			sim_mark_sent(sim, ran, rtl_time_now());
			/* Counted before they leave: a report read after a
			 * client got a package always includes it. */
			publish_stats(srv, false);
		}

		for (unsigned i = 0; i < SIM_MAX_SESSIONS; i++) {
			struct sim_session *s = sim->sessions[i];

			if (!s)
				continue;
			if (s->out.len && !conn_flush(srv, s)) {
				conn_close(srv, s);
				continue;
			}
			if (sim_session_due_close(sim, s, now)) {
				/* Its last words (an idle client's ERROR text). */
				conn_flush(srv, s);
				conn_close(srv, s);
			}
		}

		svc_service(srv, now);
		publish_stats(srv, true);
		if (now >= next_status) {
			if (srv->opts.status) {
				struct sim_stats st;

				sim_get_stats(sim, &st);
				srv->opts.status(srv->opts.status_ctx, &st, now);
			}
			next_status += srv->opts.status_interval_ns;
			if (next_status <= now)
				next_status = now + srv->opts.status_interval_ns;
		}
		if (end && now >= end)
			quit = true;
	}

	/* Orderly goodbye to everyone still connected. */
	for (unsigned i = 0; i < SIM_MAX_SESSIONS; i++) {
		struct sim_session *s = sim->sessions[i];

		if (!s)
			continue;
		conn_flush(srv, s);
		if (s->close == SIM_CLOSE_NONE)
			s->close = SIM_CLOSE_SHUTDOWN;
		conn_close(srv, s);
	}
	for (unsigned i = 0; i < SIM_MAX_CONNS; i++) {
		if (srv->svc[i].fd >= 0)
			svc_flush(srv, &srv->svc[i]);
		svc_close(srv, &srv->svc[i]);
	}
	publish_stats(srv, true);
	return err;
}

static int run(void *srv)
{
	return sim_server_run(srv);
}

int sim_server_start(struct sim_server *srv)
{
	return sim_driver_start(&srv->drv, run, srv);
}

void sim_server_stop(struct sim_server *srv)
{
	sim_driver_stop(&srv->drv);
}

int sim_server_join(struct sim_server *srv)
{
	return sim_driver_join(&srv->drv);
}

void sim_server_stats(struct sim_server *srv, struct sim_stats *out)
{
	pthread_mutex_lock(&srv->lock);
	*out = srv->snap;
	pthread_mutex_unlock(&srv->lock);
}

void sim_server_destroy(struct sim_server *srv)
{
	if (!srv)
		return;
	if (srv->sim) {
		for (unsigned i = 0; i < SIM_MAX_SESSIONS; i++)
			if (srv->sim->sessions[i])
				conn_close(srv, srv->sim->sessions[i]);
		for (unsigned i = 0; i < SIM_MAX_CONNS; i++)
			svc_close(srv, &srv->svc[i]);
		sim_free(srv->sim);
	}
	for (int k = 0; k < SIM_PORT_COUNT; k++)
		if (srv->svc_listen_fd[k] >= 0)
			close(srv->svc_listen_fd[k]);
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	sim_driver_close(&srv->drv);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

const struct rtl_hist *sim_server_echo_hist(struct sim_server *srv)
{
	return &sim_server_sim(srv)->echo_hist;
}

const struct rtl_hist *sim_server_wake_hist(struct sim_server *srv)
{
	return &sim_server_sim(srv)->wake_hist;
}

/* The controller in the report: its state at the end, what it was sent,
 * the programs it would not run. */
static void ctrl_json(FILE *f, const struct sim_ctrl_summary *c)
{
	const struct sim_ctrl_stats *cs = &c->stats;

	fprintf(f, "{\"boot\":%s,\"robot_mode\":", c->boot ? "true" : "false");
	rtl_json_string(f, rtl_ur_robot_mode_name(c->robot_mode));
	fputs(",\"safety_mode\":", f);
	rtl_json_string(f, rtl_ur_safety_status_name(c->safety_mode));
	fputs(",\"program_state\":", f);
	rtl_json_string(f, rtl_ur_program_state_name(c->program_state));
	fputs(",\"program\":", f);
	rtl_json_string(f, c->program_name);
	fprintf(f,
		",\"remote_control\":%s,\"programs\":%" PRIu64 ",\"rtloop_started\":%" PRIu64
		",\"rtloop_refused\":%" PRIu64 ",\"others\":%" PRIu64
		",\"protective_stops\":%" PRIu64 ",\"unlocks\":%" PRIu64 ",\"power_ons\":%" PRIu64
		",\"brake_releases\":%" PRIu64 ",\"power_offs\":%" PRIu64
		",\"commands_ignored\":%" PRIu64 ",\"script_floods\":%" PRIu64
		",\"messages\":%" PRIu64 ",\"messages_lost\":%" PRIu64 ",\"other_programs\":[",
		c->remote ? "true" : "false", cs->programs, cs->rtloop_started, cs->rtloop_refused,
		cs->others, cs->protective_stops, cs->unlocks, cs->power_ons, cs->brake_releases,
		cs->power_offs, cs->commands_ignored, cs->script_floods, cs->msgs, c->msgs_lost);
	for (uint64_t i = 0; i < cs->others && i < SIM_CTRL_OTHERS; i++) {
		const struct sim_ctrl_other *o = &c->others[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		rtl_json_string(f, o->name);
		fputs(",\"port\":", f);
		rtl_json_string(f, sim_port_name((enum sim_port_kind)o->port));
		fprintf(f, ",\"size\":%zu,\"first_line\":", o->size);
		rtl_json_string(f, o->first_line);
		fputc('}', f);
	}
	fputs("],\"models\":[", f);
	for (int i = 0; i < SIM_PROGS; i++) {
		const struct sim_prog_stats *m = &cs->model[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		rtl_json_string(f, sim_progs[i]->name);
		fprintf(f,
			",\"recognised\":%" PRIu64 ",\"started\":%" PRIu64 ",\"refused\":%" PRIu64
			",\"failed\":%" PRIu64 ",\"commands\":%" PRIu64 ",\"unmodelled\":%" PRIu64
			",\"last_unmodelled\":",
			m->recognised, m->started, m->refused, m->failed, m->commands,
			m->unmodelled);
		rtl_json_string(f, m->last_unmodelled);
		fprintf(f, ",\"watchdog_stops\":%" PRIu64 ",\"last\":", m->watchdog_stops);
		rtl_json_string(f, m->last);
		fputc('}', f);
	}
	fputs("],\"last_exception\":", f);
	if (c->last_exception.seq) {
		fputs("{\"program\":", f);
		rtl_json_string(f, c->last_exception.title);
		fprintf(f, ",\"line\":%d,\"text\":", (int)c->last_exception.line);
		rtl_json_string(f, c->last_exception.text);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputc('}', f);
}

int sim_server_report_json(struct sim_server *srv, FILE *f, double seconds, bool mem_locked,
			   const char *sched)
{
	/* Constant while the loop runs: the options, the version, the rate. */
	const struct sim *sim = srv->sim;
	const struct sim_faults *fl = &sim->opts.faults;
	const struct sim_profile *profile = sim_profile(sim->opts.profile);
	struct sim_stats st;
	struct sim_panel panel;
	char ver[48];

	pthread_mutex_lock(&srv->lock);
	st = srv->snap;
	panel = srv->panel;
	pthread_mutex_unlock(&srv->lock);
	rtl_rtde_version_format(ver, sizeof(ver), sim->version);
	fprintf(f,
		"{\"program\":\"rtde-sim\",\"profile\":\"%s\",\"controller_version\":\"%s\","
		"\"frequency_hz\":%u,\"max_protocol\":%u,\"port\":%u,\"seconds\":%.6f,"
		"\"memory_locked\":%s,\"scheduling\":\"%s\",",
		profile->name, ver, sim->max_hz, sim->opts.max_protocol, srv->port, seconds,
		mem_locked ? "true" : "false", sched);
	fprintf(f,
		"\"faults\":{\"seed\":%" PRIu64 ",\"jitter_us\":%u,\"skip_every\":%u,"
		"\"skip_count\":%u,\"stall_ms\":%u,\"stall_every_s\":%g,\"burst\":%u,"
		"\"burst_every_s\":%g,\"fragment\":%s,\"reset_after\":%" PRIu64
		",\"text_every\":%u},",
		fl->seed, fl->jitter_us, fl->skip_every, fl->skip_every ? fl->skip_count : 0,
		fl->stall_ms, fl->stall_every_s, fl->burst, fl->burst ? fl->burst_every_s : 0.0,
		fl->fragment ? "true" : "false", fl->reset_after, fl->text_every);
	fprintf(f,
		"\"stats\":{\"cycles\":%" PRIu64 ",\"cycles_sending\":%" PRIu64
		",\"overruns\":%" PRIu64 ",\"data_sent\":%" PRIu64 ",\"bytes_sent\":%" PRIu64
		",\"connections\":%" PRIu64 ",\"clients_over_limit\":%" PRIu64
		",\"idle_closed\":%" PRIu64 ",\"slow_disconnects\":%" PRIu64
		",\"desync_disconnects\":%" PRIu64 ",\"packages_in\":%" PRIu64
		",\"inputs_applied\":%" PRIu64 ",\"texts_in\":%" PRIu64
		",\"errors_answered\":%" PRIu64 ",\"commands_refused\":%" PRIu64
		",\"nonfinite_in\":%" PRIu64 "},\"robot\":",
		st.cycles, st.cycles_sending, st.overruns, st.data_sent, st.bytes_sent,
		st.connections, st.clients_over_limit, st.idle_closed, st.slow_disconnects,
		st.desync_disconnects, st.packages_in, st.inputs_applied, st.texts_in,
		st.errors_answered, st.commands_refused, st.nonfinite_in);
	sim_robot_summary_json(f, &st.robot);
	fputs(",\"controller\":", f);
	ctrl_json(f, &st.ctrl);
	/* the dashboard's state as last published (the server thread owns it) */
	fputs(",\"panel\":", f);
	sim_panel_json(f, &panel);
	fputc(',', f);
	fprintf(f,
		"\"injected\":{\"jittered_cycles\":%" PRIu64 ",\"jitter_max_ns\":%" PRId64
		",\"skipped_packages\":%" PRIu64 ",\"skipped_cycles\":%" PRIu64
		",\"stalls\":%" PRIu64 ",\"bursts\":%" PRIu64 ",\"fragments\":%" PRIu64
		",\"resets\":%" PRIu64 ",\"texts\":%" PRIu64 "},",
		st.jittered, st.jitter_max_ns, st.skipped_packages, st.skipped_cycles, st.stalls,
		st.bursts, st.fragments, st.resets, st.texts_injected);
	fprintf(f, "\"wake_lateness\":");
	rtl_hist_write_json(sim_server_wake_hist(srv), f);
	fprintf(f,
		",\"echo\":{\"register\":%d,\"round_trips\":%" PRIu64 ",\"unmatched\":%" PRIu64
		",\"latency\":",
		sim->opts.echo_register, st.echoes, st.echo_unmatched);
	rtl_hist_write_json(sim_server_echo_hist(srv), f);
	fprintf(f, "}}\n");
	return ferror(f) ? -EIO : 0;
}
