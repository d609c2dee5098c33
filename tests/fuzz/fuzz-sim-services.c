// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: rtde-sim's services beside RTDE, what a client of the
 * dashboard (apps/rtde-sim/dashboard.c), of the script ports
 * (apps/rtde-sim/primary.c) or of the Robot API (apps/rtde-sim/robot_api.c)
 * reaches, and the controller behind them
 * (apps/rtde-sim/controller.c: the program comparison, the state machine).
 *
 * Input: byte 0 picks the port (bits 0-1: dashboard, primary, secondary,
 * realtime) and the controller (bit 2 --boot, bit 3 --local-control, bit
 * 4 the cb3 profile, bit 5 the protective-stop fault; bit 6: the Robot
 * API of the polyscope-x profile instead of bits 0-1 and 4); byte 1 seeds the chunking; the rest is
 * what the client sends. The harness is the server without sockets: open(), then each piece to
 * feed() as one read, the controller's clock 50 ms on, its tick and the service's; what the service
 * queued is taken and checked.
 *
 * Oracles: the dashboard answers every command line with exactly one line
 * (the greeting first; a line of blanks is no command), until "quit"; the
 * Robot API sends only whole HTTP/1.1 responses (a status line, a head
 * that ends, a Content-Length body that is a JSON object) and nothing
 * after one that closes; the script ports send only whole
 * primary-interface messages of the two
 * types a controller sends, each of which decodes; every program that
 * arrived was either started, refused or recorded as another program;
 * the executor runs only on a running arm with safety normal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/ur_primary.h>

#include "fuzz-common.h"
#include "ports.h"
#include "sim.h"

#define STEP_NS (50 * 1000 * 1000LL)

/* Dashboard: whole lines, and how many. */
static size_t take_lines(struct sim_conn *c)
{
	size_t lines = 0;

	for (size_t i = c->off; i < c->len; i++)
		lines += c->out[i] == '\n';
	FUZZ_CHECK(c->len == c->off || c->out[c->len - 1] == '\n');
	c->off = c->len = 0;
	return lines;
}

#define LENGTH_HDR "\r\nContent-Length: "
#define CLOSE_HDR "\r\nConnection: close\r\n"

/* Robot API: whole responses, each a status line, a head and a JSON body of
 * its Content-Length; a response that says close is the last. */
/* The first @what in @p's @n bytes, or NULL (memmem() without its
 * attributes, which GCC 12 misreads here under the sanitizers). */
static const char *find(const char *p, size_t n, const char *what)
{
	size_t k = strlen(what);

	for (size_t i = 0; k <= n && i <= n - k; i++)
		if (!memcmp(p + i, what, k))
			return p + i;
	return NULL;
}

static void take_http(struct sim_conn *c)
{
	const char *base = (const char *)c->out;
	size_t off = c->off;

	while (base && off < c->len) {
		const char *r = base + off;
		size_t left = c->len - off;

		const char *end = find(r, left, "\r\n\r\n");
		const char *cl = find(r, left, LENGTH_HDR);
		size_t head, body;

		FUZZ_CHECK(left > 12 && !memcmp(r, "HTTP/1.1 ", 9));
		FUZZ_CHECK(r[9] >= '1' && r[9] <= '5' && r[12] == ' ');
		FUZZ_CHECK(end && cl && cl < end);
		head = (size_t)(end - r) + 4;
		body = strtoul(cl + sizeof(LENGTH_HDR) - 1, NULL, 10);
		FUZZ_CHECK(head + body <= left);
		FUZZ_CHECK(body >= 2 && r[head] == '{' && r[head + body - 1] == '}');
		off += head + body;
		if (find(r, head, CLOSE_HDR))
			FUZZ_CHECK(off == c->len && c->close);
	}
	c->off = c->len = 0;
}

/* Script ports: whole messages, each decoding as its type says. */
static void take_messages(struct sim_conn *c)
{
	size_t off = c->off;

	while (off < c->len) {
		const uint8_t *m = c->out + off;
		size_t n = 0;
		int t;

		FUZZ_CHECK(rtl_ur_frame(&n, m, c->len - off) == 1);
		t = rtl_ur_msg_type(m, n);
		FUZZ_CHECK(t == RTL_UR_MSG_ROBOT_STATE || t == RTL_UR_MSG_ROBOT_MESSAGE);
		if (t == RTL_UR_MSG_ROBOT_MESSAGE) {
			int rt = rtl_ur_robot_msg_type(m, n);

			FUZZ_CHECK(rt >= 0);
			if (rt == RTL_UR_RMSG_VERSION) {
				struct rtl_ur_version_msg v;

				FUZZ_CHECK(rtl_ur_decode_version(&v, m, n) == 0);
			} else {
				struct rtl_ur_robot_msg r;

				FUZZ_CHECK(rtl_ur_decode_robot_msg(&r, m, n) == 0);
			}
		}
		off += n;
	}
	c->off = c->len = 0;
}

/* The command lines the client sent, as the dashboard reads them: a line
 * ends at a newline, across reads; trailing blanks and CRs are cut; what
 * is left empty is no command. */
struct line_count {
	size_t len, kept; /* bytes of the current line, up to its last non-blank */
	size_t commands;
};

static void count_commands(struct line_count *lc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			/* A line past the dashboard's 1024 bytes is answered
			 * "too long", blanks or not. */
			lc->commands += lc->kept > 0 || lc->len > 1024;
			lc->len = lc->kept = 0;
			continue;
		}
		lc->len++;
		if (p[i] != '\r' && p[i] != ' ')
			lc->kept = lc->len;
	}
}

static void check_controller(const struct sim *sim, bool script_port)
{
	const struct sim_ctrl *c = &sim->ctrl;
	const struct sim_ctrl_stats *s = &c->stats;

	FUZZ_CHECK(c->program_state == RTL_UR_PROGRAM_STOPPED ||
		   c->program_state == RTL_UR_PROGRAM_PLAYING ||
		   c->program_state == RTL_UR_PROGRAM_PAUSED);
	FUZZ_CHECK(c->safety_mode == RTL_UR_SAFETY_NORMAL ||
		   c->safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP);
	if (sim_ctrl_executing(c))
		FUZZ_CHECK(c->robot_mode == RTL_UR_ROBOT_MODE_RUNNING &&
			   c->safety_mode == RTL_UR_SAFETY_NORMAL);
	if (script_port) {
		uint64_t modelled = 0;

		/* every program is rtloop's, another library's (a model's) or other */
		for (int i = 0; i < SIM_PROGS; i++)
			modelled += s->model[i].recognised;
		FUZZ_CHECK(s->programs ==
			   s->rtloop_started + s->rtloop_refused + s->others + modelled);
	} else
		FUZZ_CHECK(s->programs == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sim sim; /* large: not on the stack */
	struct sim_opts o;
	struct sim_conn c = { 0 };
	const struct sim_port_ops *ops;
	struct fuzz_chunker ch;
	enum sim_port_kind kind;
	struct line_count lc = { 0 };
	size_t n, replies = 0;
	uint8_t *piece;
	int64_t now = 0;

	if (size < 2)
		return 0;
	kind = (data[0] & 64) ? SIM_PORT_ROBOT_API : (enum sim_port_kind)(data[0] & 3);
	sim_opts_default(&o);
	o.ctrl.boot = data[0] & 4;
	o.ctrl.local = data[0] & 8;
	o.ctrl.power_on_s = 0.1;
	o.ctrl.brake_release_s = 0.1;
	o.ctrl.unlock_delay_s = 0.2;
	o.ctrl.protective_stop_after_s = (data[0] & 32) ? 0.3 : 0;
	if (kind == SIM_PORT_ROBOT_API)
		o.profile = SIM_PROFILE_POLYSCOPE_X;
	else if (data[0] & 16)
		o.profile = SIM_PROFILE_CB3;
	FUZZ_CHECK(sim_init(&sim, &o, 0) == 0);
	ops = sim_port_ops(kind);
	FUZZ_CHECK(ops);
	c.kind = kind;
	if (ops->open)
		FUZZ_CHECK(ops->open(&sim, &c, now) == 0);
	if (kind == SIM_PORT_DASHBOARD)
		FUZZ_CHECK(take_lines(&c) == 1); /* the greeting */
	fuzz_chunker_init(&ch, data[1], data + 2, size - 2);
	while ((piece = fuzz_chunk_next(&ch, &n)) != NULL) {
		if (!c.close) {
			if (kind == SIM_PORT_DASHBOARD)
				count_commands(&lc, piece, n);
			if (ops->feed)
				ops->feed(&sim, &c, piece, n, now);
		}
		free(piece);
		now += STEP_NS;
		sim_ctrl_tick(&sim, now);
		if (ops->tick && !c.close)
			ops->tick(&sim, &c, now);
		if (kind == SIM_PORT_DASHBOARD)
			replies += take_lines(&c);
		else if (kind == SIM_PORT_ROBOT_API)
			take_http(&c);
		else
			take_messages(&c);
		check_controller(&sim, kind != SIM_PORT_DASHBOARD && kind != SIM_PORT_ROBOT_API);
	}
	/* One reply per command ("quit" closes: then nothing is counted). */
	if (kind == SIM_PORT_DASHBOARD && !c.close)
		FUZZ_CHECK(replies == lc.commands);
	if (ops->close)
		ops->close(&sim, &c);
	free(c.out);
	sim_destroy(&sim);
	return 0;
}
