// SPDX-License-Identifier: MIT
/*
 * What the rig tells about itself: its counters and each source's (tables
 * made from RTL_RIG_COUNTERS and RTL_RIG_SOURCE_COUNTERS), its histograms,
 * and the report: the rig, then each source with its loop's own report.
 * Any thread, at any time: single-writer relaxed atomics.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <rtloop/json.h>
#include <rtloop/sized.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#include "rig_private.h"

static const char *const hist_names[RTL_RIG_H_COUNT] = {
	[RTL_RIG_H_STEP] = "step",
	[RTL_RIG_H_CLOCK_TO_STEP] = "clock_to_step",
};

RTL__DEFINE_COUNTERS(rtl_rig, RTL_RIG_COUNTERS, c)
#define N_COUNTERS (sizeof(counter_fields) / sizeof(counter_fields[0]))

#define SOURCE_FIELD_(member, what) \
	{ .name = #member,          \
	  .doc = what,              \
	  .offset = offsetof(struct rtl_rig_source_counters, member) },
static const struct rtl_stat_field source_fields[] = { RTL_RIG_SOURCE_COUNTERS(SOURCE_FIELD_) };
#define N_SOURCE (sizeof(source_fields) / sizeof(source_fields[0]))

RTL_API const struct rtl_stat_field *rtl_rig_source_counter_fields(size_t *n)
{
	return RTL__FIELDS_OUT(source_fields, n);
}

RTL_API int rtl_rig_source_stats(const struct rtl_rig *rig, unsigned i,
				 struct rtl_rig_source_counters *out)
{
	struct rtl_rig_source_counters s = { .size = sizeof(s) };

	if (!rig || i >= rig->n)
		return -EINVAL;
#define COPY_(name, doc) s.name = rtl_stat_get(&rig->src[i].c.name);
	RTL_RIG_SOURCE_COUNTERS(COPY_)
#undef COPY_
	return rtl__sized_out(out, &s, sizeof(s));
}

RTL_API const struct rtl_hist *rtl_rig_hist(const struct rtl_rig *rig, enum rtl_rig_hist_id id)
{
	if (!rig || (unsigned)id >= RTL_RIG_H_COUNT)
		return NULL;
	return &rig->hist[id];
}

static void report_json(const struct rtl_rig *rig, FILE *f)
{
	struct rtl_rig_counters c = { .size = sizeof(c) };

	rtl_rig_stats(rig, &c);
	fputs("{\"counters\":{", f);
	for (size_t k = 0; k < N_COUNTERS; k++)
		fprintf(f, "%s\"%s\":%llu", k ? "," : "", counter_fields[k].name,
			(unsigned long long)rtl_stat_value(&c, &counter_fields[k]));
	fputs("},\"histograms\":{", f);
	for (int h = 0; h < RTL_RIG_H_COUNT; h++) {
		fprintf(f, "%s\"%s\":", h ? "," : "", hist_names[h]);
		rtl_hist_write_json(&rig->hist[h], f);
	}
	fputs("},\"sources\":[", f);
	for (unsigned i = 0; i < rig->n; i++) {
		struct rtl_rig_source_counters s = { .size = sizeof(s) };

		rtl_rig_source_stats(rig, i, &s);
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		rtl_json_string(f, rig->src[i].name);
		fprintf(f, ",\"sensor\":%s,\"counters\":{",
			rig->src[i].cfg.sensor ? "true" : "false");
		for (size_t k = 0; k < N_SOURCE; k++)
			fprintf(f, "%s\"%s\":%llu", k ? "," : "", source_fields[k].name,
				(unsigned long long)rtl_stat_value(&s, &source_fields[k]));
		fputs("},\"loop\":", f);
		rtl_loop_report(rig->src[i].loop, f, true);
		fputs("}", f);
	}
	fputs("]}\n", f);
}

static void report_text(const struct rtl_rig *rig, FILE *f)
{
	struct rtl_rig_counters c = { .size = sizeof(c) };

	rtl_rig_stats(rig, &c);
	fprintf(f, "rig counters (%u sources):\n", rig->n);
	for (size_t k = 0; k < N_COUNTERS; k++)
		fprintf(f, "  %-16s %llu\n", counter_fields[k].name,
			(unsigned long long)rtl_stat_value(&c, &counter_fields[k]));
	fputs("rig latency:\n", f);
	for (int h = 0; h < RTL_RIG_H_COUNT; h++) {
		char title[32];

		snprintf(title, sizeof(title), "  %-13s", hist_names[h]);
		rtl_hist_print(&rig->hist[h], f, title, RTL_NS_PER_US);
	}
	for (unsigned i = 0; i < rig->n; i++) {
		struct rtl_rig_source_counters s = { .size = sizeof(s) };

		rtl_rig_source_stats(rig, i, &s);
		fprintf(f, "source %u: %s%s\n", i, rig->src[i].name,
			rig->src[i].cfg.sensor ? " (sensor)" : "");
		for (size_t k = 0; k < N_SOURCE; k++)
			fprintf(f, "  %-16s %llu\n", source_fields[k].name,
				(unsigned long long)rtl_stat_value(&s, &source_fields[k]));
		rtl_loop_report(rig->src[i].loop, f, false);
	}
}

/* ---- telemetry ---------------------------------------------------------------------------- */

/* One snapshot for the telemetry: size, the rig's counters, each source's. */
static int tel_stats(const void *src, void *snapshot)
{
	const struct rtl_rig *rig = src;
	uint64_t *v = (uint64_t *)((char *)snapshot + sizeof(size_t));
	struct rtl_rig_counters c = { .size = sizeof(c) };
	size_t k = 0;

	rtl_rig_stats(rig, &c);
	for (size_t i = 0; i < N_COUNTERS; i++)
		v[k++] = rtl_stat_value(&c, &counter_fields[i]);
	for (unsigned s = 0; s < rig->n; s++) {
		struct rtl_rig_source_counters sc = { .size = sizeof(sc) };

		rtl_rig_source_stats(rig, s, &sc);
		for (size_t i = 0; i < N_SOURCE; i++)
			v[k++] = rtl_stat_value(&sc, &source_fields[i]);
	}
	return 0;
}

int rtl__rig_telemetry_add(struct rtl_rig *rig, struct rtl_error *err)
{
	struct rtl_telemetry *t = rig->cfg.telemetry;
	struct rig_tel *tel = rig->tel;
	size_t k = 0;
	int ret;

	for (size_t i = 0; i < N_COUNTERS; i++, k++) {
		snprintf(tel->names[k], sizeof(tel->names[k]), "%s", counter_fields[i].name);
		tel->fields[k] = (struct rtl_stat_field){ tel->names[k], counter_fields[i].doc,
							  sizeof(size_t) + k * sizeof(uint64_t) };
	}
	for (unsigned s = 0; s < rig->n; s++) {
		for (size_t i = 0; i < N_SOURCE; i++, k++) {
			snprintf(tel->names[k], sizeof(tel->names[k]), "%s.%s", rig->src[s].name,
				 source_fields[i].name);
			tel->fields[k] =
				(struct rtl_stat_field){ tel->names[k], source_fields[i].doc,
							 sizeof(size_t) + k * sizeof(uint64_t) };
		}
	}
	tel->n = k;
	ret = rtl_telemetry_counters(t, "rig", tel->fields, tel->n, tel_stats, rig,
				     sizeof(size_t) + RIG_TEL_COUNTERS * sizeof(uint64_t), err);
	for (int h = 0; ret == 0 && h < RTL_RIG_H_COUNT; h++) {
		char name[32];

		snprintf(name, sizeof(name), "rig.%s", hist_names[h]);
		ret = rtl_telemetry_hist(t, name, &rig->hist[h], err);
	}
	for (unsigned s = 0; ret >= 0 && s < rig->n; s++) {
		char name[48];

		snprintf(name, sizeof(name), "%s.age_ms", rig->src[s].name);
		ret = tel->age[s] = rtl_telemetry_signal(t, name, 1, "ms", err);
		if (ret >= 0) {
			snprintf(name, sizeof(name), "%s.live", rig->src[s].name);
			ret = tel->live[s] = rtl_telemetry_signal(t, name, 1, NULL, err);
		}
	}
	return ret < 0 ? ret : 0;
}

void rtl__rig_telemetry_publish(struct rtl_rig *rig, int64_t now, double ctrl_time)
{
	struct rtl_telemetry *t = rig->cfg.telemetry;

	for (unsigned s = 0; s < rig->n; s++) {
		const struct rtl_rig_input *in = &rig->in[s];

		rtl_telemetry_set(t, rig->tel->age[s], 0,
				  in->frame ? (double)in->age_ns / 1e6 : (double)NAN);
		rtl_telemetry_set(t, rig->tel->live[s], 0, in->live ? 1.0 : 0.0);
	}
	rtl_telemetry_publish(t, now, rtl_stat_get(&rig->c.steps), ctrl_time);
}

RTL_API int rtl_rig_report(const struct rtl_rig *rig, FILE *f, bool json)
{
	if (!rig || !f)
		return -EINVAL;
	if (json)
		report_json(rig, f);
	else
		report_text(rig, f);
	return ferror(f) ? -EIO : 0;
}
