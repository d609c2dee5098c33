// SPDX-License-Identifier: MIT
/*
 * rtloop-bench --rig: how a loop over several sources (<rtloop/rig.h>)
 * scales. Each configuration runs against simulators in this process
 * (rtde-sim's RTDE server per arm, at 500 Hz; its Net F/T sensor for the
 * sensor): the one-source loop (a plain rtl_loop with a worker: the
 * reference), then rigs of 1, 2 and 4 arms, and one arm with the sensor at
 * 1, 2 and 7 kHz. Every step commands each arm (a joint speed that changes
 * every step, so every step sends). What is measured, over the window
 * after a warm-up:
 *   - the step's latency: from the receive of the frame that clocks it to
 *     the step's start (rx -> step), p50 and p99;
 *   - the per-frame cost: the CPU time of the loop's own threads (every
 *     source's rx thread and the worker, from the kernel's schedstat) per
 *     frame received, all sources together; and per step.
 * The configurations run one after the other within each repetition, the
 * first one rotating, and each figure is reported as the median (min, max)
 * of its per-repetition ratio to the one-source loop's of the same
 * repetition (docs/rtloop-bench.md).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <rtloop/hist.h>
#include <rtloop/loop.h>
#include <rtloop/rdt_transport.h>
#include <rtloop/rig.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

#include "bench.h"
#include "benchmark.h"
#include "ft.h"
#include "server.h"

#define MAX_ARMS 4
#define WARMUP_NS (300 * RTL_NS_PER_MS)

enum { C_LOOP = 0, C_RIG1, C_RIG2, C_RIG4, C_FT1K, C_FT2K, C_FT7K, C_COUNT };

static const struct {
	const char *name;
	unsigned arms;
	double ft_hz; /* 0: no sensor */
	bool plain;   /* a plain rtl_loop, not a rig */
} configs[C_COUNT] = {
	[C_LOOP] = { "loop, 1 arm (reference)", 1, 0, true },
	[C_RIG1] = { "rig, 1 arm", 1, 0, false },
	[C_RIG2] = { "rig, 2 arms", 2, 0, false },
	[C_RIG4] = { "rig, 4 arms", 4, 0, false },
	[C_FT1K] = { "rig, arm + sensor 1 kHz", 1, 1000, false },
	[C_FT2K] = { "rig, arm + sensor 2 kHz", 1, 2000, false },
	[C_FT7K] = { "rig, arm + sensor 7 kHz", 1, 7000, false },
};

/* What one run of one configuration measured. */
struct run {
	double p50_us, p99_us; /* rx -> step */
	double cpu_frame_ns;   /* loop threads' CPU per frame */
	double cpu_step_ns;    /* ... per step */
	double frames_per_s;
	uint64_t steps, frames;
	bool ok;
};

struct arm {
	struct rtl_rtde_handle mode, qd0, accel;
};

struct ctx {
	struct arm arm[MAX_ARMS];
	unsigned arms;
	struct rtl_hist *lat; /* rx -> step, inside the window */
	_Atomic bool measuring;
	uint64_t k;
};

static void ready(struct rtl_rtde_transport *t, void *user)
{
	struct arm *a = user;

	a->mode = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
	a->qd0 = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
	a->accel = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_ACCEL);
}

/* Every arm gets a joint speed that changes every step: every step sends. */
static void command(struct ctx *c, struct rtl_loop *loop, unsigned i)
{
	struct rtl_rtde_frame *out = rtl_rtde_loop_commands(loop, 0);

	rtl_rtde_frame_set_int(out, c->arm[i].mode, RTL_RTDE_CMD_SPEEDJ);
	rtl_rtde_frame_set_double(out, c->arm[i].qd0, 0.001 * (double)(c->k % 16));
	rtl_rtde_frame_set_double(out, c->arm[i].accel, 1.0);
}

static int loop_step(struct rtl_loop *loop, const struct rtl_loop_frame *f, void *user)
{
	struct ctx *c = user;

	if (atomic_load_explicit(&c->measuring, memory_order_relaxed))
		rtl_hist_record(c->lat, rtl_time_now() - f->rx_ns);
	command(c, loop, 0);
	c->k++;
	return 0;
}

static int rig_step(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n, void *user)
{
	struct ctx *c = user;

	(void)n;
	if (in[0].frame && atomic_load_explicit(&c->measuring, memory_order_relaxed))
		rtl_hist_record(c->lat, rtl_time_now() - in[0].frame->rx_ns);
	for (unsigned i = 0; i < c->arms; i++)
		command(c, rtl_rig_loop(rig, i), i);
	c->k++;
	return 0;
}

/* The CPU time (ns) of this process's threads named rtl-rx, rtl-worker
 * or rtl-rig: the loop's own, not the simulators'. */
static int64_t loop_threads_cpu(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int64_t sum = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;
		unsigned long long run = 0;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "rtl-rx", 6) && strncmp(comm, "rtl-worker", 10) &&
		    strncmp(comm, "rtl-rig", 7))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%llu", &run) == 1)
				sum += (int64_t)run;
			fclose(f);
		}
	}
	closedir(d);
	return sum;
}

/* The frames the loops received so far, every source. */
static uint64_t frames_of(struct rtl_loop *const *loops, unsigned n)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rtl_loop_counters s = { .size = sizeof(s) };

		rtl_loop_stats(loops[i], &s);
		sum += s.frames;
	}
	return sum;
}

static uint64_t steps_of(struct rtl_loop *loop, struct rtl_rig *rig)
{
	if (rig) {
		struct rtl_rig_counters s = { .size = sizeof(s) };

		rtl_rig_stats(rig, &s);
		return s.steps;
	}
	{
		struct rtl_loop_counters s = { .size = sizeof(s) };

		rtl_loop_stats(loop, &s);
		return s.steps;
	}
}

static void *server_main(void *arg)
{
	return (void *)(intptr_t)sim_server_run(arg);
}

/* One configuration, once, for @window_ns. */
static int run_config(int cfgi, int64_t window_ns, struct run *r, char *why, size_t len)
{
	const unsigned arms = configs[cfgi].arms;
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };
	struct sim_server *srv[MAX_ARMS] = { 0 };
	pthread_t th[MAX_ARMS];
	bool th_on[MAX_ARMS] = { 0 };
	static struct sim_ft_feed feed;
	struct sim_ft *ft = NULL;
	struct rtl_rtde_transport *tr[MAX_ARMS] = { 0 };
	struct rtl_rdt_transport *sensor = NULL;
	struct rtl_loop *loop = NULL, *loops[MAX_ARMS + 1];
	struct rtl_rig *rig = NULL;
	struct ctx c = { .arms = arms };
	struct rtl_error err = { 0 };
	int64_t cpu0, t0;
	uint64_t f0, s0;
	int ret = -1;
	unsigned nloops = 0;

	memset(&feed, 0, sizeof(feed));
	c.lat = calloc(1, sizeof(*c.lat));
	if (!c.lat)
		return snprintf(why, len, "out of memory"), -ENOMEM;
	rtl_hist_init(c.lat);
	sim_opts_default(&so);
	for (unsigned i = 0; i < MAX_ARMS; i++)
		for (int k = 0; k < SIM_PORT_COUNT; k++)
			sv.service_port[k] = -1; /* RTDE only */
	for (unsigned i = 0; i < arms; i++) {
		so.faults.seed = i + 1;
		if (sim_server_create(&srv[i], &so, &sv) < 0) {
			snprintf(why, len, "cannot start simulator %u", i);
			goto out;
		}
		if (i == 0 && configs[cfgi].ft_hz > 0) {
			struct sim_ft_opts fo = { .rate_hz = configs[cfgi].ft_hz };
			char w[160];

			if (sim_ft_create(&ft, &fo, &feed, w, sizeof(w)) < 0 || sim_ft_start(ft)) {
				snprintf(why, len, "the sensor: %s", w);
				goto out;
			}
			sim_server_sim(srv[i])->ft_feed = &feed;
		}
		if (pthread_create(&th[i], NULL, server_main, srv[i])) {
			snprintf(why, len, "simulator thread");
			goto out;
		}
		th_on[i] = true;
	}
	for (unsigned i = 0; i < arms; i++) {
		struct rtl_rtde_client_config cc = { .size = sizeof(cc),
						     .outputs = "timestamp,actual_q",
						     .inputs = { RTL_RTDE_CMD_RECIPE } };
		struct rtl_rtde_transport_config tc = { .size = sizeof(tc),
							.port = sim_server_port(srv[i]),
							.client = &cc,
							.connected = ready,
							.user = &c.arm[i] };

		if (rtl_rtde_transport_create(&tr[i], &tc, &err) < 0) {
			snprintf(why, len, "%.200s", err.msg);
			goto out;
		}
	}
	if (ft) {
		struct rtl_rdt_transport_config fc = { .size = sizeof(fc),
						       .host = "127.0.0.1",
						       .port = sim_ft_port(ft),
						       .rate_hz = configs[cfgi].ft_hz };

		if (rtl_rdt_transport_create(&sensor, &fc, &err) < 0) {
			snprintf(why, len, "%.200s", err.msg);
			goto out;
		}
	}
	if (configs[cfgi].plain) {
		struct rtl_loop_config lc = { .size = sizeof(lc),
					      .transport = rtl_rtde_transport_base(tr[0]),
					      .step = loop_step,
					      .user = &c,
					      .rt_mode = RTL_LOOP_RT_DEGRADE };

		if (rtl_loop_create(&loop, &lc, &err) < 0 || rtl_loop_start(loop, &err) < 0) {
			snprintf(why, len, "%.200s", err.msg);
			goto out;
		}
		loops[nloops++] = loop;
	} else {
		struct rtl_rig_source src[MAX_ARMS + 1];
		struct rtl_rig_config rc = { .size = sizeof(rc),
					     .sources = src,
					     .n_sources = arms + (sensor ? 1 : 0),
					     .clock = 0,
					     .step = rig_step,
					     .user = &c,
					     .rt_mode = RTL_LOOP_RT_DEGRADE };

		memset(src, 0, sizeof(src));
		for (unsigned i = 0; i < arms; i++) {
			src[i].transport = rtl_rtde_transport_base(tr[i]);
			src[i].stale_ns = 100 * RTL_NS_PER_MS;
		}
		if (sensor) {
			src[arms].transport = rtl_rdt_transport_base(sensor);
			src[arms].sensor = true;
			src[arms].stale_ns = 100 * RTL_NS_PER_MS;
		}
		if (rtl_rig_create(&rig, &rc, &err) < 0 || rtl_rig_start(rig, &err) < 0) {
			snprintf(why, len, "%.200s", err.msg);
			goto out;
		}
		for (unsigned i = 0; i < rc.n_sources; i++)
			loops[nloops++] = rtl_rig_loop(rig, i);
	}
	rtl_time_sleep_until(rtl_time_now() + WARMUP_NS);
	cpu0 = loop_threads_cpu();
	f0 = frames_of(loops, nloops);
	s0 = steps_of(loop, rig);
	t0 = rtl_time_now();
	atomic_store(&c.measuring, true);
	rtl_time_sleep_until(t0 + window_ns);
	atomic_store(&c.measuring, false);
	r->frames = frames_of(loops, nloops) - f0;
	r->steps = steps_of(loop, rig) - s0;
	r->cpu_frame_ns = r->frames ? (double)(loop_threads_cpu() - cpu0) / (double)r->frames : NAN;
	r->cpu_step_ns = r->steps ? r->cpu_frame_ns * (double)r->frames / (double)r->steps : NAN;
	r->frames_per_s = (double)r->frames * 1e9 / (double)(rtl_time_now() - t0);
	r->p50_us = (double)rtl_hist_percentile(c.lat, 50) / 1e3;
	r->p99_us = (double)rtl_hist_percentile(c.lat, 99) / 1e3;
	r->ok = r->steps > 0 && r->frames > 0;
	ret = r->ok ? 0 : -EIO;
	if (!r->ok)
		snprintf(why, len, "no step ran");
out:
	if (rig) {
		rtl_rig_stop(rig);
		rtl_rig_join(rig);
		rtl_rig_destroy(rig);
	}
	if (loop) {
		rtl_loop_stop(loop);
		rtl_loop_join(loop);
		rtl_loop_destroy(loop);
	}
	for (unsigned i = 0; i < arms; i++) {
		if (th_on[i]) {
			sim_server_stop(srv[i]);
			pthread_join(th[i], NULL);
		}
		rtl_rtde_transport_destroy(tr[i]);
		if (srv[i])
			sim_server_destroy(srv[i]);
	}
	rtl_rdt_transport_destroy(sensor);
	sim_ft_destroy(ft);
	free(c.lat);
	return ret;
}

/* The field at byte @off of struct run: configuration @ci's mean over the
 * repetitions, or (@v given) the median [min, max] of its per-repetition
 * ratios to the one-source loop's, printed. */
static double field(const struct run *r, size_t off)
{
	return *(const double *)(const void *)((const char *)r + off);
}

static double mean_of(struct run (*runs)[C_COUNT], unsigned reps, int ci, size_t off)
{
	double m = 0;

	for (unsigned r = 0; r < reps; r++)
		m += field(&runs[r][ci], off) / reps;
	return m;
}

static void ratio_cell(FILE *out, struct run (*runs)[C_COUNT], unsigned reps, int ci, size_t off,
		       double *v)
{
	struct bench_stat3 s;

	for (unsigned r = 0; r < reps; r++)
		v[r] = field(&runs[r][ci], off) / field(&runs[r][C_LOOP], off);
	s = bench_stat3(v, reps);
	fprintf(out, " %5.2f [%4.2f,%4.2f]", s.med, s.min, s.max);
}

int bench_rig(const struct bench_cfg *cfg, FILE *out)
{
	const unsigned reps = cfg->reps;
	int64_t window = (int64_t)(cfg->duration_s * 1e9 / (reps * C_COUNT));
	struct run(*runs)[C_COUNT] = calloc(reps, sizeof(*runs));
	double *v = calloc(reps, sizeof(double));
	char why[256];
	FILE *json = NULL;

	if (!runs || !v)
		return fprintf(stderr, BENCH_PROG ": out of memory\n"), 1;
	if (window < 500 * RTL_NS_PER_MS)
		window = 500 * RTL_NS_PER_MS;
	fprintf(out,
		BENCH_PROG " --rig: %u configurations x %u repetitions, %.1f s each after a %.1f s "
			   "warm-up; arms at 500 Hz (rtde-sim in process)\n",
		C_COUNT, reps, (double)window / 1e9, (double)WARMUP_NS / 1e9);
	for (unsigned r = 0; r < reps; r++) {
		for (int k = 0; k < C_COUNT; k++) {
			int ci = (int)((k + r) % C_COUNT);

			if (run_config(ci, window, &runs[r][ci], why, sizeof(why)) < 0) {
				fprintf(stderr, BENCH_PROG ": --rig: %s: %.200s\n",
					configs[ci].name, why);
				free(runs);
				free(v);
				return 1;
			}
		}
		fprintf(out, "  repetition %u/%u done\n", r + 1, reps);
	}
	fprintf(out, "\n%-25s %8s %8s %8s %9s %9s | %s\n", "", "", "rx->step", "rx->step",
		"CPU per", "CPU per", "ratio to the one-source loop: median [min,max]");
	fprintf(out, "%-25s %8s %8s %8s %9s %9s | %-17s %-17s %-17s %-17s\n", "configuration",
		"frames/s", "p50 us", "p99 us", "frame us", "step us", "rx->step p50",
		"rx->step p99", "CPU per frame", "CPU per step");
	for (int ci = 0; ci < C_COUNT; ci++) {
		static const size_t ratios[] = { offsetof(struct run, p50_us),
						 offsetof(struct run, p99_us),
						 offsetof(struct run, cpu_frame_ns),
						 offsetof(struct run, cpu_step_ns) };

		fprintf(out, "%-25s %8.0f %8.1f %8.1f %9.1f %9.1f |", configs[ci].name,
			mean_of(runs, reps, ci, offsetof(struct run, frames_per_s)),
			mean_of(runs, reps, ci, offsetof(struct run, p50_us)),
			mean_of(runs, reps, ci, offsetof(struct run, p99_us)),
			mean_of(runs, reps, ci, offsetof(struct run, cpu_frame_ns)) / 1e3,
			mean_of(runs, reps, ci, offsetof(struct run, cpu_step_ns)) / 1e3);
		for (size_t k = 0; k < sizeof(ratios) / sizeof(ratios[0]); k++)
			ratio_cell(out, runs, reps, ci, ratios[k], v);
		fputc('\n', out);
	}
	fprintf(out, "(frames/s, latency, CPU: means over the repetitions; CPU: the loop's rx "
		     "threads and worker, every source)\n");
	if (cfg->json) {
		json = bench_json_open(BENCH_PROG, cfg->json);
		if (json) {
			fprintf(json,
				"{\"program\":\"" BENCH_PROG "\",\"mode\":\"rig\",\"reps\":%u,"
				"\"window_s\":%.3f,\"configs\":[",
				reps, (double)window / 1e9);
			for (int ci = 0; ci < C_COUNT; ci++) {
				fprintf(json, "%s{\"name\":", ci ? "," : "");
				rtl_json_string(json, configs[ci].name);
				fprintf(json, ",\"arms\":%u,\"sensor_hz\":%.0f,\"runs\":[",
					configs[ci].arms, configs[ci].ft_hz);
				for (unsigned r = 0; r < reps; r++)
					fprintf(json,
						"%s{\"p50_us\":%.3f,\"p99_us\":%.3f,\"cpu_frame_"
						"ns\":%.1f,\"cpu_step_ns\":%.1f,\"frames\":%" PRIu64
						",\"steps\":%" PRIu64 "}",
						r ? "," : "", runs[r][ci].p50_us,
						runs[r][ci].p99_us, runs[r][ci].cpu_frame_ns,
						runs[r][ci].cpu_step_ns, runs[r][ci].frames,
						runs[r][ci].steps);
				fputs("]}", json);
			}
			fputs("]}\n", json);
			bench_json_close(json);
		}
	}
	free(runs);
	free(v);
	return 0;
}
