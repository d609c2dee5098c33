// SPDX-License-Identifier: MIT
/*
 * rtde-sim runs the UR Client Library's External Control program
 * (apps/rtde-sim/extctl*.c): this test plays the PC side with plain
 * sockets. It listens on ephemeral ports of 127.0.0.1 for the reverse,
 * trajectory and script command connections, sends a program with the
 * placeholders filled in with those ports (the lines the model reads, in
 * the pinned script's form: the multipliers, the servoj settings, the
 * three socket lines and the main loop's read), to the secondary port as
 * the library's headless mode does, or serves it as the script sender for
 * the dashboard's load + play. It then speaks the wire protocol and
 * asserts the simulator's state: joints, payload, TCP, modes, the program
 * state and its runtime exceptions.
 *
 * Every wait has a deadline; the simulator is polled, never slept on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rtloop/time.h>

#include "server.h"
#include "sim.h"

#define MS RTL_NS_PER_MS
#define MULT 1000000.0
#define EXT 1 /* sim_progs[] index of the External Control model */

enum { TRAJ = 0, CMD, REV, NSOCK };

static struct sim_server *srv;
static int lsn[NSOCK] = { -1, -1, -1 }, fd[NSOCK] = { -1, -1, -1 };
static uint16_t port[NSOCK];

/* ---- the simulator ---------------------------------------------------------------- */

static void up_with(struct sim_opts *o)
{
	struct sim_server_opts so = { 0 };

	cr_assert_eq(sim_server_create(&srv, o, &so), 0);
	cr_assert_eq(sim_server_start(srv), 0);
}

static void up(void)
{
	up_with(NULL);
}

static void down(void)
{
	if (srv) {
		sim_server_stop(srv);
		sim_server_join(srv);
		sim_server_destroy(srv);
		srv = NULL;
	}
	for (int k = 0; k < NSOCK; k++) {
		if (fd[k] >= 0)
			close(fd[k]);
		if (lsn[k] >= 0)
			close(lsn[k]);
		fd[k] = lsn[k] = -1;
	}
}

static struct sim_stats stats(void)
{
	struct sim_stats st;

	sim_server_stats(srv, &st);
	return st;
}

/* Stop the loop: the controller may be read directly from then on. */
static struct sim *halt_sim(void)
{
	sim_server_stop(srv);
	cr_assert_eq(sim_server_join(srv), 0);
	return sim_server_sim(srv);
}

/* A controller message of @kind whose text holds @part. */
static bool has_msg(const struct sim *sim, enum sim_ctrl_msg_kind kind, const char *part)
{
	for (uint64_t s = 1; s < sim->ctrl.msg_next; s++) {
		const struct sim_ctrl_msg *m = sim_ctrl_msg_get(sim, s);

		if (m && m->kind == kind && strstr(m->text, part))
			return true;
	}
	return false;
}

static bool playing(const struct sim_stats *st)
{
	return st->ctrl.program_state == RTL_UR_PROGRAM_PLAYING;
}

static bool is_playing(void)
{
	struct sim_stats st = stats();

	return playing(&st);
}

/* ---- the PC's sockets ---------------------------------------------------------------- */

static int listen_any(uint16_t *p)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t n = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	cr_assert_geq(s, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(s, 4), 0);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &n), 0);
	*p = ntohs(a.sin_port);
	return s;
}

static void pc_listen(void)
{
	for (int k = 0; k < NSOCK; k++)
		lsn[k] = listen_any(&port[k]);
}

static int accept_within(int l, int ms)
{
	struct pollfd p = { .fd = l, .events = POLLIN };
	int one = 1, s;

	cr_assert_eq(poll(&p, 1, ms), 1, "the program did not connect within %d ms", ms);
	s = accept(l, NULL, NULL);
	cr_assert_geq(s, 0);
	setsockopt(s, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	return s;
}

/* The program connects back: trajectory, script command, reverse. */
static void pc_accept(void)
{
	for (int k = 0; k < NSOCK; k++)
		fd[k] = accept_within(lsn[k], 3000);
}

static void put(int s, const void *p, size_t n)
{
	cr_assert_eq(send(s, p, n, MSG_NOSIGNAL), (ssize_t)n, "send: %s", strerror(errno));
}

static void put_ints(int s, const int32_t *v, size_t n)
{
	uint32_t b[32];

	for (size_t i = 0; i < n; i++)
		b[i] = htonl((uint32_t)v[i]);
	put(s, b, 4 * n);
}

/* One reverse message: read time-out [ms], six values, the mode. */
static void rev(int32_t timeout_ms, const double *v, int32_t mode)
{
	int32_t m[8] = { timeout_ms, 0, 0, 0, 0, 0, 0, mode };

	for (int i = 0; v && i < 6; i++)
		m[1 + i] = (int32_t)lround(v[i] * MULT);
	put_ints(fd[REV], m, 8);
}

/* A trajectory or freedrive control message: action and count. */
static void rev_action(int32_t timeout_ms, int32_t action, int32_t count, int32_t mode)
{
	int32_t m[8] = { timeout_ms, action, count, 0, 0, 0, 0, mode };

	put_ints(fd[REV], m, 8);
}

/* A trajectory point: q, the second and third blocks, time, blend or
 * spline type, motion type. */
static void point(const double *q, const double *b2, const double *b3, double t, int32_t blend,
		  int32_t type)
{
	int32_t m[21] = { 0 };

	for (int i = 0; i < 6; i++) {
		m[i] = (int32_t)lround(q[i] * MULT);
		m[6 + i] = b2 ? (int32_t)lround(b2[i] * MULT) : 0;
		m[12 + i] = b3 ? (int32_t)lround(b3[i] * MULT) : 0;
	}
	m[18] = (int32_t)lround(t * MULT);
	m[19] = blend;
	m[20] = type;
	put_ints(fd[TRAJ], m, 21);
}

/* A script command: number and up to 27 arguments, scaled. */
static void command(int32_t cmd, const double *arg, int n)
{
	int32_t m[28] = { cmd };

	for (int i = 0; i < n; i++)
		m[1 + i] = (int32_t)lround(arg[i] * MULT);
	put_ints(fd[CMD], m, 28);
}

/* One int32 from @s within @ms; -1000 when none came. */
static int32_t get_int(int s, int ms)
{
	int64_t end = rtl_time_now() + ms * MS;
	uint8_t b[4];
	size_t n = 0;

	while (n < 4 && rtl_time_now() < end) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 5) <= 0)
			continue;
		r = recv(s, b + n, 4 - n, 0);
		if (r <= 0)
			return -1000;
		n += (size_t)r;
	}
	return n == 4 ? (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
				  (uint32_t)b[2] << 8 | b[3])
		      : -1000;
}

/* Does the peer close @s within @ms? */
static bool peer_closed(int s, int ms)
{
	struct pollfd p = { .fd = s, .events = POLLIN };
	char b[64];

	while (poll(&p, 1, ms) == 1)
		if (recv(s, b, sizeof(b), 0) <= 0)
			return true;
	return false;
}

/* ---- the program ---------------------------------------------------------------------- */

/* The lines of the External Control program the model reads, filled in
 * as the library fills them (host, ports, multipliers, servoj). */
static size_t program(char *out, size_t cap, bool headless, const uint16_t *p)
{
	static const char *const head =
		"steptime = get_steptime()\n"
		"MULT_jointstate = 1000000\n"
		"MULT_time = 1000000\n"
		"STOPJ_ACCELERATION = 4.0\n"
		"MODE_STOPPED = -2\n"
		"MODE_IDLE = 0\n"
		"MODE_SERVOJ = 1\n"
		"MODE_SPEEDJ = 2\n"
		"MODE_FORWARD = 3\n"
		"MODE_FREEDRIVE = 6\n"
		"REVERSE_INTERFACE_DATA_DIMENSION = 8\n"
		"SCRIPT_COMMAND_DATA_DIMENSION = 28\n"
		"JOINT_IGNORE_SPEED = 20.0\n"
		"thread servoThread():\n"
		"  while control_mode == MODE_SERVOJ:\n"
		"    servoj(q, t=steptime, lookahead_time=0.03, gain=2000)\n"
		"  end\n"
		"end\n";
	int n;

	n = snprintf(out, cap,
		     "%s%s"
		     "traj_flag = connect_socket_with_retry(\"127.0.0.1\", %u, "
		     "\"trajectory_socket\")\n"
		     "com_flag = connect_socket_with_retry(\"127.0.0.1\", %u, "
		     "\"script_command_socket\")\n"
		     "rev_flag = connect_socket_with_retry(\"127.0.0.1\", %u, \"reverse_socket\")\n"
		     "while control_mode > MODE_STOPPED:\n"
		     "  params_mult = socket_read_binary_integer(REVERSE_INTERFACE_DATA_DIMENSION, "
		     "\"reverse_socket\", read_timeout)\n"
		     "end\n"
		     "%s",
		     headless ? "def externalControl():\n" : "", head, p[TRAJ], p[CMD], p[REV],
		     headless ? "end\n" : "");
	cr_assert(n > 0 && (size_t)n < cap);
	return (size_t)n;
}

/* Headless: the program goes to the secondary port. */
static void send_program(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char text[4096];
	size_t n = program(text, sizeof(text), true, port);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_port = htons(sim_server_service_port(srv, SIM_PORT_SECONDARY));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	put(s, text, n);
	close(s);
}

/* Poll the simulator until @cond holds, for @ms at most. */
#define WAIT_FOR(cond, ms, ...)                                        \
	do {                                                           \
		int64_t end_ = rtl_time_now() + (ms)*MS;               \
		struct sim_stats st_;                                  \
		for (;;) {                                             \
			st_ = stats();                                 \
			if (cond)                                      \
				break;                                 \
			cr_assert(rtl_time_now() < end_, __VA_ARGS__); \
			usleep(1000);                                  \
		}                                                      \
	} while (0)
#define ST (&st_)

/* The program is up, connected to all three ports. */
static void start_program(void)
{
	up();
	pc_listen();
	send_program();
	pc_accept();
	WAIT_FOR(playing(ST) && ST->ctrl.stats.model[EXT].started == 1, 2000,
		 "the program did not start");
}

static void pause_ms(int ms, int32_t keep_mode)
{
	int64_t end = rtl_time_now() + ms * MS;

	while (rtl_time_now() < end) {
		rev(1000, NULL, keep_mode);
		usleep(4000);
	}
}

/* ---- tests ----------------------------------------------------------------------------- */

TestSuite(sim_extctl, .fini = down, .timeout = 60);

Test(sim_extctl, servoj_moves_the_arm_to_the_target)
{
	double q0[6], q[6], target[6];
	struct sim_stats st;

	start_program();
	st = stats();
	memcpy(q0, st.robot.q, sizeof(q0));
	memcpy(target, q0, sizeof(target));
	target[0] += 0.2;
	target[2] -= 0.1;
	target[5] += 0.15;
	/* the PC interpolates: 1 s of setpoints every 2 ms, then the target */
	for (int k = 1; k <= 500; k++) {
		for (int i = 0; i < 6; i++)
			q[i] = q0[i] + (target[i] - q0[i]) * k / 500.0;
		rev(100, q, 1);
		usleep(2000);
	}
	for (int k = 0; k < 1000; k++) {
		bool there = true;

		st = stats();
		for (int i = 0; i < 6; i++)
			there = there && fabs(st.robot.q[i] - target[i]) < 1e-3;
		if (there)
			break;
		rev(100, target, 1);
		usleep(2000);
	}
	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(st.robot.q[i], target[i], 1e-3, "joint %d: %g, not %g", i,
				   st.robot.q[i], target[i]);
	cr_assert(playing(&st));
	/* MODE_STOPPED: the program ends in order */
	rev(100, NULL, -2);
	WAIT_FOR(!playing(ST), 2000, "MODE_STOPPED did not end the program");
	cr_assert_eq(stats().ctrl.stats.model[EXT].failed, 0);
}

Test(sim_extctl, speedj_moves_and_a_stopped_keepalive_ends_the_program)
{
	double qd[6] = { 0.1, 0, 0, 0, 0, -0.05 }, q0;
	struct sim_stats st;
	struct sim *sim;

	start_program();
	q0 = stats().robot.q[0];
	for (int k = 0; k < 150; k++) {
		rev(200, qd, 2);
		usleep(4000);
	}
	st = stats();
	cr_assert(st.robot.q[0] - q0 > 0.03, "joint 0 moved %g", st.robot.q[0] - q0);
	cr_assert_float_eq(st.robot.max_speed, 0.1, 0.01);
	cr_assert(playing(&st));
	/* the keep-alive stops: the read times out after 200 ms */
	WAIT_FOR(!playing(ST), 1000, "the read time-out did not end the program");
	WAIT_FOR(ST->robot.at_rest, 3000, "the arm did not stop");
	st = stats();
	cr_assert_eq(st.ctrl.stats.model[EXT].watchdog_stops, 1);
	cr_assert_eq(st.ctrl.stats.model[EXT].failed, 0);
	sim = halt_sim();
	cr_assert(has_msg(sim, SIM_MSG_TEXT, "Socket timed out waiting for command"));
}

Test(sim_extctl, a_closed_reverse_connection_stops_the_arm)
{
	double qd[6] = { 0, 0.2, 0, 0, 0, 0 };

	start_program();
	for (int k = 0; k < 100; k++) {
		rev(0, qd, 2); /* a time-out of 0: the read would wait for ever */
		usleep(4000);
	}
	cr_assert(stats().robot.max_speed > 0.1);
	close(fd[REV]);
	fd[REV] = -1;
	WAIT_FOR(!playing(ST), 1000, "a lost reverse connection did not end the program");
	WAIT_FOR(ST->robot.at_rest, 3000, "the arm did not stop");
	/* the program closed the others: the PC sees them end */
	cr_assert(peer_closed(fd[TRAJ], 1000), "the trajectory socket stayed open");
}

/* Send keep-alives (NOOP) until the trajectory result comes. */
static int32_t await_result(int ms)
{
	int64_t end = rtl_time_now() + ms * MS;

	while (rtl_time_now() < end) {
		int32_t r = get_int(fd[TRAJ], 4);

		if (r != -1000)
			return r;
		rev_action(200, 0, 0, 3);
	}
	return -1000;
}

static void at(const double *want, double tol)
{
	struct sim_stats st = stats();

	for (int i = 0; i < 6; i++)
		cr_assert_float_eq(st.robot.q[i], want[i], tol, "joint %d: %g, not %g", i,
				   st.robot.q[i], want[i]);
}

Test(sim_extctl, a_spline_trajectory_ends_at_its_last_point)
{
	double q0[6], p[3][6], zero[6] = { 0 };

	start_program();
	memcpy(q0, stats().robot.q, sizeof(q0));
	for (int k = 0; k < 3; k++) {
		memcpy(p[k], q0, sizeof(q0));
		p[k][0] += 0.1 * (k + 1);
		p[k][3] -= 0.05 * (k + 1);
	}
	rev_action(200, 1, 3, 3); /* MODE_FORWARD, TRAJECTORY_START, 3 points */
	point(p[0], zero, NULL, 0.5, 1, 51);
	point(p[1], zero, zero, 0.5, 2, 51); /* a quintic one */
	point(p[2], zero, NULL, 0.5, 1, 51);
	cr_assert_eq(await_result(5000), 0, "no SUCCESS on the trajectory socket");
	WAIT_FOR(ST->robot.at_rest, 2000, "the arm did not come to rest");
	at(p[2], 2e-3);
	cr_assert(is_playing());
}

Test(sim_extctl, a_movej_trajectory_ends_at_its_last_point)
{
	double q0[6], p[3][6], vel[6] = { 1.05, 1.4, 0, 0, 0, 0 };

	start_program();
	memcpy(q0, stats().robot.q, sizeof(q0));
	for (int k = 0; k < 3; k++) {
		memcpy(p[k], q0, sizeof(q0));
		p[k][1] -= 0.1 * (k + 1);
		p[k][4] += 0.1 * (k + 1);
	}
	rev_action(200, 1, 3, 3);
	for (int k = 0; k < 3; k++)
		point(p[k], NULL, vel, 0.4, 0, 0); /* MOTION_TYPE_MOVEJ, 0.4 s each */
	cr_assert_eq(await_result(6000), 0, "no SUCCESS on the trajectory socket");
	WAIT_FOR(ST->robot.at_rest, 2000, "the arm did not come to rest");
	at(p[2], 1e-4);
	cr_assert(stats().robot.moves_done >= 3);
}

Test(sim_extctl, a_movel_trajectory_ends_at_its_last_pose)
{
	double pose0[6], p[3][6], vel[6] = { 0.25, 1.2, 0, 0, 0, 0 };
	struct sim_stats st;

	start_program();
	memcpy(pose0, stats().robot.tcp_pose, sizeof(pose0));
	for (int k = 0; k < 3; k++) {
		memcpy(p[k], pose0, sizeof(pose0));
		p[k][0] += 0.02 * (k + 1); /* a straight line along base x */
		p[k][2] -= 0.01 * (k + 1);
	}
	rev_action(200, 1, 3, 3);
	for (int k = 0; k < 3; k++)
		point(p[k], NULL, vel, 0, 0, 1); /* MOTION_TYPE_MOVEL, no time: by speed */
	cr_assert_eq(await_result(6000), 0, "no SUCCESS on the trajectory socket");
	WAIT_FOR(ST->robot.at_rest, 2000, "the arm did not come to rest");
	st = stats();
	for (int i = 0; i < 3; i++)
		cr_assert_float_eq(st.robot.tcp_pose[i], p[2][i], 1e-4, "axis %d: %g, not %g", i,
				   st.robot.tcp_pose[i], p[2][i]);
}

Test(sim_extctl, a_cancel_gives_the_canceled_result)
{
	double q0[6], p[6], zero[6] = { 0 };

	start_program();
	memcpy(q0, stats().robot.q, sizeof(q0));
	memcpy(p, q0, sizeof(p));
	p[0] += 0.5;
	rev_action(200, 1, 3, 3);
	point(p, zero, NULL, 3.0, 1, 51);
	point(p, zero, NULL, 3.0, 1, 51);
	WAIT_FOR(ST->robot.max_speed > 0.02, 2000, "the trajectory did not start");
	rev_action(200, -1, 0, 3); /* TRAJECTORY_CANCEL */
	cr_assert_eq(await_result(3000), 1, "no CANCELED on the trajectory socket");
	WAIT_FOR(ST->robot.at_rest, 3000, "the canceled trajectory did not stop the arm");
	cr_assert(fabs(stats().robot.q[0] - p[0]) > 0.1, "the arm went on to the target");
	cr_assert(is_playing());
}

Test(sim_extctl, freedrive_starts_and_stops)
{
	start_program();
	rev_action(200, 1, 0, 6); /* FREEDRIVE_START */
	WAIT_FOR(ST->robot.teach_on, 1000, "freedrive did not start");
	pause_ms(50, 6);
	cr_assert(stats().robot.teach_on);
	rev_action(200, -1, 0, 6); /* FREEDRIVE_STOP */
	WAIT_FOR(!ST->robot.teach_on, 1000, "freedrive did not stop");
	cr_assert(is_playing());
}

Test(sim_extctl, script_commands_set_payload_tcp_and_force_mode)
{
	double payload[4] = { 2.5, 0.01, 0.02, 0.03 }, tcp[6] = { 0, 0, 0.12, 0, 0, 0.5 };
	double fm[29] = { 0 };
	uint64_t req;

	start_program();
	rev(1000, NULL, 0); /* MODE_IDLE: the main loop runs */
	req = stats().robot.requests;
	command(0, NULL, 0); /* ZERO_FTSENSOR */
	WAIT_FOR(ST->robot.requests == req + 1, 1000, "zero_ftsensor reached no robot request");
	command(1, payload, 4);
	WAIT_FOR(fabs(ST->robot.payload - 2.5) < 1e-9, 1000, "the payload was not set");
	cr_assert_float_eq(stats().robot.payload_cog[2], 0.03, 1e-9);
	command(10, tcp, 6);
	WAIT_FOR(fabs(ST->robot.tcp_offset[2] - 0.12) < 1e-9, 1000, "the TCP was not set");
	cr_assert_float_eq(stats().robot.tcp_offset[5], 0.5, 1e-9);
	/* START_FORCE_MODE, indexed as the script's raw_command[]: frame
	 * 2-7, selection 8-13, wrench 14-19, type 20, limits 21-26, damping
	 * 27, gain scaling 28 */
	fm[10] = 1;  /* z compliant */
	fm[16] = -5; /* 5 N down */
	fm[20] = 2;  /* type 2 */
	for (int i = 21; i <= 26; i++)
		fm[i] = 0.1;
	fm[27] = 0.005;
	fm[28] = 1.0;
	command(3, fm + 2, 27);
	WAIT_FOR(ST->robot.force_on, 1000, "force mode did not start");
	command(4, NULL, 0);
	WAIT_FOR(!ST->robot.force_on, 1000, "force mode did not end");
	/* END_TOOL_CONTACT without a contact: CANCELED on the command socket */
	command(5, NULL, 0);
	command(6, NULL, 0);
	cr_assert_eq(get_int(fd[CMD], 1000), 1);
	WAIT_FOR(ST->ctrl.stats.model[EXT].commands == 7, 1000, "%" PRIu64 " commands counted",
		 stats().ctrl.stats.model[EXT].commands);
	cr_assert(is_playing());
}

/* speedl down onto a plane 1 cm below the tool, with tool contact on:
 * the motion ends, the tool goes back to where the contact began, and
 * the script command socket says SUCCESS. */
Test(sim_extctl, tool_contact_stops_the_motion_and_answers_success)
{
	double down[6] = { 0, 0, -0.05, 0, 0, 0 }, z;
	struct sim_stats st;
	struct sim_opts o;
	int32_t answer = -1000;

	sim_opts_default(&o);
	up_with(&o);
	WAIT_FOR(ST->cycles > 2, 1000, "no cycle ran");
	st = stats();
	sim_server_stop(srv);
	sim_server_join(srv);
	sim_server_destroy(srv);
	/* the same arm, with a plane under its tool */
	z = st.robot.tcp_pose[2];
	o.robot.contact = (struct sim_contact){
		.enabled = true,
		.point = { st.robot.tcp_pose[0], st.robot.tcp_pose[1], z - 0.01 },
		.normal = { 0, 0, 1 },
		.stiffness = 5000,
		.damping = 50,
	};
	up_with(&o);
	pc_listen();
	send_program();
	pc_accept();
	WAIT_FOR(playing(ST) && ST->ctrl.stats.model[EXT].started == 1, 2000, "not started");
	rev(1000, NULL, 0);
	command(5, NULL, 0); /* START_TOOL_CONTACT */
	for (int k = 0; k < 1000 && answer == -1000; k++) {
		rev(1000, down, 4); /* MODE_SPEEDL */
		answer = get_int(fd[CMD], 4);
	}
	cr_assert_eq(answer, 0, "no UNTIL_TOOL_CONTACT_RESULT_SUCCESS");
	st = stats();
	cr_assert(st.robot.at_rest);
	cr_assert(st.robot.tcp_pose[2] < z - 0.009 && st.robot.tcp_pose[2] > z - 0.02,
		  "the tool is at z %g, the plane at %g", st.robot.tcp_pose[2], z - 0.01);
	/* in contact, the mode stays until tool contact ends: no CANCELED */
	command(6, NULL, 0);
	cr_assert_eq(get_int(fd[CMD], 200), -1000);
	rev(1000, NULL, -2);
	WAIT_FOR(!playing(ST), 2000, "MODE_STOPPED did not end the program");
}

Test(sim_extctl, an_unmodelled_script_command_is_a_runtime_exception)
{
	double g[3] = { 0, 0, -9.81 };
	struct sim *sim;

	start_program();
	rev(1000, NULL, 0);
	command(9, g, 3); /* SET_GRAVITY */
	WAIT_FOR(!playing(ST), 1000, "set_gravity was silently taken");
	cr_assert_str_eq(stats().ctrl.stats.model[EXT].last_unmodelled, "set_gravity");
	sim = halt_sim();
	cr_assert(has_msg(sim, SIM_MSG_RUNTIME_EXCEPTION, "set_gravity"));
}

Test(sim_extctl, garbage_on_the_reverse_socket_stops_nothing_but_the_motion)
{
	uint8_t junk[32];
	double qd[6] = { 0.1, 0, 0, 0, 0, 0 };

	start_program();
	for (int k = 0; k < 50; k++) {
		rev(1000, qd, 2);
		usleep(4000);
	}
	memset(junk, 0x41, sizeof(junk)); /* mode 0x41414141: no mode of the script */
	put(fd[REV], junk, sizeof(junk));
	WAIT_FOR(ST->robot.at_rest, 3000, "the motion thread did not end");
	cr_assert(is_playing());
	/* the script goes on reading: a valid mode is taken again */
	rev(1000, NULL, -2);
	WAIT_FOR(!playing(ST), 1000, "MODE_STOPPED after garbage was not taken");
	cr_assert_eq(stats().ctrl.stats.model[EXT].failed, 0);
}

Test(sim_extctl, half_a_message_then_a_stall_times_out)
{
	int32_t half[4] = { 100, 0, 0, 0 };
	double qd[6] = { 0.1, 0, 0, 0, 0, 0 };

	start_program();
	for (int k = 0; k < 50; k++) {
		rev(150, qd, 2);
		usleep(4000);
	}
	put_ints(fd[REV], half, 4);
	WAIT_FOR(!playing(ST), 1000, "half a message kept the program running");
	WAIT_FOR(ST->robot.at_rest, 3000, "the arm did not stop");
	cr_assert_eq(stats().ctrl.stats.model[EXT].watchdog_stops, 1);
}

Test(sim_extctl, a_refused_connection_fails_the_program_with_a_message)
{
	struct sim *sim;

	up();
	pc_listen();
	close(lsn[TRAJ]); /* nobody listens on the trajectory port */
	lsn[TRAJ] = -1;
	send_program();
	WAIT_FOR(ST->ctrl.stats.model[EXT].started == 1, 2000, "the program did not start");
	/* five attempts 0.2 s apart, then the error */
	WAIT_FOR(!playing(ST), 3000, "the refused connection did not fail the program");
	cr_assert_eq(stats().ctrl.stats.model[EXT].failed, 1);
	sim = halt_sim();
	cr_assert(has_msg(sim, SIM_MSG_RUNTIME_EXCEPTION, "Error connecting to remote"));
	cr_assert(has_msg(sim, SIM_MSG_RUNTIME_EXCEPTION, "connected: False"));
}

/* ---- the dashboard's load + play --------------------------------------------------------- */

static int dashboard(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_port = htons(sim_server_service_port(srv, SIM_PORT_DASHBOARD));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	return s;
}

/* One line within 3 s (without its newline). */
static void line(int s, char *buf, size_t cap)
{
	int64_t end = rtl_time_now() + 3000 * MS;
	size_t n = 0;

	while (rtl_time_now() < end) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		char ch;

		if (poll(&p, 1, 10) <= 0)
			continue;
		cr_assert_eq(recv(s, &ch, 1, 0), 1);
		if (ch == '\n') {
			buf[n] = '\0';
			return;
		}
		if (n + 1 < cap)
			buf[n++] = ch;
	}
	cr_assert_fail("no line within 3 s");
}

Test(sim_extctl, load_and_play_fetch_the_program_from_the_script_sender)
{
	struct sim_opts o;
	uint16_t sender_port;
	int sender, s, d;
	char buf[4096];
	size_t n;

	pc_listen();
	sender = listen_any(&sender_port);
	sim_opts_default(&o);
	o.ctrl.urcap_port = sender_port;
	up_with(&o);
	d = dashboard();
	line(d, buf, sizeof(buf)); /* the greeting */
	put(d, "load external_control.urp\n", 26);
	line(d, buf, sizeof(buf));
	cr_assert(strstr(buf, "Loading program"), "%s", buf);
	put(d, "play\n", 5);
	line(d, buf, sizeof(buf));
	cr_assert(strstr(buf, "Starting program"), "%s", buf);
	/* the URCap asks for the program; the sender keeps the connection */
	s = accept_within(sender, 3000);
	n = 0;
	while (n < 16) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		ssize_t r;

		cr_assert_eq(poll(&p, 1, 3000), 1, "no request_program");
		r = recv(s, buf + n, 16 - n, 0);
		cr_assert(r > 0);
		n += (size_t)r;
	}
	cr_assert_eq(memcmp(buf, "request_program\n", 16), 0);
	n = program(buf, sizeof(buf) - 1, false, port);
	buf[n++] = '\n';
	put(s, buf, n);
	pc_accept();
	WAIT_FOR(playing(ST) && ST->ctrl.stats.model[EXT].started == 1, 2000,
		 "the fetched program did not start");
	cr_assert(is_playing());
	rev(100, NULL, -2);
	WAIT_FOR(!playing(ST), 2000, "MODE_STOPPED did not end the program");
	/* the .urp stays loaded: play fetches it again */
	put(d, "play\n", 5);
	line(d, buf, sizeof(buf));
	cr_assert(strstr(buf, "Starting program"), "%s", buf);
	close(accept_within(sender, 3000));
	close(s);
	close(d);
	close(sender);
}
