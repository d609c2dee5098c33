// SPDX-License-Identifier: MIT
/*
 * rtde-record's recording: the loop's rx thread receives, the calling
 * thread writes every frame in order (see record.h for the design and why
 * the writer reads the loop's ring directly).
 *
 * The writer waits in rtl_loop_read() (a futex sleep, never a spin) at
 * most 100 ms at a time, so it also notices the duration ending, the
 * controller falling silent (--data-timeout: the writer's clock, not the
 * transport's, so the cause is worded here) and prints progress.
 * rtl_loop_read() returns NULL before its time-out only when the loop has
 * stopped and the ring is empty: that is how the writer knows it has
 * written the last frame received.
 *
 * Outputs (struct out): each row is formatted into a buffer that holds
 * whole rows only, written with write(2) when it is full or every
 * REC_FLUSH_NS, to PATH.partial. write(2)'s count is what reached the
 * file; a short or failed write is cut back with ftruncate() to the last
 * whole row, so the file never ends in half a row and the message names
 * the rows it holds. At the end: fsync(), then rename() to PATH when the
 * file holds a row; otherwise the partial file is removed and an existing
 * PATH is left as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "record.h"

#define WAIT_NS (100 * RTL_NS_PER_MS)
#define NAMES_MAX RTL_RTDE_CLIENT_TX_SIZE

/* One output file: whole rows, written from a buffer with write(2). */
struct out {
	const char *path; /* as given; "-": stdout */
	char *partial;	  /* PATH.partial; NULL for stdout */
	int fd;		  /* -1: not open */
	bool binary;
	uint32_t record_size; /* binary */
	unsigned char *buf;   /* the header (hdr bytes), then whole rows */
	size_t len, cap, hdr;
	uint64_t buf_rows; /* rows in buf */
	uint64_t rows;	   /* whole rows in the file */
	uint64_t bytes;	   /* bytes in the file */
	int err;	   /* -errno of the write that failed; 0 */
};

struct rec {
	struct rec_config cfg;
	char outputs[NAMES_MAX];
	char host[128];
	struct rtl_rtde_transport *tr;
	bool tr_ready;
	struct rtl_loop *loop;
	struct rec_schema schema;
	struct out csv, bin;
	char *line;
	size_t line_cap;
	uint32_t ring_capacity;
	atomic_int stop_requested;
};

/* ---- recipes ------------------------------------------------------------------------- */

/* Whether the file at @path starts (after blanks) with '<'. */
static int is_xml(const char *path, bool *xml)
{
	FILE *f = fopen(path, "r");
	int c;

	if (!f)
		return -errno;
	do
		c = fgetc(f);
	while (c == ' ' || c == '\t' || c == '\r' || c == '\n');
	/* A UTF-8 byte order mark also means XML here. */
	*xml = c == '<' || c == 0xEF;
	fclose(f);
	return 0;
}

int rec_outputs(char *buf, size_t cap, const char *fields, const char *config, const char *key,
		bool *added_ts, struct rec_error *err)
{
	struct rtl_rtde_recipe_opts opts = { .size = sizeof(opts), .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rtl_rtde_recipe *r = malloc(sizeof(*r));
	struct rtl_rtde_report *rep = malloc(sizeof(*rep));
	struct rtl_rtde_handle h;
	const char *what = fields ? "--fields" : "--config";
	bool xml = false;
	size_t off = 0;
	int ret;

	if (added_ts)
		*added_ts = false;
	if (err)
		err->detail[0] = '\0';
	if (!r || !rep) {
		ret = rtl_error_set(rec_err(err), -ENOMEM, "out of memory");
		goto out;
	}
	if (!fields && !config) {
		ret = rtl_error_set(rec_err(err), -EINVAL,
				    "no fields to record: give --fields or --config");
		goto out;
	}
	if (fields) {
		ret = rtl_rtde_recipe_from_list(r, &opts, fields, rep);
	} else {
		ret = is_xml(config, &xml);
		if (ret < 0) {
			rtl_error_set(rec_err(err), ret, "--config '%s': cannot open it: %s",
				      config, strerror(-ret));
			goto out;
		}
		if (!xml) {
			ret = rtl_rtde_recipe_from_text_file(r, &opts, config, rep);
		} else if (key) {
			ret = rtl_rtde_recipe_from_xml_file(r, &opts, config, key, rep);
		} else {
			/* record.py's key is "out"; a file of one recipe needs none. */
			ret = rtl_rtde_recipe_from_xml_file(r, &opts, config, NULL, rep);
			if (ret == -EINVAL)
				ret = rtl_rtde_recipe_from_xml_file(r, &opts, config, "out", rep);
		}
	}
	if (ret < 0) {
		size_t len = rep->len;

		while (len && rep->text[len - 1] == '\n')
			len--;
		/* The report is longer than a sentence holds: it follows it. */
		rtl_error_set(rec_err(err), ret, "%s%s%s: the recipe does not build:", what,
			      config && !fields ? " " : "", config && !fields ? config : "");
		if (err)
			snprintf(err->detail, sizeof(err->detail), "\n%.*s%s", (int)len, rep->text,
				 xml && ret == -ENOENT && !key
					 ? "\n(choose a recipe with --recipe KEY)"
					 : "");
		goto out;
	}
	if (rtl_rtde_recipe_handle(r, &h, "timestamp") < 0) {
		/* Skips are counted from `timestamp`: always record it. */
		off = (size_t)snprintf(buf, cap, "timestamp,");
		if (added_ts)
			*added_ts = true;
	}
	if (off >= cap || rtl_rtde_recipe_names(r, buf + off, cap - off) < 0) {
		ret = rtl_error_set(rec_err(err), -E2BIG, "%s: the names do not fit %zu bytes",
				    what, cap);
		goto out;
	}
	ret = (int)r->n + (off ? 1 : 0);
out:
	free(r);
	free(rep);
	return ret;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static uint32_t ring_capacity(const struct rec_config *cfg, size_t values)
{
	double rate = cfg->frequency > 0 ? cfg->frequency : 500.0;
	size_t slot = sizeof(struct rtl_loop_frame) + ((values + 7) & ~(size_t)7);
	uint32_t cap = 1024;

	if (cfg->ring_capacity)
		return cfg->ring_capacity;
	while (cap < rate * REC_BUFFER_S && cap < (1u << 20))
		cap <<= 1;
	while (cap > 256 && (size_t)cap * slot > REC_RING_MAX_BYTES)
		cap >>= 1;
	return cap;
}

static void out_init(struct out *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

/* Create PATH.partial (never over an existing one: it may be the only copy
 * of a run that was killed) and the row buffer. */
static int out_open(struct out *o, const char *path, bool binary, struct rec_error *err)
{
	size_t n = strlen(path) + sizeof(REC_PARTIAL);

	o->path = path;
	o->binary = binary;
	o->cap = REC_IO_BUFFER;
	o->buf = malloc(o->cap);
	if (!o->buf)
		return rtl_error_set(rec_err(err), -ENOMEM, "out of memory");
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	o->partial = malloc(n);
	if (!o->partial)
		return rtl_error_set(rec_err(err), -ENOMEM, "out of memory");
	snprintf(o->partial, n, "%s" REC_PARTIAL, path);
	o->fd = open(o->partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (o->fd < 0 && errno == EEXIST)
		return rtl_error_set(
			rec_err(err), -EEXIST,
			"--output '%s': '%s' exists: a recording that was cut short (killed, "
			"or the machine stopped) left it, and it holds whole rows; recover it "
			"(docs/rtde-record.md, \"After a crash\") or remove it",
			path, o->partial);
	if (o->fd < 0)
		return rtl_error_set(rec_err(err), -errno, "--output '%s': cannot create '%s': %s",
				     path, o->partial, strerror(errno));
	return 0;
}

/* Whole rows among the first @w bytes of o->buf: their byte count, and
 * their number in *@rows (the header counts for no row). */
static size_t whole_rows(const struct out *o, size_t w, uint64_t *rows)
{
	size_t keep = o->hdr;

	*rows = 0;
	if (w < o->hdr)
		return 0;
	if (o->binary) {
		*rows = (w - o->hdr) / o->record_size;
		return o->hdr + (size_t)*rows * o->record_size;
	}
	for (size_t i = o->hdr; i < w; i++) {
		if (o->buf[i] == '\n') {
			keep = i + 1;
			(*rows)++;
		}
	}
	return keep;
}

/* Write the buffer. On a failure the file is cut back to its last whole
 * row (or to nothing before the header was whole) and o->err is set; no
 * further write is made. Returns 0 or o->err. */
static int out_flush(struct out *o)
{
	size_t w = 0, keep;
	uint64_t rows;
	struct stat st;

	if (o->err)
		return o->err;
	while (w < o->len) {
		ssize_t n = write(o->fd, o->buf + w, o->len - w);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* A short write is followed by the one that says why
			 * (ENOSPC, EFBIG, EIO): this is that one. */
			o->err = n < 0 ? -errno : -EIO;
			break;
		}
		w += (size_t)n;
	}
	if (!o->err) {
		o->bytes += o->len;
		o->rows += o->buf_rows;
		o->len = o->hdr = 0;
		o->buf_rows = 0;
		return 0;
	}
	keep = whole_rows(o, w, &rows);
	if (keep < w && !(fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode) &&
			  ftruncate(o->fd, (off_t)(o->bytes + keep)) == 0))
		keep = w; /* not cut (a pipe): count what is there */
	o->bytes += keep;
	o->rows += rows;
	o->len = o->hdr = 0;
	o->buf_rows = 0;
	return o->err;
}

/* Queue @n bytes (a whole row, or the header when !@row). */
static int out_add(struct out *o, const void *p, size_t n, bool row)
{
	if (o->fd < 0)
		return 0;
	if (o->err)
		return o->err;
	if (o->len + n > o->cap && out_flush(o) < 0)
		return o->err;
	if (n > o->cap)
		return o->err = -E2BIG;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	if (row)
		o->buf_rows++;
	else
		o->hdr += n;
	return 0;
}

/*
 * Flush, fsync and close; then rename PATH.partial to PATH when it holds a
 * row, else remove it (PATH is left as it was). Returns 0 or the first
 * -errno (o->err keeps it).
 */
static int out_finish(struct out *o)
{
	struct stat st;
	bool regular;

	if (o->fd < 0)
		goto out;
	if (o->len)
		out_flush(o);
	regular = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
	if (regular && fsync(o->fd) != 0 && !o->err)
		o->err = -errno;
	if (o->fd != STDOUT_FILENO && close(o->fd) != 0 && !o->err)
		o->err = -errno;
	o->fd = -1;
	if (o->partial) {
		if (o->rows == 0) {
			unlink(o->partial);
			o->bytes = 0; /* nothing of this run is kept */
		} else if (rename(o->partial, o->path) != 0 && !o->err)
			o->err = -errno;
	}
out:
	free(o->partial);
	free(o->buf);
	o->partial = NULL;
	o->buf = NULL;
	return o->err;
}

int rec_create(struct rec **out, const struct rec_config *cfg, struct rec_error *err)
{
	struct rtl_rtde_recipe_opts opts = { .size = sizeof(opts), .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rtl_rtde_client_config cc = { .size = sizeof(cc) };
	struct rtl_rtde_transport_config tc = { .size = sizeof(tc), .client = &cc };
	struct rtl_loop_config lc = { .size = sizeof(lc) };
	struct rtl_error rterr = { 0 };
	struct rtl_rtde_recipe *r = NULL;
	struct rtl_rtde_handle ts;
	struct rec *rec;
	int ret;

	if (!out || !cfg || !cfg->outputs)
		return rtl_error_set(rec_err(err), -EINVAL,
				     "record: no configuration or no outputs");
	if (!cfg->csv_path && !cfg->bin_path)
		return rtl_error_set(rec_err(err), -EINVAL, "record: no output file");
	if (cfg->frequency < 0 || (cfg->frequency > 0 && cfg->frequency < 1) ||
	    isnan(cfg->frequency))
		return rtl_error_set(rec_err(err), -EINVAL,
				     "--frequency must be 0 (the maximum) or >= 1 Hz");
	if (cfg->duration_ns < 0)
		return rtl_error_set(rec_err(err), -EINVAL, "--duration must not be negative");
	if (cfg->ring_capacity & (cfg->ring_capacity - 1))
		return rtl_error_set(rec_err(err), -EINVAL,
				     "record: ring capacity must be a power of two");
	if (strlen(cfg->outputs) >= NAMES_MAX)
		return rtl_error_set(rec_err(err), -E2BIG, "record: the outputs list is too long");
	rec = calloc(1, sizeof(*rec));
	r = malloc(sizeof(*r));
	if (!rec || !r) {
		ret = rtl_error_set(rec_err(err), -ENOMEM, "out of memory");
		goto err_free;
	}
	rec->cfg = *cfg;
	snprintf(rec->outputs, sizeof(rec->outputs), "%s", cfg->outputs);
	snprintf(rec->host, sizeof(rec->host), "%s", cfg->host ? cfg->host : "127.0.0.1");
	rec->cfg.outputs = rec->outputs;
	rec->cfg.host = rec->host;
	if (!rec->cfg.port)
		rec->cfg.port = RTL_RTDE_PORT;
	atomic_init(&rec->stop_requested, 0);

	/* The frame size is known before connecting: the recipe is built here
	 * as the client will build it (no field is dropped). */
	ret = rtl_rtde_recipe_from_list(r, &opts, rec->outputs, NULL);
	if (ret > 0 && rtl_rtde_recipe_handle(r, &ts, "timestamp") < 0) {
		/* Skips are counted from `timestamp`: always record it. */
		if (strlen(cfg->outputs) + sizeof("timestamp,") > sizeof(rec->outputs)) {
			ret = rtl_error_set(rec_err(err), -E2BIG,
					    "record: the outputs list is too long");
			goto err_free;
		}
		snprintf(rec->outputs, sizeof(rec->outputs), "timestamp,%s", cfg->outputs);
		ret = rtl_rtde_recipe_from_list(r, &opts, rec->outputs, NULL);
	}
	if (ret < 0) {
		rtl_error_set(rec_err(err), ret, "record: the outputs do not build a recipe (%s)",
			      strerror(-ret));
		goto err_free;
	}
	rec->ring_capacity = ring_capacity(cfg, r->host_size);

	out_init(&rec->csv);
	out_init(&rec->bin);
	if (cfg->csv_path) {
		ret = out_open(&rec->csv, cfg->csv_path, false, err);
		if (ret < 0)
			goto err_files;
	}
	if (cfg->bin_path) {
		ret = out_open(&rec->bin, cfg->bin_path, true, err);
		if (ret < 0)
			goto err_files;
	}

	tc.host = rec->host;
	tc.port = rec->cfg.port;
	tc.connect_timeout_ns = cfg->connect_timeout_ns;
	/* The writer times the silence (--data-timeout) and words it. */
	tc.rx_timeout_ns = -1;
	cc.outputs = rec->outputs;
	cc.frequency = cfg->frequency;
	ret = rtl_rtde_transport_create(&rec->tr, &tc, &rterr);
	if (ret < 0) {
		rtl_error_set(rec_err(err), ret, "%s", rterr.msg);
		goto err_files;
	}
	rec->tr_ready = true;

	lc.transport = rtl_rtde_transport_base(rec->tr);
	lc.step = NULL; /* external-loop API: this thread reads every frame */
	lc.rt_mode = cfg->rt_mode;
	lc.rx_cpu = cfg->rx_cpu;
	lc.worker_cpu = -1;
	lc.ring_capacity = rec->ring_capacity;
	lc.every_frame = true;
	lc.watchdog_periods = -1; /* nothing is sent */
	lc.reconnect_attempts = 0;
	ret = rtl_loop_create(&rec->loop, &lc, &rterr);
	if (ret < 0) {
		rtl_error_set(rec_err(err), ret, "%s", rterr.msg);
		goto err_files;
	}
	free(r);
	*out = rec;
	return 0;

err_files:
	out_finish(&rec->csv);
	out_finish(&rec->bin);
err_free:
	if (rec && rec->tr_ready)
		rtl_rtde_transport_destroy(rec->tr);
	free(rec);
	free(r);
	return ret;
}

void rec_stop(struct rec *rec)
{
	if (!rec)
		return;
	atomic_store(&rec->stop_requested, 1);
	rtl_loop_stop(rec->loop);
}

void rec_destroy(struct rec *rec)
{
	if (!rec)
		return;
	rtl_loop_destroy(rec->loop);
	out_finish(&rec->csv);
	out_finish(&rec->bin);
	if (rec->tr_ready)
		rtl_rtde_transport_destroy(rec->tr);
	free(rec->line);
	free(rec);
}

/* ---- recording --------------------------------------------------------------------------- */

/* The first output that failed, or NULL. */
static struct out *failed_out(struct rec *rec)
{
	return rec->csv.err ? &rec->csv : rec->bin.err ? &rec->bin : NULL;
}

static int write_headers(struct rec *rec, const struct rec_meta *m)
{
	int n;

	if (rec->csv.fd >= 0) {
		n = rec_csv_header(rec->line, rec->line_cap, &rec->schema,
				   !rec->cfg.no_extra_columns);
		if (n < 0 || out_add(&rec->csv, rec->line, (size_t)n, false) < 0)
			return -EIO;
	}
	if (rec->bin.fd >= 0) {
		rec->bin.record_size = rec->schema.record_size;
		n = rec_bin_header(rec->line, rec->line_cap, &rec->schema, m);
		if (n < 0 || out_add(&rec->bin, rec->line, (size_t)n, false) < 0)
			return -EIO;
	}
	return 0;
}

static int write_row(struct rec *rec, const struct rec_row *row)
{
	int n;

	if (rec->csv.fd >= 0) {
		n = rec_csv_row(rec->line, rec->line_cap, &rec->schema, row,
				!rec->cfg.no_extra_columns);
		if (n < 0 || out_add(&rec->csv, rec->line, (size_t)n, true) < 0)
			return -EIO;
	}
	if (rec->bin.fd >= 0) {
		n = rec_bin_row((unsigned char *)rec->line, rec->line_cap, &rec->schema, row);
		if (n < 0 || out_add(&rec->bin, rec->line, (size_t)n, true) < 0)
			return -EIO;
	}
	return 0;
}

static int flush_all(struct rec *rec)
{
	int a = rec->csv.fd >= 0 ? out_flush(&rec->csv) : 0;
	int b = rec->bin.fd >= 0 ? out_flush(&rec->bin) : 0;

	return a < 0 ? a : b;
}

/*
 * The client's skip count, widened to 64 bits: the loop's frame carries
 * at most 32 bits (rtl_loop_frame.ctrl_skipped saturates at UINT32_MAX),
 * so a timestamp jump of more than 2^32 periods does not fit. The client
 * counted it from the same timestamps (io/rtde/rtde_client.c account()),
 * so the gap gives the count back: the estimate itself when the frame's
 * count saturated, else the count congruent to @low nearest to it.
 */
static uint64_t widen_skipped(uint32_t low, double gap_s, const struct rtl_rtde_handshake *info)
{
	double est;
	uint64_t k;

	if (!isfinite(gap_s) || gap_s <= 0 || info->divisor == 0)
		return low;
	est = gap_s * info->max_frequency / info->divisor - 1;
	if (est > 1e15)
		est = 1e15; /* the client's own cap */
	if (low == UINT32_MAX && est >= (double)UINT32_MAX)
		return (uint64_t)(est + 0.5); /* the frame's count saturated */
	if (est < 2147483648.0)
		return low;
	k = (uint64_t)((est - low) / 4294967296.0 + 0.5);
	return low + (k << 32);
}

static void progress(struct rec *rec, const struct rec_result *res, int64_t now, int64_t start)
{
	struct rtl_loop_counters st = { .size = sizeof(st) };

	rtl_loop_stats(rec->loop, &st);
	fprintf(rec->cfg.progress,
		"rtde-record: %.0f s: %" PRIu64 " packages, %" PRIu64 " controller skips, %" PRIu64
		" dropped (ring full)\n",
		(double)(now - start) / 1e9, res->rows, res->ctrl_skipped, st.ring_full);
	fflush(rec->cfg.progress);
}

static void fill_meta(struct rec *rec, struct rec_meta *m, const struct rtl_rtde_handshake *info)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->host, sizeof(m->host), "%s", rec->host);
	m->port = rec->cfg.port;
	snprintf(m->controller, sizeof(m->controller),
		 "%" PRIu32 ".%" PRIu32 ".%" PRIu32 ".%" PRIu32, info->version.major,
		 info->version.minor, info->version.bugfix, info->version.build);
	m->frequency = info->frequency;
	m->period_ns = info->period_ns;
}

/* " (wrong_size W, wrong_recipe R, malformed M)" */
static void drops_text(char *buf, size_t cap, const struct rec_result *res)
{
	snprintf(buf, cap, "wrong_size %" PRIu64 ", wrong_recipe %" PRIu64 ", malformed %" PRIu64,
		 res->wrong_size, res->wrong_recipe, res->malformed);
}

static uint64_t client_drops(const struct rec_result *res)
{
	return res->wrong_size + res->wrong_recipe + res->malformed;
}

/* res->end is REC_END_NO_DATA, or the run ended with no row: say what
 * the controller did. */
static void explain_no_data(struct rec_result *res, uint64_t seen)
{
	char drops[160];
	double s = (double)res->data_timeout_ns / 1e9;

	drops_text(drops, sizeof(drops), res);
	if (res->end != REC_END_NO_DATA) {
		if (client_drops(res))
			rtl_error_set(
				&res->io_error.err, -ENODATA,
				"no row was recorded: this client dropped all %" PRIu64
				" data packages the controller sent in the %.1f s of the recording "
				"(%s)",
				client_drops(res), (double)res->wall_ns / 1e9, drops);
		else
			rtl_error_set(
				&res->io_error.err, -ENODATA,
				"no row was recorded: the controller sent no data package in the "
				"%.1f s of the recording",
				(double)res->wall_ns / 1e9);
		return;
	}
	if (seen == 0 && client_drops(res))
		rtl_error_set(
			&res->io_error.err, -ETIMEDOUT,
			"the controller sent no usable data package for %.1f s after START: this "
			"client dropped all %" PRIu64
			" it sent (%s), so the controller streams another layout than the recipe "
			"it accepted; --data-timeout sets the limit",
			s, client_drops(res), drops);
	else if (seen == 0)
		rtl_error_set(
			&res->io_error.err, -ETIMEDOUT,
			"the controller sent no data package for %.1f s after START: it accepted "
			"the recipe (%.1f Hz) and the start, then sent nothing (PolyScope X sends "
			"no data until its safety setup is confirmed: see its text messages with "
			"--verbose; else the controller stalled); --data-timeout sets the limit",
			s, res->info.frequency);
	else
		rtl_error_set(
			&res->io_error.err, -ETIMEDOUT,
			"the controller sent no data package for %.1f s after package %" PRIu64
			" (controller time %.3f s): it stalled or the link is down; --data-timeout "
			"sets the limit",
			s, seen, res->last_ts);
}

/* The connection ended without a stop: word it by what the peer did. */
static void explain_lost(struct rec *rec, struct rec_result *res,
			 const struct rtl_rtde_client_error *ce, uint64_t seen)
{
	const char *how;

	if (!ce->err.code) {
		rtl_error_set(&res->io_error.err, res->loop_result ? res->loop_result : -ECONNRESET,
			      "%s:%u: the connection was lost after %" PRIu64 " data packages (%s)",
			      rec->host, rec->cfg.port, seen,
			      strerror(res->loop_result ? -res->loop_result : ECONNRESET));
		return;
	}
	if (ce->state != RTL_RTDE_CLIENT_RUNNING || ce->err.code != -ECONNRESET) {
		/* During a handshake step, or a protocol error: the client's
		 * message names the step and the package. */
		rtl_error_set(&res->io_error.err, ce->err.code, "%s:%u: %s", rec->host,
			      rec->cfg.port, ce->err.msg);
		return;
	}
	/* Closed while streaming. The client's text blames a slow reader,
	 * which this host can rule out: the writer kept up (no ring overflow). */
	how = strstr(ce->err.msg, "reset the connection") ? "reset" : "closed";
	if (res->ring_full)
		rtl_error_set(
			&res->io_error.err, ce->err.code,
			"%s:%u: the controller %s the connection %.1f s after START, after %" PRIu64
			" data packages, while this host was behind (the ring of %" PRIu32
			" packages overflowed): controllers close a client that reads too slowly; "
			"write to a faster disk, use --binary or lower --frequency",
			rec->host, rec->cfg.port, how, (double)res->wall_ns / 1e9, seen,
			res->ring_capacity);
	else
		rtl_error_set(
			&res->io_error.err, ce->err.code,
			"%s:%u: the controller %s the connection %.1f s after START, after %" PRIu64
			" data packages; this host read every package in time (no ring overflow), "
			"so not for reading slowly: a controller closes the clients past its limit "
			"(about 3 RTDE clients, fieldbus adapters included; rtde-sim "
			"--max-clients) "
			"and restarts RTDE when it reboots; check for other clients, then "
			"reconnect",
			rec->host, rec->cfg.port, how, (double)res->wall_ns / 1e9, seen);
}

/* A write failed: name the file, the cause and the rows it holds. */
static void explain_io(struct rec_result *res, const struct out *o)
{
	if (o->rows)
		rtl_error_set(&res->io_error.err, o->err,
			      "%s: %s after %" PRIu64
			      " complete rows; the file holds those %" PRIu64 " rows",
			      o->path, strerror(-o->err), o->rows, o->rows);
	else
		rtl_error_set(&res->io_error.err, o->err,
			      "%s: %s before the first row was complete; %s was left as it was",
			      o->path, strerror(-o->err), o->path);
}

int rec_run(struct rec *rec, struct rec_result *res, struct rec_error *err)
{
	struct rtl_error rterr = { 0 };
	struct rtl_rtde_client *client;
	struct rtl_rtde_client_counters cs = { .size = sizeof(cs) };
	struct rtl_loop_counters st = { .size = sizeof(st) };
	struct rec_meta meta;
	struct out *bad_out;
	uint64_t expect_seq = 0, seen = 0;
	int64_t start, t_end, next_progress, next_flush, now, last_data, timeout;
	double prev_ts = NAN;
	bool ended = false;
	int ret;

	if (!rec || !res)
		return rtl_error_set(rec_err(err), -EINVAL, "record: NULL");
	memset(res, 0, sizeof(*res));
	res->first_ts = res->last_ts = NAN;
	res->ring_capacity = rec->ring_capacity;
	timeout = rec->cfg.data_timeout_ns < 0	 ? 0
		  : rec->cfg.data_timeout_ns > 0 ? rec->cfg.data_timeout_ns
						 : REC_DATA_TIMEOUT_NS;
	res->data_timeout_ns = timeout;
	ret = rtl_loop_start(rec->loop, &rterr);
	if (ret < 0) {
		/* Nothing was recorded: the partial files go, PATH stays. */
		out_finish(&rec->csv);
		out_finish(&rec->bin);
		return rtl_error_set(rec_err(err), ret, "%s", rterr.msg);
	}
	/* A stop asked for during the connect (e.g. SIGINT) was reset by
	 * the start: ask again. */
	if (atomic_load(&rec->stop_requested))
		rtl_loop_stop(rec->loop);
	client = rtl_rtde_transport_client(rec->tr);
	res->info = *rtl_rtde_client_info(client);
	snprintf(res->rt_notes, sizeof(res->rt_notes), "%s", rtl_loop_rt_notes(rec->loop));
	ret = rec_schema_from_recipe(&rec->schema, rtl_rtde_client_output_recipe(client));
	if (ret == 0) {
		/* The line buffer also holds a binary header or record. */
		rec->line_cap = rec_csv_line_max(&rec->schema);
		if (rec->line_cap < 1024 + (size_t)rec->schema.n * 128)
			rec->line_cap = 1024 + (size_t)rec->schema.n * 128;
		if (rec->line_cap < rec->schema.record_size)
			rec->line_cap = rec->schema.record_size;
		rec->line = malloc(rec->line_cap);
		if (!rec->line)
			ret = -ENOMEM;
	}
	if (ret < 0) {
		rtl_loop_stop(rec->loop);
		rtl_loop_join(rec->loop);
		out_finish(&rec->csv);
		out_finish(&rec->bin);
		return rtl_error_set(rec_err(err), ret, "record: cannot set up the rows (%s)",
				     strerror(-ret));
	}
	fill_meta(rec, &meta, &res->info);
	if (rec->cfg.progress) {
		fprintf(rec->cfg.progress,
			"rtde-record: connected to %s:%u: controller %s, protocol %d, %.1f Hz "
			"(one package every %u control cycles), %u fields, ring of %" PRIu32
			" packages\n",
			rec->host, rec->cfg.port, meta.controller, (int)res->info.protocol,
			res->info.frequency, res->info.divisor, rec->schema.n, rec->ring_capacity);
		if (res->rt_notes[0])
			fprintf(rec->cfg.progress, "rtde-record: real-time notes:\n%s\n",
				res->rt_notes);
	}
	start = rtl_time_now();
	last_data = start;
	t_end = rec->cfg.duration_ns ? start + rec->cfg.duration_ns : INT64_MAX;
	next_progress = start + RTL_NS_PER_SEC;
	next_flush = start + REC_FLUSH_NS;
	if (write_headers(rec, &meta) < 0 || flush_all(rec) < 0) {
		res->end = REC_END_IO;
		rtl_loop_stop(rec->loop);
		ended = true;
	}

	while (!ended) {
		const struct rtl_loop_frame *f;
		struct rec_row row;
		int64_t until;

		now = rtl_time_now();
		if (now >= next_flush) {
			/* Whole rows reach the file at least this often: a kill
			 * loses no more. */
			next_flush = now + REC_FLUSH_NS;
			if (flush_all(rec) < 0) {
				res->end = REC_END_IO;
				rtl_loop_stop(rec->loop);
				break;
			}
		}
		until = now + WAIT_NS;
		if (until > t_end)
			until = t_end > now ? t_end : now;
		if (rec->cfg.progress && until > next_progress)
			until = next_progress > now ? next_progress : now;
		if (timeout && until > last_data + timeout)
			until = last_data + timeout > now ? last_data + timeout : now;
		f = rtl_loop_read(rec->loop, until - now);
		if (!f) {
			now = rtl_time_now();
			if (now < until)
				break; /* stopped, and every frame is written */
			if (now >= t_end) {
				res->end = REC_END_DURATION;
				rtl_loop_stop(rec->loop);
				break;
			}
			if (timeout && now - last_data >= timeout) {
				res->end = REC_END_NO_DATA;
				rtl_loop_stop(rec->loop);
				break;
			}
			if (rec->cfg.progress && now >= next_progress) {
				progress(rec, res, now, start);
				next_progress += RTL_NS_PER_SEC;
			}
			continue;
		}
		if (f->rx_ns >= t_end) {
			res->end = REC_END_DURATION;
			rtl_loop_stop(rec->loop);
			break;
		}
		last_data = f->rx_ns;
		seen++;
		row.seq = f->seq;
		row.rx_ns = f->rx_ns;
		row.ctrl_skipped =
			widen_skipped(f->ctrl_skipped, f->ctrl_time - prev_ts, &res->info);
		prev_ts = f->ctrl_time;
		/* A seq gap: frames the rx thread could not queue (ring full). */
		row.dropped = f->seq - expect_seq;
		row.values = f->values;
		expect_seq = f->seq + 1;
		if (f->size != rec->schema.values_size) {
			/* Cannot happen for frames of this recipe; keep the
			 * file consistent and count it as dropped. */
			expect_seq = f->seq;
			continue;
		}
		if (write_row(rec, &row) < 0) {
			res->end = REC_END_IO;
			rtl_loop_stop(rec->loop);
			break;
		}
		if (res->rows == 0) {
			res->first_rx_ns = f->rx_ns;
			res->first_ts = f->ctrl_time;
		}
		res->last_rx_ns = f->rx_ns;
		res->last_ts = f->ctrl_time;
		res->rows++;
		res->ctrl_skipped += row.ctrl_skipped;
		res->dropped += row.dropped;
		if (rec->cfg.samples && res->rows >= rec->cfg.samples) {
			res->end = REC_END_SAMPLES;
			rtl_loop_stop(rec->loop);
			break;
		}
		if (rec->cfg.progress && f->rx_ns >= next_progress) {
			progress(rec, res, f->rx_ns, start);
			next_progress += RTL_NS_PER_SEC;
		}
	}

	res->loop_result = rtl_loop_join(rec->loop);
	res->wall_ns = rtl_time_now() - start;
	rtl_loop_stats(rec->loop, &st);
	res->frames = st.frames;
	res->ring_full = st.ring_full;
	res->after_stop = st.frames - res->rows - res->dropped;
	/* The rx thread has ended: its client may be read. */
	rtl_rtde_client_stats(client, &cs);
	res->client_data = cs.data;
	res->client_skipped = cs.skipped;
	res->wrong_recipe = cs.wrong_recipe;
	res->wrong_size = cs.wrong_size;
	res->malformed = cs.malformed;
	/* The controller's skips are those before the rows written: the
	 * client's total also holds the gap before a package that came after
	 * the stop. Its own drops (wrong size, recipe, malformed) are not in
	 * either: they are counted under their names. */
	res->skipped = res->ctrl_skipped;

	/* Whole rows into the files, synced, renamed. */
	out_finish(&rec->csv);
	out_finish(&rec->bin);
	bad_out = failed_out(rec);
	res->bytes = rec->csv.bytes + rec->bin.bytes;
	if (rec->csv.path && rec->bin.path)
		res->rows = rec->csv.rows < rec->bin.rows ? rec->csv.rows : rec->bin.rows;
	else
		res->rows = rec->csv.path ? rec->csv.rows : rec->bin.rows;

	if (bad_out) {
		res->end = REC_END_IO;
		explain_io(res, bad_out);
	} else if (res->end == REC_END_NO_DATA) {
		explain_no_data(res, seen);
	} else if (res->end != REC_END_SAMPLES && res->end != REC_END_DURATION) {
		if (atomic_load(&rec->stop_requested)) {
			res->end = REC_END_STOPPED;
		} else {
			res->end = REC_END_LOST;
			explain_lost(rec, res, rtl_rtde_client_last_error(client), seen);
		}
	}
	if (res->rows == 0 && (res->end == REC_END_STOPPED || res->end == REC_END_DURATION))
		explain_no_data(res, seen);
	return 0;
}

/* ---- summary -------------------------------------------------------------------------------- */

const char *rec_end_name(enum rec_end end)
{
	switch (end) {
	case REC_END_STOPPED:
		return "stopped";
	case REC_END_SAMPLES:
		return "samples";
	case REC_END_DURATION:
		return "duration";
	case REC_END_LOST:
		return "connection lost";
	case REC_END_IO:
		return "write error";
	case REC_END_NO_DATA:
		return "no data";
	}
	return "?";
}

void rec_summary(FILE *f, const struct rec_result *res, bool json)
{
	double span = res->rows > 1 ? (double)(res->last_rx_ns - res->first_rx_ns) / 1e9 : 0;
	double rate = span > 0 ? (double)(res->rows - 1) / span : 0;
	double ctrl_span = res->rows > 1 ? res->last_ts - res->first_ts : 0;

	if (json) {
		fprintf(f,
			"{\"end\":\"%s\",\"packages\":%" PRIu64 ",\"lost\":%" PRIu64
			",\"skipped\":%" PRIu64 ",\"controller_skips\":%" PRIu64
			",\"wrong_size\":%" PRIu64 ",\"wrong_recipe\":%" PRIu64
			",\"malformed\":%" PRIu64 ",\"writer_overflow\":%" PRIu64
			",\"dropped\":%" PRIu64 ",\"after_stop\":%" PRIu64
			",\"client_packages\":%" PRIu64 ",\"client_skips\":%" PRIu64
			",\"bytes\":%" PRIu64
			",\"duration_s\":%.6f,\"controller_duration_s\":%.6f,\"rate_hz\":%.3f"
			",\"frequency_hz\":%.3f,\"ring_capacity\":%" PRIu32 "}\n",
			rec_end_name(res->end), res->rows, res->ctrl_skipped + res->dropped,
			res->skipped, res->skipped, res->wrong_size, res->wrong_recipe,
			res->malformed, res->ring_full, res->dropped, res->after_stop,
			res->client_data, res->client_skipped, res->bytes, span,
			isnan(ctrl_span) ? 0.0 : ctrl_span, rate, res->info.frequency,
			res->ring_capacity);
		return;
	}
	fprintf(f,
		"rtde-record: %" PRIu64
		" packages recorded over %.3f s (%.1f Hz effective, %.1f Hz "
		"configured), ended: %s\n",
		res->rows, span, rate, res->info.frequency, rec_end_name(res->end));
	fprintf(f,
		"rtde-record: controller skips: %" PRIu64
		"; dropped by this client: wrong_size %" PRIu64 ", wrong_recipe %" PRIu64
		", malformed %" PRIu64 "; writer overflow: %" PRIu64 "; lost column total: %" PRIu64
		"; bytes written: %" PRIu64 "\n",
		res->skipped, res->wrong_size, res->wrong_recipe, res->malformed, res->ring_full,
		res->ctrl_skipped + res->dropped, res->bytes);
	if (res->after_stop)
		fprintf(f,
			"rtde-record: %" PRIu64 " packages arrived after the stop (not recorded)\n",
			res->after_stop);
	if (res->ring_full || res->dropped)
		fprintf(f,
			"rtde-record: WARNING: %" PRIu64
			" packages were received but NOT recorded: "
			"the writer fell behind and the ring of %" PRIu32 " packages was full. "
			"The rows after each gap count them in the lost column. Fix: write to a "
			"faster disk, use --binary, or lower --frequency.\n",
			res->ring_full, res->ring_capacity);
}
