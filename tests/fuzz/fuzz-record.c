// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: rtde-record's binary recording reader
 * (apps/rtde-record/format.c), which `rtde-record --dump` runs on any file
 * it is handed: rec_bin_read_header() on the text schema, then each
 * fixed-size record formatted as a CSV row, as rec_dump() does (here
 * from memory, through fmemopen(3), and at most 64 records).
 *
 * Oracles: documented codes only; an accepted schema has 1 to
 * RTL_RTDE_RECIPE_MAX_FIELDS columns of value types inside values_size and
 * a record size of the header plus the values rounded up to 8 bytes; every
 * header and row fits the buffer rec_csv_line_max() asks for, ends in
 * one newline and has exactly rec_csv_columns() columns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "record.h"

static void check_line(const char *line, int len, size_t cap, unsigned cols)
{
	unsigned seps = 0;

	FUZZ_CHECK(len > 0 && (size_t)len < cap && line[len] == '\0');
	FUZZ_CHECK(line[len - 1] == '\n' && memchr(line, '\n', (size_t)len) == line + len - 1);
	for (int i = 0; i < len; i++)
		seps += line[i] == ' ';
	FUZZ_CHECK(seps + 1 == cols);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_schema *s;
	struct rec_meta m;
	struct rec_error err;
	unsigned char *rec;
	char *line;
	size_t cap;
	FILE *f;
	int r;

	if (size == 0)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	s = malloc(sizeof(*s));
	FUZZ_CHECK(f && s);
	r = rec_bin_read_header(f, s, &m, &err);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EIO);
	if (r < 0) {
		FUZZ_CHECK(err.err.code == r && memchr(err.err.msg, '\0', sizeof(err.err.msg)));
		goto out;
	}
	FUZZ_CHECK(s->n >= 1 && s->n <= RTL_RTDE_RECIPE_MAX_FIELDS);
	FUZZ_CHECK(s->values_size >= 1 && s->values_size <= (1u << 20));
	/* Records of this version (u64 counts) or of 0.1.0 (u32), read alike. */
	FUZZ_CHECK(s->values_offset == REC_RECORD_HEADER ||
		   s->values_offset == REC_RECORD_HEADER_V0);
	FUZZ_CHECK(s->record_size % 8 == 0 && s->record_size >= s->values_offset + s->values_size &&
		   s->record_size < s->values_offset + s->values_size + 8);
	for (unsigned i = 0; i < s->n; i++) {
		enum rtl_rtde_type t = (enum rtl_rtde_type)s->cols[i].type;

		FUZZ_CHECK(rtl_rtde_type_is_value(t));
		FUZZ_CHECK(s->cols[i].offset + rtl_rtde_type_size(t) <= s->values_size);
		FUZZ_CHECK(memchr(s->cols[i].name, '\0', sizeof(s->cols[i].name)));
	}
	FUZZ_CHECK(memchr(m.host, '\0', sizeof(m.host)) && memchr(m.controller, '\0', 32));

	cap = rec_csv_line_max(s);
	line = malloc(cap);
	rec = malloc(s->record_size);
	FUZZ_CHECK(line && rec);
	for (int extra = 0; extra <= 1; extra++)
		check_line(line, rec_csv_header(line, cap, s, extra), cap,
			   rec_csv_columns(s, extra));
	for (int k = 0; k < 64 && fread(rec, 1, s->record_size, f) == s->record_size; k++) {
		struct rec_row row = { .values = rec + s->values_offset };

		/* The record header as format.c lays it out: seq, rx_ns, then the
		 * two counts, u64 (this version) or u32 (0.1.0). */
		memcpy(&row.seq, rec, sizeof(row.seq));
		memcpy(&row.rx_ns, rec + 8, sizeof(row.rx_ns));
		if (s->values_offset == REC_RECORD_HEADER) {
			memcpy(&row.ctrl_skipped, rec + 16, 8);
			memcpy(&row.dropped, rec + 24, 8);
		} else {
			uint32_t a, b;

			memcpy(&a, rec + 16, 4);
			memcpy(&b, rec + 20, 4);
			row.ctrl_skipped = a;
			row.dropped = b;
		}
		for (int extra = 0; extra <= 1; extra++)
			check_line(line, rec_csv_row(line, cap, s, &row, extra), cap,
				   rec_csv_columns(s, extra));
	}
	free(rec);
	free(line);
out:
	free(s);
	fclose(f);
	return 0;
}
