// SPDX-License-Identifier: MIT
/*
 * The External Control URCap's program node (extctl.h): what a .urp that
 * holds it does when the dashboard plays it. On a real robot the node
 * connects to the PC's script sender (the UR Client Library's, port 50002
 * by default), sends "request_program\n", and runs the script that comes
 * back; the sender keeps the connection open, so the answer ends when it
 * stops coming: here when the sender closes or is quiet for
 * QUIET_NS after its first byte.
 *
 * The fetch is owned by its connection: allocated when the program plays,
 * freed in the connection's close(). While it runs, the controller shows
 * the .urp's program playing with no model yet; a stop (or another
 * program) meanwhile makes the answer void.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "extctl.h"
#include "ports.h"
#include "sim.h"

#define QUIET_NS (100 * INT64_C(1000000))
#define ANSWER_TIMEOUT_NS (5 * INT64_C(1000000000))
#define PROGRAM_MAX (256u * 1024u)
#define REQUEST "request_program\n"

struct urcap {
	char urp[SIM_CTRL_NAME];  /* the .urp that plays */
	char name[SIM_CTRL_NAME]; /* the program name the controller shows */
	char where[64];		  /* host:port, for messages */
	int64_t started, last;	  /* the request; the last byte of the answer */
	bool done;		  /* handed to the controller, or void */
	size_t len;
	char text[PROGRAM_MAX];
};

/* Does the controller still wait for this answer? */
static bool wanted(const struct sim *sim, const struct urcap *u)
{
	const struct sim_ctrl *c = &sim->ctrl;

	return !u->done && c->program_state == RTL_UR_PROGRAM_PLAYING && c->model < 0 &&
	       !c->executor && !strcmp(c->program_name, u->name);
}

static void fail(struct sim *sim, struct urcap *u, const char *why)
{
	char text[SIM_CTRL_TEXT];

	if (!wanted(sim, u))
		return;
	u->done = true;
	snprintf(text, sizeof(text), "External Control: %s (script sender at %s)", why, u->where);
	sim_ctrl_program_fail(sim, 0, text);
}

static void run(struct sim *sim, struct urcap *u, int64_t now)
{
	if (!wanted(sim, u))
		return;
	u->done = true;
	if (sim_ctrl_program(sim, SIM_PORT_COUNT, u->text, u->len, now) == SIM_CTRL_OK)
		/* a .urp stays loaded after it played: play runs it again */
		snprintf(sim->ctrl.loaded, sizeof(sim->ctrl.loaded), "%s", u->urp);
}

static int urcap_open(struct sim *sim, struct sim_conn *c, int64_t now)
{
	(void)sim;
	(void)now;
	return sim_conn_write(c, REQUEST, strlen(REQUEST));
}

static void urcap_feed(struct sim *sim, struct sim_conn *c, const uint8_t *p, size_t n, int64_t now)
{
	struct urcap *u = c->state;

	if (u->done)
		return;
	if (n > PROGRAM_MAX - u->len) {
		fail(sim, u, "the program is larger than rtde-sim takes");
		c->close = true;
		return;
	}
	memcpy(u->text + u->len, p, n);
	u->len += n;
	u->last = now;
}

static void urcap_tick(struct sim *sim, struct sim_conn *c, int64_t now)
{
	struct urcap *u = c->state;

	if (u->done || !wanted(sim, u)) {
		u->done = true;
		c->close = true;
		return;
	}
	if (u->len && now - u->last >= QUIET_NS) {
		run(sim, u, now);
		c->close = true;
	} else if (!u->len && now - u->started >= ANSWER_TIMEOUT_NS) {
		fail(sim, u, "no program came back to request_program within 5 s");
		c->close = true;
	}
}

static void urcap_close(struct sim *sim, struct sim_conn *c)
{
	struct urcap *u = c->state;
	char why[SIM_CTRL_TEXT];

	if (u->len)
		run(sim, u, u->last);
	else if (!c->opened_ns || c->error) {
		snprintf(why, sizeof(why), "could not get the program: %s",
			 c->error ? strerror(-c->error) : "the connection closed");
		fail(sim, u, why);
	} else {
		fail(sim, u, "the script sender closed the connection without a program");
	}
	free(u);
	c->state = NULL;
}

static const struct sim_port_ops urcap_ops = {
	.name = "urcap",
	.open = urcap_open,
	.feed = urcap_feed,
	.tick = urcap_tick,
	.close = urcap_close,
};

int sim_ext_urcap_play(struct sim *sim, const char *urp, const char *host, uint16_t port,
		       int64_t now)
{
	struct urcap *u = malloc(sizeof(*u));
	int h;

	if (!u)
		return -ENOMEM;
	memset(u, 0, offsetof(struct urcap, text));
	snprintf(u->urp, sizeof(u->urp), "%s", urp);
	snprintf(u->name, sizeof(u->name), "%s", sim->ctrl.program_name);
	snprintf(u->where, sizeof(u->where), "%s:%u", host ? host : "?", port);
	u->started = now;
	h = sim_conn_connect(sim, host, port, &urcap_ops, u);
	if (h < 0)
		free(u);
	return h < 0 ? h : 0;
}
