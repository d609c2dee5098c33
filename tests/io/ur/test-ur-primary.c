// SPDX-License-Identifier: MIT
/*
 * The UR primary interface codec and client (io/ur/ur_primary.c): the byte
 * vectors of docs/ur-primary.md section 6 decoded and re-encoded, round
 * trips, hostile input (each rejection counted under its name), and the
 * client against a scripted fake controller: a thread that listens on
 * 127.0.0.1 port 0 and plays a list of byte strings, in pieces of a given
 * size, with pauses, then closes or stays silent.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/tcp.h>
#include <rtloop/time.h>
#include <rtloop/ur_primary.h>

#include "ur-primary-vectors.h"

static const struct ur_vec *vec(const char *name)
{
	for (size_t i = 0; i < sizeof(ur_vecs) / sizeof(ur_vecs[0]); i++)
		if (!strcmp(ur_vecs[i].name, name))
			return &ur_vecs[i];
	cr_assert_fail("docs/ur-primary.md has no vector '%s'", name);
	return NULL;
}

/* ---- vectors ------------------------------------------------------------- */

Test(ur_primary, vector_version_decodes_and_encodes)
{
	const struct ur_vec *v = vec("version-5-15");
	struct rtl_ur_version_msg ver;
	uint8_t buf[128];

	cr_assert_eq(rtl_ur_robot_msg_type(v->bytes, v->len), RTL_UR_RMSG_VERSION);
	cr_assert_eq(rtl_ur_decode_version(&ver, v->bytes, v->len), 0);
	cr_assert_str_eq(ver.project, "URControl");
	cr_assert_eq(ver.major, 5);
	cr_assert_eq(ver.minor, 15);
	cr_assert_eq(ver.bugfix, 2);
	cr_assert_eq(ver.build, 1234);
	cr_assert_str_eq(ver.build_date, "2024-03-20");
	cr_assert_eq(ver.source, -2);
	cr_assert_eq(rtl_ur_encode_version(buf, sizeof(buf), &ver), (int)v->len);
	cr_assert_eq(memcmp(buf, v->bytes, v->len), 0);

	v = vec("version-3-15");
	cr_assert_eq(rtl_ur_decode_version(&ver, v->bytes, v->len), 0);
	cr_assert_eq(ver.major, 3);
	cr_assert_eq(ver.bugfix, 8);
	cr_assert_eq(ver.build, 5678);
}

static void check_mode(const char *name, uint8_t major, uint8_t minor, int sub_size)
{
	const struct ur_vec *v = vec(name);
	const uint8_t *sub;
	size_t off = 0, sl;
	uint8_t type, buf[128];
	struct rtl_ur_robot_mode_data m;

	cr_assert_eq(rtl_ur_robot_mode_size(major, minor), sub_size);
	cr_assert_eq(rtl_ur_msg_type(v->bytes, v->len), RTL_UR_MSG_ROBOT_STATE);
	cr_assert_eq(rtl_ur_state_next(&off, &sub, &sl, &type, v->bytes, v->len), 1);
	cr_assert_eq(type, RTL_UR_STATE_ROBOT_MODE);
	cr_assert_eq(sl, (size_t)sub_size);
	cr_assert_eq(rtl_ur_decode_robot_mode(&m, sub, sl, major, minor), 0);
	cr_assert_eq(m.timestamp, 123456789u);
	cr_assert(m.real_robot_connected && m.real_robot_enabled && m.power_on);
	cr_assert(!m.emergency_stopped && !m.protective_stopped && !m.program_paused);
	cr_assert(m.program_running);
	cr_assert_eq(m.robot_mode, 7);
	cr_assert_eq(m.control_mode, 0);
	cr_assert_eq(m.target_speed_fraction, 1.0);
	cr_assert_eq(m.speed_scaling, 0.5);
	cr_assert_eq(m.target_speed_fraction_limit, sub_size >= 46 ? 1.0 : 0.0);
	cr_assert_eq(rtl_ur_state_next(&off, &sub, &sl, &type, v->bytes, v->len), 0);
	cr_assert_eq(rtl_ur_encode_robot_state(buf, sizeof(buf), major, minor, &m), (int)v->len);
	cr_assert_eq(memcmp(buf, v->bytes, v->len), 0, "%s re-encodes differently", name);
}

Test(ur_primary, vector_robot_mode_each_version_layout)
{
	check_mode("robot-mode-5x", 5, 15, 47);
	check_mode("robot-mode-5x", 3, 5, 47);
	check_mode("robot-mode-3-2", 3, 2, 46);
	check_mode("robot-mode-3-1", 3, 1, 38);
	cr_assert_eq(rtl_ur_robot_mode_size(10, 0), 47);
	cr_assert_eq(rtl_ur_robot_mode_size(1, 8), -EPROTONOSUPPORT);
}

Test(ur_primary, robot_mode_shorter_than_the_version_layout_is_refused)
{
	const struct ur_vec *v = vec("robot-mode-3-2");
	struct rtl_ur_robot_mode_data m;

	/* A 46-byte sub-package read as a 5.x controller's (47). */
	cr_assert_eq(rtl_ur_decode_robot_mode(&m, v->bytes + 5, 46, 5, 0), -EBADMSG);
	/* A longer one than the layout is fine (fields appended later). */
	cr_assert_eq(rtl_ur_decode_robot_mode(&m, v->bytes + 5, 46, 3, 1), 0);
	cr_assert_eq(m.speed_scaling, 0.5);
}

static void check_rmsg(const char *name, struct rtl_ur_robot_msg *m)
{
	const struct ur_vec *v = vec(name);
	uint8_t buf[256];

	cr_assert_eq(rtl_ur_decode_robot_msg(m, v->bytes, v->len), 0, "%s", name);
	cr_assert_eq(rtl_ur_encode_robot_msg(buf, sizeof(buf), m), (int)v->len, "%s", name);
	cr_assert_eq(memcmp(buf, v->bytes, v->len), 0, "%s re-encodes differently", name);
}

Test(ur_primary, vector_robot_messages_decode_and_encode)
{
	struct rtl_ur_robot_msg m;

	check_rmsg("runtime-exception", &m);
	cr_assert_eq(m.type, RTL_UR_RMSG_RUNTIME_EXCEPTION);
	cr_assert_eq(m.timestamp, 1000u);
	cr_assert_eq(m.line, 12);
	cr_assert_eq(m.column, 5);
	cr_assert_str_eq(m.text, "compile_error_name_not_found:foo:");

	check_rmsg("key-message", &m);
	cr_assert_eq(m.type, RTL_UR_RMSG_KEY);
	cr_assert_eq(m.code, 210);
	cr_assert_str_eq(m.title, "C210A0");
	cr_assert_str_eq(m.text, "Protective stop");

	check_rmsg("error-code", &m);
	cr_assert_eq(m.type, RTL_UR_RMSG_ERROR_CODE);
	cr_assert_eq(m.source, 4);
	cr_assert_eq(m.code, 103);
	cr_assert_eq(m.argument, 3);
	cr_assert_eq(m.report_level, 2);
	cr_assert_str_eq(m.text, "Joint 3: overcurrent");

	check_rmsg("text", &m);
	cr_assert_eq(m.type, RTL_UR_RMSG_TEXT);
	cr_assert_str_eq(m.text, "hello");
}

/* ---- codec: hostile input ---------------------------------------------------- */

Test(ur_primary, frame_needs_more_bytes_then_accepts)
{
	const struct ur_vec *v = vec("text");
	size_t n = 0;

	for (size_t k = 0; k < v->len; k++)
		cr_assert_eq(rtl_ur_frame(&n, v->bytes, k), 0, "complete after %zu bytes?", k);
	cr_assert_eq(rtl_ur_frame(&n, v->bytes, v->len), 1);
	cr_assert_eq(n, v->len);
}

Test(ur_primary, frame_refuses_lengths_below_header_and_above_bound)
{
	uint8_t small[5] = { 0, 0, 0, 4, 20 };
	uint8_t big[5] = { 0, 1, 0, 1, 20 };
	uint8_t neg[5] = { 0xff, 0xff, 0xff, 0xff, 20 };
	size_t n;

	cr_assert_eq(rtl_ur_frame(&n, small, sizeof(small)), -EBADMSG);
	cr_assert_eq(rtl_ur_frame(&n, big, sizeof(big)), -EMSGSIZE);
	cr_assert_eq(rtl_ur_frame(&n, neg, sizeof(neg)), -EMSGSIZE);
}

Test(ur_primary, sub_package_overrunning_its_message_is_refused)
{
	uint8_t msg[64];
	const struct ur_vec *v = vec("robot-mode-5x");
	const uint8_t *sub;
	size_t off = 0, sl;
	uint8_t type;

	memcpy(msg, v->bytes, v->len);
	msg[8] = 48; /* the sub-package claims one byte more than is there */
	cr_assert_eq(rtl_ur_state_next(&off, &sub, &sl, &type, msg, v->len), -EBADMSG);
	off = 0;
	msg[8] = 4; /* below its header */
	cr_assert_eq(rtl_ur_state_next(&off, &sub, &sl, &type, msg, v->len), -EBADMSG);
}

Test(ur_primary, truncated_strings_are_refused)
{
	struct rtl_ur_version_msg ver;
	struct rtl_ur_robot_msg m;
	uint8_t buf[64];
	const struct ur_vec *v = vec("version-5-15");

	memcpy(buf, v->bytes, v->len);
	buf[15] = 40; /* project name longer than the message */
	cr_assert_eq(rtl_ur_decode_version(&ver, buf, v->len), -EBADMSG);
	buf[15] = 0x80; /* negative int8 */
	cr_assert_eq(rtl_ur_decode_version(&ver, buf, v->len), -EBADMSG);

	v = vec("key-message");
	memcpy(buf, v->bytes, v->len);
	buf[23] = 200; /* title longer than the message */
	cr_assert_eq(rtl_ur_decode_robot_msg(&m, buf, v->len), -EBADMSG);

	/* A runtime exception cut before its column. */
	v = vec("runtime-exception");
	memcpy(buf, v->bytes, 21);
	buf[3] = 21;
	cr_assert_eq(rtl_ur_decode_robot_msg(&m, buf, 21), -EBADMSG);
	/* A declared length that is not the buffer's. */
	cr_assert_eq(rtl_ur_decode_robot_msg(&m, v->bytes, v->len - 1), -EBADMSG);
}

Test(ur_primary, long_strings_are_cut_and_flagged)
{
	struct rtl_ur_robot_msg m = { .type = RTL_UR_RMSG_TEXT };
	static uint8_t buf[2 * RTL_UR_TEXT];
	int n;

	memset(m.text, 'x', sizeof(m.text) - 1);
	n = rtl_ur_encode_robot_msg(buf, sizeof(buf), &m);
	cr_assert_gt(n, 0);
	buf[n - 1] = 'y'; /* a text one byte longer than the field */
	buf[3]++;
	buf[n] = 'z';
	cr_assert_eq(rtl_ur_decode_robot_msg(&m, buf, (size_t)n + 1), 0);
	cr_assert(m.cut);
	cr_assert_eq(strlen(m.text), RTL_UR_TEXT - 1);
}

Test(ur_primary, unknown_robot_message_type_is_enomsg)
{
	uint8_t buf[64];
	const struct ur_vec *v = vec("text");
	struct rtl_ur_robot_msg m;

	memcpy(buf, v->bytes, v->len);
	buf[14] = RTL_UR_RMSG_POPUP;
	cr_assert_eq(rtl_ur_decode_robot_msg(&m, buf, v->len), -ENOMSG);
	cr_assert_eq(m.type, RTL_UR_RMSG_POPUP);
}

Test(ur_primary, encoders_refuse_small_buffers_and_bad_types)
{
	struct rtl_ur_robot_msg m = { .type = RTL_UR_RMSG_RUNTIME_EXCEPTION };
	struct rtl_ur_robot_mode_data mode = { 0 };
	uint8_t buf[64];

	cr_assert_eq(rtl_ur_encode_robot_msg(buf, 10, &m), -ENOBUFS);
	m.type = RTL_UR_RMSG_VERSION;
	cr_assert_eq(rtl_ur_encode_robot_msg(buf, sizeof(buf), &m), -EINVAL);
	cr_assert_eq(rtl_ur_encode_robot_state(buf, 51, 5, 0, &mode), -ENOBUFS);
	cr_assert_eq(rtl_ur_encode_robot_state(buf, sizeof(buf), 1, 8, &mode), -EINVAL);
}

/* ---- the client against a scripted controller ------------------------------ */

struct step {
	const uint8_t *bytes;
	size_t len;
};

struct fake {
	int lfd;
	uint16_t port;
	pthread_t th;
	struct step steps[8];
	unsigned n;
	size_t chunk;	   /* write pieces of this size (0: whole) */
	int64_t linger_ns; /* stay connected this long after the last step */
	struct step reply; /* sent once the client has sent something */
	char got[4096];	   /* what the client sent */
	size_t got_len;
};

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	int fd = rtl_tcp_accept(f->lfd, 5 * RTL_NS_PER_SEC, NULL);
	int64_t end;

	if (fd < 0)
		return NULL;
	for (unsigned i = 0; i < f->n; i++) {
		size_t c = f->chunk ? f->chunk : f->steps[i].len;

		for (size_t at = 0; at < f->steps[i].len; at += c) {
			size_t k = f->steps[i].len - at < c ? f->steps[i].len - at : c;

			if (rtl_tcp_send_all(fd, f->steps[i].bytes + at, k,
					     rtl_time_now() + RTL_NS_PER_SEC) < 0)
				goto out;
		}
	}
	end = rtl_time_now() + f->linger_ns;
	while (rtl_time_now() < end) {
		ssize_t n =
			rtl_tcp_recv(fd, f->got + f->got_len, sizeof(f->got) - 1 - f->got_len, end);

		if (n <= 0)
			break;
		f->got_len += (size_t)n;
		if (f->reply.len) {
			rtl_tcp_send_all(fd, f->reply.bytes, f->reply.len,
					 rtl_time_now() + RTL_NS_PER_SEC);
			f->reply.len = 0;
		}
	}
out:
	close(fd);
	return NULL;
}

static void fake_start(struct fake *f)
{
	f->lfd = rtl_tcp_listen(&f->port, NULL, 0, NULL);
	cr_assert_geq(f->lfd, 0);
	cr_assert_eq(pthread_create(&f->th, NULL, fake_run, f), 0);
}

static void fake_stop(struct fake *f)
{
	pthread_join(f->th, NULL);
	close(f->lfd);
}

static void add(struct fake *f, const uint8_t *b, size_t len)
{
	f->steps[f->n++] = (struct step){ b, len };
}

static void add_vec(struct fake *f, const char *name)
{
	const struct ur_vec *v = vec(name);

	add(f, v->bytes, v->len);
}

Test(ur_primary_client, reads_version_then_mode_and_messages)
{
	struct fake f = { .linger_ns = 300 * RTL_NS_PER_MS };
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_mode_data m;
	struct rtl_ur_robot_msg msg;
	struct rtl_ur_primary_counters st = { .size = sizeof(st) };
	struct rtl_error err;
	static const uint8_t odd[] = { 0, 0, 0, 7, 25, 1, 2 }; /* program state: skipped */
	int64_t end;

	add_vec(&f, "version-5-15");
	add(&f, odd, sizeof(odd));
	add_vec(&f, "robot-mode-5x");
	add_vec(&f, "key-message");
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, RTL_NS_PER_SEC, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(rtl_ur_primary_version(c)->major, 5);
	end = rtl_time_now() + RTL_NS_PER_SEC;
	while (!rtl_ur_primary_robot_mode(c, &m) || !rtl_ur_primary_next_msg(c, &msg)) {
		cr_assert_lt(rtl_time_now(), end, "no robot mode or message");
		cr_assert_geq(rtl_ur_primary_poll(c, 100 * RTL_NS_PER_MS, &err), 0, "%s", err.msg);
	}
	cr_assert_eq(m.robot_mode, 7);
	cr_assert_eq(msg.type, RTL_UR_RMSG_KEY);
	cr_assert_eq(rtl_ur_primary_stats(c, &st), 0);
	cr_assert_eq(st.unknown_type, 1);
	cr_assert_eq(st.robot_modes, 1);
	{
		/* The names follow the snapshot, one per counter. */
		size_t n;
		const struct rtl_stat_field *fl = rtl_ur_primary_counter_fields(&n);

		cr_assert_eq(n, (sizeof(st) - sizeof(st.size)) / sizeof(uint64_t));
		cr_assert_eq(rtl_stat_value(&st, &fl[10]), st.unknown_type);
		cr_assert_str_eq(fl[10].name, "unknown_type");
	}
	rtl_ur_primary_destroy(c);
	fake_stop(&f);
}

Test(ur_primary_client, one_byte_writes_are_reassembled)
{
	struct fake f = { .chunk = 1, .linger_ns = 300 * RTL_NS_PER_MS };
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_mode_data m;
	struct rtl_error err;
	int64_t end;

	add_vec(&f, "version-3-15");
	add_vec(&f, "robot-mode-5x"); /* 3.15: the 47-byte layout */
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, 2 * RTL_NS_PER_SEC, &err), 0,
		     "%s", err.msg);
	cr_assert_str_eq(rtl_ur_primary_version(c)->project, "URControl");
	end = rtl_time_now() + 2 * RTL_NS_PER_SEC;
	while (!rtl_ur_primary_robot_mode(c, &m)) {
		cr_assert_lt(rtl_time_now(), end);
		cr_assert_geq(rtl_ur_primary_poll(c, 100 * RTL_NS_PER_MS, &err), 0, "%s", err.msg);
	}
	cr_assert_eq(m.speed_scaling, 0.5);
	rtl_ur_primary_destroy(c);
	fake_stop(&f);
}

Test(ur_primary_client, silent_peer_times_out_naming_the_version_message)
{
	struct fake f = { .linger_ns = 600 * RTL_NS_PER_MS };
	struct rtl_ur_primary *c;
	struct rtl_error err;
	int64_t t0;

	fake_start(&f);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, 200 * RTL_NS_PER_MS, &err),
		     -ETIMEDOUT);
	cr_assert_lt(rtl_time_now() - t0, 500 * RTL_NS_PER_MS);
	cr_assert(strstr(err.msg, "no version message"), "%s", err.msg);
	cr_assert_null(c);
	fake_stop(&f);
}

Test(ur_primary_client, peer_closing_mid_message_is_named)
{
	struct fake f = { 0 };
	struct rtl_ur_primary *c;
	struct rtl_error err;
	const struct ur_vec *v = vec("version-5-15");

	add(&f, v->bytes, 10);
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, RTL_NS_PER_SEC, &err),
		     -ECONNRESET);
	cr_assert(strstr(err.msg, "middle of a message"), "%s", err.msg);
	fake_stop(&f);
}

Test(ur_primary_client, bad_length_ends_the_connection)
{
	struct fake f = { .linger_ns = 300 * RTL_NS_PER_MS };
	static const uint8_t bad[] = { 0, 0, 0, 2, 16 };
	struct rtl_ur_primary *c;
	struct rtl_error err;

	add(&f, bad, sizeof(bad));
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, RTL_NS_PER_SEC, &err),
		     -EBADMSG);
	cr_assert(strstr(err.msg, "less than its 5-byte header"), "%s", err.msg);
	fake_stop(&f);
}

Test(ur_primary_client, hostile_messages_are_counted_not_fatal)
{
	struct fake f = { .linger_ns = 300 * RTL_NS_PER_MS };
	static uint8_t overrun[64], shortmode[64];
	struct rtl_ur_primary *c;
	struct rtl_ur_primary_counters st = { .size = sizeof(st) };
	struct rtl_error err;
	const struct ur_vec *v = vec("robot-mode-5x");
	static const uint8_t popup[] = { 0, 0, 0, 15, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe, 2 };
	int64_t end;

	memcpy(overrun, v->bytes, v->len);
	overrun[8] = 60;
	/* A 3.2 layout sent by a controller that said 5.15: too short. */
	memcpy(shortmode, vec("robot-mode-3-2")->bytes, vec("robot-mode-3-2")->len);
	add_vec(&f, "version-5-15");
	add(&f, overrun, v->len);
	add(&f, shortmode, vec("robot-mode-3-2")->len);
	add(&f, popup, sizeof(popup));
	add_vec(&f, "text");
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, RTL_NS_PER_SEC, &err), 0, "%s",
		     err.msg);
	end = rtl_time_now() + RTL_NS_PER_SEC;
	do {
		cr_assert_lt(rtl_time_now(), end);
		cr_assert_geq(rtl_ur_primary_poll(c, 100 * RTL_NS_PER_MS, &err), 0, "%s", err.msg);
		rtl_ur_primary_stats(c, &st);
	} while (st.robot_msgs < 1);
	cr_assert_eq(st.sub_overrun, 1);
	cr_assert_eq(st.bad_robot_mode, 1);
	cr_assert_eq(st.unknown_robot_msg, 1);
	cr_assert_not(rtl_ur_primary_robot_mode(c, NULL));
	rtl_ur_primary_destroy(c);
	fake_stop(&f);
}

Test(ur_primary_client, run_script_reports_the_runtime_exception_line)
{
	struct fake f = { .linger_ns = 500 * RTL_NS_PER_MS };
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_msg rtx;
	struct rtl_error err;
	static const char prog[] = "def p():\n  foo()\nend";

	add_vec(&f, "version-5-15");
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, RTL_NS_PER_SEC, &err), 0, "%s",
		     err.msg);
	/* No exception from this fake: the wait ends at its bound with 0. */
	cr_assert_eq(
		rtl_ur_primary_run_script(c, &rtx, prog, strlen(prog), 100 * RTL_NS_PER_MS, &err),
		0, "%s", err.msg);
	rtl_ur_primary_destroy(c);
	fake_stop(&f);
	cr_assert_eq(f.got_len, strlen(prog) + 1);
	cr_assert_eq(memcmp(f.got, "def p():\n  foo()\nend\n", f.got_len), 0);
}

Test(ur_primary_client, runtime_exception_becomes_a_sentence)
{
	struct fake f = { .linger_ns = 500 * RTL_NS_PER_MS };
	struct rtl_ur_primary *c;
	struct rtl_ur_robot_msg rtx;
	struct rtl_error err;
	static const char prog[] = "def p():\n  foo()\nend\n";

	add_vec(&f, "version-5-15");
	f.reply = (struct step){ vec("runtime-exception")->bytes, vec("runtime-exception")->len };
	fake_start(&f);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", f.port, RTL_NS_PER_SEC, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(rtl_ur_primary_run_script(c, &rtx, prog, strlen(prog), RTL_NS_PER_SEC, &err),
		     -ENOEXEC);
	cr_assert_eq(rtx.line, 12);
	cr_assert(strstr(err.msg, "line 12"), "%s", err.msg);
	cr_assert(strstr(err.msg, "compile_error_name_not_found"), "%s", err.msg);
	cr_assert(strstr(err.msg, "correct line 12"), "%s", err.msg);
	rtl_ur_primary_destroy(c);
	fake_stop(&f);
}

Test(ur_primary_client, refused_connection_fills_the_error)
{
	struct rtl_ur_primary *c;
	struct rtl_error err;
	uint16_t port;
	int lfd = rtl_tcp_listen(&port, NULL, 0, NULL);

	close(lfd);
	cr_assert_eq(rtl_ur_primary_create(&c, "127.0.0.1", port, RTL_NS_PER_SEC, &err),
		     -ECONNREFUSED);
	cr_assert(err.msg[0]);
}
