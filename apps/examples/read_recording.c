// SPDX-License-Identifier: MIT
/* Read what rtde-record wrote and print a summary: packages, the span of
 * host and controller time, the packages lost (controller skips and host
 * drops), the rate, a histogram of the time between packages (rtl_hist,
 * the loop's own histogram) and the last value of every field.
 * Both of rtde-record's formats (docs/rtde-record.md): the binary one
 * ("RTLREC1", a text header then fixed-size little-endian records) and the
 * CSV one (a header of names, then one space-separated row per package).
 * Usage: read_recording FILE */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rtloop/hist.h>
#include <rtloop/rtde.h>
#include <rtloop/time.h>

#define MAX_FIELDS 64
#define MAX_LINE 65536

struct field {
	char name[64];
	enum rtl_rtde_type type;
	unsigned offset;
};

/* What both formats give. */
struct summary {
	uint64_t packages, lost;
	int have_host; /* host receive times (CSV: the host_time_ns column) */
	int64_t first_rx_ns, last_rx_ns;
	double first_ts, last_ts;
	struct rtl_hist gaps; /* ns between consecutive packages (host time) */
};

static struct summary sum; /* static: the histogram is 28 KiB, zero is empty */

static void add_package(int64_t rx_ns, double ts, uint64_t lost)
{
	if (sum.packages == 0) {
		sum.first_rx_ns = rx_ns;
		sum.first_ts = ts;
	} else {
		rtl_hist_record(&sum.gaps, rx_ns - sum.last_rx_ns);
	}
	sum.last_rx_ns = rx_ns;
	sum.last_ts = ts;
	sum.lost += lost;
	sum.packages++;
}

static void print_summary(const char *format)
{
	double host_s = (double)(sum.last_rx_ns - sum.first_rx_ns) / (double)RTL_NS_PER_SEC;

	printf("read_recording: %s, %" PRIu64 " packages, %" PRIu64 " lost\n", format, sum.packages,
	       sum.lost);
	if (sum.packages < 2)
		return;
	printf("  controller time %.3f .. %.3f s\n", sum.first_ts, sum.last_ts);
	if (!sum.have_host)
		return;
	printf("  host time %.3f s (%.1f Hz)\n", host_s,
	       host_s > 0 ? (double)(sum.packages - 1) / host_s : 0.0);
	rtl_hist_print(&sum.gaps, stdout, "  between packages", RTL_NS_PER_US);
}

/* ---- binary --------------------------------------------------------------------------- */

/* A value of the record, in host form (the file is little-endian, as this
 * reader's host must be: checked against the header's "endian" line). */
static void print_value(const unsigned char *p, enum rtl_rtde_type t)
{
	union rtl_rtde_value v;
	unsigned n = rtl_rtde_type_elems(t);

	memcpy(&v, p, rtl_rtde_type_size(t));
	for (unsigned i = 0; i < n; i++) {
		if (i)
			putchar(' ');
		switch (t) {
		case RTL_RTDE_TYPE_BOOL:
			printf("%d", v.b);
			break;
		case RTL_RTDE_TYPE_UINT8:
			printf("%u", v.u8);
			break;
		case RTL_RTDE_TYPE_UINT32:
			printf("%" PRIu32, v.u32);
			break;
		case RTL_RTDE_TYPE_UINT64:
			printf("%" PRIu64, v.u64);
			break;
		case RTL_RTDE_TYPE_INT32:
			printf("%" PRId32, v.i32);
			break;
		case RTL_RTDE_TYPE_DOUBLE:
			printf("%.6g", v.d);
			break;
		case RTL_RTDE_TYPE_VECTOR3D:
			printf("%.6g", v.v3d[i]);
			break;
		case RTL_RTDE_TYPE_VECTOR6D:
			printf("%.6g", v.v6d[i]);
			break;
		case RTL_RTDE_TYPE_VECTOR6INT32:
			printf("%" PRId32, v.v6i32[i]);
			break;
		case RTL_RTDE_TYPE_VECTOR6UINT32:
			printf("%" PRIu32, v.v6u32[i]);
			break;
		default:
			break;
		}
	}
}

static int read_binary(FILE *in, const char *path)
{
	static struct field fields[MAX_FIELDS];
	char line[512], name[64], type[32];
	unsigned long record_size = 0, values_offset = 0, values_size = 0, off;
	unsigned nfields = 0;
	int ts = -1, little = 0;
	unsigned char *rec;
	uint16_t probe = 1;

	/* The header: "key value" lines up to "end". */
	while (fgets(line, sizeof(line), in) && strcmp(line, "end\n") != 0) {
		if (strcmp(line, "endian little\n") == 0)
			little = 1;
		else if (sscanf(line, "record_size %lu", &record_size) == 1)
			continue;
		else if (sscanf(line, "values_offset %lu", &values_offset) == 1)
			continue;
		else if (sscanf(line, "values_size %lu", &values_size) == 1)
			continue;
		else if (sscanf(line, "field %63s %31s %lu", name, type, &off) == 3) {
			int t = rtl_rtde_type_from_name(type, strlen(type));

			if (t < 0 || nfields == MAX_FIELDS)
				return fprintf(stderr, "%s: bad field line: %s", path, line), 1;
			snprintf(fields[nfields].name, sizeof(fields[nfields].name), "%s", name);
			fields[nfields].type = (enum rtl_rtde_type)t;
			fields[nfields].offset = (unsigned)off;
			if (strcmp(name, "timestamp") == 0 && t == RTL_RTDE_TYPE_DOUBLE)
				ts = (int)nfields;
			nfields++;
		}
	}
	if (!little || *(unsigned char *)&probe != 1)
		return fprintf(stderr,
			       "%s: not a little-endian recording on a little-endian host\n", path),
		       1;
	if (record_size < 24 || values_offset < 24 || values_offset + values_size > record_size)
		return fprintf(stderr, "%s: header without a valid record layout\n", path), 1;
	for (unsigned i = 0; i < nfields; i++)
		if (fields[i].offset + rtl_rtde_type_size(fields[i].type) > values_size)
			return fprintf(stderr, "%s: field %s lies past the values\n", path,
				       fields[i].name),
			       1;
	sum.have_host = 1;
	rec = malloc(record_size);
	if (!rec)
		return perror("malloc"), 1;

	/* The records: seq u64, rx_ns i64, ctrl_skipped u64, dropped u64
	 * (values_offset 32); files of rtde-record 0.1.0 (values_offset 24)
	 * hold the two counts as u32. Then the values. A partial last record
	 * (a run cut short) is left. */
	while (fread(rec, 1, record_size, in) == record_size) {
		int64_t rx_ns;
		uint64_t skipped = 0, dropped = 0;
		double t = 0;

		memcpy(&rx_ns, rec + 8, sizeof(rx_ns));
		if (values_offset >= 32) {
			memcpy(&skipped, rec + 16, sizeof(skipped));
			memcpy(&dropped, rec + 24, sizeof(dropped));
		} else {
			uint32_t s32, d32;

			memcpy(&s32, rec + 16, sizeof(s32));
			memcpy(&d32, rec + 20, sizeof(d32));
			skipped = s32;
			dropped = d32;
		}
		if (ts >= 0)
			memcpy(&t, rec + values_offset + fields[ts].offset, sizeof(t));
		add_package(rx_ns, t, skipped + dropped);
	}
	print_summary("binary");
	if (sum.packages) /* the last record is still in rec */
		for (unsigned i = 0; i < nfields; i++) {
			printf("  %-24s %-14s ", fields[i].name,
			       rtl_rtde_type_name(fields[i].type));
			print_value(rec + values_offset + fields[i].offset, fields[i].type);
			putchar('\n');
		}
	free(rec);
	return 0;
}

/* ---- CSV ------------------------------------------------------------------------------ */

static int read_csv(FILE *in, const char *header)
{
	static char names[MAX_LINE], line[MAX_LINE], last[MAX_LINE];
	int ts = -1, host = -1, lost = -1, ncols = 0;
	char *tok;

	/* The header names the columns; the two extra ones are optional
	 * (--no-extra-columns leaves them out). */
	snprintf(names, sizeof(names), "%s", header);
	for (tok = strtok(names, " \n"); tok; tok = strtok(NULL, " \n"), ncols++) {
		if (strcmp(tok, "timestamp") == 0)
			ts = ncols;
		else if (strcmp(tok, "host_time_ns") == 0)
			host = ncols;
		else if (strcmp(tok, "lost") == 0)
			lost = ncols;
	}
	sum.have_host = host >= 0;
	while (fgets(line, sizeof(line), in)) {
		int64_t rx_ns = 0;
		double t = 0;
		uint64_t l = 0;
		int col = 0;

		snprintf(last, sizeof(last), "%s", line);
		for (tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n"), col++) {
			if (col == ts)
				t = strtod(tok, NULL);
			else if (col == host)
				rx_ns = strtoll(tok, NULL, 10);
			else if (col == lost)
				l = strtoull(tok, NULL, 10);
		}
		if (col != ncols)
			return fprintf(stderr, "row %" PRIu64 ": %d columns, the header has %d\n",
				       sum.packages + 2, col, ncols),
			       1;
		add_package(rx_ns, t, l);
	}
	print_summary(host >= 0 ? "CSV" : "CSV without host times");
	if (sum.packages) {
		printf("  columns: %s", header);
		printf("  last row: %s", last);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char first[MAX_LINE];
	FILE *in;
	int ret;

	if (argc != 2)
		return fprintf(stderr, "usage: %s FILE (an rtde-record recording)\n", argv[0]), 2;
	in = fopen(argv[1], "rb");
	if (!in)
		return fprintf(stderr, "%s: %s\n", argv[1], strerror(errno)), 1;
	if (!fgets(first, sizeof(first), in)) {
		fclose(in);
		return fprintf(stderr, "%s: empty\n", argv[1]), 1;
	}
	ret = strcmp(first, "RTLREC1\n") == 0 ? read_binary(in, argv[1]) : read_csv(in, first);
	fclose(in);
	return ret;
}
