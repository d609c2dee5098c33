/* SPDX-License-Identifier: MIT */
/*
 * rec: the recording logic of rtde-record, callable from tests.
 *
 * Design
 * ------
 * A recording is every data package the controller sent and this host
 * received, one row each, in order; never a sample of "the latest state".
 *
 *   [rx thread]  the loop's (rtloop/loop.h): SCHED_FIFO when permitted,
 *        memory locked; decodes each package with the output recipe
 *        straight into a slot of the loop's SPSC ring (its seq, rx_ns,
 *        ctrl_time and ctrl_skipped in the slot header).
 *   [ring]       the loop's rtl_ring, sized for seconds of data
 *        (REC_BUFFER_S at the requested rate).
 *   [writer]     the thread that calls rec_run(), not real-time:
 *        rtl_loop_read() with every_frame set hands it each frame in order
 *        (the external-loop API: no worker thread); it formats the row
 *        (CSV, or binary records) into a buffer of whole rows, written
 *        with write(2) (see "Output guarantees" below).
 *
 * Why no worker and second ring: a worker step would only copy each frame
 * into a second ring, and the loop's worker leaves the frames still queued
 * when the loop stops, so the last packages received would be missing.
 * rtl_loop_read() returns queued frames even after a stop, so the writer
 * drains the ring to the last frame the rx thread committed; and reading
 * in place saves a copy. The loop's ring is the writer's buffer: if the
 * writer falls behind and it fills, the rx thread counts ring_full and
 * the frame's seq is skipped; the writer sees the gap, marks it in the
 * next row and the summary reports it loudly (it must be 0).
 *
 * Loss marking: each row carries ctrl_skipped (packages the controller
 * skipped just before it, counted exactly by the client from `timestamp`
 * or `control_step`) and dropped (packages this host received but could
 * not record just before it: ring full). The CSV's `lost` column is their
 * sum. The recipe always contains `timestamp` (added first when missing,
 * as URCL does): without it no skip could be counted.
 *
 * Formats (docs/rtde-record.md):
 *   CSV     UR record.py's layout: space separated, a header line, vector
 *           fields expanded name_0..name_N-1, doubles as Python's repr()
 *           (the shortest string that reads back to the same double),
 *           integers in decimal, BOOL as 0/1; then, unless disabled, the
 *           columns host_time_ns (CLOCK_MONOTONIC receive time) and lost.
 *   binary  "RTLREC1\n", a text schema ending in "end\n", then fixed-size
 *           little-endian records: seq u64, rx_ns i64, ctrl_skipped u64,
 *           dropped u64, the values in host form at the schema's offsets
 *           (files of 0.1.0 have u32 counts: values_offset 24; still read).
 *   rec_dump() turns a binary file into the CSV the live run writes.
 *
 * Output guarantees (docs/rtde-record.md "What the file holds"): rows go
 * to PATH.partial with write(2) from a buffer of whole rows, so the file
 * ends on a row boundary after a kill or a full disk; a failed write is
 * cut back to the last whole row; at the end the file is fsync()ed and
 * renamed to PATH, only when it holds at least one row: a run that could
 * not start or recorded nothing never touches an existing PATH.
 *
 * Threads: rec_run() blocks the calling thread (the writer) until the
 * recording ends; rec_stop() may be called from any thread or a
 * signal handler. Nothing here prints except to the files and streams the
 * caller names.
 */
#ifndef RTLREC_RECORD_H
#define RTLREC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rtloop/error.h>
#include <rtloop/loop.h>
#include <rtloop/rtde_client.h>
#include <rtloop/rtde_recipe.h>

/* Seconds of packages the ring holds at the requested rate. */
#define REC_BUFFER_S 10
/* Largest ring storage the automatic sizing picks. */
#define REC_RING_MAX_BYTES ((size_t)128 << 20)
/* Whole rows an output gathers before one write(2) (also written every
 * REC_FLUSH_NS, so a kill loses at most that much). */
#define REC_IO_BUFFER ((size_t)64 << 10)
#define REC_FLUSH_NS (100 * 1000 * 1000)
/* The file a recording is written to until it is complete. */
#define REC_PARTIAL ".partial"
/* Default --data-timeout. */
#define REC_DATA_TIMEOUT_NS ((int64_t)1000 * 1000 * 1000)
/* Bytes of the text that follows an error's sentence, NUL included (room
 * for a recipe report and a hint). */
#define REC_ERROR_DETAIL_MAX (RTL_RTDE_REPORT_TEXT_MAX + 64)
/* Longest field name kept in a schema, NUL included. */
#define REC_NAME_MAX 64
/* Magic line of a binary recording. */
#define REC_MAGIC "RTLREC1\n"
/* Bytes of a binary record before the values (seq, rx_ns, two u64 counts);
 * 24 in files of 0.1.0 (u32 counts). */
#define REC_RECORD_HEADER 32
#define REC_RECORD_HEADER_V0 24

/* An error of rtde-record: the code and the sentence (set with
 * rtl_error_set(&e->err, ...)), and the text that follows the sentence,
 * from a newline on, when there is more to show than a sentence holds
 * (rec_outputs(): the report of a recipe that does not build); else empty. */
struct rec_error {
	struct rtl_error err;
	char detail[REC_ERROR_DETAIL_MAX];
};

/* The struct rtl_error of @e, for rtl_error_set(); NULL when @e is. */
static inline struct rtl_error *rec_err(struct rec_error *e)
{
	return e ? &e->err : NULL;
}

/* Write @prefix, the sentence of @e, its detail and a newline to @f. */
void rec_error_print(FILE *f, const char *prefix, const struct rec_error *e);

/* ---- schema and formats ---------------------------------------------------------- */

struct rec_column {
	char name[REC_NAME_MAX];
	uint8_t type;	 /* enum rtl_rtde_type (a value type) */
	uint32_t offset; /* in the values (host form) */
};

/* The fields of a recording: what the header and each row show. */
struct rec_schema {
	unsigned n;
	uint32_t values_size;	/* bytes of the values (host form) */
	uint32_t record_size;	/* binary record: header + values, 8-byte multiple */
	uint32_t values_offset; /* binary record: REC_RECORD_HEADER (or _V0) */
	struct rec_column cols[RTL_RTDE_RECIPE_MAX_FIELDS];
};

/* Set-up facts a binary header carries (strings may be NULL). */
struct rec_meta {
	char host[128];
	uint16_t port;
	char controller[32]; /* "5.12.0.0" */
	double frequency;    /* effective rate in Hz */
	int64_t period_ns;
};

/* One received package, as the writer sees it. */
struct rec_row {
	uint64_t seq;
	int64_t rx_ns;
	uint64_t ctrl_skipped;
	uint64_t dropped;
	const unsigned char *values; /* schema.values_size bytes, host form */
};

/*
 * @v as Python's repr() prints a float: the shortest digits that read back
 * to @v, fixed notation for exponents -4..15 ("0.0001", "100.0"), else
 * scientific ("1e-05", "1e+16"); "nan", "inf", "-inf". Writes at most
 * 32 bytes with the NUL into @buf (@cap >= 32). Returns the length.
 */
int rec_format_double(char *buf, size_t cap, double v);

/* Fill @s from the fields of built recipe @r. Returns 0 or -EINVAL. */
int rec_schema_from_recipe(struct rec_schema *s, const struct rtl_rtde_recipe *r);

/* Columns of a CSV row of @s (extra columns included with @extra). */
unsigned rec_csv_columns(const struct rec_schema *s, bool extra);

/* Bytes a CSV line of @s needs at most (for rec_csv_row()'s buffer). */
size_t rec_csv_line_max(const struct rec_schema *s);

/* The header line (with '\n') into @buf of @cap bytes. Returns the length
 * or -ENOSPC. */
int rec_csv_header(char *buf, size_t cap, const struct rec_schema *s, bool extra);

/* One row (with '\n') into @buf of @cap (>= rec_csv_line_max())
 * bytes. Returns the length or -ENOSPC. */
int rec_csv_row(char *buf, size_t cap, const struct rec_schema *s, const struct rec_row *row,
		bool extra);

/* The binary header for @s and @m into @buf of @cap bytes. Returns the
 * length or -ENOSPC. */
int rec_bin_header(char *buf, size_t cap, const struct rec_schema *s, const struct rec_meta *m);

/* One binary record (s->record_size bytes) into @buf of @cap bytes.
 * Returns s->record_size or -ENOSPC. */
int rec_bin_row(unsigned char *buf, size_t cap, const struct rec_schema *s,
		const struct rec_row *row);

/*
 * The CSV header line @line (@len bytes, its "\n" or "\r\n" included or
 * not) back into the schema @s: the inverse of rec_csv_header(). A
 * column named by the field registry takes the field's type, a vector
 * field's name_0 .. name_N-1 become one column of the vector type, a name
 * the registry does not know is a DOUBLE (as record.py's readers take
 * every column); the columns host_time_ns and lost, when they end the
 * line, set *@extra. Offsets in @s are packed in order (the values of
 * rec_csv_parse_row()). Returns 0, or
 *   -ENOMSG   not a recording's header: a column that is not a field name,
 *             or no `timestamp` (rtde-record records it in every file);
 *   -EBADMSG  a recording's header that is malformed (a vector not fully
 *             expanded, a field twice, too long a name);
 *   -ENOMEM;
 * with @err filled. Not RT-safe (allocates).
 */
int rec_csv_read_header(const char *line, size_t len, struct rec_schema *s, bool *extra,
			struct rec_error *err);

/*
 * One CSV row @line (@len bytes, the line end included or not) of a file
 * whose header gave @s and @extra: the values, in host form at @s's
 * offsets, into @values (s->values_size bytes); host_time_ns into
 * @row->rx_ns and lost into @row->ctrl_skipped (@row->dropped is 0: the CSV
 * holds only the sum), @row->values = @values. Cells are exact: doubles as
 * strtod reads them (nan, inf), integers in decimal within their type's
 * range, BOOL 0/1 (or record.py's True/False). Returns 0, or -EBADMSG (a
 * cell count other than the header's, a cell that is not its type's
 * value: @err names the cell) with @err filled. RT-safe; no allocation.
 */
int rec_csv_parse_row(const char *line, size_t len, const struct rec_schema *s, bool extra,
		      unsigned char *values, struct rec_row *row, struct rec_error *err);

/* The fields of binary record @rec (s->record_size bytes) of a file whose
 * header gave @s, into @row (@row->values points into @rec). Both record
 * layouts (values_offset 32, or 24 with u32 counts). RT-safe. */
void rec_bin_parse_row(const struct rec_schema *s, const unsigned char *rec, struct rec_row *row);

/*
 * Read a binary header from @f (positioned at its start) into @s and @m,
 * leaving @f at the first record. Returns 0, or -EBADMSG (not a
 * recording, or a malformed schema; @err says where), -EIO.
 */
int rec_bin_read_header(FILE *f, struct rec_schema *s, struct rec_meta *m, struct rec_error *err);

/*
 * Convert binary recording @in_path to CSV at @out_path ("-": stdout),
 * with the extra columns when @extra. Sets *@rows (may be NULL). A
 * truncated last record (a recording cut short) is ignored and reported in
 * @err->err.msg with code 0. Returns 0, or -errno with @err filled.
 */
int rec_dump(const char *in_path, const char *out_path, bool extra, uint64_t *rows,
	     struct rec_error *err);

/* ---- plots -------------------------------------------------------------------------- */

/* Fields one plot shows at most (a panel each). */
#define REC_PLOT_MAX_PANELS 8

struct rec_plot_config {
	const char *in;	    /* the recording, CSV or binary */
	const char *fields; /* comma-separated; NULL: every field but the timestamp */
	const char *prefix; /* PREFIX.png and PREFIX.svg; NULL: @in without its extension */
	const char *title;  /* NULL: @in */
};

struct rec_plot_result {
	uint64_t rows;
	uint64_t lost;	 /* packages lost (the lost column's sum) */
	uint64_t gaps;	 /* rows with packages lost before them */
	uint64_t resets; /* rows whose timestamp went back */
	unsigned panels; /* fields plotted */
	unsigned more;	 /* fields not plotted (beyond REC_PLOT_MAX_PANELS) */
	bool cut;	 /* a binary recording's last record was cut short */
	char png[4096], svg[4096];
};

/*
 * Plot recording @cfg->in (plot.c): the fields against the controller's
 * time, every loss and timestamp reset marked, by gnuplot into
 * @res->png and @res->svg. Returns 0, or -errno with @err naming the
 * problem and the fix (a field the recording lacks, gnuplot missing, a
 * malformed row). Not RT-safe.
 */
int rec_plot(const struct rec_plot_config *cfg, struct rec_plot_result *res, struct rec_error *err);

/* ---- recipes ----------------------------------------------------------------------- */

/*
 * The output names of a recording, comma-separated, into @buf of @cap
 * bytes, from @fields (a comma-separated list) or else the file @config:
 * UR's XML (<rtde_config>, recipe @key; NULL: "out", or the only recipe
 * when the file has no "out") or a text file of one name per line.
 * `timestamp` is added first when missing (*@added_ts set). Every name is
 * checked against the field registry. Returns the number of fields, or
 * -errno with @err holding the recipe report (unknown names with the
 * closest one, wrong direction, duplicates, a missing file).
 */
int rec_outputs(char *buf, size_t cap, const char *fields, const char *config, const char *key,
		bool *added_ts, struct rec_error *err);

/* ---- recording ----------------------------------------------------------------------- */

enum rec_format {
	REC_CSV = 0,
	REC_BINARY = 1,
};

struct rec_config {
	const char *host; /* default "127.0.0.1" */
	uint16_t port;	  /* default 30004 */
	double frequency; /* Hz; 0: the controller's maximum */
	/* Comma-separated names (rec_outputs()); `timestamp` is added
	 * first when missing. */
	const char *outputs;
	/* Where to write; NULL: nothing in that format. Both may be set
	 * (tests record both at once); "-" is stdout. */
	const char *csv_path;
	const char *bin_path;
	bool no_extra_columns; /* CSV: strict record.py layout */
	uint64_t samples;      /* stop after this many rows; 0: no limit */
	int64_t duration_ns;   /* stop this long after the start; 0: no limit */
	enum rtl_loop_rt_mode rt_mode;
	int rx_cpu;		    /* -1: no pinning */
	uint32_t ring_capacity;	    /* power of two; 0: REC_BUFFER_S of data */
	int64_t connect_timeout_ns; /* 0: 3 s */
	/* No data package for this long ends the recording (REC_END_NO_DATA).
	 * 0: REC_DATA_TIMEOUT_NS; < 0: no limit. */
	int64_t data_timeout_ns;
	/* Progress lines (verbose), once a second; NULL: none. */
	FILE *progress;
};

enum rec_end {
	REC_END_STOPPED = 0,  /* rec_stop() (e.g. SIGINT) */
	REC_END_SAMPLES = 1,  /* --samples reached */
	REC_END_DURATION = 2, /* --duration elapsed */
	REC_END_LOST = 3,     /* the controller closed or the link failed */
	REC_END_IO = 4,	      /* writing the output failed */
	REC_END_NO_DATA = 5,  /* no data package for data_timeout_ns */
};

struct rec_result {
	enum rec_end end;
	int loop_result;	 /* rtl_loop_join()'s value */
	uint64_t rows;		 /* rows written */
	uint64_t ctrl_skipped;	 /* sum of ctrl_skipped over the rows: every gap */
	uint64_t dropped;	 /* rows lost to a full ring (must be 0) */
	uint64_t after_stop;	 /* received after the stop, not recorded */
	uint64_t frames;	 /* loop: frames received */
	uint64_t ring_full;	 /* loop: frames dropped, ring full */
	uint64_t client_data;	 /* client: data packages delivered */
	uint64_t client_skipped; /* client: gaps in timestamp (its drops included) */
	/* Data packages the client dropped (counted apart, never as skips). */
	uint64_t wrong_size, wrong_recipe, malformed;
	/* The controller's own skips: the gaps less the client's drops. */
	uint64_t skipped;
	uint64_t bytes; /* bytes that reached the files (write(2)'s count) */
	int64_t first_rx_ns, last_rx_ns;
	double first_ts, last_ts; /* controller timestamps of the first/last row */
	int64_t wall_ns;	  /* start to end of the recording */
	uint32_t ring_capacity;
	struct rtl_rtde_handshake info;
	char rt_notes[1024];
	int64_t data_timeout_ns; /* in force (0: none) */
	/* Why the recording was cut short (end LOST, IO or NO_DATA) or recorded
	 * nothing: the whole sentence (the file, the row count, the cause). */
	struct rec_error io_error;
};

struct rec;

/*
 * Check @cfg, create each output's PATH.partial and set up the loop (no
 * connection yet; an existing PATH is not touched). Not RT-safe. Returns
 * 0 and sets *@out, or -EINVAL (bad configuration), -ENOENT and the
 * recipe codes (bad names), -EEXIST (PATH.partial exists: never
 * overwritten), -errno of creating an output, -ENOMEM, with @err filled.
 */
int rec_create(struct rec **out, const struct rec_config *cfg, struct rec_error *err);

/*
 * Connect, write the headers and record until the end condition (call
 * once per rec_create(): the files are closed at the end); fill
 * @res (also on failure, as far as known). Blocks the calling thread,
 * which is the writer. Returns 0 when the recording ran (see res->end:
 * a lost connection after the start is a result, not an error), or -errno
 * when it could not start (connection refused, handshake failed: @err
 * holds the client's message, which names the cause and the fix).
 */
int rec_run(struct rec *rec, struct rec_result *res, struct rec_error *err);

/* Stop the recording: what was received is still written. Any thread;
 * async-signal-safe. */
void rec_stop(struct rec *rec);

/* Close the files and free. NULL is accepted. */
void rec_destroy(struct rec *rec);

/* The final summary: packages, controller skips, overflow, bytes,
 * duration, effective rate; text lines, or one JSON object. */
void rec_summary(FILE *f, const struct rec_result *res, bool json);

/* "stopped", "samples", "duration", "connection lost", "write error",
 * "no data". */
const char *rec_end_name(enum rec_end end);

#endif /* RTLREC_RECORD_H */
