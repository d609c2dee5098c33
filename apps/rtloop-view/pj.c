// SPDX-License-Identifier: MIT
/*
 * PlotJuggler: the telemetry's records as JSON datagrams for its UDP server
 * (Streaming, "UDP Server", message protocol JSON). PlotJuggler flattens a
 * message's objects into paths joined with '/' and an array's elements as
 * name[i], and takes the time from the top-level "timestamp" (seconds)
 * when told to use it: here the record's CLOCK_MONOTONIC time, to the
 * nanosecond. So a record of telemetry NAME arrives as
 *
 *   {"timestamp":12.345678901,"NAME":{"frame":1234,"ctrl_time":5.678,
 *    "contact_force":9.97,"actual_TCP_pose":[0.1,0.2,...]}}
 *
 * and is plotted as NAME/contact_force, NAME/actual_TCP_pose[0], ... A
 * value not known (NaN) is null: PlotJuggler skips it. The counters and
 * the latencies' percentiles go every PJ_COUNTERS_MS as
 *
 *   {"timestamp":...,"NAME":{"counters":{"loop.frames":1234,...},
 *    "missed":0,"latency_us":{"rx_to_step":{"p50":4.1,"p99":27.5,
 *    "max":76.6},...}}}
 *
 * docs/rtloop-view.md says the same for users.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/json.h>
#include <rtloop/time.h>

#include "view.h"

/* The largest UDP payload over IPv4. */
#define DGRAM_MAX 65507

struct view_pj {
	int fd;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int64_t period_ns; /* between records sent */
	int64_t next_ns;   /* the next record sent is at or after this */
	int64_t next_counters_ns;
	const char *name;
	uint64_t sent, failed, too_big;
	char buf[DGRAM_MAX + 1];
};

int view_pj_open(struct view_pj **out, const struct view_pj_config *cfg)
{
	struct view_pj *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->fd = socket(cfg->addr->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		int e = errno;

		fprintf(stderr, PROG ": --plotjuggler: a UDP socket: %s\n", strerror(e));
		free(p);
		return -e;
	}
	memcpy(&p->addr, cfg->addr, cfg->addr_len);
	p->addr_len = cfg->addr_len;
	p->period_ns = llround(1e9 / cfg->rate_hz);
	p->name = cfg->name;
	*out = p;
	return 0;
}

void view_pj_close(struct view_pj *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p);
}

void view_pj_stats(const struct view_pj *p, uint64_t *sent, uint64_t *failed)
{
	*sent = p ? p->sent : 0;
	*failed = p ? p->failed + p->too_big : 0;
}

/* Send what @f wrote into p->buf. */
static void send_buf(struct view_pj *p, FILE *f)
{
	long len;

	if (fflush(f) || ferror(f) || (len = ftell(f)) < 0 || len > DGRAM_MAX) {
		fclose(f);
		p->too_big++;
		return;
	}
	fclose(f);
	if (sendto(p->fd, p->buf, (size_t)len, MSG_DONTWAIT, (const struct sockaddr *)&p->addr,
		   p->addr_len) == len)
		p->sent++;
	else
		p->failed++;
}

/* @t_ns as seconds, exactly: PlotJuggler's "timestamp". */
static FILE *open_buf(struct view_pj *p, int64_t t_ns)
{
	/* One byte more than a datagram: a message that fills it is too big. */
	FILE *f = fmemopen(p->buf, sizeof(p->buf), "w");

	if (!f) {
		p->failed++;
		return NULL;
	}
	fprintf(f, "{\"timestamp\":%lld.%09lld,", (long long)(t_ns / RTL_NS_PER_SEC),
		(long long)(t_ns % RTL_NS_PER_SEC));
	rtl_json_string(f, p->name);
	fputs(":{", f);
	return f;
}

void view_pj_record(struct view_pj *p, const struct view_source *s,
		    const struct rtl_telemetry_record *r)
{
	FILE *f;

	if (r->t_ns < p->next_ns)
		return;
	p->next_ns = r->t_ns + p->period_ns;
	f = open_buf(p, r->t_ns);
	if (!f)
		return;
	fprintf(f, "\"frame\":%llu,\"ctrl_time\":", (unsigned long long)r->frame);
	view_json_double(f, r->ctrl_time);
	for (unsigned i = 0; i < s->n_signals; i++) {
		const struct rtl_telemetry_signal_info *si = &s->sig[i];

		fputc(',', f);
		rtl_json_string(f, si->name);
		fputc(':', f);
		if (si->count == 1) {
			view_json_double(f, r->values[si->first]);
			continue;
		}
		fputc('[', f);
		for (unsigned k = 0; k < si->count; k++) {
			if (k)
				fputc(',', f);
			view_json_double(f, r->values[si->first + k]);
		}
		fputc(']', f);
	}
	fputs("}}", f);
	send_buf(p, f);
}

void view_pj_counters(struct view_pj *p, const struct view_source *s, int64_t now_ns)
{
	FILE *f;

	if (now_ns < p->next_counters_ns || !s->generation)
		return;
	p->next_counters_ns = now_ns + PJ_COUNTERS_MS * RTL_NS_PER_MS;
	f = open_buf(p, now_ns);
	if (!f)
		return;
	fputs("\"counters\":{", f);
	for (unsigned i = 0; i < s->n_counters; i++) {
		if (i)
			fputc(',', f);
		rtl_json_string(f, s->counter_names[i]);
		fprintf(f, ":%llu", (unsigned long long)s->counters[i]);
	}
	fprintf(f, "},\"missed\":%llu,\"latency_us\":{", (unsigned long long)s->missed);
	for (unsigned i = 0; i < s->n_hists; i++) {
		const struct rtl_hist *h = &s->hists[i];

		if (i)
			fputc(',', f);
		rtl_json_string(f, s->hist_names[i]);
		fputs(":{\"p50\":", f);
		view_json_double(f, (double)rtl_hist_percentile(h, 50) / 1e3);
		fputs(",\"p99\":", f);
		view_json_double(f, (double)rtl_hist_percentile(h, 99) / 1e3);
		fputs(",\"max\":", f);
		view_json_double(f, (double)rtl_hist_max(h) / 1e3);
		fputc('}', f);
	}
	fputs("}}}", f);
	send_buf(p, f);
}
