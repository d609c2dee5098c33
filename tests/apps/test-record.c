// SPDX-License-Identifier: MIT
/*
 * rtde-record's recording logic against rtde-sim's server, in this process
 * on an ephemeral port, with controller skips injected: the files hold
 * exactly the packages the client received, the skips are marked where the
 * timestamps jump, the CSV reads the way UR's csv_reader.py reads
 * record.py's output (checked with Python's csv module when python3 is
 * there), and the binary recording dumps to the byte-identical CSV. Plus
 * the number format (Python's repr) and the recipe sources.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "record.h"
#include "server.h"

#define FIELDS                                                                                \
	"timestamp,actual_q,actual_TCP_pose,robot_mode,joint_mode,actual_tool_accelerometer," \
	"tool_output_mode,output_bit_register_64,actual_digital_input_bits,runtime_state,"    \
	"speed_scaling"
/* timestamp 1, actual_q 6, actual_TCP_pose 6, robot_mode 1, joint_mode 6,
 * actual_tool_accelerometer 3, then five scalars. */
#define RECIPE_COLUMNS (1 + 6 + 6 + 1 + 6 + 3 + 5)
#define PERIOD_S 0.002

static char dir[64];

static void path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", dir, name);
}

static void setup_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/rtl-record.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	static const char *const names[] = { "rec.csv",	   "rec.bin",	 "dump.csv", "recipe.xml",
					     "recipe.txt", "strict.csv", "stop.csv" };
	char p[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		path(p, sizeof(p), names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static char *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "open %s", p);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* ---- the rig ------------------------------------------------------------------------- */

struct rig {
	struct sim_server *srv;
	struct rec *rec;
	struct rec_result res;
	struct sim_stats sim;
};

/* Start a simulator streaming at 500 Hz for @sim_s seconds (0: until
 * stopped), skipping @skip_count packages every @skip_every cycles. */
static void sim_start(struct rig *r, double sim_s, uint32_t skip_every, uint32_t skip_count)
{
	struct sim_opts so;
	struct sim_server_opts sv = { 0 };

	sim_opts_default(&so);
	so.faults.skip_every = skip_every;
	so.faults.skip_count = skip_count;
	sv.duration_s = sim_s;
	cr_assert_eq(sim_server_create(&r->srv, &so, &sv), 0);
	cr_assert_eq(sim_server_start(r->srv), 0);
}

static void rig_create(struct rig *r, struct rec_config *cfg)
{
	struct rec_error err = { 0 };

	cfg->host = "127.0.0.1";
	cfg->port = sim_server_port(r->srv);
	cfg->rt_mode = RTL_LOOP_RT_OFF;
	cfg->rx_cpu = -1;
	cr_assert_eq(rec_create(&r->rec, cfg, &err), 0, "%s", err.err.msg);
}

static void rig_run(struct rig *r)
{
	struct rec_error err = { 0 };

	cr_assert_eq(rec_run(r->rec, &r->res, &err), 0, "%s", err.err.msg);
	sim_server_stop(r->srv);
	sim_server_join(r->srv);
	sim_server_stats(r->srv, &r->sim);
}

static void rig_free(struct rig *r)
{
	rec_destroy(r->rec);
	sim_server_destroy(r->srv);
}

/* ---- reading the CSV back in C ------------------------------------------------------------ */

struct csv {
	unsigned columns; /* of the header */
	unsigned rows;
	unsigned bad_rows; /* rows with another number of columns */
	char header[4096];
	double *ts;	  /* column 0 */
	long long *host;  /* host_time_ns */
	unsigned *lost;	  /* lost */
	bool newline_end; /* the file ends with '\n' */
};

static unsigned count_cells(const char *line, size_t len)
{
	unsigned n = len ? 1 : 0;

	for (size_t i = 0; i < len; i++)
		if (line[i] == ' ')
			n++;
	return n;
}

static void csv_read(struct csv *c, const char *p, bool extra)
{
	size_t len;
	char *text = slurp(p, &len), *line = text, *nl;
	unsigned cap = 1024;

	memset(c, 0, sizeof(*c));
	c->ts = malloc(cap * sizeof(*c->ts));
	c->host = malloc(cap * sizeof(*c->host));
	c->lost = malloc(cap * sizeof(*c->lost));
	c->newline_end = len > 0 && text[len - 1] == '\n';
	nl = strchr(line, '\n');
	cr_assert_not_null(nl, "a header line");
	cr_assert_lt((size_t)(nl - line), sizeof(c->header));
	memcpy(c->header, line, (size_t)(nl - line));
	c->columns = count_cells(line, (size_t)(nl - line));
	for (line = nl + 1; *line; line = nl + 1) {
		const char *last, *prev;

		nl = strchr(line, '\n');
		cr_assert_not_null(nl, "row %u ends with a newline", c->rows);
		if (count_cells(line, (size_t)(nl - line)) != c->columns)
			c->bad_rows++;
		if (c->rows == cap) {
			cap *= 2;
			c->ts = realloc(c->ts, cap * sizeof(*c->ts));
			c->host = realloc(c->host, cap * sizeof(*c->host));
			c->lost = realloc(c->lost, cap * sizeof(*c->lost));
		}
		c->ts[c->rows] = strtod(line, NULL);
		if (extra) {
			last = nl;
			while (last > line && last[-1] != ' ')
				last--;
			prev = last - 1;
			while (prev > line && prev[-1] != ' ')
				prev--;
			c->lost[c->rows] = (unsigned)strtoul(last, NULL, 10);
			c->host[c->rows] = strtoll(prev, NULL, 10);
		}
		c->rows++;
	}
	free(text);
}

static void csv_free(struct csv *c)
{
	free(c->ts);
	free(c->host);
	free(c->lost);
}

/* ---- Python, the way UR's csv_reader.py reads record.py's output -------------------------- */

static const char *const PY_CHECK =
	"import csv, sys\n"
	"path, ncols, nrows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
	"with open(path) as f:\n"
	"    lines = [l for l in f.readlines() if l.strip()]\n"
	"reader = csv.reader(lines, delimiter=' ')\n"
	"header = next(reader)\n"
	"data = [row for row in reader]\n"
	"assert len(header) == ncols, (len(header), ncols)\n"
	"assert len(set(header)) == ncols, 'duplicate column names'\n"
	"assert len(data) == nrows, (len(data), nrows)\n"
	"def python_form(cell):\n"
	"    if repr(float(cell)) == cell:\n"
	"        return True\n"
	"    try:\n"
	"        return str(int(cell)) == cell\n"
	"    except ValueError:\n"
	"        return False\n"
	"for i, row in enumerate(data):\n"
	"    assert len(row) == ncols, ('row', i, len(row))\n"
	"    for cell in row:\n"
	"        assert python_form(cell), ('row', i, cell)\n"
	"cols = list(zip(*data))\n"
	"d = {header[i]: list(map(float, cols[i])) for i in range(ncols)}\n"
	"ts = d['timestamp']\n"
	"assert all(b > a for a, b in zip(ts, ts[1:])), 'timestamps increase'\n"
	"print('ok', len(data))\n";

/* Returns 0 when the check passed, 77 when python3 is missing. */
static int python_check(const char *csv_path, unsigned ncols, unsigned nrows)
{
	char script[128], cmd[512];
	FILE *f;
	int st;

	if (system("command -v python3 >/dev/null 2>&1") != 0)
		return 77;
	path(script, sizeof(script), "check.py");
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs(PY_CHECK, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %u %u >/dev/null", script, csv_path, ncols,
		 nrows);
	st = system(cmd);
	unlink(script);
	return st;
}

/* ---- the recording ------------------------------------------------------------------------- */

Test(record, every_package_recorded_with_skips_marked, .init = setup_dir, .fini = remove_dir,
     .timeout = 60)
{
	struct rec_config cfg = { 0 };
	struct rig r = { 0 };
	char csv_p[128], bin_p[128], dump_p[128];
	struct rec_error err = { 0 };
	uint64_t dumped = 0, lost_sum = 0;
	struct csv c;
	char *a, *b;
	size_t alen, blen;
	int py;

	path(csv_p, sizeof(csv_p), "rec.csv");
	path(bin_p, sizeof(bin_p), "rec.bin");
	path(dump_p, sizeof(dump_p), "dump.csv");
	/* The simulator streams for 2 s and closes: the recording ends with
	 * the last package sent, none in flight. */
	sim_start(&r, 2.0, 50, 2);
	cfg.outputs = FIELDS;
	cfg.frequency = 0;
	cfg.csv_path = csv_p;
	cfg.bin_path = bin_p;
	rig_create(&r, &cfg);
	rig_run(&r);

	cr_expect_eq(r.res.end, REC_END_LOST, "ended by the simulator closing (%s)",
		     rec_end_name(r.res.end));
	cr_expect_gt(r.res.rows, 800, "about 2 s at 500 Hz: %llu rows",
		     (unsigned long long)r.res.rows);
	cr_expect_eq(r.res.rows, r.res.client_data, "rows %llu == packages received %llu",
		     (unsigned long long)r.res.rows, (unsigned long long)r.res.client_data);
	cr_expect_eq(r.res.rows, r.res.frames);
	cr_expect_eq(r.res.dropped, 0);
	cr_expect_eq(r.res.ring_full, 0, "writer overflow");
	cr_expect_eq(r.res.after_stop, 0);
	cr_expect_gt(r.res.client_skipped, 0, "skips were injected");
	cr_expect_eq(r.res.ctrl_skipped, r.res.client_skipped);
	cr_expect_geq(r.sim.skipped_packages, r.res.client_skipped);

	csv_read(&c, csv_p, true);
	cr_expect(c.newline_end);
	cr_expect_eq(c.rows, r.res.rows, "CSV rows %u", c.rows);
	cr_expect_eq(c.columns, RECIPE_COLUMNS + 2);
	cr_expect_eq(c.bad_rows, 0, "every row has as many columns as the header");
	cr_expect(strncmp(c.header,
			  "timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 "
			  "actual_q_5 actual_TCP_pose_0 ",
			  strlen("timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 "
				 "actual_q_4 actual_q_5 actual_TCP_pose_0 ")) == 0,
		  "header: %s", c.header);
	cr_expect_not_null(strstr(c.header, " robot_mode joint_mode_0 "), "%s", c.header);
	cr_expect_not_null(strstr(c.header, " actual_tool_accelerometer_2 tool_output_mode "), "%s",
			   c.header);
	cr_expect_not_null(strstr(c.header, " speed_scaling host_time_ns lost"), "%s", c.header);
	for (unsigned i = 0; i < c.rows; i++) {
		lost_sum += c.lost[i];
		if (i == 0) {
			cr_expect_eq(c.lost[i], 0);
			continue;
		}
		cr_expect_gt(c.ts[i], c.ts[i - 1], "timestamps strictly increase at row %u", i);
		cr_expect_geq(c.host[i], c.host[i - 1], "host times never go back at row %u", i);
		/* The gap in controller time is the row plus what it marks. */
		cr_expect_eq(lround((c.ts[i] - c.ts[i - 1]) / PERIOD_S) - 1, (long)c.lost[i],
			     "row %u: timestamps %.3f -> %.3f, lost %u", i, c.ts[i - 1], c.ts[i],
			     c.lost[i]);
	}
	cr_expect_eq(lost_sum, r.res.client_skipped, "lost column sums to %llu, client %llu",
		     (unsigned long long)lost_sum, (unsigned long long)r.res.client_skipped);
	cr_expect_eq(c.ts[0], r.res.first_ts);
	cr_expect_eq(c.ts[c.rows - 1], r.res.last_ts);

	py = python_check(csv_p, c.columns, c.rows);
	if (py == 77)
		cr_log_warn("python3 not found: the csv module check is skipped");
	else
		cr_expect_eq(py, 0, "Python's csv module reads the file as record.py's");

	/* The binary recording dumps to the same bytes. */
	cr_expect_eq(rec_dump(bin_p, dump_p, true, &dumped, &err), 0, "%s", err.err.msg);
	cr_expect_eq(dumped, r.res.rows);
	a = slurp(csv_p, &alen);
	b = slurp(dump_p, &blen);
	cr_expect_eq(alen, blen, "dump: %zu bytes, live CSV %zu", blen, alen);
	cr_expect(alen == blen && memcmp(a, b, alen) == 0, "the dump is the live CSV");
	free(a);
	free(b);
	csv_free(&c);
	rig_free(&r);
}

Test(record, samples_limit_and_strict_layout, .init = setup_dir, .fini = remove_dir, .timeout = 60)
{
	struct rec_config cfg = { 0 };
	struct rig r = { 0 };
	char csv_p[128];
	struct csv c;
	int py;

	path(csv_p, sizeof(csv_p), "strict.csv");
	sim_start(&r, 0, 40, 1);
	cfg.outputs = "timestamp,actual_q,control_step";
	cfg.frequency = 0;
	cfg.csv_path = csv_p;
	cfg.samples = 300;
	cfg.no_extra_columns = true;
	rig_create(&r, &cfg);
	rig_run(&r);

	cr_expect_eq(r.res.end, REC_END_SAMPLES, "%s", rec_end_name(r.res.end));
	cr_expect_eq(r.res.rows, 300);
	cr_expect_leq(r.res.rows, r.res.client_data);
	cr_expect_eq(r.res.rows + r.res.dropped + r.res.after_stop, r.res.frames);
	csv_read(&c, csv_p, false);
	cr_expect_eq(c.rows, 300);
	cr_expect_str_eq(c.header,
			 "timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 "
			 "actual_q_5 control_step");
	cr_expect_eq(c.bad_rows, 0);
	py = python_check(csv_p, 8, 300);
	cr_expect(py == 0 || py == 77, "Python's csv module reads the strict layout");
	csv_free(&c);
	rig_free(&r);
}

static void *stop_later(void *arg)
{
	rtl_time_sleep_until(rtl_time_now() + 600 * RTL_NS_PER_MS);
	rec_stop(arg);
	return NULL;
}

Test(record, stop_writes_what_was_received, .init = setup_dir, .fini = remove_dir, .timeout = 60)
{
	struct rec_config cfg = { 0 };
	struct rig r = { 0 };
	char csv_p[128];
	pthread_t th;
	struct csv c;

	path(csv_p, sizeof(csv_p), "stop.csv");
	sim_start(&r, 0, 0, 0);
	cfg.outputs = "actual_q"; /* timestamp is added */
	cfg.frequency = 125;
	cfg.csv_path = csv_p;
	cfg.duration_ns = 30 * RTL_NS_PER_SEC;
	rig_create(&r, &cfg);
	cr_assert_eq(pthread_create(&th, NULL, stop_later, r.rec), 0);
	rig_run(&r);
	pthread_join(th, NULL);

	cr_expect_eq(r.res.end, REC_END_STOPPED, "%s", rec_end_name(r.res.end));
	cr_expect_eq(r.res.info.divisor, 4, "125 Hz is every 4th cycle of 500 Hz");
	/* About 75 packages in 0.6 s at 125 Hz. */
	cr_expect_gt(r.res.rows, 10);
	cr_expect_lt(r.res.rows, 100);
	cr_expect_eq(r.res.rows + r.res.dropped + r.res.after_stop, r.res.frames);
	cr_expect_eq(r.res.ctrl_skipped, 0);
	csv_read(&c, csv_p, true);
	cr_expect(c.newline_end, "flushed to the last row");
	cr_expect_eq(c.rows, r.res.rows);
	cr_expect_str_eq(c.header,
			 "timestamp actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 "
			 "actual_q_5 host_time_ns lost");
	for (unsigned i = 1; i < c.rows; i++)
		cr_expect_eq(lround((c.ts[i] - c.ts[i - 1]) / 0.008), 1, "row %u: one period", i);
	csv_free(&c);
	rig_free(&r);
}

Test(record, duration_limit, .init = setup_dir, .fini = remove_dir, .timeout = 60)
{
	struct rec_config cfg = { 0 };
	struct rig r = { 0 };
	char bin_p[128];

	path(bin_p, sizeof(bin_p), "rec.bin");
	sim_start(&r, 0, 0, 0);
	cfg.outputs = "timestamp,actual_qd";
	cfg.frequency = 0;
	cfg.bin_path = bin_p;
	cfg.duration_ns = 500 * RTL_NS_PER_MS;
	rig_create(&r, &cfg);
	rig_run(&r);
	cr_expect_eq(r.res.end, REC_END_DURATION, "%s", rec_end_name(r.res.end));
	/* 250 packages are due in 0.5 s; a loaded machine may connect late,
	 * and a simulator that fell behind catches up in a burst, so the row
	 * count has no exact bound in wall time. What is exact: the rows
	 * arrived within the duration, and every controller period between
	 * the first and the last row is a row or a counted skip. */
	cr_expect_gt(r.res.rows, 100, "%llu rows in 0.5 s", (unsigned long long)r.res.rows);
	cr_expect_lt(r.res.last_rx_ns - r.res.first_rx_ns, 500 * RTL_NS_PER_MS);
	cr_expect_eq(lround((r.res.last_ts - r.res.first_ts) / 0.002) + 1,
		     (long)(r.res.rows + r.res.ctrl_skipped), "%llu rows, %llu skipped",
		     (unsigned long long)r.res.rows, (unsigned long long)r.res.ctrl_skipped);
	rig_free(&r);
}

Test(record, connection_refused_names_the_fix, .init = setup_dir, .fini = remove_dir)
{
	struct rec_config cfg = { 0 };
	struct rec_error err = { 0 };
	struct rec_result res;
	struct rec *rec;
	struct rig r = { 0 };
	char csv_p[128];
	uint16_t port;

	/* A port that was free a moment ago: nothing listens there. */
	sim_start(&r, 0, 0, 0);
	port = sim_server_port(r.srv);
	sim_server_stop(r.srv);
	sim_server_join(r.srv);
	sim_server_destroy(r.srv);

	path(csv_p, sizeof(csv_p), "rec.csv");
	cfg.host = "127.0.0.1";
	cfg.port = port;
	cfg.outputs = "timestamp";
	cfg.csv_path = csv_p;
	cfg.rt_mode = RTL_LOOP_RT_OFF;
	cfg.rx_cpu = -1;
	cr_assert_eq(rec_create(&rec, &cfg, &err), 0, "%s", err.err.msg);
	cr_expect_eq(rec_run(rec, &res, &err), -ECONNREFUSED, "%s", err.err.msg);
	cr_expect_not_null(strstr(err.err.msg, "connection refused"), "%s", err.err.msg);
	cr_expect_not_null(strstr(err.err.msg, "rtde-sim"), "the fix is named: %s", err.err.msg);
	rec_destroy(rec);
}

/* ---- formats ------------------------------------------------------------------------------ */

Test(record, doubles_print_as_python_repr)
{
	static const struct {
		double v;
		const char *s;
	} cases[] = {
		{ 0.1, "0.1" },
		{ 1.0, "1.0" },
		{ -2.5, "-2.5" },
		{ 100.0, "100.0" },
		{ 0.0, "0.0" },
		{ -0.0, "-0.0" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 2.0 / 3.0, "0.6666666666666666" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1.5707963267948966, "1.5707963267948966" },
		{ 0.0001, "0.0001" },
		{ 0.00001, "1e-05" },
		{ 1.5e-7, "1.5e-07" },
		{ 1e15, "1000000000000000.0" },
		{ 1e16, "1e+16" },
		{ 1.2345678901234567e17, "1.2345678901234566e+17" },
		{ 4.35, "4.35" },
		{ 1e-310, "1e-310" },
		{ 2.5e-320, "2.5e-320" },
		{ 123456789.125, "123456789.125" },
		{ 43.818, "43.818" },
		{ 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ -2.2250738585072014e-308, "-2.2250738585072014e-308" },
		{ 1e100, "1e+100" },
		{ 9007199254740993.0, "9007199254740992.0" },
		{ INFINITY, "inf" },
		{ -INFINITY, "-inf" },
		{ NAN, "nan" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = rec_format_double(buf, sizeof(buf), cases[i].v);

		cr_expect_str_eq(buf, cases[i].s, "%.17g", cases[i].v);
		cr_expect_eq((size_t)n, strlen(cases[i].s));
	}
}

Test(record, csv_row_types)
{
	static struct rec_schema s;
	struct rtl_rtde_recipe *rcp = malloc(sizeof(*rcp));
	struct rtl_rtde_recipe_opts o = { .size = sizeof(o), .dir = RTL_RTDE_RECIPE_OUTPUT };
	unsigned char values[256] = { 0 };
	struct rec_row row = {
		.seq = 9, .rx_ns = 123456789012, .ctrl_skipped = 2, .dropped = 1, .values = values
	};
	char line[2048], head[1024];
	int32_t jm[6] = { -1, 0, 1, 253, -2147483647 - 1, 7 };
	uint64_t bits = UINT64_MAX;
	double q0 = 0.5;

	cr_assert_gt(rtl_rtde_recipe_from_list(rcp, &o,
					       "actual_q,joint_mode,output_bit_register_64,"
					       "tool_output_mode,actual_digital_input_bits",
					       NULL),
		     0);
	cr_assert_eq(rec_schema_from_recipe(&s, rcp), 0);
	memcpy(values + s.cols[0].offset, &q0, 8);
	memcpy(values + s.cols[1].offset, jm, sizeof(jm));
	values[s.cols[2].offset] = 1;
	values[s.cols[3].offset] = 200;
	memcpy(values + s.cols[4].offset, &bits, 8);
	cr_assert_lt(s.values_size, sizeof(values));
	cr_expect_eq(rec_csv_columns(&s, true), 6 + 6 + 3 + 2);
	cr_assert_gt(rec_csv_header(head, sizeof(head), &s, false), 0);
	cr_expect_str_eq(head, "actual_q_0 actual_q_1 actual_q_2 actual_q_3 actual_q_4 "
			       "actual_q_5 joint_mode_0 joint_mode_1 joint_mode_2 joint_mode_3 "
			       "joint_mode_4 joint_mode_5 output_bit_register_64 tool_output_mode "
			       "actual_digital_input_bits\n");
	cr_assert_gt(rec_csv_row(line, sizeof(line), &s, &row, true), 0);
	cr_expect_str_eq(line, "0.5 0.0 0.0 0.0 0.0 0.0 -1 0 1 253 -2147483648 7 1 200 "
			       "18446744073709551615 123456789012 3\n");
	free(rcp);
}

/* ---- recipe sources ------------------------------------------------------------------------ */

static void put(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(record, recipe_from_xml_text_and_list, .init = setup_dir, .fini = remove_dir)
{
	char names[1024], xml[128], txt[128];
	struct rec_error err = { 0 };
	bool added = false;

	path(xml, sizeof(xml), "recipe.xml");
	path(txt, sizeof(txt), "recipe.txt");
	put(xml, "<?xml version=\"1.0\"?>\n<rtde_config>\n"
		 "  <recipe key=\"state\">\n"
		 "    <field name=\"actual_q\" type=\"VECTOR6D\"/>\n"
		 "  </recipe>\n"
		 "  <recipe key=\"out\">\n"
		 "    <field name=\"timestamp\" type=\"DOUBLE\"/>\n"
		 "    <field name=\"target_q\" type=\"VECTOR6D\"/>\n"
		 "  </recipe>\n"
		 "</rtde_config>\n");
	cr_expect_eq(rec_outputs(names, sizeof(names), NULL, xml, NULL, &added, &err), 2, "%s",
		     err.err.msg);
	cr_expect_str_eq(names, "timestamp,target_q", "several recipes: \"out\" by default");
	cr_expect_not(added);
	cr_expect_eq(rec_outputs(names, sizeof(names), NULL, xml, "state", &added, &err), 2, "%s",
		     err.err.msg);
	cr_expect_str_eq(names, "timestamp,actual_q", "timestamp added first");
	cr_expect(added);
	cr_expect_eq(rec_outputs(names, sizeof(names), NULL, xml, "nope", &added, &err), -ENOENT);
	cr_expect_not_null(strstr(err.detail, "nope"), "%s%s", err.err.msg, err.detail);

	put(txt, "# the recipe\ntimestamp\nactual_TCP_pose\n\nrobot_mode\n");
	cr_expect_eq(rec_outputs(names, sizeof(names), NULL, txt, NULL, &added, &err), 3, "%s",
		     err.err.msg);
	cr_expect_str_eq(names, "timestamp,actual_TCP_pose,robot_mode");

	cr_expect_eq(rec_outputs(names, sizeof(names), "actual_tcp_pose", NULL, NULL, &added, &err),
		     -ENOENT);
	cr_expect_not_null(strstr(err.detail, "did you mean 'actual_TCP_pose'"), "%s%s",
			   err.err.msg, err.detail);

	path(txt, sizeof(txt), "missing.txt");
	cr_expect_eq(rec_outputs(names, sizeof(names), NULL, txt, NULL, &added, &err), -ENOENT);
	cr_expect_not_null(strstr(err.err.msg, "missing.txt"), "%s", err.err.msg);
	cr_expect_not_null(strstr(err.err.msg, "No such file"), "%s", err.err.msg);
}

Test(record, dump_rejects_a_csv, .init = setup_dir, .fini = remove_dir)
{
	struct rec_error err = { 0 };
	char csv_p[128], dump_p[128];

	path(csv_p, sizeof(csv_p), "rec.csv");
	path(dump_p, sizeof(dump_p), "dump.csv");
	put(csv_p, "timestamp lost\n1.0 0\n");
	cr_expect_eq(rec_dump(csv_p, dump_p, true, NULL, &err), -EBADMSG);
	cr_expect_not_null(strstr(err.err.msg, "RTLREC1"), "%s", err.err.msg);
}
