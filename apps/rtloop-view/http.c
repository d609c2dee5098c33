// SPDX-License-Identifier: MIT
/*
 * The HTTP side: libmicrohttpd's own thread serves the page and the JSON it
 * polls. Every answer about the loop is built under the sampler's mutex
 * from what the sampler copied; nothing here touches shared memory.
 *
 *   GET /                  the page (index.html; app.js, app.css)
 *   GET /chart.min.js      Debian's Chart.js (libjs-chart.js), read at start
 *   GET /api/info          the producer: state, label, layout (signals,
 *                          counters, histograms), generation
 *   GET /api/data?gen=G&since=K&window=S
 *                          history records K.. (or the last S seconds when
 *                          G is not the current generation), column-wise;
 *                          the counters; the newest record's robot state
 *   GET /api/hists         the histograms: percentiles, and their counts in
 *                          log-spaced bins (HIST_BINS_PER_OCTAVE)
 *
 * Nothing is fetched from elsewhere: the page's Content-Security-Policy
 * allows this origin only. Bound to loopback, it answers only requests
 * whose Host is a loopback name: a web page elsewhere cannot read it
 * through DNS rebinding.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rtloop/json.h>
#include <rtloop/time.h>

#include "view.h"

/* The page, embedded at build time (page.c, made by embed.py). */
struct view_asset {
	const char *path;
	const char *type;
	const unsigned char *data;
	size_t len;
};
extern const struct view_asset view_assets[];
extern const size_t view_n_assets;

#define HIST_BINS_PER_OCTAVE 8
/* Records one /api/data answer holds at most. */
#define DATA_MAX 4000
#define WINDOW_DEFAULT_S 10.0

struct view_http {
	struct MHD_Daemon *d;
	struct view_source *src;
	unsigned char *chartjs;
	size_t chartjs_len;
	bool loopback; /* check the Host header */
};

void view_json_double(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
}

/* ---- answers --------------------------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
			      void *data, size_t len, enum MHD_ResponseMemoryMode mode, bool cache)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, data, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
				cache ? "max-age=3600" : "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return answer(c, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg),
		      MHD_RESPMEM_PERSISTENT, false);
}

/* A JSON answer written by @fn into a memory stream. */
static enum MHD_Result answer_json(struct view_http *h, struct MHD_Connection *c,
				   void (*fn)(struct view_http *h, struct MHD_Connection *c,
					      FILE *f))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	pthread_mutex_lock(&h->src->mu);
	fn(h, c, f);
	pthread_mutex_unlock(&h->src->mu);
	if (fclose(f)) {
		free(buf);
		return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return answer(c, MHD_HTTP_OK, "application/json", buf, len, MHD_RESPMEM_MUST_FREE, false);
}

/* ---- /api/info ------------------------------------------------------------------------- */

static void write_info(struct view_http *h, struct MHD_Connection *c, FILE *f)
{
	const struct view_source *s = h->src;

	(void)c;
	fputs("{\"name\":", f);
	rtl_json_string(f, s->name);
	fprintf(f, ",\"state\":\"%s\",\"generation\":%" PRIu64 ",\"error\":",
		view_state_name(s->state), s->generation);
	rtl_json_string(f, s->error);
	fputs(",\"label\":", f);
	rtl_json_string(f, s->generation ? s->info.label : "");
	fprintf(f, ",\"pid\":%" PRId64 ",\"period_s\":", s->info.pid);
	view_json_double(f, s->info.period_ns > 0 ? (double)s->info.period_ns * 1e-9 : NAN);
	fprintf(f, ",\"capacity\":%u,\"history_hz\":%d,\"signals\":[", s->info.capacity,
		HISTORY_HZ);
	for (unsigned i = 0; i < s->n_signals; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		rtl_json_string(f, s->sig[i].name);
		fputs(",\"unit\":", f);
		rtl_json_string(f, s->sig[i].unit);
		fprintf(f, ",\"first\":%u,\"count\":%u}", s->sig[i].first, s->sig[i].count);
	}
	fputs("],\"counters\":[", f);
	for (unsigned i = 0; i < s->n_counters; i++) {
		if (i)
			fputc(',', f);
		rtl_json_string(f, s->counter_names[i]);
	}
	fputs("],\"hists\":[", f);
	for (unsigned i = 0; i < s->n_hists; i++) {
		if (i)
			fputc(',', f);
		rtl_json_string(f, s->hist_names[i]);
	}
	fputs("]}", f);
}

/* ---- /api/data ------------------------------------------------------------------------- */

static double query_double(struct MHD_Connection *c, const char *key, double dflt)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
	char *end;
	double d;

	if (!v || !*v)
		return dflt;
	d = strtod(v, &end);
	return *end || !isfinite(d) ? dflt : d;
}

/* Seconds since the producer created the object: the page's time axis. */
static double rel_s(const struct view_source *s, int64_t t_ns)
{
	return (double)(t_ns - s->info.created_ns) * 1e-9;
}

struct robot_out {
	FILE *f;
	bool more;
};

static void robot_json(void *user, const char *signal, double value, const char *text)
{
	struct robot_out *o = user;
	FILE *f = o->f;

	fputs(o->more ? ",{\"signal\":" : "{\"signal\":", f);
	o->more = true;
	rtl_json_string(f, signal);
	fputs(",\"value\":", f);
	view_json_double(f, value);
	fputs(",\"text\":", f);
	if (text)
		rtl_json_string(f, text);
	else
		fputs("null", f);
	fputc('}', f);
}

/* The first history record to send: K when the page holds this generation
 * up to K, else the first of the last @window seconds. */
static uint64_t first_record(const struct view_source *s, uint64_t gen, double since, double window)
{
	uint64_t oldest = s->hist_head > HISTORY_CAP ? s->hist_head - HISTORY_CAP : 0, k;
	int64_t from;

	if (gen == s->generation && since >= (double)oldest && since <= (double)s->hist_head)
		k = (uint64_t)since;
	else {
		if (!s->hist_head)
			return 0;
		from = view_source_record(s, s->hist_head - 1)->t_ns - llround(window * 1e9);
		k = s->hist_head;
		while (k > oldest && view_source_record(s, k - 1)->t_ns >= from)
			k--;
	}
	/* At most DATA_MAX: the newest ones. */
	if (s->hist_head - k > DATA_MAX)
		k = s->hist_head - DATA_MAX;
	return k;
}

static void write_data(struct view_http *h, struct MHD_Connection *c, FILE *f)
{
	const struct view_source *s = h->src;
	uint64_t gen = (uint64_t)query_double(c, "gen", 0);
	double window = query_double(c, "window", WINDOW_DEFAULT_S);
	uint64_t k0, k1 = s->hist_head;

	if (!(window > 0 && window <= HISTORY_S))
		window = WINDOW_DEFAULT_S;
	k0 = first_record(s, gen, query_double(c, "since", -1), window);
	fprintf(f,
		"{\"generation\":%" PRIu64 ",\"state\":\"%s\",\"records\":%" PRIu64
		",\"missed\":%" PRIu64 ",\"seen\":%" PRIu64 ",\"from\":%" PRIu64
		",\"next\":%" PRIu64 ",\"now_s\":",
		s->generation, view_state_name(s->state), s->info.records, s->missed, s->seen, k0,
		k1);
	view_json_double(f, s->generation ? rel_s(s, rtl_time_now()) : NAN);
	fputs(",\"last_s\":", f);
	view_json_double(f, s->info.last_ns ? rel_s(s, s->info.last_ns) : NAN);
	fputs(",\"t\":[", f);
	for (uint64_t k = k0; k < k1; k++) {
		if (k > k0)
			fputc(',', f);
		fprintf(f, "%.6f", rel_s(s, view_source_record(s, k)->t_ns));
	}
	fputs("],\"values\":[", f);
	for (unsigned i = 0; i < s->n_signals; i++) {
		const struct rtl_telemetry_signal_info *si = &s->sig[i];

		fputs(i ? ",[" : "[", f);
		for (unsigned j = 0; j < si->count; j++) {
			if (si->count > 1)
				fputs(j ? ",[" : "[", f);
			for (uint64_t k = k0; k < k1; k++) {
				if (k > k0)
					fputc(',', f);
				view_json_double(f, view_source_record(s, k)->v[si->first + j]);
			}
			if (si->count > 1)
				fputc(']', f);
		}
		fputc(']', f);
	}
	fputs("],\"counters\":[", f);
	for (unsigned i = 0; i < s->n_counters; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, s->counters[i]);
	fputs("],\"last\":", f);
	if (s->have_last) {
		fprintf(f, "{\"index\":%" PRIu64 ",\"frame\":%" PRIu64 ",\"t\":", s->last->index,
			s->last->frame);
		view_json_double(f, rel_s(s, s->last->t_ns));
		fputs(",\"ctrl_time\":", f);
		view_json_double(f, s->last->ctrl_time);
		fputs(",\"values\":[", f);
		for (unsigned i = 0; i < s->info.n_values; i++) {
			if (i)
				fputc(',', f);
			view_json_double(f, s->last->values[i]);
		}
		fputs("],\"robot\":[", f);
		view_robot_state(s, s->last->values, robot_json, &(struct robot_out){ f, false });
		fputs("]}", f);
	} else {
		fputs("null", f);
	}
	fputc('}', f);
}

/* ---- /api/hists ------------------------------------------------------------------------ */

static int bin_of(int64_t ns)
{
	return (int)floor(log2((double)(ns < 1 ? 1 : ns)) * HIST_BINS_PER_OCTAVE);
}

static void write_hists(struct view_http *h, struct MHD_Connection *c, FILE *f)
{
	const struct view_source *s = h->src;

	(void)c;
	fprintf(f, "{\"generation\":%" PRIu64 ",\"bins_per_octave\":%d,\"hists\":[", s->generation,
		HIST_BINS_PER_OCTAVE);
	for (unsigned i = 0; i < s->n_hists; i++) {
		const struct rtl_hist *hi = &s->hists[i];
		static const double pct[] = { 50, 90, 99, 99.9 };
		static const char *const pname[] = { "p50", "p90", "p99", "p999" };
		struct rtl_hist_bucket b;
		int bin = -1, first = 1;
		uint64_t n = 0;

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		rtl_json_string(f, s->hist_names[i]);
		fprintf(f,
			",\"count\":%" PRIu64 ",\"overflow\":%" PRIu64 ",\"underflow\":%" PRIu64
			",\"min_ns\":%" PRId64 ",\"max_ns\":%" PRId64 ",\"mean_ns\":%.1f",
			rtl_hist_count(hi), rtl_hist_overflow(hi), rtl_hist_underflow(hi),
			rtl_hist_min(hi), rtl_hist_max(hi), rtl_hist_mean(hi));
		for (int p = 0; p < 4; p++)
			fprintf(f, ",\"%s_ns\":%" PRId64, pname[p],
				rtl_hist_percentile(hi, pct[p]));
		fputs(",\"bins\":[", f);
		for (int k = rtl_hist_next_bucket(hi, &b, 0); k >= 0;
		     k = rtl_hist_next_bucket(hi, &b, k + 1)) {
			int kb = bin_of(b.lower);

			if (kb != bin && n) {
				fprintf(f, first ? "[%d,%" PRIu64 "]" : ",[%d,%" PRIu64 "]", bin,
					n);
				first = 0;
				n = 0;
			}
			bin = kb;
			n += b.count;
		}
		if (n)
			fprintf(f, first ? "[%d,%" PRIu64 "]" : ",[%d,%" PRIu64 "]", bin, n);
		fputs("]}", f);
	}
	fputs("]}", f);
}

/* ---- routing --------------------------------------------------------------------------- */

/* A loopback Host: localhost, 127.x, [::1], with or without a port. */
static bool loopback_host(const char *host)
{
	if (!host)
		return false;
	return strncmp(host, "localhost", 9) == 0 && (host[9] == '\0' || host[9] == ':') ? true
	       : strncmp(host, "127.", 4) == 0						 ? true
					       : strncmp(host, "[::1]", 5) == 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req)
{
	struct view_http *h = cls;

	(void)version;
	(void)upload;
	(void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "rtloop-view is read-only: GET and HEAD only\n");
	if (*upload_len)
		return answer_text(c, MHD_HTTP_BAD_REQUEST, "a GET has no body\n");
	if (h->loopback &&
	    !loopback_host(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
		return answer_text(c, MHD_HTTP_MISDIRECTED_REQUEST,
				   "rtloop-view on loopback answers Host localhost, 127.x or "
				   "[::1] only (a page elsewhere may not read it)\n");
	if (strcmp(url, "/api/info") == 0)
		return answer_json(h, c, write_info);
	if (strcmp(url, "/api/data") == 0)
		return answer_json(h, c, write_data);
	if (strcmp(url, "/api/hists") == 0)
		return answer_json(h, c, write_hists);
	if (strcmp(url, "/favicon.ico") == 0)
		return answer(c, MHD_HTTP_NO_CONTENT, "image/x-icon", NULL, 0,
			      MHD_RESPMEM_PERSISTENT, true);
	if (strcmp(url, "/chart.min.js") == 0)
		return answer(c, MHD_HTTP_OK, "text/javascript", h->chartjs, h->chartjs_len,
			      MHD_RESPMEM_PERSISTENT, true);
	for (size_t i = 0; i < view_n_assets; i++)
		if (strcmp(url, view_assets[i].path) == 0)
			return answer(c, MHD_HTTP_OK, view_assets[i].type,
				      (void *)view_assets[i].data, view_assets[i].len,
				      MHD_RESPMEM_PERSISTENT, false);
	return answer_text(c, MHD_HTTP_NOT_FOUND, "not found: the page is at /\n");
}

/* ---- start, stop ----------------------------------------------------------------------- */

static int read_file(const char *path, unsigned char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	struct stat st;
	unsigned char *buf;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		e = errno ? -errno : -EINVAL;
		close(fd);
		return e;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			e = n < 0 ? -errno : -EIO;
			free(buf);
			close(fd);
			return e;
		}
		got += (size_t)n;
	}
	close(fd);
	*out = buf;
	*len = got;
	return 0;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs(PROG ": http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

int view_http_start(struct view_http **out, const struct view_http_config *cfg)
{
	struct view_http *h = calloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	int ret;

	if (!h)
		return -ENOMEM;
	h->src = cfg->src;
	ret = read_file(cfg->chartjs, &h->chartjs, &h->chartjs_len);
	if (ret < 0) {
		fprintf(stderr,
			PROG ": cannot read Chart.js at %s: %s; fix: apt-get install "
			     "libjs-chart.js, or give its path with --chartjs PATH\n",
			cfg->chartjs, strerror(-ret));
		free(h);
		return ret;
	}
	if (cfg->ipv6)
		flags |= MHD_USE_IPv6;
	if (cfg->addr->sa_family == AF_INET)
		h->loopback = (ntohl(((const struct sockaddr_in *)(const void *)cfg->addr)
					     ->sin_addr.s_addr) >>
			       24) == 127;
	else
		h->loopback = IN6_IS_ADDR_LOOPBACK(
			&((const struct sockaddr_in6 *)(const void *)cfg->addr)->sin6_addr);
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, cfg->addr,
				MHD_OPTION_CONNECTION_LIMIT, 128u, MHD_OPTION_CONNECTION_TIMEOUT,
				10u, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!h->d) {
		fprintf(stderr, PROG ": cannot serve on that address and port (in use? another "
				     "rtloop-view?); fix: --port N (0: any free port)\n");
		free(h->chartjs);
		free(h);
		return -EADDRINUSE;
	}
	*out = h;
	return 0;
}

unsigned view_http_port(const struct view_http *h)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);

	return i ? i->port : 0;
}

void view_http_stop(struct view_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h->chartjs);
	free(h);
}
