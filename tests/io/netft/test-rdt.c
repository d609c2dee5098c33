// SPDX-License-Identifier: MIT
/*
 * RDT (<rtloop/rdt.h>): the byte vectors of docs/netft-rdt.md, the order of
 * sequence numbers, the scaling; then the transport (<rtloop/rdt_transport.h>)
 * against a sensor of the test's on loopback that misbehaves: no answer,
 * malformed datagrams, duplicates, late records, a restarted stream,
 * buffered datagrams, the status bit.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/rdt.h>
#include <rtloop/rdt_transport.h>
#include <rtloop/time.h>

/* docs/netft-rdt.md, "Byte vectors" */
static const uint8_t START_REALTIME[8] = { 0x12, 0x34, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00 };
static const uint8_t SET_BIAS[8] = { 0x12, 0x34, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00 };
static const uint8_t RECORD[36] = {
	0x00, 0x00, 0x00, 0x05, /* rdt_sequence 5 */
	0x00, 0x00, 0x30, 0x39, /* ft_sequence 12345 */
	0x00, 0x00, 0x00, 0x00, /* status 0 */
	0x00, 0x0f, 0x42, 0x40, /* Fx 1,000,000 counts: 1 N */
	0xff, 0xf8, 0x5e, 0xe0, /* Fy -500,000: -0.5 N */
	0x00, 0x98, 0x96, 0x80, /* Fz 10,000,000: 10 N */
	0x00, 0x00, 0x00, 0x00, /* Tx 0 */
	0x00, 0x01, 0x86, 0xa0, /* Ty 100,000: 0.1 N m */
	0xff, 0xff, 0xff, 0xff, /* Tz -1: -1e-6 N m */
};

Test(rdt_wire, requests_encode_and_decode_as_the_page_says)
{
	struct rtl_rdt_request rq = { .command = RTL_RDT_START_REALTIME, .count = 0 }, back;
	uint8_t b[8];

	cr_assert_eq(rtl_rdt_encode_request(b, sizeof(b), &rq), 8);
	cr_expect_arr_eq(b, START_REALTIME, 8);
	rq.command = RTL_RDT_SET_BIAS;
	rtl_rdt_encode_request(b, sizeof(b), &rq);
	cr_expect_arr_eq(b, SET_BIAS, 8);
	cr_expect_eq(rtl_rdt_decode_request(&back, START_REALTIME, 8), 8);
	cr_expect_eq(back.command, 2);
	cr_expect_eq(rtl_rdt_encode_request(b, 7, &rq), -ENOSPC);
	b[0] = 0x43; /* not the header */
	cr_expect_eq(rtl_rdt_decode_request(&back, b, 8), -EBADMSG);
	cr_expect_eq(rtl_rdt_decode_request(&back, START_REALTIME, 7), -EBADMSG);
	cr_expect_str_eq(rtl_rdt_command_name(0x42), "set software bias");
	cr_expect_str_eq(rtl_rdt_command_name(0x99), "unknown");
}

Test(rdt_wire, a_record_decodes_scales_and_encodes_back)
{
	struct rtl_rdt_record r;
	uint8_t b[36], two[72];
	double w[6];

	cr_assert_eq(rtl_rdt_decode_record(&r, RECORD, 36, 0), 1);
	cr_expect_eq(r.rdt_sequence, 5);
	cr_expect_eq(r.ft_sequence, 12345);
	cr_expect_eq(r.counts[1], -500000);
	cr_expect_eq(r.counts[5], -1);
	rtl_rdt_scale(w, r.counts, 1e6, 1e6);
	cr_expect_float_eq(w[0], 1.0, 1e-12);
	cr_expect_float_eq(w[1], -0.5, 1e-12);
	cr_expect_float_eq(w[2], 10.0, 1e-12);
	cr_expect_float_eq(w[4], 0.1, 1e-12);
	cr_expect_float_eq(w[5], -1e-6, 1e-15);
	cr_assert_eq(rtl_rdt_encode_record(b, sizeof(b), &r), 36);
	cr_expect_arr_eq(b, RECORD, 36);
	/* buffered: two records in one datagram */
	memcpy(two, RECORD, 36);
	memcpy(two + 36, RECORD, 36);
	two[36 + 3] = 6;
	cr_expect_eq(rtl_rdt_decode_record(&r, two, 72, 1), 2);
	cr_expect_eq(r.rdt_sequence, 6);
	cr_expect_eq(rtl_rdt_decode_record(&r, two, 71, 0), -EBADMSG, "not whole records");
	cr_expect_eq(rtl_rdt_decode_record(&r, two, 72, 2), -EBADMSG, "no third record");
	cr_expect_eq(rtl_rdt_decode_record(&r, two, 0, 0), -EBADMSG);
}

Test(rdt_wire, sequence_numbers_are_ordered_across_the_wrap)
{
	uint32_t gap = 99;

	cr_expect_eq(rtl_rdt_classify(&gap, 10, 11, 1000), RTL_RDT_NEXT);
	cr_expect_eq(gap, 0);
	cr_expect_eq(rtl_rdt_classify(&gap, 10, 14, 1000), RTL_RDT_NEXT);
	cr_expect_eq(gap, 3);
	cr_expect_eq(rtl_rdt_classify(&gap, 10, 10, 1000), RTL_RDT_DUPLICATE);
	cr_expect_eq(rtl_rdt_classify(&gap, 10, 9, 1000), RTL_RDT_LATE);
	cr_expect_eq(gap, 0);
	cr_expect_eq(rtl_rdt_classify(&gap, 5000, 1, 1000), RTL_RDT_RESTART);
	cr_expect_eq(rtl_rdt_classify(&gap, UINT32_MAX, 0, 1000), RTL_RDT_NEXT, "the wrap");
	cr_expect_eq(gap, 0);
	cr_expect_eq(rtl_rdt_classify(&gap, 2, UINT32_MAX, 1000), RTL_RDT_LATE, "late across it");
	cr_expect_eq(rtl_rdt_classify(NULL, 2, 3, 1000), RTL_RDT_NEXT);
}

/* ---- the transport against the test's sensor ------------------------------------------- */

struct sensor {
	int fd;
	uint16_t port;
	struct sockaddr_in client;
	socklen_t cl;
};

static void sensor_open(struct sensor *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct timeval tv = { .tv_sec = 2 };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_eq(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(s->fd, (struct sockaddr *)&a, &al);
	s->port = ntohs(a.sin_port);
	setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* The client's next request: its command. */
static int sensor_request(struct sensor *s)
{
	uint8_t b[16];
	struct rtl_rdt_request rq;
	ssize_t n;

	s->cl = sizeof(s->client);
	n = recvfrom(s->fd, b, sizeof(b), 0, (struct sockaddr *)&s->client, &s->cl);
	if (n < 0 || rtl_rdt_decode_request(&rq, b, (size_t)n) < 0)
		return -1;
	return rq.command;
}

static void sensor_send(struct sensor *s, const void *b, size_t n)
{
	cr_assert_eq(sendto(s->fd, b, n, 0, (struct sockaddr *)&s->client, s->cl), (ssize_t)n);
}

static void sensor_record(struct sensor *s, uint32_t seq, uint32_t status, int32_t fz)
{
	struct rtl_rdt_record r = { .rdt_sequence = seq, .ft_sequence = seq * 7, .status = status };
	uint8_t b[36];

	r.counts[2] = fz;
	rtl_rdt_encode_record(b, sizeof(b), &r);
	sensor_send(s, b, sizeof(b));
}

static void *answer_start(void *arg)
{
	struct sensor *s = arg;

	if (sensor_request(s) == RTL_RDT_START_REALTIME)
		sensor_record(s, 1, 0, 1000000);
	return NULL;
}

/* Every frame the transport gives, until @want frames or a receive finds
 * nothing. */
static int drain(struct rtl_transport *t, double *fz, uint32_t *seq, uint32_t *skipped, int want)
{
	union {
		struct rtl_loop_frame f;
		uint8_t b[sizeof(struct rtl_loop_frame) + sizeof(struct rtl_rdt_frame) + 8];
	} u;
	int got = 0;

	while (got < want) {
		int n = t->ops->recv(t);

		if (n == -EAGAIN)
			break;
		cr_assert_geq(n, 0);
		while (t->ops->next(t, &u.f, sizeof(u.b) - sizeof(u.f)) == 1) {
			const struct rtl_rdt_frame *fr = rtl_rdt_loop_frame(&u.f);

			fz[got] = fr->wrench[2];
			seq[got] = fr->rec.rdt_sequence;
			skipped[got] = u.f.ctrl_skipped;
			got++;
		}
	}
	return got;
}

Test(rdt_transport, a_sensor_that_never_answers_is_named_with_the_fix, .timeout = 10)
{
	struct sensor s;
	struct rtl_rdt_transport *t;
	struct rtl_rdt_transport_config c = { .size = sizeof(c),
					      .host = "127.0.0.1",
					      .connect_timeout_ns = 300 * RTL_NS_PER_MS };
	struct rtl_error err = { 0 };
	struct rtl_transport *base;

	sensor_open(&s);
	c.port = s.port;
	cr_assert_eq(rtl_rdt_transport_create(&t, &c, &err), 0, "%s", err.msg);
	base = rtl_rdt_transport_base(t);
	cr_expect_eq(base->ops->connect(base, &err), -ETIMEDOUT);
	cr_expect(strstr(err.msg, "no record") && strstr(err.msg, "RDT"), "%s", err.msg);
	cr_expect_eq(sensor_request(&s), RTL_RDT_START_REALTIME, "it asked to stream");
	rtl_rdt_transport_destroy(t);
	close(s.fd);
	c.host = "";
	cr_expect_eq(rtl_rdt_transport_create(&t, &c, &err), -EINVAL);
	c.host = "127.0.0.1";
	c.counts_per_force = -1;
	cr_expect_eq(rtl_rdt_transport_create(&t, &c, &err), -EINVAL);
}

/* The transport connected to the test's sensor at 1 kHz (record 1 answers
 * its start request, from a thread). */
static struct rtl_transport *connected(struct sensor *s, struct rtl_rdt_transport **t)
{
	struct rtl_rdt_transport_config c = { .size = sizeof(c),
					      .host = "127.0.0.1",
					      .rate_hz = 1000 };
	struct rtl_error err = { 0 };
	struct rtl_transport *base;
	pthread_t th;

	sensor_open(s);
	c.port = s->port;
	cr_assert_eq(rtl_rdt_transport_create(t, &c, &err), 0, "%s", err.msg);
	base = rtl_rdt_transport_base(*t);
	cr_assert_eq(pthread_create(&th, NULL, answer_start, s), 0);
	cr_assert_eq(base->ops->connect(base, &err), 0, "%s", err.msg);
	pthread_join(th, NULL);
	return base;
}

Test(rdt_transport, every_bad_record_is_counted_under_its_name, .timeout = 10)
{
	struct sensor s;
	struct rtl_rdt_transport *t;
	struct rtl_rdt_transport_counters st = { .size = sizeof(st) };
	struct rtl_transport *base = connected(&s, &t);
	double fz[32];
	uint32_t seq[32], skipped[32];
	uint8_t junk[35] = { 0 }, two[72];
	int n;

	cr_expect_eq(base->period_ns, RTL_NS_PER_MS);
	sensor_record(&s, 2, 0, 2000000);
	sensor_record(&s, 2, 0, 2000000);		     /* duplicate */
	sensor_record(&s, 5, 0, 5000000);		     /* 3 and 4 lost */
	sensor_record(&s, 4, 0, 4000000);		     /* late */
	sensor_send(&s, junk, sizeof(junk));		     /* malformed */
	sensor_record(&s, 6, RTL_RDT_STATUS_ERROR, 6000000); /* status error */
	sensor_record(&s, 1, 0, 1000000);		     /* 6 -> 1: a restart? no: late */
	sensor_record(&s, 7, 0, 7000000);
	sensor_record(&s, 90000, 0, 9000000); /* far ahead: taken, a big gap */
	sensor_record(&s, 3, 0, 3000000);     /* far behind: a restart */
	{
		struct rtl_rdt_record r = { .rdt_sequence = 4 };

		rtl_rdt_encode_record(two, 36, &r);
		r.rdt_sequence = 5;
		rtl_rdt_encode_record(two + 36, 36, &r);
		sensor_send(&s, two, sizeof(two)); /* buffered: two records */
	}
	n = drain(base, fz, seq, skipped, 32);
	/* frames: 1 (connect's), 2, 5, 6, 7, 90000, 3, 4, 5 */
	cr_assert_eq(n, 9, "%d frames", n);
	cr_expect_eq(seq[0], 1);
	cr_expect_float_eq(fz[0], 1.0, 1e-9);
	cr_expect_eq(seq[2], 5);
	cr_expect_eq(skipped[2], 2);
	cr_expect_float_eq(fz[2], 5.0, 1e-9);
	cr_expect_eq(seq[5], 90000);
	cr_expect_eq(skipped[5], 90000 - 7 - 1);
	cr_expect_eq(seq[6], 3);
	cr_expect_eq(skipped[6], 0, "a restart is not a gap");
	cr_expect_eq(seq[8], 5);
	rtl_rdt_transport_stats(t, &st);
	cr_expect_eq(st.duplicate, 1);
	cr_expect_eq(st.late, 2);
	cr_expect_eq(st.malformed, 1);
	cr_expect_eq(st.status_errors, 1);
	cr_expect_eq(st.restarts, 1);
	cr_expect_eq(st.lost, 2 + (90000 - 7 - 1));
	cr_expect_eq(st.records, 12, "every record that decoded, dropped or not");
	/* the bias: a change of the command sends one request, once */
	rtl_rdt_transport_command(t)->bias++;
	cr_expect_eq(base->ops->send(base, 0), 8);
	cr_expect_eq(base->ops->send(base, 0), 0, "nothing changed: nothing sent");
	cr_expect_eq(sensor_request(&s), RTL_RDT_SET_BIAS);
	base->ops->disconnect(base);
	cr_expect_eq(sensor_request(&s), RTL_RDT_STOP, "the stream is stopped at the end");
	rtl_rdt_transport_destroy(t);
	close(s.fd);
}

Test(rdt_transport, a_restart_near_the_newest_is_told_from_a_late_record, .timeout = 10)
{
	struct sensor s;
	struct rtl_rdt_transport *t;
	struct rtl_rdt_transport_counters st = { .size = sizeof(st) };
	struct rtl_transport *base = connected(&s, &t);
	struct rtl_rdt_record r = { 0 };
	uint8_t b[RTL_RDT_RECORD_SIZE];
	double fz[8];
	uint32_t seq[8], skipped[8];
	int n;

	sensor_record(&s, 2, 0, 0); /* ft_sequence 14 */
	sensor_record(&s, 3, 0, 0); /* 21 */
	/* record 1 again with the sensor's sample number 700: its stream
	 * restarted (the samples went on), not a late record */
	r.rdt_sequence = 1;
	r.ft_sequence = 700;
	rtl_rdt_encode_record(b, sizeof(b), &r);
	sensor_send(&s, b, sizeof(b));
	/* and record 2 of the old numbering (ft 14, behind the newest's 700
	 * in the sensor's samples too) after 3: late */
	r.rdt_sequence = 3;
	r.ft_sequence = 721;
	rtl_rdt_encode_record(b, sizeof(b), &r);
	sensor_send(&s, b, sizeof(b)); /* the restarted stream's 3 (2 lost) */
	sensor_record(&s, 2, 0, 0);
	n = drain(base, fz, seq, skipped, 8);
	rtl_rdt_transport_stats(t, &st);
	cr_expect_eq(n, 5, "1, 2, 3, then the restarted 1 and 3");
	cr_expect_eq(seq[3], 1);
	cr_expect_eq(skipped[3], 0, "a restart is no gap");
	cr_expect_eq(st.restarts, 1);
	cr_expect_eq(st.late, 1);
	cr_expect_eq(st.lost, 1, "the restarted stream's 2");
	rtl_rdt_transport_destroy(t);
	close(s.fd);
}
