// SPDX-License-Identifier: MIT
/*
 * Writes the fuzz seed corpora, one directory per harness under argv[1],
 * laid out as each harness reads its input (tests/fuzz/seeds/ holds what
 * it wrote; `tests/fuzz/run-fuzz.sh --write-seeds` runs it):
 *   - the RTDE codec harnesses: the section-7 test vectors
 *     (tests/io/rtde/test-rtde-vectors.h), the bytes the unit tests pin;
 *   - client and sim-session: a whole conversation, recorded by running
 *     the real client (io/rtde/rtde_client.c) against rtde-sim's session
 *     in memory, each configuration of fuzz-common.h: what the controller
 *     said seeds the client, what the client said seeds the session;
 *   - udp-state and udp-command: datagrams made by io/udp/udp.c's encoders
 *     from rtde-sim's robot, and ALARM and LIMITS datagrams (some patched
 *     to what the encoders refuse);
 *   - recipe-xml, recipe-text: small rtde_config documents and name lists;
 *   - record: binary recordings written by rtde-record's own writer.
 * Not part of the library.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rtloop/log.h>
#include <rtloop/rtde_client.h>
#include <rtloop/udp.h>

#include "fuzz-common.h"
#include "fuzz-configs.h"
#include "record.h"
#include "robot.h"
#include "session.h"
#include "sim.h"
#include "test-rtde-vectors.h"
#include "udp.h"

static const char *root;

static void put(const char *harness, const char *name, const uint8_t *a, size_t alen,
		const uint8_t *b, size_t blen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, harness);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", root, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Seeds for a decode harness built with -DFUZZ_TYPES=@group. */
static void group_seeds(const char *harness, const char *group)
{
	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++) {
		const struct rtde_vector *v = &rtde_vectors[i];
		const char *hit = strchr(group, v->bytes[2]);
		uint8_t sel;

		if (!hit || v->bytes[2] == 0)
			continue;
		sel = (uint8_t)(hit - group);
		put(harness, v->name, &sel, 1, v->bytes + 3, v->len - 3);
	}
}

static void framer_seeds(void)
{
	static uint8_t stream[4096];
	size_t len = 0;
	uint8_t ctl[3];

	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++) {
		memcpy(stream + len, rtde_vectors[i].bytes, rtde_vectors[i].len);
		len += rtde_vectors[i].len;
		ctl[0] = (uint8_t)i;
		ctl[1] = 0x10;
		ctl[2] = 0x00;
		put("framer", rtde_vectors[i].name, ctl, 3, rtde_vectors[i].bytes,
		    rtde_vectors[i].len);
	}
	ctl[0] = 1;
	ctl[1] = 0xFF;
	ctl[2] = 0xFF;
	put("framer", "all-max-65535", ctl, 3, stream, len);
	ctl[0] = 2;
	ctl[1] = 0x00;
	ctl[2] = 100;
	put("framer", "all-max-100", ctl, 3, stream, len);
	ctl[1] = 0x00;
	ctl[2] = 64; /* the 89-byte text message is too big */
	put("framer", "all-max-64", ctl, 3, stream, len);
	memcpy(stream + len, "\x00\x02\x53", 3);
	ctl[1] = 0x10;
	ctl[2] = 0x00;
	put("framer", "all-then-size-2", ctl, 3, stream, len + 3);
}

static void values_seeds(void)
{
	static const uint8_t q[] = { 2, 5, 7 };
	static const uint8_t slider[] = { 2, 2, 5 };
	static const uint8_t mask[] = { 1, 2 };
	static const uint8_t two_doubles[] = { 2, 5, 5 };
	static const uint8_t all[] = { 10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static uint8_t zeros[1 + 1 + 4 + 8 + 4 + 8 + 24 + 48 + 24 + 24];

	put("values", "timestamp-actual_q", q, sizeof(q), vec_u_q_v2 + 4, sizeof(vec_u_q_v2) - 4);
	put("values", "speed-slider", slider, sizeof(slider), vec_u_in_slider + 4,
	    sizeof(vec_u_in_slider) - 4);
	put("values", "speed-slider-mask", mask, sizeof(mask), vec_u_in_mask + 4,
	    sizeof(vec_u_in_mask) - 4);
	put("values", "timestamp-speed-fraction", two_doubles, sizeof(two_doubles),
	    vec_u_out_v2 + 4, sizeof(vec_u_out_v2) - 4);
	put("values", "every-type", all, sizeof(all), zeros, sizeof(zeros));
}

static void types_seeds(void)
{
	static const char *const lists[] = {
		"DOUBLE,VECTOR6D",
		"NOT_FOUND,VECTOR6D",
		"UINT32,DOUBLE",
		"IN_USE,IN_USE",
		VEC_O_NAMES,
		VEC_I_NAMES,
		"timestamp,actual_q,",
		("BOOL,UINT8,UINT32,UINT64,INT32,DOUBLE,VECTOR3D,VECTOR6D,VECTOR6INT32,"
		 "VECTOR6UINT32"),
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char name[16];

		snprintf(name, sizeof(name), "list-%zu", i);
		put("types", name, (const uint8_t *)lists[i], strlen(lists[i]), NULL, 0);
	}
}

/* ---- client <-> rtde-sim session ---------------------------------------------- */

struct stream {
	uint8_t b[16384];
	size_t len;
};

static void append(struct stream *st, const uint8_t *p, size_t n)
{
	if (n > sizeof(st->b) - st->len)
		n = sizeof(st->b) - st->len; /* the seeds stay small */
	memcpy(st->b + st->len, p, n);
	st->len += n;
}

static void die(const char *what)
{
	fprintf(stderr, "gen-seeds: %s\n", what);
	exit(1);
}

/* Run client configuration @k against a session of a default controller
 * until 12 data packages have arrived (or the handshake ends in READY);
 * record both directions. */
static void converse(int k, struct stream *to_ctrl, struct stream *to_client)
{
	struct rtl_rtde_client_config cfg = { .size = sizeof(cfg) };
	struct rtl_rtde_client *c;
	struct rtl_rtde_client_event ev;
	struct sim *sim;
	struct sim_session *s;
	unsigned data = 0;
	int64_t now = 0;
	int err;

	cfg = fuzz_client_configs[k];
	if (rtl_rtde_client_create(&c, &cfg, NULL) < 0)
		die("client config does not build");
	sim = sim_new(NULL, 0, &err);
	if (!sim)
		die("sim_new");
	s = sim_session_open(sim, 0);
	if (!s)
		die("sim_session_open");
	rtl_rtde_client_connected(c, now);
	for (int step = 0; step < 400 && data < 12; step++) {
		const uint8_t *p;
		size_t n;
		enum rtl_rtde_client_state_id st;

		while ((n = rtl_rtde_client_tx(c, &p)) > 0) {
			append(to_ctrl, p, n);
			sim_session_feed(sim, s, p, n, now);
			rtl_rtde_client_tx_done(c, n);
		}
		st = rtl_rtde_client_state(c);
		if (st == RTL_RTDE_CLIENT_READY && step > 40)
			break;
		if (st == RTL_RTDE_CLIENT_RUNNING) {
			/* Every input recipe once, and a text from each side. */
			for (unsigned i = 0; data == 2 && rtl_rtde_client_input_recipe(c, i); i++) {
				const struct rtl_rtde_recipe *r =
					rtl_rtde_client_input_recipe(c, i);
				static unsigned char host[4096];
				struct rtl_rtde_frame f;
				uint8_t pkg[512];
				int len;

				memset(host, 0, sizeof(host));
				rtl_rtde_frame_init(&f, host, sizeof(host), r);
				len = rtl_rtde_client_encode_inputs(c, i, pkg, sizeof(pkg), &f);
				if (len > 0) {
					append(to_ctrl, pkg, (size_t)len);
					sim_session_feed(sim, s, pkg, (size_t)len, now);
				}
			}
			if (data == 4)
				sim_session_text(sim, s, RTL_RTDE_LEVEL_INFO, "seed text",
						 "gen-seeds");
		}
		now += sim_period_ns(sim);
		sim_run_due(sim, now);
		n = sim_session_pending(s, &p);
		if (n) {
			append(to_client, p, n);
			rtl_rtde_client_feed(c, p, n);
			while (rtl_rtde_client_next(c, &ev, now) == 1)
				data += ev.type == RTL_RTDE_CLIENT_EV_DATA;
			sim_session_consumed(s, n);
		}
	}
	sim_session_close(sim, s);
	sim_free(sim);
	rtl_rtde_client_destroy(c);
}

static void session_seeds(void)
{
	static struct stream to_ctrl, to_client;

	for (int k = 0; k < FUZZ_CLIENT_CONFIGS; k++) {
		uint8_t ctl[2];
		char name[32];

		to_ctrl.len = to_client.len = 0;
		converse(k, &to_ctrl, &to_client);
		for (int chunked = 0; chunked <= 1; chunked++) {
			snprintf(name, sizeof(name), "config-%d%s", k, chunked ? "-chunked" : "");
			ctl[0] = (uint8_t)(k | (chunked ? 0x40 : 0));
			ctl[1] = chunked ? 7 : 0;
			put("client", name, ctl, 2, to_client.b, to_client.len);
			ctl[0] = (uint8_t)(chunked ? 0x40 : 0); /* eseries, v2, echo register 30 */
			put("sim-session", name, ctl, 2, to_ctrl.b, to_ctrl.len);
		}
	}
}

/* ---- UDP ---------------------------------------------------------------------------- */

/* Append one datagram with its u16 length prefix. */
static void dgram(struct stream *st, const uint8_t *d, int len)
{
	uint8_t n[2] = { (uint8_t)len, (uint8_t)(len >> 8) };

	if (len < 0)
		die("a UDP encoder failed");
	append(st, n, 2);
	append(st, d, (size_t)len);
}

/* ALARM and LIMITS (docs/udp.md 4.5, 4.6): what each side's decoder of
 * them is fed, valid and not (the encoders refuse the invalid ones, so
 * those bytes are patched in). */
static void udp_alarm_limits_seeds(struct stream *st, uint8_t *d)
{
	struct rtl_udp_alarm a = {
		.level = RTL_UDP_ALARM_ERROR,
		.group = RTL_UDP_ALARM_GROUP_RT,
		.code = RTL_UDP_ALARM_CMD_TIMEOUT,
		.text = "command time-out: no command for 0.1 s; robot stopped"
	};
	struct rtl_udp_limits l = { .velx = { 250, RTL_UDP_AUTO },
				    .accx = { 2500, 0 },
				    .velj = { 60, 60, 60, 90, 90, 90 } };
	struct rtl_udp_hello hi = { .schema = RTL_UDP_SCHEMA, .loss_count = 4 };
	static const uint8_t nan_le[8] = { 0, 0, 0, 0, 0, 0, 0xf8, 0x7f };
	int len;

	/* The loop's side: an ALARM, one whose text is not printable and has
	 * no NUL, then the server's BYE. */
	st->len = 0;
	dgram(st, d, rtl_udp_encode_alarm(d, RTL_UDP_MAX_DATAGRAM, 1, 5200000000, &a));
	a.level = RTL_UDP_ALARM_WARN;
	a.group = 7;
	a.code = 4711;
	len = rtl_udp_encode_alarm(d, RTL_UDP_MAX_DATAGRAM, 2, 5300000000, &a);
	for (int i = 0; i < RTL_UDP_ALARM_TEXT; i++)
		d[RTL_UDP_HEADER_SIZE + 8 + i] = (uint8_t)(i % 3 ? 'a' + i % 26 : 0x80 + i);
	dgram(st, d, len);
	dgram(st, d, rtl_udp_encode_bye(d, RTL_UDP_MAX_DATAGRAM, 3, 5400000000));
	put("udp-state", "alarms-bye", st->b, st->len, NULL, 0);

	/* rtde-sim's side: a HELLO with a loss count, LIMITS, LIMITS with a
	 * NaN joint speed, then a command. */
	st->len = 0;
	dgram(st, d, rtl_udp_encode_hello(d, RTL_UDP_MAX_DATAGRAM, RTL_UDP_HELLO, 0, 1000, &hi));
	dgram(st, d, rtl_udp_encode_limits(d, RTL_UDP_MAX_DATAGRAM, 1, 2000, &l));
	len = rtl_udp_encode_limits(d, RTL_UDP_MAX_DATAGRAM, 2, 3000, &l);
	memcpy(d + RTL_UDP_HEADER_SIZE + 32, nan_le, sizeof(nan_le));
	dgram(st, d, len);
	{
		struct rtl_udp_cmd c = { .mode = RTL_UDP_MODE_SPEEDJ, .target_time = 0.001 };

		c.vel[0] = 120;
		dgram(st, d, rtl_udp_encode_command(d, RTL_UDP_MAX_DATAGRAM, 3, 4000, &c));
	}
	put("udp-command", "hello-limits", st->b, st->len, NULL, 0);
}

static void udp_seeds(void)
{
	static struct stream st;
	static struct sim_robot robot;
	static struct rtl_udp_state state;
	static uint8_t d[RTL_UDP_MAX_DATAGRAM];
	struct sim_robot_config cfg;
	struct rtl_udp_hello w = { .schema = RTL_UDP_SCHEMA, .period_ns = 1000000 };
	struct rtl_udp_cmd cmd = { .target_time = 0.01 };

	sim_robot_config_default(&cfg);
	cfg.period_ns = 1000000;
	if (sim_robot_init(&robot, &cfg) < 0)
		die("sim_robot_init");
	sim_udp_fill_state(&robot, 42.0, &state);

	/* The loop's side: WELCOME, three states (one lost), one repeated. */
	st.len = 0;
	dgram(&st, d, rtl_udp_encode_hello(d, sizeof(d), RTL_UDP_WELCOME, 1, 1000, &w));
	put("udp-state", "welcome", st.b, st.len, NULL, 0);
	for (uint64_t seq = 1; seq <= 4; seq++)
		if (seq != 3)
			dgram(&st, d,
			      rtl_udp_encode_state(d, sizeof(d), seq,
						   42000000000 + 1000000 * (int64_t)seq, &state));
	dgram(&st, d, rtl_udp_encode_state(d, sizeof(d), 2, 42002000000, &state));
	put("udp-state", "welcome-states", st.b, st.len, NULL, 0);
	st.len = 0;
	dgram(&st, d, rtl_udp_encode_state(d, sizeof(d), 7, 1, &state));
	put("udp-state", "state", st.b, st.len, NULL, 0);

	/* rtde-sim's side: HELLO, then every mode, then BYE. */
	st.len = 0;
	dgram(&st, d, rtl_udp_encode_hello(d, sizeof(d), RTL_UDP_HELLO, 1, 1000, &w));
	put("udp-command", "hello", st.b, st.len, NULL, 0);
	for (uint8_t mode = 0; mode < RTL_UDP_MODE_COUNT; mode++) {
		struct stream one = { .len = 0 };
		char name[32];

		cmd.mode = mode;
		cmd.echo_seq = mode;
		for (int i = 0; i < 6; i++) {
			cmd.pos[i] = mode == RTL_UDP_MODE_SERVOL ? 100.0 * i : 10.0 * i;
			cmd.vel[i] = 5.0;
			cmd.acc[i] = i % 2 ? RTL_UDP_AUTO : 50.0;
		}
		for (uint64_t seq = 1; seq <= 3; seq++) {
			int len = rtl_udp_encode_command(d, sizeof(d), mode * 3 + seq, 2000, &cmd);

			dgram(&st, d, len);
			dgram(&one, d, len);
		}
		snprintf(name, sizeof(name), "command-%s",
			 rtl_udp_mode_name((enum rtl_udp_mode)mode));
		put("udp-command", name, one.b, one.len, NULL, 0);
	}
	dgram(&st, d, rtl_udp_encode_bye(d, sizeof(d), 99, 3000));
	put("udp-command", "hello-modes-bye", st.b, st.len, NULL, 0);
	udp_alarm_limits_seeds(&st, d);
}

/* ---- recipes ------------------------------------------------------------------------- */

static void recipe_seeds(void)
{
	static const struct {
		const char *name;
		uint8_t ctl0, ctl1; /* see fuzz-recipe.c */
		const char *text;
	} xml[] = {
		{ "out-in", 0x10, 1,
		  "<?xml version=\"1.0\"?>\n<rtde_config>\n"
		  "  <recipe key=\"out\">\n"
		  "    <field name=\"timestamp\" type=\"DOUBLE\"/>\n"
		  "    <field name=\"actual_q\" type=\"VECTOR6D\"/>\n"
		  "    <field name=\"robot_mode\" type=\"INT32\"/>\n"
		  "  </recipe>\n"
		  "  <recipe key=\"in\">\n"
		  "    <field name=\"speed_slider_mask\" type=\"UINT32\"/>\n"
		  "    <field name=\"speed_slider_fraction\" type=\"DOUBLE\"/>\n"
		  "  </recipe>\n</rtde_config>\n" },
		{ "in-key", 0x11, 2,
		  "<rtde_config><recipe key=\"out\"><field name=\"timestamp\"/></recipe>"
		  "<recipe key=\"in\"><field name=\"input_int_register_24\" type=\"INT32\"/>"
		  "<field name=\"input_double_register_30\"/>"
		  "<field name=\"standard_digital_output\" type=\"UINT8\"/></recipe>"
		  "</rtde_config>" },
		{ "one-recipe", 0x08, 0,
		  "<rtde_config><recipe key=\"state\"><field name=\"timestamp\"/>"
		  "<field name=\"control_step\"/><field name=\"actual_TCP_pose\"/>"
		  "<field name=\"output_bit_register_64\" type=\"BOOL\"/></recipe></rtde_config>" },
		{ "drop-too-new", 0x0a, 3,
		  "<!-- record.py's format -->\n<rtde_config><recipe key=\"state\">"
		  "<field name=\"timestamp\" type=\"DOUBLE\"/>"
		  "<field name=\"control_step\" type=\"UINT64\"/></recipe></rtde_config>" },
	};
	static const struct {
		const char *name;
		uint8_t ctl0;
		const char *text;
	} text[] = {
		{ "outputs", 0x10,
		  "# outputs of record.py\ntimestamp\nactual_q\n  actual_TCP_pose  \n\n"
		  "runtime_state\nactual_digital_output_bits\n" },
		{ "inputs", 0x11,
		  "speed_slider_mask\nspeed_slider_fraction # slider\ninput_int_register_30\n"
		  "input_bit_register_70\n" },
		{ "list-outputs", 0x90, "timestamp, actual_q, actual_qd, output_int_register_0," },
		{ "list-inputs-cb3", 0x89, "input_double_register_30,input_double_register_0" },
	};
	for (size_t i = 0; i < sizeof(xml) / sizeof(xml[0]); i++) {
		uint8_t ctl[2] = { xml[i].ctl0, xml[i].ctl1 };

		put("recipe-xml", xml[i].name, ctl, 2, (const uint8_t *)xml[i].text,
		    strlen(xml[i].text));
	}
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		uint8_t ctl[2] = { text[i].ctl0, 0 };

		put("recipe-text", text[i].name, ctl, 2, (const uint8_t *)text[i].text,
		    strlen(text[i].text));
	}
}

/* ---- rtde-record ------------------------------------------------------------------------ */

static void record_seed(const char *name, const char *list, unsigned rows)
{
	static struct rtl_rtde_recipe r;
	static struct rec_schema s;
	static unsigned char values[8192];
	struct rtl_rtde_recipe_opts o = { .size = sizeof(o), .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rec_meta m = { .host = "127.0.0.1",
			      .port = 30004,
			      .controller = "5.26.0.0",
			      .frequency = 500,
			      .period_ns = 2000000 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (rtl_rtde_recipe_from_list(&r, &o, list, NULL) < 0 ||
	    rec_schema_from_recipe(&s, &r) < 0 || s.values_size > sizeof(values))
		die("record recipe");
	char hdr[8192];
	unsigned char rec[REC_RECORD_HEADER + sizeof(values)];
	int n;

	f = open_memstream(&buf, &len);
	n = f ? rec_bin_header(hdr, sizeof(hdr), &s, &m) : -1;
	if (n < 0 || fwrite(hdr, 1, (size_t)n, f) != (size_t)n)
		die("rec_bin_header");
	for (unsigned k = 0; k < rows; k++) {
		struct rec_row row = { .seq = k + 1,
				       .rx_ns = 1000000 * (int64_t)k,
				       .ctrl_skipped = k == 2,
				       .values = values };
		double ts = 42.0 + 0.002 * k;

		memset(values, (int)k, s.values_size);
		memcpy(values + s.cols[0].offset, &ts, sizeof(ts));
		n = rec_bin_row(rec, sizeof(rec), &s, &row);
		if (n < 0 || fwrite(rec, 1, (size_t)n, f) != (size_t)n)
			die("rec_bin_row");
	}
	if (fclose(f) != 0)
		die("open_memstream");
	put("record", name, (const uint8_t *)buf, len, NULL, 0);
	free(buf);
}

static void record_seeds(void)
{
	record_seed("timestamp-q", "timestamp,actual_q", 3);
	record_seed("every-type",
		    "timestamp,robot_mode,runtime_state,actual_digital_output_bits,"
		    "actual_TCP_pose,output_bit_register_64,"
		    "actual_current_window,joint_mode,elbow_position",
		    4);
	record_seed("header-only", "timestamp", 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	root = argv[1];
	if (mkdir(root, 0755) != 0 && errno != EEXIST) {
		perror(root);
		return 1;
	}
	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++)
		put("decode", rtde_vectors[i].name, rtde_vectors[i].bytes, rtde_vectors[i].len,
		    NULL, 0);
	put("decode", "vec_o_reply_lying_size", vec_o_reply_lying_size,
	    sizeof(vec_o_reply_lying_size), NULL, 0);
	group_seeds("decode-fixed", "VvSP");
	group_seeds("decode-text", "M");
	group_seeds("decode-setup", "OI");
	group_seeds("decode-data", "U");
	framer_seeds();
	values_seeds();
	types_seeds();
	rtl_log_set_handler(NULL, NULL);
	session_seeds();
	udp_seeds();
	recipe_seeds();
	record_seeds();
	return 0;
}
