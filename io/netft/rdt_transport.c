// SPDX-License-Identifier: MIT
/*
 * A Net F/T sensor's RDT stream as a loop transport. The design is written
 * in <rtloop/rdt_transport.h>.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/dgram.h>
#include <rtloop/log.h>
#include <rtloop/rdt_transport.h>
#include <rtloop/sized.h>
#include <rtloop/time.h>

/* A record up to this many behind the newest is late, further a restart. */
#define LATE_WINDOW 1000
#define HELLO_EVERY_NS (100 * RTL_NS_PER_MS)
/* The socket's receive buffer: a 7 kHz stream's records (about 700 bytes
 * of kernel memory each) for a quarter of a second of a stalled receiver. */
#define RX_BUFFER (1 << 20)

struct rtl_rdt_transport {
	struct rtl_transport base;
	struct rtl_rdt_transport_config cfg;
	char host[256];
	struct sockaddr_in addr;
	int fd;
	/* the rx thread's */
	uint8_t rx[RTL_RDT_MAX_RECORDS * RTL_RDT_RECORD_SIZE + 1];
	size_t rx_len;
	unsigned rx_next, rx_count; /* the datagram's records: next to decode, how many */
	int64_t rx_kernel_ns;
	bool pending; /* connect() received the first datagram: recv() hands it on */
	bool have_seq;
	uint32_t newest, newest_ft; /* the newest record's rdt and ft sequences */
	char why[256];
	/* the step's (transmit side) */
	struct rtl_rdt_cmd cmd, sent;
	struct {
		RTL_RDT_TRANSPORT_COUNTERS(RTL_STAT_ATOMIC)
	} c;
};

static struct rtl_rdt_transport *of(struct rtl_transport *base)
{
	return base->impl;
}

static int request(struct rtl_rdt_transport *t, uint16_t command, int flags)
{
	struct rtl_rdt_request rq = { .command = command, .count = 0 };
	uint8_t buf[RTL_RDT_REQUEST_SIZE];

	rtl_rdt_encode_request(buf, sizeof(buf), &rq);
	if (send(t->fd, buf, sizeof(buf), flags | MSG_NOSIGNAL) != (ssize_t)sizeof(buf))
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	rtl_stat_add(&t->c.requests, 1);
	return (int)sizeof(buf);
}

/* ---- connect ------------------------------------------------------------------------------ */

static void close_fd(struct rtl_rdt_transport *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static int rdt_op_connect(struct rtl_transport *base, struct rtl_error *err)
{
	struct rtl_rdt_transport *t = of(base);
	int64_t deadline = rtl_time_now() + t->cfg.connect_timeout_ns, next_hello = 0;
	uint16_t start = t->cfg.buffered ? RTL_RDT_START_BUFFERED : RTL_RDT_START_REALTIME;
	int fd, n;

	close_fd(t);
	t->pending = false;
	t->have_seq = false;
	t->rx_count = t->rx_next = 0;
	t->why[0] = '\0';
	fd = rtl_dgram_open(&t->addr, false, 10 * RTL_NS_PER_MS, "RDT", err);
	if (fd < 0)
		return fd;
	t->fd = fd;
	{
		/* best effort: beyond net.core.rmem_max only with CAP_NET_ADMIN */
		int size = RX_BUFFER;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	}
	for (;;) {
		int64_t now = rtl_time_now();

		if (now >= deadline) {
			close_fd(t);
			return rtl_error_set(
				err, -ETIMEDOUT,
				"RDT: no record from %s:%u within %.1f s of asking it "
				"to stream; check the sensor's address and that RDT is "
				"enabled in its configuration (or start rtde-sim --ft-port)",
				t->host, t->cfg.port, (double)t->cfg.connect_timeout_ns / 1e9);
		}
		if (now >= next_hello) {
			n = request(t, start, 0);
			if (n < 0 && n != -ECONNREFUSED && n != -EAGAIN) {
				close_fd(t);
				return rtl_error_set(err, n, "RDT: cannot send to %s:%u: %s",
						     t->host, t->cfg.port, strerror(-n));
			}
			next_hello = now + HELLO_EVERY_NS;
		}
		n = rtl_dgram_recv(t->fd, t->rx, sizeof(t->rx), &t->rx_kernel_ns, 0);
		if (n == -EAGAIN || n == -ECONNREFUSED)
			continue; /* nothing yet, or nobody listening yet: ask again */
		if (n == 0) {
			rtl_stat_add(&t->c.malformed, 1); /* an empty datagram */
			continue;
		}
		if (n < 0) {
			close_fd(t);
			return rtl_error_set(err, n, "RDT: receive from %s:%u failed: %s", t->host,
					     t->cfg.port, strerror(-n));
		}
		t->rx_len = (size_t)n;
		t->pending = true;
		break;
	}
	{
		/* The loop's receive slice from here on. */
		struct timeval tv = { .tv_usec = RTL_TRANSPORT_RX_SLICE_NS / 1000 };

		setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	base->values_size = sizeof(struct rtl_rdt_frame);
	base->period_ns = (int64_t)llround(1e9 / t->cfg.rate_hz);
	base->rx_timeout_ns = t->cfg.rx_timeout_ns;
	base->ctrl_watchdog_ns = 0;
	t->sent = t->cmd; /* a request counter's value at connect is not a request */
	return 0;
}

/* ---- receive ------------------------------------------------------------------------------- */

static int rdt_op_recv(struct rtl_transport *base)
{
	struct rtl_rdt_transport *t = of(base);
	int n;

	t->rx_count = t->rx_next = 0;
	if (t->pending) {
		t->pending = false;
		return (int)t->rx_len;
	}
	n = rtl_dgram_recv(t->fd, t->rx, sizeof(t->rx), &t->rx_kernel_ns, 0);
	if (n == 0) {
		rtl_stat_add(&t->c.malformed, 1); /* an empty datagram */
		return -EAGAIN;
	}
	if (n > 0)
		t->rx_len = (size_t)n;
	/* Silence is the loop's to judge (rx_timeout_ns). */
	return n;
}

static int rdt_op_next(struct rtl_transport *base, struct rtl_loop_frame *f, size_t cap)
{
	struct rtl_rdt_transport *t = of(base);
	struct rtl_rdt_frame *out = (struct rtl_rdt_frame *)(void *)f->values;

	if (cap < sizeof(*out))
		return -EMSGSIZE;
	for (;;) {
		struct rtl_rdt_record r;
		uint32_t gap = 0;
		int n;

		if (!t->rx_len)
			return 0;
		n = rtl_rdt_decode_record(&r, t->rx, t->rx_len, t->rx_next);
		if (n < 0) {
			rtl_stat_add(&t->c.malformed, 1);
			t->rx_len = 0;
			return 0;
		}
		if (++t->rx_next >= (unsigned)n)
			t->rx_len = 0; /* the datagram's last record */
		rtl_stat_add(&t->c.records, 1);
		if (t->have_seq) {
			switch (rtl_rdt_classify(&gap, t->newest, r.rdt_sequence, LATE_WINDOW)) {
			case RTL_RDT_DUPLICATE:
				rtl_stat_add(&t->c.duplicate, 1);
				continue;
			case RTL_RDT_LATE:
				/* The sensor's own sample number tells a record that
				 * came late (older) from a stream that restarted its
				 * numbering (its samples went on) */
				if ((int32_t)(r.ft_sequence - t->newest_ft) > 0) {
					rtl_stat_add(&t->c.restarts, 1);
					gap = 0;
					break;
				}
				rtl_stat_add(&t->c.late, 1);
				continue;
			case RTL_RDT_RESTART:
				rtl_stat_add(&t->c.restarts, 1);
				gap = 0;
				break;
			case RTL_RDT_NEXT:
				break;
			}
		}
		if (gap)
			rtl_stat_add(&t->c.lost, gap);
		if (r.status & RTL_RDT_STATUS_ERROR)
			rtl_stat_add(&t->c.status_errors, 1);
		t->newest = r.rdt_sequence;
		t->newest_ft = r.ft_sequence;
		t->have_seq = true;
		memset(out, 0, sizeof(*out));
		out->rec = r;
		rtl_rdt_scale(out->wrench, r.counts, t->cfg.counts_per_force,
			      t->cfg.counts_per_torque);
		f->size = sizeof(*out);
		f->ctrl_time = (double)r.ft_sequence / RTL_RDT_INTERNAL_HZ;
		f->ctrl_skipped = gap;
		f->kernel_rx_ns = t->rx_kernel_ns;
		return 1;
	}
}

static int rdt_op_finite(struct rtl_transport *base, const struct rtl_loop_frame *f, char *why,
			 size_t len)
{
	const struct rtl_rdt_frame *fr = rtl_rdt_loop_frame(f);

	(void)base;
	for (int i = 0; i < 6; i++) {
		if (!isfinite(fr->wrench[i])) {
			snprintf(why, len, "RDT: wrench[%d] is not finite", i);
			return -EDOM;
		}
	}
	return 0;
}

/* ---- send ------------------------------------------------------------------------------------ */

static int rdt_op_send(struct rtl_transport *base, int64_t now)
{
	struct rtl_rdt_transport *t = of(base);
	int ret, total = 0;

	(void)now;
	if (t->cmd.bias != t->sent.bias) {
		ret = request(t, RTL_RDT_SET_BIAS, MSG_DONTWAIT);
		if (ret < 0)
			return ret;
		t->sent.bias = t->cmd.bias;
		total += ret;
	}
	if (t->cmd.reset_latch != t->sent.reset_latch) {
		ret = request(t, RTL_RDT_RESET_LATCH, MSG_DONTWAIT);
		if (ret < 0)
			return total ? total : ret;
		t->sent.reset_latch = t->cmd.reset_latch;
		total += ret;
	}
	return total;
}

static void rdt_op_disconnect(struct rtl_transport *base)
{
	struct rtl_rdt_transport *t = of(base);

	if (t->fd >= 0)
		request(t, RTL_RDT_STOP, MSG_DONTWAIT); /* best effort */
	close_fd(t);
}

static const char *rdt_op_error(struct rtl_transport *base)
{
	return of(base)->why;
}

static const struct rtl_transport_ops rdt_ops = {
	.size = sizeof(struct rtl_transport_ops),
	.name = "rdt",
	.connect = rdt_op_connect,
	.recv = rdt_op_recv,
	.next = rdt_op_next,
	.send = rdt_op_send,
	.disconnect = rdt_op_disconnect,
	.error = rdt_op_error,
	.finite = rdt_op_finite,
};

/* ---- set-up -----------------------------------------------------------------------------------
 */

RTL_API int rtl_rdt_transport_create(struct rtl_rdt_transport **out,
				     const struct rtl_rdt_transport_config *cfg,
				     struct rtl_error *err)
{
	struct rtl_rdt_transport *t;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "RDT: no place for the transport (out)");
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return rtl_error_set(err, -ENOMEM, "RDT: out of memory");
	t->fd = -1;
	ret = rtl__sized_in(&t->cfg, sizeof(t->cfg), cfg, "struct rtl_rdt_transport_config", err);
	if (ret < 0)
		goto fail;
	if (!t->cfg.host || !t->cfg.host[0] || strlen(t->cfg.host) >= sizeof(t->host)) {
		ret = rtl_error_set(err, -EINVAL, "RDT: give the sensor's address (cfg.host)");
		goto fail;
	}
	snprintf(t->host, sizeof(t->host), "%s", t->cfg.host);
	t->cfg.host = t->host;
	if (!t->cfg.port)
		t->cfg.port = RTL_RDT_PORT;
	if (!t->cfg.rate_hz)
		t->cfg.rate_hz = RTL_RDT_INTERNAL_HZ;
	if (!t->cfg.counts_per_force)
		t->cfg.counts_per_force = 1e6;
	if (!t->cfg.counts_per_torque)
		t->cfg.counts_per_torque = 1e6;
	if (!(t->cfg.rate_hz >= 1 && t->cfg.rate_hz <= 100000) || !(t->cfg.counts_per_force > 0) ||
	    !(t->cfg.counts_per_torque > 0) || !isfinite(t->cfg.counts_per_force) ||
	    !isfinite(t->cfg.counts_per_torque) || t->cfg.connect_timeout_ns < 0 ||
	    t->cfg.rx_timeout_ns < 0) {
		ret = rtl_error_set(err, -EINVAL,
				    "RDT: rate_hz must be 1..100000, counts per force and per "
				    "torque positive and finite, the time-outs >= 0");
		goto fail;
	}
	if (!t->cfg.connect_timeout_ns)
		t->cfg.connect_timeout_ns = 2 * RTL_NS_PER_SEC;
	if (!t->cfg.rx_timeout_ns) {
		int64_t p100 = (int64_t)(100 * 1e9 / t->cfg.rate_hz);

		t->cfg.rx_timeout_ns = p100 > 100 * RTL_NS_PER_MS ? p100 : 100 * RTL_NS_PER_MS;
	}
	ret = rtl_dgram_resolve(&t->addr, t->cfg.host, t->cfg.port, "RDT", err);
	if (ret < 0)
		goto fail;
	t->base.size = sizeof(t->base);
	t->base.ops = &rdt_ops;
	t->base.impl = t;
	t->base.commands = &t->cmd;
	*out = t;
	return 0;
fail:
	free(t);
	return ret;
}

RTL_API void rtl_rdt_transport_destroy(struct rtl_rdt_transport *t)
{
	if (!t)
		return;
	close_fd(t);
	free(t);
}

RTL_API struct rtl_transport *rtl_rdt_transport_base(struct rtl_rdt_transport *t)
{
	return t ? &t->base : NULL;
}

RTL_API struct rtl_rdt_cmd *rtl_rdt_transport_command(struct rtl_rdt_transport *t)
{
	return t ? &t->cmd : NULL;
}

RTL__DEFINE_COUNTERS(rtl_rdt_transport, RTL_RDT_TRANSPORT_COUNTERS, c)
