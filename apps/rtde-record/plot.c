// SPDX-License-Identifier: MIT
/*
 * rtde-record --plot: a recording (either format) as plots of chosen fields
 * against the controller's time, with every loss marked, drawn by gnuplot
 * into a PNG and an SVG.
 *
 * The recording is read here (record.h's readers), not by gnuplot: the
 * time axis is the controller's timestamp from the first row (a reset, a
 * timestamp that goes back, continues the axis and is marked), and the
 * loss is the lost column (controller skips and packages this client
 * dropped, before the row that carries them). gnuplot gets plain columns
 * in a private temporary directory, and a script that draws one panel per
 * field (a vector's elements in one panel), a dashed red line at each gap
 * in every panel (up to MAX_GAP_LINES of them; a reset's is purple), and a
 * last panel of the packages lost before each row. Both files come from
 * the same script.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rtloop/rtde.h>

#include "record.h"

extern char **environ;

/* Gaps drawn as lines across every panel; beyond, only the loss panel. */
#define MAX_GAP_LINES 300
#define PANEL_PX 230
#define LOSS_PX 170

/* A recording, read row by row in either format. */
struct reader {
	FILE *f;
	bool binary, extra;
	struct rec_schema s;
	struct rec_meta meta;
	unsigned char *rec; /* binary: a record; CSV: the values */
	char *line;
	size_t line_cap;
	unsigned line_no;
	bool cut; /* binary: the last record was cut short */
};

/* rtl_error_set() on the recorder's error: returns @code. */
#define fail(err, code, ...) rtl_error_set(rec_err(err), (code), __VA_ARGS__)

static int reader_open(struct reader *r, const char *path, struct rec_error *err)
{
	ssize_t n;
	int ret;

	r->f = fopen(path, "rb");
	if (!r->f)
		return fail(err, -errno, "cannot open the recording '%s': %s", path,
			    strerror(errno));
	/* Binary when the header says so; else a CSV header line. */
	ret = rec_bin_read_header(r->f, &r->s, &r->meta, err);
	if (ret == 0) {
		r->binary = true;
		r->extra = true;
		r->rec = malloc(r->s.record_size);
		return r->rec ? 0 : -ENOMEM;
	}
	{
		char magic[6];

		/* A binary recording's own error, not the CSV reader's. */
		rewind(r->f);
		if (fread(magic, 1, sizeof(magic), r->f) == sizeof(magic) &&
		    memcmp(magic, "RTLREC", sizeof(magic)) == 0)
			return ret;
	}
	*err = (struct rec_error){ 0 };
	rewind(r->f);
	n = getline(&r->line, &r->line_cap, r->f);
	if (n <= 0)
		return fail(err, -ENOMSG, "'%s' is empty: not a recording of rtde-record", path);
	r->line_no = 1;
	ret = rec_csv_read_header(r->line, (size_t)n, &r->s, &r->extra, err);
	if (ret < 0)
		return ret;
	r->rec = malloc(r->s.values_size ? r->s.values_size : 1);
	return r->rec ? 0 : -ENOMEM;
}

/* The next row into @row: 1, 0 at the end, or -errno. */
static int reader_next(struct reader *r, struct rec_row *row, struct rec_error *err)
{
	if (r->binary) {
		size_t got = fread(r->rec, 1, r->s.record_size, r->f);

		if (got < r->s.record_size) {
			r->cut = got > 0;
			return ferror(r->f) ? -EIO : 0;
		}
		rec_bin_parse_row(&r->s, r->rec, row);
		return 1;
	}
	for (;;) {
		ssize_t n = getline(&r->line, &r->line_cap, r->f);

		if (n < 0)
			return ferror(r->f) ? -EIO : 0;
		r->line_no++;
		if (n == 1 && r->line[0] == '\n')
			continue; /* a blank line: nothing */
		if (rec_csv_parse_row(r->line, (size_t)n, &r->s, r->extra, r->rec, row, err) < 0) {
			char why[RTL_ERROR_MSG];

			snprintf(why, sizeof(why), "%s", err->err.msg);
			return fail(err, -EBADMSG, "line %u: %s", r->line_no, why);
		}
		return 1;
	}
}

static void reader_close(struct reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->rec);
	free(r->line);
}

/* ---- the fields -------------------------------------------------------------------------- */

struct pick {
	unsigned col[REC_PLOT_MAX_PANELS];
	unsigned n;
	unsigned ts; /* the timestamp's column */
};

static int find_col(const struct rec_schema *s, const char *name, size_t len)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strlen(s->cols[i].name) == len && strncmp(s->cols[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/* The columns to plot: @fields (comma-separated), or every one but the
 * timestamp (the first REC_PLOT_MAX_PANELS; *@more says how many more). */
static int pick_fields(struct pick *p, const struct rec_schema *s, const char *fields,
		       unsigned *more, struct rec_error *err)
{
	int ts = find_col(s, "timestamp", 9);

	*more = 0;
	if (ts < 0)
		return fail(err, -ENOMSG,
			    "the recording has no timestamp column: the time axis "
			    "needs it");
	p->ts = (unsigned)ts;
	p->n = 0;
	if (!fields) {
		for (unsigned i = 0; i < s->n; i++) {
			if (i == p->ts)
				continue;
			if (p->n < REC_PLOT_MAX_PANELS)
				p->col[p->n++] = i;
			else
				(*more)++;
		}
		if (!p->n)
			return fail(err, -ENOMSG,
				    "the recording holds only the timestamp: nothing "
				    "to plot");
		return 0;
	}
	for (const char *f = fields; *f;) {
		size_t len = strcspn(f, ",");
		int c = find_col(s, f, len);

		if (c < 0) {
			char name[REC_NAME_MAX], have[1024] = "";

			snprintf(name, sizeof(name), "%.*s", (int)len, f);
			for (unsigned i = 0; i < s->n; i++) {
				size_t l = strlen(have);

				snprintf(have + l, sizeof(have) - l, "%s%s", l ? ", " : "",
					 s->cols[i].name);
			}
			return fail(err, -EINVAL,
				    "--fields: the recording has no field '%s'; it has %s", name,
				    have);
		}
		if (p->n == REC_PLOT_MAX_PANELS)
			return fail(err, -E2BIG, "--fields: at most %d fields in one plot",
				    REC_PLOT_MAX_PANELS);
		p->col[p->n++] = (unsigned)c;
		f += len;
		if (*f == ',')
			f++;
	}
	if (!p->n)
		return fail(err, -EINVAL, "--fields: no field named");
	return 0;
}

/* Value @e of column @c of a row's values, as a double. */
static double value(const struct rec_schema *s, unsigned c, unsigned e, const unsigned char *values)
{
	const unsigned char *v = values + s->cols[c].offset;
	uint32_t u32;
	int32_t i32;
	uint64_t u64;
	double d;

	switch ((enum rtl_rtde_type)s->cols[c].type) {
	case RTL_RTDE_TYPE_BOOL:
	case RTL_RTDE_TYPE_UINT8:
		return v[0];
	case RTL_RTDE_TYPE_UINT32:
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		memcpy(&u32, v + 4 * e, 4);
		return u32;
	case RTL_RTDE_TYPE_INT32:
	case RTL_RTDE_TYPE_VECTOR6INT32:
		memcpy(&i32, v + 4 * e, 4);
		return i32;
	case RTL_RTDE_TYPE_UINT64:
		memcpy(&u64, v, 8);
		return (double)u64;
	default:
		memcpy(&d, v + 8 * e, 8);
		return d;
	}
}

/* ---- the data and the script ------------------------------------------------------------- */

/* gnuplot reads "NaN" as a missing point. */
static void put(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.17g", v);
	else
		fputs(" NaN", f);
}

/* A string for a gnuplot script: double-quoted, its quotes and
 * backslashes escaped. */
static void gp_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s >= ' ' ? *s : ' ', f);
	}
	fputc('"', f);
}

/* Read the recording into @dir/data (t, lost, the values) and @dir/gaps
 * (t, lost, reset) and count. */
static int write_data(struct reader *r, const struct pick *p, const char *dir,
		      struct rec_plot_result *res, double *t_end, struct rec_error *err)
{
	char path[PATH_MAX];
	FILE *data, *gaps;
	struct rec_row row;
	double ts0 = NAN, last_ts = NAN, offset = 0, period = 0, t = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/data", dir);
	data = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/gaps", dir);
	gaps = fopen(path, "w");
	if (!data || !gaps) {
		ret = fail(err, -errno, "cannot write the plot's data in %s: %s", dir,
			   strerror(errno));
		goto out;
	}
	while ((ret = reader_next(r, &row, err)) > 0) {
		double ts = value(&r->s, p->ts, 0, row.values);
		uint64_t lost = row.ctrl_skipped + row.dropped;
		bool reset = false;

		if (isnan(ts0))
			ts0 = ts;
		if (!isnan(last_ts) && ts > last_ts && (period == 0 || ts - last_ts < period))
			period = ts - last_ts; /* the shortest step seen: the period */
		/* The controller's clock went back (or jumped): carry on one
		 * period after the last row, and mark it. */
		if (!isnan(last_ts) && !(ts > last_ts)) {
			offset = t + (period > 0 ? period : 0.002) - (ts - ts0);
			reset = true;
			res->resets++;
		}
		t = ts - ts0 + offset;
		last_ts = ts;
		fprintf(data, "%.9f %" PRIu64 " %d", t, lost, reset);
		for (unsigned i = 0; i < p->n; i++) {
			unsigned c = p->col[i];
			unsigned n = rtl_rtde_type_elems((enum rtl_rtde_type)r->s.cols[c].type);

			for (unsigned e = 0; e < n; e++)
				put(data, value(&r->s, c, e, row.values));
		}
		fputc('\n', data);
		if (lost || reset) {
			fprintf(gaps, "%.9f %" PRIu64 " %d\n", t, lost, reset);
			if (lost)
				res->gaps++;
		}
		res->lost += lost;
		res->rows++;
	}
	*t_end = t;
	if (ret < 0 && !err->err.msg[0])
		fail(err, ret, "cannot read the recording: %s", strerror(-ret));
	if (ret == 0 && res->rows == 0)
		ret = fail(err, -ENODATA, "the recording holds no row: nothing to plot");
out:
	if (data && fclose(data) && ret == 0)
		ret = fail(err, -EIO, "cannot write the plot's data in %s", dir);
	if (gaps && fclose(gaps) && ret == 0)
		ret = fail(err, -EIO, "cannot write the plot's data in %s", dir);
	return ret;
}

/* The plot: one panel per field, then the loss; loaded once per terminal. */
static int write_script(const struct reader *r, const struct pick *p, const char *dir,
			const struct rec_plot_config *cfg, const struct rec_plot_result *res,
			double t_end, struct rec_error *err)
{
	char path[PATH_MAX], gp[PATH_MAX];
	FILE *f;
	unsigned col = 4; /* the first value's column in data: after t, lost, reset */

	snprintf(gp, sizeof(gp), "%s/plot.gp", dir);
	f = fopen(gp, "w");
	if (!f)
		return fail(err, -errno, "cannot write the plot's script in %s: %s", dir,
			    strerror(errno));
	fputs("set datafile missing 'NaN'\nset grid\nset key outside right top box opaque\n"
	      "set lmargin 12\nset rmargin 30\nset xrange [0:*]\n",
	      f);
	fprintf(f, "set xrange [0:%.9f]\n", t_end > 0 ? t_end : 1.0);
	/* A dashed line at each gap, through every panel. */
	if (res->gaps + res->resets <= MAX_GAP_LINES) {
		char line[128];
		FILE *g;

		snprintf(path, sizeof(path), "%s/gaps", dir);
		g = fopen(path, "r");
		while (g && fgets(line, sizeof(line), g)) {
			double t;
			unsigned long long lost;
			int reset;

			if (sscanf(line, "%lf %llu %d", &t, &lost, &reset) == 3)
				fprintf(f,
					"set arrow from %.9f, graph 0 to %.9f, graph 1 nohead "
					"lc rgb '%s' dt 2 lw 1 back\n",
					t, t, reset ? "#9467bd" : "#d62728");
		}
		if (g)
			fclose(g);
	}
	fprintf(f, "set multiplot layout %u,1 title ", p->n + 1);
	{
		char title[1024];
		int n = snprintf(
			title, sizeof(title),
			"%s: %" PRIu64 " rows, %" PRIu64 " packages lost in %" PRIu64 " gaps",
			cfg->title ? cfg->title : cfg->in, res->rows, res->lost, res->gaps);

		if (res->resets && n > 0 && (size_t)n < sizeof(title))
			snprintf(title + n, sizeof(title) - (size_t)n,
				 ", %" PRIu64 " timestamp resets", res->resets);
		gp_string(f, title);
	}
	fputs("\nset format x ''\nunset xlabel\n", f);
	for (unsigned i = 0; i < p->n; i++) {
		const struct rec_column *c = &r->s.cols[p->col[i]];
		unsigned n = rtl_rtde_type_elems((enum rtl_rtde_type)c->type);

		fputs("set ylabel ", f);
		gp_string(f, c->name);
		fputs("\nplot ", f);
		for (unsigned e = 0; e < n; e++) {
			char name[REC_NAME_MAX + 8];

			if (n > 1)
				snprintf(name, sizeof(name), "%s_%u", c->name, e);
			else
				snprintf(name, sizeof(name), "%s", c->name);
			fprintf(f, "%s'%s/data' using 1:%u with lines lw 1.2 title ", e ? ", " : "",
				dir, col++);
			gp_string(f, name);
		}
		fputc('\n', f);
	}
	/* The loss panel: packages lost at each gap, and the resets. */
	fputs("set format x '%g'\nset xlabel 'controller time from the first row [s]'\n"
	      "set ylabel 'packages lost before the row'\nset yrange [0:*]\n",
	      f);
	fprintf(f,
		"plot '%s/data' using 1:2 with impulses lw 2 lc rgb '#d62728' title 'lost', "
		"'%s/data' using 1:($3 > 0 ? 0 : NaN) with points pt 9 ps 1.5 lc rgb '#9467bd' "
		"title 'timestamp reset'\nunset multiplot\nunset arrow\n",
		dir, dir);
	if (fclose(f))
		return fail(err, -EIO, "cannot write the plot's script in %s", dir);
	return 0;
}

/* Run gnuplot on @dir/plot.gp for the PNG, then the SVG. */
static int run_gnuplot(const char *dir, const struct rec_plot_result *res, unsigned panels,
		       struct rec_error *err)
{
	char main_gp[PATH_MAX], log[PATH_MAX], msg[512] = "";
	char *argv[] = { "gnuplot", main_gp, NULL };
	posix_spawn_file_actions_t fa;
	unsigned height = panels * PANEL_PX + LOSS_PX + 60;
	FILE *f;
	pid_t pid;
	int st, ret;

	snprintf(main_gp, sizeof(main_gp), "%s/main.gp", dir);
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	f = fopen(main_gp, "w");
	if (!f)
		return fail(err, -errno, "cannot write the plot's script in %s: %s", dir,
			    strerror(errno));
	fprintf(f, "set terminal pngcairo size 1400,%u font 'Sans,10' noenhanced\nset output ",
		height);
	gp_string(f, res->png);
	fprintf(f, "\nload '%s/plot.gp'\nset output\n", dir);
	fprintf(f, "set terminal svg size 1400,%u dynamic font 'Sans,10' noenhanced\nset output ",
		height);
	gp_string(f, res->svg);
	fprintf(f, "\nload '%s/plot.gp'\nset output\n", dir);
	if (fclose(f))
		return fail(err, -EIO, "cannot write the plot's script in %s", dir);

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC,
					 0600);
	posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	ret = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret == ENOENT)
		return fail(err, -ENOENT,
			    "--plot needs gnuplot, which is not installed; fix: "
			    "apt-get install gnuplot-nox");
	if (ret)
		return fail(err, -ret, "cannot run gnuplot: %s", strerror(ret));
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		f = fopen(log, "r");
		if (f) {
			size_t n = fread(msg, 1, sizeof(msg) - 1, f);

			msg[n] = '\0';
			fclose(f);
		}
		return fail(err, -EIO, "gnuplot failed: %s%s", msg[0] ? msg : "no message",
			    strstr(msg, "pngcairo") ? " (gnuplot-nox has the cairo terminals)"
						    : "");
	}
	return 0;
}

/* @dir and what is in it. */
static void remove_dir(const char *dir)
{
	static const char *const files[] = { "data", "gaps", "plot.gp", "main.gp", "gnuplot.log" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int rec_plot(const struct rec_plot_config *cfg, struct rec_plot_result *res, struct rec_error *err)
{
	struct reader r = { 0 };
	struct pick p = { 0 };
	char dir[] = "/tmp/rtde-record-plot.XXXXXX";
	char prefix[sizeof(res->png) - 8]; /* room for ".png" */
	double t_end = 0;
	unsigned panels = 0;
	int ret;

	*err = (struct rec_error){ 0 };
	*res = (struct rec_plot_result){ 0 };
	if (cfg->prefix && strlen(cfg->prefix) >= sizeof(prefix)) {
		return fail(err, -ENAMETOOLONG, "--output: the prefix is longer than %zu bytes",
			    sizeof(prefix) - 1);
	} else if (cfg->prefix) {
		snprintf(prefix, sizeof(prefix), "%s", cfg->prefix);
	} else {
		/* The recording's name without .csv or .rtlrec. */
		const char *dot = strrchr(cfg->in, '.'), *slash = strrchr(cfg->in, '/');
		size_t n =
			dot && (!slash || dot > slash) ? (size_t)(dot - cfg->in) : strlen(cfg->in);

		snprintf(prefix, sizeof(prefix), "%.*s", (int)n, cfg->in);
	}
	snprintf(res->png, sizeof(res->png), "%s.png", prefix);
	snprintf(res->svg, sizeof(res->svg), "%s.svg", prefix);
	ret = reader_open(&r, cfg->in, err);
	if (ret < 0)
		goto out;
	ret = pick_fields(&p, &r.s, cfg->fields, &res->more, err);
	if (ret < 0)
		goto out;
	if (!mkdtemp(dir)) {
		ret = fail(err, -errno, "cannot make a temporary directory (%s): %s", dir,
			   strerror(errno));
		goto out;
	}
	ret = write_data(&r, &p, dir, res, &t_end, err);
	res->cut = r.cut;
	if (ret == 0)
		ret = write_script(&r, &p, dir, cfg, res, t_end, err);
	panels = p.n;
	res->panels = panels;
	if (ret == 0)
		ret = run_gnuplot(dir, res, panels, err);
	remove_dir(dir);
out:
	reader_close(&r);
	return ret;
}
