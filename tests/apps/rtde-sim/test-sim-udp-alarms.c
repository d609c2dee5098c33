// SPDX-License-Identifier: MIT
/*
 * rtde-sim's UDP mode against a fake client (one raw socket and the codec),
 * for Doosan's RT session rules: the loss count (ALARM, BYE, the robot
 * stopped), the command time-out alarm, the LIMITS clamp and its alarm
 * rate, servol's warning.
 *
 * Every wait is a condition on the simulator's counters or on what the
 * client received, polled with a bounded deadline; time is counted in the
 * simulator's own cycles, never asserted on the wall clock. The simulator
 * sends 1 state in 100 (its skip fault): the tests need the other
 * datagrams, and a thin state stream cannot fill the client's receive
 * buffer and push an ALARM out while the test thread waits its turn on a
 * loaded machine.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/time.h>
#include <rtloop/udp.h>

#include "robot.h"
#include "udp.h"

#define RAD (M_PI / 180.0)
#define WAIT_NS (3 * RTL_NS_PER_SEC)
#define MAX_ALARMS 64
/* Cycles of one simulated second at the default 1 kHz. */
#define CYCLES_PER_S 1000

struct client {
	struct sim_udp *u;
	int fd;
	uint64_t seq; /* the next command's number */
	/* What arrived. */
	unsigned welcomes, states, byes, others;
	int32_t welcome_loss;
	unsigned alarms;
	unsigned alarms_before_bye; /* alarms received before the first BYE */
	struct rtl_udp_alarm alarm[MAX_ALARMS];
	uint64_t alarm_seq[MAX_ALARMS];
	unsigned per_code[8];
	uint8_t buf[RTL_UDP_MAX_DATAGRAM + 1];
};

static struct sim_udp_opts thin_opts(void)
{
	struct sim_udp_opts o;

	sim_udp_opts_default(&o);
	o.port = 0;
	o.skip_every = 100;
	o.skip_count = 99;
	return o;
}

static void sim_open(struct client *c, const struct sim_udp_opts *o)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	memset(c, 0, sizeof(*c));
	c->seq = 1;
	cr_assert_eq(sim_udp_create(&c->u, o), 0);
	cr_assert_eq(sim_udp_start(c->u), 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(sim_udp_port(c->u));
	c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(c->fd, 0);
	cr_assert_eq(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
}

/* Stop the simulator (its robot may be read after this). */
static void sim_stop(struct client *c)
{
	sim_udp_stop(c->u);
	cr_assert_eq(sim_udp_join(c->u), 0);
}

static void client_close(struct client *c)
{
	close(c->fd);
	sim_udp_destroy(c->u);
}

static void on_datagram(struct client *c, size_t n)
{
	struct rtl_udp_header h;
	struct rtl_udp_hello w;
	struct rtl_udp_alarm a;

	cr_assert_geq(rtl_udp_decode_header(&h, c->buf, n), 0,
		      "the simulator sends valid datagrams");
	switch (h.type) {
	case RTL_UDP_WELCOME:
		cr_assert_gt(rtl_udp_decode_hello(NULL, &w, c->buf, n), 0);
		c->welcomes++;
		c->welcome_loss = w.loss_count;
		break;
	case RTL_UDP_STATE:
		c->states++;
		break;
	case RTL_UDP_ALARM:
		cr_assert_gt(rtl_udp_decode_alarm(NULL, &a, c->buf, n), 0);
		if (c->alarms < MAX_ALARMS) {
			c->alarm[c->alarms] = a;
			c->alarm_seq[c->alarms] = h.seq;
		}
		c->alarms++;
		if (a.code < 8)
			c->per_code[a.code]++;
		break;
	case RTL_UDP_BYE:
		if (!c->byes++)
			c->alarms_before_bye = c->alarms;
		break;
	default:
		c->others++;
		break;
	}
}

/* Wait at most @ms for a datagram, then read all there are. */
static void pump(struct client *c, int ms)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return;
	while ((n = recv(c->fd, c->buf, sizeof(c->buf), MSG_DONTWAIT)) > 0)
		on_datagram(c, (size_t)n);
}

/* Pump until @cond holds (re-reading the counters into @st), at most
 * WAIT_NS. */
#define WAIT_FOR(c, st, cond)                                                            \
	do {                                                                             \
		int64_t end_ = rtl_time_now() + WAIT_NS;                                 \
		for (;;) {                                                               \
			pump((c), 1);                                                    \
			sim_udp_stats((c)->u, &(st));                                    \
			if (cond)                                                        \
				break;                                                   \
			cr_assert_lt(rtl_time_now(), end_, "not within 3 s: %s", #cond); \
		}                                                                        \
	} while (0)

/* Let @n cycles of the simulator pass, reading what comes. */
static void wait_cycles(struct client *c, uint64_t n)
{
	struct sim_udp_stats st;
	uint64_t from;

	sim_udp_stats(c->u, &st);
	from = st.cycles;
	WAIT_FOR(c, st, st.cycles >= from + n);
}

static void to_sim(struct client *c, const uint8_t *b, int n)
{
	cr_assert_gt(n, 0);
	cr_assert_eq(send(c->fd, b, (size_t)n, 0), n, "send: %s", strerror(errno));
}

/* HELLO with @loss; the WELCOME's loss count. */
static int32_t hello(struct client *c, int32_t loss)
{
	struct rtl_udp_hello hi = { .loss_count = loss };
	struct sim_udp_stats st;
	uint8_t b[64];
	unsigned before = c->welcomes;

	memcpy(hi.schema, RTL_UDP_SCHEMA, sizeof(RTL_UDP_SCHEMA));
	to_sim(c, b, rtl_udp_encode_hello(b, sizeof(b), RTL_UDP_HELLO, 0, rtl_time_now(), &hi));
	WAIT_FOR(c, st, c->welcomes > before);
	return c->welcome_loss;
}

static void command(struct client *c, const struct rtl_udp_cmd *cmd)
{
	uint8_t b[RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE];

	to_sim(c, b, rtl_udp_encode_command(b, sizeof(b), c->seq++, rtl_time_now(), cmd));
}

static struct rtl_udp_cmd speedj(double v0, double a0)
{
	struct rtl_udp_cmd cmd = { .mode = RTL_UDP_MODE_SPEEDJ, .target_time = 0.01 };

	cmd.vel[0] = v0;
	cmd.acc[0] = a0;
	return cmd;
}

static void limits(struct client *c, const struct rtl_udp_limits *l)
{
	uint8_t b[RTL_UDP_HEADER_SIZE + RTL_UDP_LIMITS_SIZE];

	to_sim(c, b, rtl_udp_encode_limits(b, sizeof(b), 0, rtl_time_now(), l));
}

/* A LIMITS datagram holding @bad at payload offset @off (the encoder
 * refuses it, so it is written into the bytes). */
static void bad_limits(struct client *c, size_t off, double bad)
{
	struct rtl_udp_limits l = { .velj = { 10, 10, 10, 10, 10, 10 } };
	uint8_t b[RTL_UDP_HEADER_SIZE + RTL_UDP_LIMITS_SIZE];
	int n = rtl_udp_encode_limits(b, sizeof(b), 0, rtl_time_now(), &l);

	memcpy(b + RTL_UDP_HEADER_SIZE + off, &bad, sizeof(bad)); /* little-endian host */
	to_sim(c, b, n);
}

static void assert_alarm(const struct rtl_udp_alarm *a, enum rtl_udp_alarm_level level,
			 enum rtl_udp_alarm_code code, const char *text)
{
	cr_assert_eq(a->level, level, "level of \"%s\"", a->text);
	cr_assert_eq(a->group, RTL_UDP_ALARM_GROUP_RT);
	cr_assert_eq(a->code, code, "code of \"%s\"", a->text);
	cr_assert_str_eq(a->text, text);
}

/* The first alarm received with @code. */
static const struct rtl_udp_alarm *find_alarm(const struct client *c, enum rtl_udp_alarm_code code)
{
	for (unsigned i = 0; i < c->alarms && i < MAX_ALARMS; i++)
		if (c->alarm[i].code == code)
			return &c->alarm[i];
	cr_assert_fail("no alarm with code %d among %u", code, c->alarms);
	return NULL;
}

/* ---- loss count ------------------------------------------------------------------------ */

Test(sim_udp_alarms, loss_count_3_ends_the_session_with_an_alarm_and_a_bye, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct client c;
	struct rtl_udp_cmd cmd = speedj(10, 200);

	/* The command time-out far away: the loss count acts alone. */
	o.robot.watchdog_ns = 5 * RTL_NS_PER_SEC;
	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 3), 3, "the WELCOME echoes the loss count");
	for (int i = 0; i < 5; i++)
		command(&c, &cmd);
	WAIT_FOR(&c, st, st.loss_closed == 1);
	WAIT_FOR(&c, st, c.byes == 1);
	cr_assert_geq(st.commands, 1);
	cr_assert_eq(c.alarms, 1, "one alarm: %s", c.alarms ? c.alarm[0].text : "");
	assert_alarm(&c.alarm[0], RTL_UDP_ALARM_ERROR, RTL_UDP_ALARM_LOSS,
		     "RT input lost 4 periods in a row (loss count 3): RT session closed");
	cr_assert_eq(c.alarm_seq[0], 1, "the session's first alarm");
	cr_assert_eq(c.alarms_before_bye, 1, "the ALARM, then the BYE");
	cr_assert_eq(st.alarms_sent, 1);
	cr_assert_eq(st.byes_sent, 1);
	cr_assert_eq(st.byes, 0, "no BYE from the client");
	cr_assert_not(st.client, "the session is off");
	/* Stopped as a client's BYE stops it: STOP, the watchdog off. */
	WAIT_FOR(&c, st, st.robot.at_rest);
	cr_assert_eq(st.robot.stops, 1);
	cr_assert_eq(st.robot.last_stop_cmd.mode, RTL_RTDE_CMD_STOP);
	cr_assert_eq(st.robot.last_stop_cmd.watchdog_ms, -1);
	cr_assert_eq(st.watchdog_trips, 0);
	/* The client is no longer heard. */
	command(&c, &cmd);
	WAIT_FOR(&c, st, st.rejected == 1);
	sim_stop(&c);
	cr_assert_eq(sim_udp_robot(c.u)->active_mode, RTL_RTDE_CMD_STOP);
	client_close(&c);
}

Test(sim_udp_alarms, loss_count_0_never_ends_the_session, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct client c;
	struct rtl_udp_cmd none = { .mode = RTL_UDP_MODE_NONE };

	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 0), 0);
	for (int i = 0; i < 5; i++)
		command(&c, &none);
	WAIT_FOR(&c, st, st.commands == 5);
	/* 300 periods without a command. */
	wait_cycles(&c, 300);
	sim_udp_stats(c.u, &st);
	cr_assert(st.client, "the session is on");
	cr_assert_eq(st.loss_closed, 0);
	cr_assert_eq(st.byes_sent, 0);
	cr_assert_eq(st.alarms_sent, 0);
	cr_assert_eq(c.byes, 0);
	cr_assert_eq(c.alarms, 0);
	sim_stop(&c);
	client_close(&c);
}

Test(sim_udp_alarms, the_welcome_echoes_the_loss_count_and_it_waits_for_a_command, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct client c;

	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 7), 7);
	/* A repeated HELLO of the session: its count applies; <= 0 is off. */
	cr_assert_eq(hello(&c, -5), 0);
	cr_assert_eq(hello(&c, 0), 0);
	cr_assert_eq(hello(&c, 3), 3);
	/* No command yet: however many periods pass, none is lost. */
	wait_cycles(&c, 100);
	sim_udp_stats(c.u, &st);
	cr_assert_eq(st.sessions, 1);
	cr_assert(st.client);
	cr_assert_eq(st.loss_closed, 0);
	cr_assert_eq(c.byes, 0);
	sim_stop(&c);
	client_close(&c);
}

/* ---- command time-out --------------------------------------------------------------------- */

Test(sim_udp_alarms, a_command_time_out_sends_one_alarm_per_trip, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct client c;
	struct rtl_udp_cmd cmd = speedj(5, 100);

	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 0), 0);
	for (unsigned trip = 1; trip <= 2; trip++) {
		for (int i = 0; i < 3; i++)
			command(&c, &cmd);
		WAIT_FOR(&c, st, st.watchdog_trips == trip);
		/* Longer than another time-out: still the same trip. */
		wait_cycles(&c, 250);
		sim_udp_stats(c.u, &st);
		cr_assert_eq(st.watchdog_trips, trip);
		cr_assert_eq(c.per_code[RTL_UDP_ALARM_CMD_TIMEOUT], trip, "trip %u", trip);
		cr_assert_eq(c.alarms, trip);
		cr_assert_eq(st.alarms_sent, trip);
		assert_alarm(&c.alarm[trip - 1], RTL_UDP_ALARM_ERROR, RTL_UDP_ALARM_CMD_TIMEOUT,
			     "RT command time-out: no command for 100 ms; robot stopped");
		cr_assert_eq(c.alarm_seq[trip - 1], trip);
	}
	cr_assert(st.client, "a time-out does not end the session");
	cr_assert_eq(c.byes, 0);
	sim_stop(&c);
	client_close(&c);
}

/* ---- LIMITS -------------------------------------------------------------------------------- */

Test(sim_udp_alarms, limits_clamp_speedj_and_alarm_once_a_second, .timeout = 30)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct rtl_udp_limits l = { 0 };
	struct client c;
	struct rtl_udp_cmd cmd = speedj(90, 900);
	const struct sim_robot *r;
	uint64_t from, to, span, per_code_max;
	const int n = 200;

	/* No command time-out: the arm keeps the clamped speed to the end. */
	o.robot.watchdog_ns = 0;
	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 0), 0);
	for (int i = 0; i < 6; i++) {
		l.velj[i] = 30;
		l.accj[i] = 500;
	}
	limits(&c, &l);
	WAIT_FOR(&c, st, st.limits_in == 1);
	from = st.cycles; /* each command acts in a cycle >= from */
	for (int i = 0; i < n; i++) {
		command(&c, &cmd);
		/* In batches, so that none overflows the simulator's socket. */
		if (i % 20 == 19)
			WAIT_FOR(&c, st, st.commands == (uint64_t)i + 1);
	}
	to = st.cycles; /* ... and <= to */
	cr_assert_eq(st.vel_clamped, (uint64_t)n);
	cr_assert_eq(st.acc_clamped, (uint64_t)n);
	cr_assert_eq(st.refused, 0);
	/* The ramp (60 ms at 500 deg/s^2) is over, the alarms are in. */
	wait_cycles(&c, 150);
	sim_udp_stats(c.u, &st);

	/* On the simulator's clock: all in one second, one alarm per code;
	 * a host that stalled the simulator for more than a second allows
	 * one more per second of its cycles. */
	span = to - from;
	per_code_max = span < CYCLES_PER_S ? 1 : 1 + span / CYCLES_PER_S;
	cr_assert_geq(c.per_code[RTL_UDP_ALARM_VEL_LIMIT], 1);
	cr_assert_leq(c.per_code[RTL_UDP_ALARM_VEL_LIMIT], per_code_max, "over %llu cycles",
		      (unsigned long long)span);
	cr_assert_geq(c.per_code[RTL_UDP_ALARM_ACC_LIMIT], 1);
	cr_assert_leq(c.per_code[RTL_UDP_ALARM_ACC_LIMIT], per_code_max);
	cr_assert_eq(c.alarms, st.alarms_sent, "every alarm sent arrived");
	cr_assert_eq(st.limit_alarms_suppressed, 2 * (uint64_t)n - st.alarms_sent,
		     "the rest are counted");
	if (span < CYCLES_PER_S)
		cr_assert_eq(st.limit_alarms_suppressed, 2 * (uint64_t)n - 2, "199 per code");
	assert_alarm(find_alarm(&c, RTL_UDP_ALARM_VEL_LIMIT), RTL_UDP_ALARM_INFO,
		     RTL_UDP_ALARM_VEL_LIMIT,
		     "speedj: vel[0] = 90 deg/s is above the limit 30 deg/s: clamped");
	assert_alarm(find_alarm(&c, RTL_UDP_ALARM_ACC_LIMIT), RTL_UDP_ALARM_INFO,
		     RTL_UDP_ALARM_ACC_LIMIT,
		     "speedj: acc[0] = 900 deg/s^2 is above the limit 500 deg/s^2: clamped");
	cr_assert(st.client, "an exceeded limit does not stop anything");
	sim_stop(&c);
	r = sim_udp_robot(c.u);
	cr_assert_eq(r->active_mode, RTL_RTDE_CMD_SPEEDJ);
	cr_assert_float_eq(r->target_qd[0], 30 * RAD, 1e-12, "the velocity limit, in rad/s");
	for (int i = 1; i < 6; i++)
		cr_assert_eq(r->target_qd[i], 0);
	client_close(&c);
}

Test(sim_udp_alarms, a_limits_datagram_with_a_nan_is_bad_and_ignored, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct rtl_udp_limits l = { 0 };
	struct client c;
	struct rtl_udp_cmd cmd = speedj(90, 0);

	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 0), 0);
	l.velj[0] = 30;
	limits(&c, &l);
	WAIT_FOR(&c, st, st.limits_in == 1);
	/* Each holds velj 10 and one bad value: velj[1] NaN, accj[0] -1,
	 * velj[2] AUTO (only a rotational Cartesian limit may be AUTO). */
	bad_limits(&c, 40, NAN);
	bad_limits(&c, 80, -1);
	bad_limits(&c, 48, RTL_UDP_AUTO);
	WAIT_FOR(&c, st, st.bad_limits == 3);
	cr_assert_eq(st.limits_in, 1);
	cr_assert_eq(st.bad_in, 0);
	/* Ignored whole: the limit is still 30, not the bad datagrams' 10. */
	command(&c, &cmd);
	/* The alarm may arrive before the counters are published. */
	WAIT_FOR(&c, st, c.per_code[RTL_UDP_ALARM_VEL_LIMIT] == 1 && st.commands == 1);
	cr_assert_eq(st.vel_clamped, 1);
	assert_alarm(find_alarm(&c, RTL_UDP_ALARM_VEL_LIMIT), RTL_UDP_ALARM_INFO,
		     RTL_UDP_ALARM_VEL_LIMIT,
		     "speedj: vel[0] = 90 deg/s is above the limit 30 deg/s: clamped");
	sim_stop(&c);
	client_close(&c);
}

Test(sim_udp_alarms, limits_belong_to_the_session, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct rtl_udp_limits l = { 0 };
	struct client c;
	struct rtl_udp_cmd cmd = speedj(90, 0);
	uint8_t b[64];
	int len;

	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 0), 0);
	l.velj[0] = 30;
	limits(&c, &l);
	WAIT_FOR(&c, st, st.limits_in == 1);
	/* The client leaves; its next session starts without limits. */
	len = rtl_udp_encode_bye(b, sizeof(b), 0, rtl_time_now());
	to_sim(&c, b, len);
	WAIT_FOR(&c, st, st.byes == 1);
	cr_assert_eq(hello(&c, 0), 0);
	command(&c, &cmd);
	WAIT_FOR(&c, st, st.commands == 1);
	cr_assert_eq(st.sessions, 2);
	cr_assert_eq(st.vel_clamped, 0);
	sim_stop(&c);
	client_close(&c);
}

/* ---- servol ------------------------------------------------------------------------------- */

Test(sim_udp_alarms, servol_warns_at_most_once_a_second, .timeout = 20)
{
	struct sim_udp_opts o = thin_opts();
	struct sim_udp_stats st;
	struct client c;
	struct rtl_udp_cmd cmd = { .mode = RTL_UDP_MODE_SERVOL, .target_time = 0.01 };
	uint64_t from, span;

	sim_open(&c, &o);
	cr_assert_eq(hello(&c, 0), 0);
	sim_udp_stats(c.u, &st);
	from = st.cycles;
	for (int i = 0; i < 3; i++)
		command(&c, &cmd);
	WAIT_FOR(&c, st, st.commands == 3);
	span = st.cycles - from;
	WAIT_FOR(&c, st, c.per_code[RTL_UDP_ALARM_UNSUPPORTED] >= 1);
	wait_cycles(&c, 20);
	sim_udp_stats(c.u, &st);
	cr_assert_eq(st.unsupported, 3);
	cr_assert_eq(c.per_code[RTL_UDP_ALARM_UNSUPPORTED] + st.unsupported_alarms_suppressed, 3);
	if (span < CYCLES_PER_S)
		cr_assert_eq(c.per_code[RTL_UDP_ALARM_UNSUPPORTED], 1);
	cr_assert_eq(st.limit_alarms_suppressed, 0);
	assert_alarm(find_alarm(&c, RTL_UDP_ALARM_UNSUPPORTED), RTL_UDP_ALARM_WARN,
		     RTL_UDP_ALARM_UNSUPPORTED,
		     "servol_rt is not modelled by rtde-sim: robot stopped");
	sim_stop(&c);
	client_close(&c);
}
