// SPDX-License-Identifier: MIT
/*
 * What the loop tells about itself: the counters' snapshot and table, the
 * histograms, the report (text and JSON). Every list here is made from
 * RTL_LOOP_COUNTERS (<rtloop/loop.h>): a counter is added there, and the
 * snapshot, the table, the report and the JSON follow. Any thread, at any
 * time: the counters are single-writer relaxed atomics.
 */
#include <errno.h>
#include <stdio.h>

#include <rtloop/json.h>
#include <rtloop/sized.h>

#include "loop_private.h"

static const char *const hist_names[RTL_LOOP_H_COUNT] = {
	[RTL_LOOP_H_RX_TO_STEP] = "rx_to_step",
	[RTL_LOOP_H_STEP] = "step",
	[RTL_LOOP_H_STEP_TO_SEND] = "step_to_send",
	[RTL_LOOP_H_INTERARRIVAL] = "interarrival",
	[RTL_LOOP_H_WAKE] = "wake",
};

/* The log queues count their own drops. */
RTL__DEFINE_COUNTERS_THEN(rtl_loop, RTL_LOOP_COUNTERS, c,
			  s.log_dropped = rtl_log_queue_dropped(obj->rx_log) +
					  rtl_log_queue_dropped(obj->worker_log);)
#define N_COUNTERS (sizeof(counter_fields) / sizeof(counter_fields[0]))

RTL_API const struct rtl_hist *rtl_loop_hist(const struct rtl_loop *loop, enum rtl_loop_hist_id id)
{
	if (!loop || (unsigned)id >= RTL_LOOP_H_COUNT)
		return NULL;
	return &loop->hist[id];
}

RTL_API const char *rtl_loop_hist_name(enum rtl_loop_hist_id id)
{
	return RTL__NAME_OF(hist_names, id, "unknown");
}

RTL_API const char *rtl_loop_rt_notes(const struct rtl_loop *loop)
{
	return loop ? loop->rt_notes : "";
}

static void report_json(const struct rtl_loop *loop, const struct rtl_loop_counters *s,
			const char *why, const char *stop, FILE *f)
{
	fputs("{\"counters\":{", f);
	for (size_t i = 0; i < N_COUNTERS; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", counter_fields[i].name,
			(unsigned long long)rtl_stat_value(s, &counter_fields[i]));
	fputs("},\"histograms\":{", f);
	for (int h = 0; h < RTL_LOOP_H_COUNT; h++) {
		fprintf(f, "%s\"%s\":", h ? "," : "", hist_names[h]);
		rtl_hist_write_json(&loop->hist[h], f);
	}
	fputs("},\"rt_notes\":", f);
	rtl_json_string(f, loop->rt_notes);
	fputs(",\"first_rejection\":", f);
	rtl_json_string(f, why ? why : "");
	fputs(",\"stop\":", f);
	rtl_json_string(f, stop ? stop : "");
	fputs("}\n", f);
}

static void report_text(const struct rtl_loop *loop, const struct rtl_loop_counters *s,
			const char *why, const char *stop, FILE *f)
{
	fputs("loop counters:\n", f);
	for (size_t i = 0; i < N_COUNTERS; i++)
		fprintf(f, "  %-16s %llu\n", counter_fields[i].name,
			(unsigned long long)rtl_stat_value(s, &counter_fields[i]));
	fputs("loop latency:\n", f);
	for (int h = 0; h < RTL_LOOP_H_COUNT; h++) {
		char title[32];

		snprintf(title, sizeof(title), "  %-13s", hist_names[h]);
		rtl_hist_print(&loop->hist[h], f, title, RTL_NS_PER_US);
	}
	if (why)
		fprintf(f, "first rejected command: %s\n", why);
	if (s->silent)
		fprintf(f,
			"SILENT: %llu times armed with nothing sent for longer than the "
			"controller's watchdog: the controller stopped the arm\n",
			(unsigned long long)s->silent);
	if (stop)
		fprintf(f, "stop at exit: %s%s\n", s->stop_unconfirmed ? "NOT CONFIRMED: " : "",
			stop);
	if (loop->rt_notes[0])
		fprintf(f, "real-time settings not applied:\n%s", loop->rt_notes);
}

RTL_API int rtl_loop_report(const struct rtl_loop *loop, FILE *f, bool json)
{
	struct rtl_loop_counters s = { .size = sizeof(s) };
	const char *why = NULL, *stop = NULL;

	if (!loop || !f)
		return -EINVAL;
	rtl_loop_stats(loop, &s);
	/* acquire: each text is complete before its flag. */
	if (atomic_load_explicit(&loop->reject_noted, memory_order_acquire))
		why = loop->reject_why;
	if (atomic_load_explicit(&loop->stop_noted, memory_order_acquire))
		stop = loop->stop_note;
	if (json)
		report_json(loop, &s, why, stop, f);
	else
		report_text(loop, &s, why, stop, f);
	return ferror(f) ? -EIO : 0;
}
