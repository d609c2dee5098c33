// SPDX-License-Identifier: MIT
/*
 * plot: the stage histograms as one PNG, drawn by gnuplot.
 *
 * Latencies of a control loop span decades (a 5 us median, a 2 ms worst
 * case), and the rare slow frames are the point, so both axes are
 * logarithmic: x in us, y in frames per bucket (docs/benchmarks.md asks for
 * a log y-axis). The buckets are rtl_hist's (1/128 of a power of two wide),
 * drawn as impulses at each bucket's representative value, one panel per
 * stage with its count, p99 and max in the title; empty stages get no
 * panel. gnuplot runs by fork/exec on a script and data files written to a
 * mkdtemp() directory, which is removed afterwards; pngcairo is used when
 * this gnuplot has it, else the libgd png terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "trace.h"

#define GNUPLOT_TIMEOUT_MS 60000

/* A gnuplot single-quoted string: a quote inside is written twice. */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		if (*s != '\n')
			fputc(*s, f);
	}
	fputc('\'', f);
}

static int write_data(const struct rtl_hist *h, const char *path)
{
	struct rtl_hist_bucket b;
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	for (int i = rtl_hist_next_bucket(h, &b, 0); i >= 0; i = rtl_hist_next_bucket(h, &b, i + 1))
		/* log x: a 0 ns bucket is drawn at 1 ns */
		fprintf(f, "%.6f %llu\n", (double)(b.value > 0 ? b.value : 1) / RTL_NS_PER_US,
			(unsigned long long)b.count);
	if (rtl_hist_overflow(h))
		fprintf(f, "%.6f %llu\n", (double)rtl_hist_max(h) / RTL_NS_PER_US,
			(unsigned long long)rtl_hist_overflow(h));
	if (ferror(f))
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

static int write_script(const struct rtt_analysis *a, const char *tmp, const char *png,
			const char *title, int panels)
{
	char path[PATH_MAX];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/plot.gp", tmp);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) "
		"{ set terminal pngcairo size 1200,%d font ',9' } "
		"else { set terminal png size 1200,%d }\n",
		(panels + 1) / 2 * 330 + 40, (panels + 1) / 2 * 330 + 40);
	fprintf(f, "set output ");
	gp_string(f, png);
	fprintf(f, "\nset multiplot layout %d,2 title ", (panels + 1) / 2);
	gp_string(f, title);
	fprintf(f, "\nset logscale xy\nset grid\nset xlabel 'latency [us]'\n"
		   "set ylabel 'frames'\nset yrange [0.8:*]\nunset key\n");
	for (int i = 0; i < RTT_NINTERVALS; i++) {
		const struct rtl_hist *h = a->hist[i];
		char t[160];

		if (!rtl_hist_count(h))
			continue;
		snprintf(t, sizeof(t), "%s%s: n=%llu p50=%.3f p99=%.3f max=%.3f us",
			 rtt_interval_name(i), i == RTT_E2E ? " (end to end)" : "",
			 (unsigned long long)rtl_hist_count(h),
			 (double)rtl_hist_percentile(h, 50) / RTL_NS_PER_US,
			 (double)rtl_hist_percentile(h, 99) / RTL_NS_PER_US,
			 (double)rtl_hist_max(h) / RTL_NS_PER_US);
		fprintf(f, "set title ");
		gp_string(f, t);
		fprintf(f, " noenhanced\nplot '%s/stage%d.dat' using 1:2 with impulses lw 2\n", tmp,
			i);
	}
	fprintf(f, "unset multiplot\n");
	if (ferror(f))
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

static void remove_tmp(const char *tmp)
{
	char path[PATH_MAX];

	for (int i = 0; i < RTT_NINTERVALS; i++) {
		snprintf(path, sizeof(path), "%s/stage%d.dat", tmp, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/plot.gp", tmp);
	unlink(path);
	snprintf(path, sizeof(path), "%s/gnuplot.err", tmp);
	unlink(path);
	rmdir(tmp);
}

int rtt_plot(const struct rtt_analysis *a, const char *png, const char *title, char *msg,
	     size_t len)
{
	char tmp[] = "/tmp/rtloop-trace-plot.XXXXXX";
	char script[PATH_MAX], errpath[PATH_MAX];
	int panels = 0, err, code = 0, efd;

	for (int i = 0; i < RTT_NINTERVALS; i++)
		panels += rtl_hist_count(a->hist[i]) > 0;
	if (!panels) {
		snprintf(msg, len, "--plot %s: no stage has a measured latency; nothing to plot",
			 png);
		return -ENODATA;
	}
	if (!mkdtemp(tmp)) {
		err = -errno;
		snprintf(msg, len, "--plot: cannot create a temporary directory: %s",
			 strerror(-err));
		return err;
	}
	for (int i = 0; i < RTT_NINTERVALS; i++) {
		char path[PATH_MAX];

		if (!rtl_hist_count(a->hist[i]))
			continue;
		snprintf(path, sizeof(path), "%s/stage%d.dat", tmp, i);
		err = write_data(a->hist[i], path);
		if (err)
			goto io_err;
	}
	err = write_script(a, tmp, png, title, panels);
	if (err)
		goto io_err;

	snprintf(script, sizeof(script), "%s/plot.gp", tmp);
	snprintf(errpath, sizeof(errpath), "%s/gnuplot.err", tmp);
	efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	{
		char *argv[] = { "gnuplot", script, NULL };
		struct rtt_child c = { .stdout_fd = efd,
				       .stderr_fd = efd,
				       .timeout_ms = GNUPLOT_TIMEOUT_MS };

		err = rtt_run(argv, &c, &code);
	}
	if (efd >= 0)
		close(efd);
	if (err == -ENOENT) {
		snprintf(msg, len,
			 "--plot: gnuplot not found; install it (Debian: apt install gnuplot-nox) "
			 "or "
			 "leave out --plot");
	} else if (err) {
		snprintf(msg, len, "--plot: cannot run gnuplot: %s", strerror(-err));
	} else if (code != 0) {
		char first[512] = "";
		FILE *f = fopen(errpath, "r");

		if (f) {
			size_t n = fread(first, 1, sizeof(first) - 1, f);

			first[n] = '\0';
			fclose(f);
		}
		snprintf(msg, len, "--plot %s: gnuplot failed (exit status %d):\n%s", png, code,
			 first);
		err = -EIO;
	}
	remove_tmp(tmp);
	return err;

io_err:
	snprintf(msg, len, "--plot: cannot write gnuplot's input in %s: %s", tmp, strerror(-err));
	remove_tmp(tmp);
	return err;
}
