// SPDX-License-Identifier: MIT
/*
 * The primary (30001), secondary (30002) and realtime (30003) script ports
 * of rtde-sim (the wire format is docs/ur-primary.md).
 *
 * Primary and secondary send what a controller sends on connect: the
 * version message (the simulated controller's version), then a robot
 * state with robot mode data from the controller state machine
 * (controller.h) every 100 ms, and every controller message newer than the
 * last one the connection sent (runtime exceptions, key messages, texts),
 * encoded with <rtloop/ur_primary.h>'s encoders. The realtime port's own
 * 500 Hz state package is not simulated: it sends nothing.
 *
 * Every port takes URScript text and cuts it into programs the way a
 * controller does: a top-level `def name():` or `sec name():` through its
 * matching `end` (blocks opened by def, sec, thread, if, while and for
 * nest; elif and else do not), or any other non-blank line as a program of
 * its own. Each complete program goes to sim_ctrl_program(), which
 * decides and queues the answer. Input is bounded: a connection that sends
 * SIM_SCRIPT_MAX bytes without completing a program is cut off, and a
 * key message on the other connections says so.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/ur_primary.h>

#include "controller.h"
#include "ports.h"
#include "sim.h"

/* Bytes of one program at most (rtloop_control.script is a few kB). */
#define SIM_SCRIPT_MAX (256u * 1024u)
/* The robot state's period on primary and secondary. */
#define STATE_PERIOD_NS (100 * INT64_C(1000000))

struct prim {
	uint64_t sent_seq;   /* the last controller message sent */
	int64_t next_state;  /* when the next robot state is due */
	int depth;	     /* open blocks of the program being read */
	size_t start;	     /* where the next program starts in in[] */
	size_t len, scanned; /* bytes held; bytes cut into lines */
	char in[SIM_SCRIPT_MAX];
};

static bool streams(const struct sim_conn *c)
{
	return c->kind == SIM_PORT_PRIMARY || c->kind == SIM_PORT_SECONDARY;
}

static size_t put_be(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return n;
}

static size_t put_f64(uint8_t *p, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return put_be(p, u, 8);
}

/* Bytes of the configuration data sub-package (docs/ur-primary.md, 3.2). */
#define CONFIG_SUB_LEN (5 + 53 * 8 + 4 * 4)

/* The configuration data sub-package (type 6) at @p: the joint limits,
 * the default speeds, the arm's DH parameters and the robot type, which
 * URCL's UrDriver waits for before it sends its program. */
static size_t put_configuration(const struct sim *sim, uint8_t *p)
{
	static const double alpha[6] = { M_PI / 2, 0, 0, M_PI / 2, -M_PI / 2, 0 };
	const struct sim_robot_config *cfg = &sim->robot.cfg;
	size_t n = put_be(p, CONFIG_SUB_LEN, 4);

	n += put_be(p + n, RTL_UR_STATE_CONFIGURATION, 1);
	for (int i = 0; i < 6; i++) {
		n += put_f64(p + n, cfg->q_min[i]);
		n += put_f64(p + n, cfg->q_max[i]);
	}
	for (int i = 0; i < 6; i++) {
		n += put_f64(p + n, cfg->qd_max[i]);
		n += put_f64(p + n, cfg->qdd_max[i]);
	}
	n += put_f64(p + n, 1.05); /* v_joint_default [rad/s], movej's */
	n += put_f64(p + n, cfg->joint_accel);
	n += put_f64(p + n, 0.25); /* v_tool_default [m/s], movel's */
	n += put_f64(p + n, cfg->linear_accel);
	n += put_f64(p + n, 0.0); /* eq_radius */
	for (int i = 0; i < 6; i++)
		n += put_f64(p + n, cfg->dh.a[i]);
	for (int i = 0; i < 6; i++)
		n += put_f64(p + n, cfg->dh.d[i]);
	for (int i = 0; i < 6; i++)
		n += put_f64(p + n, alpha[i]);
	for (int i = 0; i < 6; i++)
		n += put_f64(p + n, 0.0); /* theta */
	n += put_be(p + n, 0, 4);	  /* masterboard version */
	n += put_be(p + n, 0, 4);	  /* controller box type */
	n += put_be(p + n, 1, 4);	  /* robot type: 1 UR5 (the UR5e is a UR5, sub type 0) */
	n += put_be(p + n, 0, 4);	  /* robot sub type */
	return n;
}

static void send_state(struct sim *sim, struct sim_conn *c)
{
	const struct sim_ctrl *k = &sim->ctrl;
	const struct rtl_rtde_controller_version *v = sim_version(sim);
	struct rtl_ur_robot_mode_data m = { 0 };
	uint8_t buf[64 + CONFIG_SUB_LEN];
	int n;

	m.timestamp = (uint64_t)(sim_ctrl_time_ns(sim) / 1000);
	m.real_robot_connected = true;
	m.real_robot_enabled = true;
	m.power_on = k->robot_mode >= RTL_UR_ROBOT_MODE_POWER_ON;
	m.emergency_stopped = k->safety_mode == RTL_UR_SAFETY_SYSTEM_EMERGENCY_STOP ||
			      k->safety_mode == RTL_UR_SAFETY_ROBOT_EMERGENCY_STOP;
	m.protective_stopped = k->safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP;
	m.program_running = k->program_state == RTL_UR_PROGRAM_PLAYING;
	m.program_paused = k->program_state == RTL_UR_PROGRAM_PAUSED;
	m.robot_mode = (int8_t)k->robot_mode;
	m.target_speed_fraction = sim->robot.target_speed_fraction;
	m.speed_scaling = sim->robot.speed_scaling;
	m.target_speed_fraction_limit = 1.0;
	n = rtl_ur_encode_robot_state(buf, sizeof(buf) - CONFIG_SUB_LEN, (uint8_t)v->major,
				      (uint8_t)v->minor, &m);
	if (n <= 0)
		return;
	/* the configuration data follows the robot mode data; the message's
	 * length grows by it */
	n += (int)put_configuration(sim, buf + n);
	put_be(buf, (uint64_t)n, 4);
	sim_conn_write(c, buf, (size_t)n);
}

static void send_msg(struct sim_conn *c, const struct sim_ctrl_msg *s)
{
	/* Static: a robot message is over 600 bytes; one thread runs this. */
	static struct rtl_ur_robot_msg m;
	static uint8_t buf[RTL_UR_MSG_HEADER + 32 + RTL_UR_NAME + RTL_UR_TEXT];
	int n;

	memset(&m, 0, sizeof(m));
	m.timestamp = (uint64_t)(s->time_ns / 1000);
	m.source = -2;
	switch (s->kind) {
	case SIM_MSG_RUNTIME_EXCEPTION:
		m.type = RTL_UR_RMSG_RUNTIME_EXCEPTION;
		m.line = s->line;
		m.column = s->column;
		break;
	case SIM_MSG_KEY:
		m.type = RTL_UR_RMSG_KEY;
		m.code = s->code;
		m.argument = s->argument;
		snprintf(m.title, sizeof(m.title), "%s", s->title);
		break;
	case SIM_MSG_SAFETY:
		/* The controller's safety mode message (type 5) is not in the
		 * codec; the error-code message carries the same code and text. */
		m.type = RTL_UR_RMSG_ERROR_CODE;
		m.code = s->code;
		m.argument = s->argument;
		m.report_level = (int32_t)s->level;
		break;
	default:
		m.type = RTL_UR_RMSG_TEXT;
		break;
	}
	snprintf(m.text, sizeof(m.text), "%s", s->text);
	n = rtl_ur_encode_robot_msg(buf, sizeof(buf), &m);
	if (n > 0)
		sim_conn_write(c, buf, (size_t)n);
}

static int prim_open(struct sim *sim, struct sim_conn *c, int64_t now)
{
	const struct rtl_rtde_controller_version *v = sim_version(sim);
	struct rtl_ur_version_msg ver = { .source = -2, .project = "URControl" };
	struct prim *p = calloc(1, sizeof(*p));
	uint8_t buf[128];
	int n;

	if (!p)
		return -ENOMEM;
	c->state = p;
	/* Only messages from now on: a controller does not replay its log. */
	p->sent_seq = sim->ctrl.msg_next ? sim->ctrl.msg_next - 1 : 0;
	if (!streams(c))
		return 0;
	ver.timestamp = (uint64_t)(sim_ctrl_time_ns(sim) / 1000);
	ver.major = (uint8_t)v->major;
	ver.minor = (uint8_t)v->minor;
	ver.bugfix = (int32_t)v->bugfix;
	ver.build = (int32_t)v->build;
	snprintf(ver.build_date, sizeof(ver.build_date), "rtde-sim");
	n = rtl_ur_encode_version(buf, sizeof(buf), &ver);
	if (n > 0)
		sim_conn_write(c, buf, (size_t)n);
	send_state(sim, c);
	p->next_state = now + STATE_PERIOD_NS;
	return 0;
}

static void prim_tick(struct sim *sim, struct sim_conn *c, int64_t now)
{
	struct prim *p = c->state;

	if (!p || !streams(c))
		return;
	if (now >= p->next_state) {
		send_state(sim, c);
		p->next_state += STATE_PERIOD_NS;
		if (p->next_state <= now)
			p->next_state = now + STATE_PERIOD_NS;
	}
	while (p->sent_seq + 1 < sim->ctrl.msg_next) {
		const struct sim_ctrl_msg *m = sim_ctrl_msg_get(sim, ++p->sent_seq);

		if (m) /* NULL: overwritten in the ring, counted there */
			send_msg(c, m);
	}
}

/* The first word of @s (@n bytes) is @w, followed by a non-identifier. */
static bool word(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	if (n < k || memcmp(s, w, k))
		return false;
	return n == k || !(s[k] == '_' || (s[k] >= 'a' && s[k] <= 'z') ||
			   (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9'));
}

static bool opens_block(const char *s, size_t n)
{
	static const char *const kw[] = { "def", "sec", "thread", "if", "while", "for" };

	if (!n || s[n - 1] != ':')
		return false;
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (word(s, n, kw[i]))
			return true;
	return false;
}

/* One line [b, e) of the text (newline excluded): advance the framing;
 * returns true when it completes a program. Comments and blank lines
 * before a program belong to it (a controller numbers the lines of the
 * text it was sent); blank lines between programs are dropped. */
static bool line(struct prim *p, size_t b, size_t e)
{
	const char *s = p->in + b;
	size_t n = e - b;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	/* A comment after the code ("if x:  # why") is not part of it. */
	for (size_t i = 0, quoted = 0; i < n; i++) {
		if (s[i] == '"')
			quoted ^= 1;
		else if (s[i] == '#' && !quoted && i > 0) {
			n = i;
			break;
		}
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (!n && p->depth == 0 && p->start == b) {
		p->start = e + 1;
		return false;
	}
	if (!n || *s == '#')
		return false;
	if (p->depth == 0) {
		if (!word(s, n, "def") && !word(s, n, "sec"))
			return true; /* a line of its own */
		p->depth = 1;
		return false;
	}
	if (opens_block(s, n))
		p->depth++;
	else if (word(s, n, "end"))
		p->depth--;
	return p->depth == 0;
}

/* "stop program" on a line of its own is not URScript but a command of
 * the script ports: the running program stops (URCL sends it before its
 * program in headless mode). */
static bool stop_program(const char *s, size_t n)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	return n == 12 && !memcmp(s, "stop program", 12);
}

static void prim_feed(struct sim *sim, struct sim_conn *c, const uint8_t *data, size_t n,
		      int64_t now)
{
	struct prim *p = c->state;

	if (!p || c->close)
		return;
	while (n) {
		size_t k = sizeof(p->in) - p->len < n ? sizeof(p->in) - p->len : n;
		size_t done;

		memcpy(p->in + p->len, data, k);
		p->len += k;
		data += k;
		n -= k;
		for (size_t i = p->scanned; i < p->len; i++) {
			size_t b = p->scanned;

			if (p->in[i] != '\n')
				continue;
			p->scanned = i + 1;
			if (!line(p, b, i))
				continue;
			if (stop_program(p->in + p->start, i + 1 - p->start))
				sim_ctrl_stop(sim, now); /* no program: the controller's command */
			else
				sim_ctrl_program(sim, c->kind, p->in + p->start, i + 1 - p->start,
						 now);
			p->start = i + 1;
		}
		/* What is before the next program is done with. */
		done = p->start;
		if (done) {
			memmove(p->in, p->in + done, p->len - done);
			p->len -= done;
			p->scanned -= done;
			p->start = 0;
		}
		if (p->len == sizeof(p->in)) {
			struct sim_ctrl_msg m = { .kind = SIM_MSG_KEY, .level = SIM_LEVEL_WARNING };

			snprintf(m.title, sizeof(m.title), "Script input cut off");
			snprintf(m.text, sizeof(m.text),
				 "%s port: %u bytes without a complete program (a def or sec "
				 "without its end?); connection closed",
				 sim_port_name(c->kind), SIM_SCRIPT_MAX);
			sim_ctrl_message(sim, &m);
			sim->ctrl.stats.script_floods++;
			c->close = true;
			return;
		}
	}
}

/* One service on the three ports: what differs goes by c->kind. */
const struct sim_port_ops sim_script_ops = {
	.name = "script",
	.open = prim_open,
	.feed = prim_feed,
	.tick = prim_tick,
	.close = sim_conn_free_state,
};
