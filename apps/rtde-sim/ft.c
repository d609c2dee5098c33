// SPDX-License-Identifier: MIT
/*
 * The simulated Net F/T sensor: RDT over UDP at up to 7 kHz, reading the
 * simulated arm's wrench (ft.h has the design).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rtloop/rdt.h>
#include <rtloop/time.h>

#include "ft.h"

#define MAX_BEHIND 50

const char *const sim_ft_counter_names[] = {
#define NAME_(name, doc) #name,
	SIM_FT_COUNTERS(NAME_)
#undef NAME_
};
const char *const sim_ft_counter_docs[] = {
#define DOC_(name, doc) doc,
	SIM_FT_COUNTERS(DOC_)
#undef DOC_
};

struct sim_ft {
	struct sim_ft_opts o;
	struct sim_ft_feed *feed;
	int fd;
	uint16_t port;
	int64_t period_ns;
	uint32_t ft_step; /* internal samples per record */
	pthread_t thread;
	bool running;
	_Atomic int stop;
	/* the thread's */
	struct sockaddr_in client;
	bool streaming;
	uint32_t remaining; /* records left of a counted request; 0: endless */
	uint32_t rdt_seq, ft_seq;
	uint64_t since_reset;
	int32_t bias[6], last_counts[6];
	bool held;
	uint8_t held_rec[RTL_RDT_RECORD_SIZE];
	int64_t stall_until, next_stall;
	uint64_t rng;
	struct {
#define ATOMIC_(name, doc) _Atomic uint64_t name;
		SIM_FT_COUNTERS(ATOMIC_)
#undef ATOMIC_
	} c;
};

#define COUNT(ft, name) atomic_fetch_add_explicit(&(ft)->c.name, 1, memory_order_relaxed)

/* ---- the feed --------------------------------------------------------------------------- */

void sim_ft_feed_publish(struct sim_ft_feed *f, const double w[6])
{
	uint64_t s = atomic_load_explicit(&f->seq, memory_order_relaxed);

	/* odd while written; release stores after it (see telemetry.c) */
	atomic_store_explicit(&f->seq, s + 1, memory_order_relaxed);
	for (int i = 0; i < 6; i++) {
		uint64_t b;

		memcpy(&b, &w[i], sizeof(b));
		atomic_store_explicit(&f->w[i], b, memory_order_release);
	}
	atomic_store_explicit(&f->seq, s + 2, memory_order_release);
}

bool sim_ft_feed_read(const struct sim_ft_feed *f, double w[6])
{
	for (int tries = 0; tries < 1000; tries++) {
		uint64_t s1 = atomic_load_explicit(&f->seq, memory_order_acquire), s2;

		if (s1 & 1)
			continue;
		for (int i = 0; i < 6; i++) {
			uint64_t b = atomic_load_explicit(&f->w[i], memory_order_acquire);

			memcpy(&w[i], &b, sizeof(b));
		}
		s2 = atomic_load_explicit(&f->seq, memory_order_relaxed);
		if (s1 == s2)
			return s1 != 0;
	}
	memset(w, 0, 6 * sizeof(double));
	return false;
}

/* ---- the sensor -------------------------------------------------------------------------- */

static uint64_t rnd(struct sim_ft *ft)
{
	uint64_t x = ft->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	ft->rng = x;
	return x;
}

static void read_requests(struct sim_ft *ft)
{
	for (;;) {
		uint8_t buf[64];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		struct rtl_rdt_request rq;
		ssize_t n = recvfrom(ft->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl);

		if (n < 0)
			return;
		if (rtl_rdt_decode_request(&rq, buf, (size_t)n) < 0) {
			COUNT(ft, bad_requests);
			continue;
		}
		COUNT(ft, requests);
		switch (rq.command) {
		case RTL_RDT_START_REALTIME:
		case RTL_RDT_START_BUFFERED:
		case RTL_RDT_START_MULTI:
			/* a new stream, or the same client asking again */
			if (!ft->streaming || memcmp(&from, &ft->client, sizeof(from))) {
				ft->rdt_seq = 0;
				ft->since_reset = 0;
				ft->held = false;
			}
			ft->client = from;
			ft->streaming = true;
			ft->remaining = rq.count;
			break;
		case RTL_RDT_STOP:
			ft->streaming = false;
			break;
		case RTL_RDT_SET_BIAS:
			memcpy(ft->bias, ft->last_counts, sizeof(ft->bias));
			COUNT(ft, biases);
			break;
		default: /* the latch reset, multi-unit details: nothing to model */
			break;
		}
	}
}

static void send_bytes(struct sim_ft *ft, const uint8_t *b, size_t n)
{
	if (ft->o.jitter_us) {
		int64_t d = (int64_t)(rnd(ft) % (ft->o.jitter_us + 1)) * 1000;

		if (d) {
			COUNT(ft, jittered);
			rtl_time_sleep_until(rtl_time_now() + d);
		}
	}
	sendto(ft->fd, b, n, MSG_DONTWAIT, (const struct sockaddr *)&ft->client,
	       sizeof(ft->client));
	COUNT(ft, datagrams);
}

/* One sample at @now: its record, and what the faults do with it. */
static void sample(struct sim_ft *ft, int64_t now)
{
	struct rtl_rdt_record r = { 0 };
	uint8_t rec[RTL_RDT_RECORD_SIZE];
	double w[6];
	bool skip = false;

	ft->ft_seq += ft->ft_step;
	sim_ft_feed_read(ft->feed, w);
	for (int i = 0; i < 6; i++) {
		double cpu = i < 3 ? ft->o.counts_per_force : ft->o.counts_per_torque;
		double v = w[i] * cpu;

		ft->last_counts[i] = v > INT32_MAX   ? INT32_MAX
				     : v < INT32_MIN ? INT32_MIN
						     : (int32_t)llround(v);
		{
			/* saturates as the sensor's counts do, never wraps */
			int64_t c = (int64_t)ft->last_counts[i] - ft->bias[i];

			r.counts[i] = c > INT32_MAX   ? INT32_MAX
				      : c < INT32_MIN ? INT32_MIN
						      : (int32_t)c;
		}
	}
	if (!ft->streaming)
		return;
	if (ft->o.reset_after && ft->since_reset >= ft->o.reset_after) {
		ft->rdt_seq = 0;
		ft->since_reset = 0;
		ft->held = false;
		COUNT(ft, resets);
	}
	r.rdt_sequence = ++ft->rdt_seq;
	r.ft_sequence = ft->ft_seq;
	ft->since_reset++;
	rtl_rdt_encode_record(rec, sizeof(rec), &r);
	if (ft->o.skip_every &&
	    (r.rdt_sequence - 1) % ft->o.skip_every >= ft->o.skip_every - ft->o.skip_count) {
		COUNT(ft, skipped);
		skip = true;
	}
	if (ft->o.stall_ms && ft->o.stall_every_s > 0) {
		if (!ft->next_stall)
			ft->next_stall = now + (int64_t)(ft->o.stall_every_s * 1e9);
		if (now >= ft->next_stall) {
			ft->stall_until = now + (int64_t)ft->o.stall_ms * RTL_NS_PER_MS;
			ft->next_stall += (int64_t)(ft->o.stall_every_s * 1e9);
			COUNT(ft, stalls);
		}
		if (now < ft->stall_until) {
			COUNT(ft, stalled);
			skip = true;
		}
	}
	if (!skip) {
		if (ft->o.reorder_every && !ft->held && r.rdt_sequence % ft->o.reorder_every == 0) {
			memcpy(ft->held_rec, rec, sizeof(rec));
			ft->held = true;
			COUNT(ft, reordered);
		} else {
			send_bytes(ft, rec, sizeof(rec));
			COUNT(ft, records);
			if (ft->held) {
				send_bytes(ft, ft->held_rec, sizeof(ft->held_rec));
				COUNT(ft, records);
				ft->held = false;
			}
		}
	}
	if (ft->remaining && !--ft->remaining)
		ft->streaming = false;
}

static void *ft_main(void *arg)
{
	struct sim_ft *ft = arg;
	int64_t deadline = rtl_time_now() + ft->period_ns;

	while (!atomic_load_explicit(&ft->stop, memory_order_relaxed)) {
		int64_t now;

		rtl_time_sleep_until(deadline);
		now = rtl_time_now();
		if (now - deadline > MAX_BEHIND * ft->period_ns) {
			int64_t behind = (now - deadline) / ft->period_ns;

			for (int64_t k = 0; k < behind; k++)
				COUNT(ft, overruns);
			ft->ft_seq += (uint32_t)behind * ft->ft_step;
			deadline += behind * ft->period_ns;
		}
		read_requests(ft);
		sample(ft, now);
		deadline += ft->period_ns;
	}
	return NULL;
}

/* ---- life --------------------------------------------------------------------------------- */

int sim_ft_create(struct sim_ft **out, const struct sim_ft_opts *o, struct sim_ft_feed *feed,
		  char *why, size_t len)
{
	struct sim_ft *ft = calloc(1, sizeof(*ft));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	socklen_t al = sizeof(a);
	int r;

	*out = NULL;
	if (!ft)
		return -ENOMEM;
	ft->o = *o;
	ft->feed = feed;
	if (!ft->o.rate_hz)
		ft->o.rate_hz = RTL_RDT_INTERNAL_HZ;
	if (!ft->o.counts_per_force)
		ft->o.counts_per_force = 1e6;
	if (!ft->o.counts_per_torque)
		ft->o.counts_per_torque = 1e6;
	ft->period_ns = (int64_t)llround(1e9 / ft->o.rate_hz);
	ft->ft_step = (uint32_t)lround(RTL_RDT_INTERNAL_HZ / ft->o.rate_hz);
	if (!ft->ft_step)
		ft->ft_step = 1;
	ft->rng = o->seed ? o->seed * 0x9E3779B97F4A7C15ull : 0x9E3779B97F4A7C15ull;
	if (inet_pton(AF_INET, o->bind ? o->bind : "127.0.0.1", &a.sin_addr) != 1) {
		snprintf(why, len, "--bind %s is not an IPv4 address", o->bind);
		free(ft);
		return -EINVAL;
	}
	ft->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ft->fd < 0 || bind(ft->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		r = -errno;
		snprintf(why, len, "cannot bind the F/T sensor's UDP port %u: %s", o->port,
			 strerror(-r));
		if (ft->fd >= 0)
			close(ft->fd);
		free(ft);
		return r;
	}
	getsockname(ft->fd, (struct sockaddr *)&a, &al);
	ft->port = ntohs(a.sin_port);
	*out = ft;
	return 0;
}

uint16_t sim_ft_port(const struct sim_ft *ft)
{
	return ft->port;
}

double sim_ft_rate(const struct sim_ft *ft)
{
	return ft->o.rate_hz;
}

int sim_ft_start(struct sim_ft *ft)
{
	int r = pthread_create(&ft->thread, NULL, ft_main, ft);

	if (r)
		return -r;
	ft->running = true;
	return 0;
}

void sim_ft_stop(struct sim_ft *ft)
{
	if (ft && ft->running) {
		atomic_store(&ft->stop, 1);
		pthread_join(ft->thread, NULL);
		ft->running = false;
	}
}

void sim_ft_destroy(struct sim_ft *ft)
{
	if (!ft)
		return;
	sim_ft_stop(ft);
	close(ft->fd);
	free(ft);
}

void sim_ft_stats(const struct sim_ft *ft, struct sim_ft_stats *out)
{
#define COPY_(name, doc) out->name = atomic_load_explicit(&ft->c.name, memory_order_relaxed);
	SIM_FT_COUNTERS(COPY_)
#undef COPY_
}
