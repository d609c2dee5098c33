// SPDX-License-Identifier: MIT
/*
 * rtde-record's recording: the loop's rx thread receives, the calling
 * thread writes every frame in order (see record.h for the design and why
 * the writer reads the loop's ring directly).
 *
 * The writer waits in rtl_loop_read() (a futex sleep, never a spin) at
 * most 100 ms at a time, so it also notices the duration ending, prints
 * progress and flushes nothing early: stdio's 1 MiB buffers turn the rows
 * into large writes. rtl_loop_read() returns NULL before its time-out only
 * when the loop has stopped and the ring is empty: that is how the writer
 * knows it has written the last frame received.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "record.h"

#define WAIT_NS (100 * RTL_NS_PER_MS)
#define NAMES_MAX RTL_RTDE_CLIENT_TX_SIZE

struct rtl_rec {
	struct rtl_rec_config cfg;
	char outputs[NAMES_MAX];
	char host[128];
	struct rtl_rtde_transport *tr;
	bool tr_ready;
	struct rtl_loop *loop;
	struct rtl_rec_schema schema;
	FILE *csv, *bin;
	char *line;
	size_t line_cap;
	uint32_t ring_capacity;
	atomic_int stop_requested;
};

static int set_err(struct rtl_rec_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct rtl_rec_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

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

int rtl_rec_outputs(char *buf, size_t cap, const char *fields, const char *config, const char *key,
		    bool *added_ts, struct rtl_rec_error *err)
{
	struct rtl_rtde_recipe_opts opts = { .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rtl_rtde_recipe *r = malloc(sizeof(*r));
	struct rtl_rtde_report *rep = malloc(sizeof(*rep));
	struct rtl_rtde_handle h;
	const char *what = fields ? "--fields" : "--config";
	bool xml = false;
	size_t off = 0;
	int ret;

	if (added_ts)
		*added_ts = false;
	if (!r || !rep) {
		ret = set_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (!fields && !config) {
		ret = set_err(err, -EINVAL, "no fields to record: give --fields or --config");
		goto out;
	}
	if (fields) {
		ret = rtl_rtde_recipe_from_list(r, &opts, fields, rep);
	} else {
		ret = is_xml(config, &xml);
		if (ret < 0) {
			set_err(err, ret, "--config '%s': cannot open it: %s", config,
				strerror(-ret));
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
		set_err(err, ret, "%s%s%s: the recipe does not build:\n%.*s%s", what,
			config && !fields ? " " : "", config && !fields ? config : "", (int)len,
			rep->text,
			xml && ret == -ENOENT && !key ? "\n(choose a recipe with --recipe KEY)"
						      : "");
		goto out;
	}
	if (rtl_rtde_recipe_handle(r, "timestamp", &h) < 0) {
		/* Skips are counted from `timestamp`: always record it. */
		off = (size_t)snprintf(buf, cap, "timestamp,");
		if (added_ts)
			*added_ts = true;
	}
	if (off >= cap || rtl_rtde_recipe_names(r, buf + off, cap - off) < 0) {
		ret = set_err(err, -E2BIG, "%s: the names do not fit %zu bytes", what, cap);
		goto out;
	}
	ret = (int)r->n + (off ? 1 : 0);
out:
	free(r);
	free(rep);
	return ret;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static uint32_t ring_capacity(const struct rtl_rec_config *cfg, size_t values)
{
	double rate = cfg->frequency > 0 ? cfg->frequency : 500.0;
	size_t slot = sizeof(struct rtl_loop_frame) + ((values + 7) & ~(size_t)7);
	uint32_t cap = 1024;

	if (cfg->ring_capacity)
		return cfg->ring_capacity;
	while (cap < rate * RTL_REC_BUFFER_S && cap < (1u << 20))
		cap <<= 1;
	while (cap > 256 && (size_t)cap * slot > RTL_REC_RING_MAX_BYTES)
		cap >>= 1;
	return cap;
}

static int open_out(FILE **f, const char *path, const char *mode, struct rtl_rec_error *err)
{
	if (strcmp(path, "-") == 0) {
		*f = stdout;
	} else {
		*f = fopen(path, mode);
		if (!*f)
			return set_err(err, -errno, "--output '%s': cannot create it: %s", path,
				       strerror(errno));
	}
	setvbuf(*f, NULL, _IOFBF, RTL_REC_IO_BUFFER);
	return 0;
}

static int close_out(FILE **f)
{
	int ret = 0;

	if (!*f)
		return 0;
	if (fflush(*f) != 0)
		ret = -errno;
	if (*f != stdout && fclose(*f) != 0 && !ret)
		ret = -errno;
	*f = NULL;
	return ret;
}

int rtl_rec_create(struct rtl_rec **out, const struct rtl_rec_config *cfg,
		   struct rtl_rec_error *err)
{
	struct rtl_rtde_recipe_opts opts = { .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rtl_rtde_transport_config tc = { 0 };
	struct rtl_loop_config lc = { 0 };
	struct rtl_error rterr = { 0 };
	struct rtl_rtde_recipe *r = NULL;
	struct rtl_rtde_handle ts;
	struct rtl_rec *rec;
	int ret;

	if (!out || !cfg || !cfg->outputs)
		return set_err(err, -EINVAL, "record: no configuration or no outputs");
	if (!cfg->csv_path && !cfg->bin_path)
		return set_err(err, -EINVAL, "record: no output file");
	if (cfg->frequency < 0 || (cfg->frequency > 0 && cfg->frequency < 1) ||
	    isnan(cfg->frequency))
		return set_err(err, -EINVAL, "--frequency must be 0 (the maximum) or >= 1 Hz");
	if (cfg->duration_ns < 0)
		return set_err(err, -EINVAL, "--duration must not be negative");
	if (cfg->ring_capacity & (cfg->ring_capacity - 1))
		return set_err(err, -EINVAL, "record: ring capacity must be a power of two");
	if (strlen(cfg->outputs) >= NAMES_MAX)
		return set_err(err, -E2BIG, "record: the outputs list is too long");
	rec = calloc(1, sizeof(*rec));
	r = malloc(sizeof(*r));
	if (!rec || !r) {
		ret = set_err(err, -ENOMEM, "out of memory");
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
	if (ret > 0 && rtl_rtde_recipe_handle(r, "timestamp", &ts) < 0) {
		/* Skips are counted from `timestamp`: always record it. */
		if (strlen(cfg->outputs) + sizeof("timestamp,") > sizeof(rec->outputs)) {
			ret = set_err(err, -E2BIG, "record: the outputs list is too long");
			goto err_free;
		}
		snprintf(rec->outputs, sizeof(rec->outputs), "timestamp,%s", cfg->outputs);
		ret = rtl_rtde_recipe_from_list(r, &opts, rec->outputs, NULL);
	}
	if (ret < 0) {
		set_err(err, ret, "record: the outputs do not build a recipe (%s)", strerror(-ret));
		goto err_free;
	}
	rec->ring_capacity = ring_capacity(cfg, r->host_size);

	if (cfg->csv_path) {
		ret = open_out(&rec->csv, cfg->csv_path, "w", err);
		if (ret < 0)
			goto err_free;
	}
	if (cfg->bin_path) {
		ret = open_out(&rec->bin, cfg->bin_path, "wb", err);
		if (ret < 0)
			goto err_files;
	}

	tc.host = rec->host;
	tc.port = rec->cfg.port;
	tc.connect_timeout_ns = cfg->connect_timeout_ns;
	tc.client.outputs = rec->outputs;
	tc.client.frequency = cfg->frequency;
	ret = rtl_rtde_transport_create(&rec->tr, &tc, &rterr);
	if (ret < 0) {
		set_err(err, ret, "%s", rterr.msg);
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
		set_err(err, ret, "%s", rterr.msg);
		goto err_files;
	}
	free(r);
	*out = rec;
	return 0;

err_files:
	close_out(&rec->csv);
	close_out(&rec->bin);
err_free:
	if (rec && rec->tr_ready)
		rtl_rtde_transport_destroy(rec->tr);
	free(rec);
	free(r);
	return ret;
}

void rtl_rec_stop(struct rtl_rec *rec)
{
	if (!rec)
		return;
	atomic_store(&rec->stop_requested, 1);
	rtl_loop_stop(rec->loop);
}

void rtl_rec_destroy(struct rtl_rec *rec)
{
	if (!rec)
		return;
	rtl_loop_destroy(rec->loop);
	close_out(&rec->csv);
	close_out(&rec->bin);
	if (rec->tr_ready)
		rtl_rtde_transport_destroy(rec->tr);
	free(rec->line);
	free(rec);
}

/* ---- recording --------------------------------------------------------------------------- */

static int write_headers(struct rtl_rec *rec, const struct rtl_rec_meta *m, uint64_t *bytes)
{
	int n;

	if (rec->csv) {
		n = rtl_rec_csv_header(rec->line, rec->line_cap, &rec->schema,
				       !rec->cfg.no_extra_columns);
		if (n < 0 || fwrite(rec->line, (size_t)n, 1, rec->csv) != 1)
			return -EIO;
		*bytes += (uint64_t)n;
	}
	if (rec->bin) {
		n = rtl_rec_bin_header(rec->bin, &rec->schema, m);
		if (n < 0)
			return -EIO;
		*bytes += (uint64_t)n;
	}
	return 0;
}

static int write_row(struct rtl_rec *rec, const struct rtl_rec_row *row, uint64_t *bytes)
{
	int n;

	if (rec->csv) {
		n = rtl_rec_csv_row(rec->line, rec->line_cap, &rec->schema, row,
				    !rec->cfg.no_extra_columns);
		if (n < 0 || fwrite(rec->line, (size_t)n, 1, rec->csv) != 1)
			return -EIO;
		*bytes += (uint64_t)n;
	}
	if (rec->bin) {
		n = rtl_rec_bin_row(rec->bin, &rec->schema, row);
		if (n < 0)
			return -EIO;
		*bytes += (uint64_t)n;
	}
	return 0;
}

static void progress(struct rtl_rec *rec, const struct rtl_rec_result *res, int64_t now,
		     int64_t start)
{
	struct rtl_loop_stats st;

	rtl_loop_stats(rec->loop, &st);
	fprintf(rec->cfg.progress,
		"rtde-record: %.0f s: %" PRIu64 " packages, %" PRIu64 " controller skips, %" PRIu64
		" dropped (ring full)\n",
		(double)(now - start) / 1e9, res->rows, res->ctrl_skipped, st.ring_full);
	fflush(rec->cfg.progress);
}

static void fill_meta(struct rtl_rec *rec, struct rtl_rec_meta *m,
		      const struct rtl_rtde_client_info *info)
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

int rtl_rec_run(struct rtl_rec *rec, struct rtl_rec_result *res, struct rtl_rec_error *err)
{
	struct rtl_error rterr = { 0 };
	struct rtl_rtde_client *client;
	struct rtl_loop_stats st;
	struct rtl_rec_meta meta;
	uint64_t expect_seq = 0;
	int64_t start, t_end, next_progress, now;
	bool ended = false;
	int ret;

	if (!rec || !res)
		return set_err(err, -EINVAL, "record: NULL");
	memset(res, 0, sizeof(*res));
	res->first_ts = res->last_ts = NAN;
	res->ring_capacity = rec->ring_capacity;
	ret = rtl_loop_start(rec->loop, &rterr);
	if (ret < 0)
		return set_err(err, ret, "%s", rterr.msg);
	/* A stop asked for during the connect (e.g. SIGINT) was reset by
	 * the start: ask again. */
	if (atomic_load(&rec->stop_requested))
		rtl_loop_stop(rec->loop);
	client = rtl_rtde_transport_client(rec->tr);
	res->info = *rtl_rtde_client_info(client);
	snprintf(res->rt_notes, sizeof(res->rt_notes), "%s", rtl_loop_rt_notes(rec->loop));
	ret = rtl_rec_schema_from_recipe(&rec->schema, rtl_rtde_client_output_recipe(client));
	if (ret == 0) {
		rec->line_cap = rtl_rec_csv_line_max(&rec->schema);
		rec->line = malloc(rec->line_cap);
		if (!rec->line)
			ret = -ENOMEM;
	}
	if (ret < 0) {
		rtl_loop_stop(rec->loop);
		rtl_loop_join(rec->loop);
		return set_err(err, ret, "record: cannot set up the rows (%s)", strerror(-ret));
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
	t_end = rec->cfg.duration_ns ? start + rec->cfg.duration_ns : INT64_MAX;
	next_progress = start + RTL_NS_PER_SEC;
	if (write_headers(rec, &meta, &res->bytes) < 0) {
		res->end = RTL_REC_END_IO;
		set_err(&res->io_error, -EIO, "cannot write the header: %s", strerror(errno));
		rtl_loop_stop(rec->loop);
		ended = true;
	}

	while (!ended) {
		const struct rtl_loop_frame *f;
		struct rtl_rec_row row;
		int64_t until;

		now = rtl_time_now();
		until = now + WAIT_NS;
		if (until > t_end)
			until = t_end > now ? t_end : now;
		if (rec->cfg.progress && until > next_progress)
			until = next_progress > now ? next_progress : now;
		f = rtl_loop_read(rec->loop, until - now);
		if (!f) {
			now = rtl_time_now();
			if (now < until)
				break; /* stopped, and every frame is written */
			if (now >= t_end) {
				res->end = RTL_REC_END_DURATION;
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
			res->end = RTL_REC_END_DURATION;
			rtl_loop_stop(rec->loop);
			break;
		}
		row.seq = f->seq;
		row.rx_ns = f->rx_ns;
		row.ctrl_skipped = f->ctrl_skipped;
		/* A seq gap: frames the rx thread could not queue (ring full). */
		row.dropped = (uint32_t)(f->seq - expect_seq);
		row.values = f->values;
		expect_seq = f->seq + 1;
		if (f->size != rec->schema.values_size) {
			/* Cannot happen for frames of this recipe; keep the
			 * file consistent and count it as dropped. */
			expect_seq = f->seq;
			continue;
		}
		if (write_row(rec, &row, &res->bytes) < 0) {
			res->end = RTL_REC_END_IO;
			set_err(&res->io_error, -EIO, "cannot write the recording: %s",
				strerror(errno));
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
			res->end = RTL_REC_END_SAMPLES;
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
	if (res->end != RTL_REC_END_SAMPLES && res->end != RTL_REC_END_DURATION &&
	    res->end != RTL_REC_END_IO) {
		if (atomic_load(&rec->stop_requested)) {
			res->end = RTL_REC_END_STOPPED;
		} else {
			const struct rtl_rtde_client_error *ce = rtl_rtde_client_last_error(client);

			res->end = RTL_REC_END_LOST;
			set_err(&res->io_error, res->loop_result ? res->loop_result : -ECONNRESET,
				"%s:%u: %s", rec->host, rec->cfg.port,
				ce->err.code ? ce->err.msg
					     : "the controller closed the connection");
		}
	}
	ret = close_out(&rec->csv);
	if (ret == 0)
		ret = close_out(&rec->bin);
	else
		close_out(&rec->bin);
	if (ret < 0 && res->end != RTL_REC_END_IO) {
		res->end = RTL_REC_END_IO;
		set_err(&res->io_error, ret, "cannot write the recording: %s", strerror(-ret));
	}
	rtl_loop_stats(rec->loop, &st);
	res->frames = st.frames;
	res->ring_full = st.ring_full;
	res->after_stop = st.frames - res->rows - res->dropped;
	/* The rx thread has ended: its client may be read. */
	res->client_data = rtl_rtde_client_stats(client)->data;
	res->client_skipped = rtl_rtde_client_stats(client)->skipped;
	return 0;
}

/* ---- summary -------------------------------------------------------------------------------- */

const char *rtl_rec_end_name(enum rtl_rec_end end)
{
	switch (end) {
	case RTL_REC_END_STOPPED:
		return "stopped";
	case RTL_REC_END_SAMPLES:
		return "samples";
	case RTL_REC_END_DURATION:
		return "duration";
	case RTL_REC_END_LOST:
		return "connection lost";
	case RTL_REC_END_IO:
		return "write error";
	}
	return "?";
}

void rtl_rec_summary(FILE *f, const struct rtl_rec_result *res, bool json)
{
	double span = res->rows > 1 ? (double)(res->last_rx_ns - res->first_rx_ns) / 1e9 : 0;
	double rate = span > 0 ? (double)(res->rows - 1) / span : 0;
	double ctrl_span = res->rows > 1 ? res->last_ts - res->first_ts : 0;

	if (json) {
		fprintf(f,
			"{\"end\":\"%s\",\"packages\":%" PRIu64 ",\"controller_skips\":%" PRIu64
			",\"writer_overflow\":%" PRIu64 ",\"dropped\":%" PRIu64
			",\"after_stop\":%" PRIu64 ",\"client_packages\":%" PRIu64
			",\"client_skips\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"duration_s\":%.6f,\"controller_duration_s\":%.6f,\"rate_hz\":%.3f"
			",\"frequency_hz\":%.3f,\"ring_capacity\":%" PRIu32 "}\n",
			rtl_rec_end_name(res->end), res->rows, res->ctrl_skipped, res->ring_full,
			res->dropped, res->after_stop, res->client_data, res->client_skipped,
			res->bytes, span, isnan(ctrl_span) ? 0.0 : ctrl_span, rate,
			res->info.frequency, res->ring_capacity);
		return;
	}
	fprintf(f,
		"rtde-record: %" PRIu64
		" packages recorded over %.3f s (%.1f Hz effective, %.1f Hz "
		"configured), ended: %s\n",
		res->rows, span, rate, res->info.frequency, rtl_rec_end_name(res->end));
	fprintf(f,
		"rtde-record: controller skips: %" PRIu64 " (marked in the lost column); "
		"writer overflow: %" PRIu64 "; bytes written: %" PRIu64 "\n",
		res->ctrl_skipped, res->ring_full, res->bytes);
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
