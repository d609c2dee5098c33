// SPDX-License-Identifier: MIT
/*
 * The Robot API of rtde-sim's polyscope-x profile: PolyScope X's REST
 * interface (HTTP/1.1, under /universal-robots/robot-api; docs/ur-dashboard.md)
 * over the simulated controller (controller.h). The server serves it for
 * that profile only, as it serves the dashboard for the others (server.c).
 *
 * A minimal HTTP/1.1 server per connection: bytes are collected into a
 * bounded buffer; a request is its request line, its headers up to the
 * blank line (HEAD_MAX bytes at most, else 413) and a Content-Length body
 * (BODY_MAX at most, else 413; chunked bodies are refused with 400). A
 * request line that is not "METHOD TARGET HTTP/1.x" is 400; an unknown
 * path 404; a known path with the wrong method 405 with an Allow header.
 * Connections stay open (keep-alive) unless the client asks "Connection:
 * close", speaks HTTP/1.0, or sent something unreadable (then the reply
 * closes it, since the stream is out of step).
 *
 * State changes go to the controller's state machine, as the dashboard's
 * commands do; its refusal becomes an error status with a JSON
 * {"message": ...}: 403 in local control (what rtloop's client turns into
 * "switch to remote control"), 404 for a program that does not exist, 409
 * for the other refusals (powered off, protective stop, too early). The
 * bodies are the small JSON objects of the real API's replies ({"mode":
 * "IDLE"}), in UR's names (rtl_ur_robot_mode_name()).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rtloop/ur_robot_api.h>

#include "controller.h"
#include "ports.h"
#include "sim.h"

#define HEAD_MAX 8192
#define BODY_MAX 4096

struct http {
	size_t have;
	char buf[HEAD_MAX + BODY_MAX + 1];
};

struct req {
	char method[16];
	char path[256]; /* after the base, without a query */
	bool close;
	const char *body;
	size_t body_len;
};

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 413:
		return "Content Too Large";
	default:
		return "Error";
	}
}

/* One reply: status, JSON @body, and an Allow header when @allow. */
static void respond(struct sim_conn *c, int status, const char *body, const char *allow, bool close)
{
	sim_conn_printf(c,
			"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			"Content-Length: %zu\r\n%s%s%sConnection: %s\r\n\r\n",
			status, reason(status), strlen(body), allow ? "Allow: " : "",
			allow ? allow : "", allow ? "\r\n" : "", close ? "close" : "keep-alive");
	sim_conn_write(c, body, strlen(body));
	if (close)
		c->close = true;
}

static void respond_msg(struct sim_conn *c, int status, const char *msg, bool close)
{
	char body[400];

	snprintf(body, sizeof(body), "{\"message\": \"%s\"}", msg);
	respond(c, status, body, NULL, close);
}

/* The status and message of a refused operation. */
static void refused(struct sim_conn *c, enum sim_ctrl_result r, bool close)
{
	int status = r == SIM_CTRL_NOT_REMOTE ? 403 : r == SIM_CTRL_NOT_FOUND ? 404 : 409;

	respond_msg(c, status, sim_ctrl_result_text(r), close);
}

static void result(struct sim_conn *c, enum sim_ctrl_result r, bool close)
{
	if (r == SIM_CTRL_OK)
		respond(c, 200, "{}", NULL, close);
	else
		refused(c, r, close);
}

/* The "action" (or another member) of a PUT body; false when unreadable. */
static bool member(const struct req *q, const char *key, char *out, size_t cap)
{
	return rtl_ur_robot_api_json_string(out, cap, q->body, q->body_len, key) > 0;
}

/* Nothing to unlock does no harm, as on the dashboard. */
static enum sim_ctrl_result unlock(struct sim *sim, int64_t now)
{
	enum sim_ctrl_result r = sim_ctrl_unlock(sim, now);

	return r == SIM_CTRL_NOT_STOPPED ? SIM_CTRL_OK : r;
}

/* An "action" of a PUT: the controller's call, and whether it would move
 * the arm or start a program, which local control refuses before anything
 * else, as the dashboard of an e-Series does. */
struct action {
	const char *name;
	enum sim_ctrl_result (*call)(struct sim *sim, int64_t now);
	bool moves;
};

static const struct action robot_actions[] = {
	{ "POWER_ON", sim_ctrl_power_on, true },
	{ "POWER_OFF", sim_ctrl_power_off, false },
	{ "BRAKE_RELEASE", sim_ctrl_brake_release, true },
	{ "UNLOCK_PROTECTIVE_STOP", unlock, false },
	{ "RESTART_SAFETY", unlock, false },
	{ NULL, NULL, false },
};

static const struct action program_actions[] = {
	{ "play", sim_ctrl_play, true },
	{ "resume", sim_ctrl_play, true },
	{ "pause", sim_ctrl_pause, false },
	{ "stop", sim_ctrl_stop, false },
	{ NULL, NULL, false },
};

/* Do the action of @q's body, one of @acts; @expected is the 400 of a body
 * without one. */
static void act(struct sim *sim, struct sim_conn *c, const struct req *q, int64_t now,
		const struct action *acts, const char *expected)
{
	const struct action *a = acts;
	char action[32];

	if (!member(q, "action", action, sizeof(action))) {
		respond_msg(c, 400, expected, q->close);
		return;
	}
	while (a->name && strcmp(action, a->name))
		a++;
	if (!a->name)
		respond_msg(c, 400, "unknown action", q->close);
	else if (a->moves && !sim->ctrl.remote)
		refused(c, SIM_CTRL_NOT_REMOTE, q->close);
	else
		result(c, a->call(sim, now), q->close);
}

static void load(struct sim *sim, struct sim_conn *c, const struct req *q)
{
	char name[SIM_CTRL_NAME];

	if (!member(q, "name", name, sizeof(name))) {
		respond_msg(c, 400, "expected {\"name\": \"<program>\"}", q->close);
		return;
	}
	if (!sim->ctrl.remote) {
		refused(c, SIM_CTRL_NOT_REMOTE, q->close);
		return;
	}
	result(c, sim_ctrl_load(sim, name), q->close);
}

/* The routes: a path, the methods it has, and who answers. */
static void route(struct sim *sim, struct sim_conn *c, const struct req *q, int64_t now)
{
	static const struct {
		const char *path, *allow;
	} paths[] = {
		{ "/openapi.json", "GET" },
		{ "/robotstate/v1/robotmode", "GET" },
		{ "/robotstate/v1/safetymode", "GET" },
		{ "/robotstate/v1/state", "PUT" },
		{ "/program/v1/state", "GET, PUT" },
		{ "/program/v1/loaded", "GET, PUT" },
		{ "/system/v1/controlmode", "GET" },
		{ "/versions/v1", "GET" },
		{ "/popup/v1", "DELETE" },
		{ "/popup/v1/safety", "DELETE" },
	};
	struct sim_ctrl *ctl = &sim->ctrl;
	bool get = !strcmp(q->method, "GET"), put = !strcmp(q->method, "PUT");
	const char *p = q->path;
	char body[256];
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!strcmp(p, paths[i].path))
			break;
	if (i == sizeof(paths) / sizeof(paths[0])) {
		respond_msg(c, 404, "no such endpoint", q->close);
		return;
	}
	if (!strstr(paths[i].allow, q->method)) {
		respond(c, 405, "{\"message\": \"method not allowed\"}", paths[i].allow, q->close);
		return;
	}
	if (get && !strcmp(p, "/openapi.json")) {
		respond(c, 200,
			"{\"openapi\": \"3.0.1\", \"info\": {\"title\": \"Robot API\", "
			"\"version\": \"3.1.4\"}, \"paths\": {}}",
			NULL, q->close);
	} else if (get && !strcmp(p, "/robotstate/v1/robotmode")) {
		snprintf(body, sizeof(body), "{\"mode\": \"%s\"}",
			 rtl_ur_robot_mode_name(ctl->robot_mode));
		respond(c, 200, body, NULL, q->close);
	} else if (get && !strcmp(p, "/robotstate/v1/safetymode")) {
		snprintf(body, sizeof(body), "{\"mode\": \"%s\"}",
			 rtl_ur_safety_status_name(ctl->safety_mode));
		respond(c, 200, body, NULL, q->close);
	} else if (put && !strcmp(p, "/robotstate/v1/state")) {
		act(sim, c, q, now, robot_actions,
		    "expected {\"action\": \"POWER_ON\"} or another action");
	} else if (get && !strcmp(p, "/program/v1/state")) {
		const char *name = ctl->loaded[0] ? ctl->loaded : ctl->program_name;

		snprintf(body, sizeof(body), "{\"state\": \"%s\", \"name\": \"%s\"}",
			 rtl_ur_program_state_name(ctl->program_state), name);
		respond(c, 200, body, NULL, q->close);
	} else if (put && !strcmp(p, "/program/v1/state")) {
		act(sim, c, q, now, program_actions,
		    "expected {\"action\": \"play\"}, pause, resume or stop");
	} else if (get && !strcmp(p, "/program/v1/loaded")) {
		snprintf(body, sizeof(body), "{\"name\": \"%s\"}", ctl->loaded);
		respond(c, 200, body, NULL, q->close);
	} else if (put && !strcmp(p, "/program/v1/loaded")) {
		load(sim, c, q);
	} else if (get && !strcmp(p, "/system/v1/controlmode")) {
		respond(c, 200, ctl->remote ? "{\"mode\": \"REMOTE\"}" : "{\"mode\": \"LOCAL\"}",
			NULL, q->close);
	} else if (get && !strcmp(p, "/versions/v1")) {
		struct rtl_rtde_controller_version v = *sim_version(sim);

		snprintf(body, sizeof(body),
			 "{\"marketingVersion\": \"%u.%u.%u\", \"baselineVersion\": "
			 "\"%u.%u.%u.%u\"}",
			 v.major, v.minor, v.bugfix, v.major, v.minor, v.bugfix, v.build);
		respond(c, 200, body, NULL, q->close);
	} else {
		/* The popups: the simulator shows none, so closing one is done. */
		respond(c, 200, "{}", NULL, q->close);
	}
}

/* Parse the request head @head (NUL-terminated, changed in place) into @q;
 * the HTTP status of what is wrong with it, or 0. *@clen: Content-Length. */
static int parse_head(char *head, struct req *q, size_t *clen)
{
	char target[512], version[16];
	char *line, *next, *query;
	const size_t base_len = strlen(RTL_UR_ROBOT_API_BASE);

	*clen = 0;
	next = strstr(head, "\r\n");
	if (next)
		*next = '\0';
	if (sscanf(head, "%15[A-Z] %511s %15s", q->method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7))
		return 400;
	if (!strcmp(version, "HTTP/1.0"))
		q->close = true;
	for (line = next ? next + 2 : NULL; line && *line; line = next) {
		next = strstr(line, "\r\n");
		if (next) {
			*next = '\0';
			next += 2;
		}
		if (!strncasecmp(line, "Content-Length:", 15)) {
			char *end;
			unsigned long n = strtoul(line + 15, &end, 10);

			while (*end == ' ' || *end == '\t')
				end++;
			if (*end || !isdigit((unsigned char)line[15 + strspn(line + 15, " \t")]))
				return 400;
			if (n > BODY_MAX)
				return 413;
			*clen = n;
		} else if (!strncasecmp(line, "Transfer-Encoding:", 18)) {
			return 400; /* no chunked bodies: the API's requests are tiny */
		} else if (!strncasecmp(line, "Connection:", 11) &&
			   strcasestr(line + 11, "close")) {
			q->close = true;
		}
	}
	query = strchr(target, '?');
	if (query)
		*query = '\0';
	if (strncmp(target, RTL_UR_ROBOT_API_BASE, base_len) ||
	    strlen(target + base_len) >= sizeof(q->path)) {
		q->path[0] = '\0';
		return 404;
	}
	snprintf(q->path, sizeof(q->path), "%s", target + base_len);
	return 0;
}

static int api_open(struct sim *sim, struct sim_conn *c, int64_t now)
{
	(void)sim;
	(void)now;
	c->state = calloc(1, sizeof(struct http));
	return c->state ? 0 : -ENOMEM;
}

static void api_feed(struct sim *sim, struct sim_conn *c, const uint8_t *p, size_t n, int64_t now)
{
	struct http *h = c->state;
	char head[HEAD_MAX + 1];

	while (n > 0 && !c->close) {
		size_t take = sizeof(h->buf) - 1 - h->have;
		char *end;

		if (take > n)
			take = n;
		memcpy(h->buf + h->have, p, take);
		h->have += take;
		h->buf[h->have] = '\0';
		p += take;
		n -= take;
		/* Every whole request in the buffer (pipelining). */
		while (!c->close && (end = memmem(h->buf, h->have, "\r\n\r\n", 4))) {
			struct req q = { 0 };
			size_t head_len = (size_t)(end - h->buf) + 4, clen;
			int status;

			if (head_len > HEAD_MAX) {
				respond_msg(c, 413, "request head too large", true);
				return;
			}
			/* Parsed from a copy: a request whose body has not all
			 * arrived is parsed again when it has. */
			memcpy(head, h->buf, head_len - 4);
			head[head_len - 4] = '\0';
			status = parse_head(head, &q, &clen);
			if (status == 400 || status == 413) {
				respond_msg(c, status,
					    status == 400 ? "bad request"
							  : "request body too large",
					    true);
				return;
			}
			if (h->have < head_len + clen)
				break;
			q.body = h->buf + head_len;
			q.body_len = clen;
			if (status == 404)
				respond_msg(c, 404, "no such endpoint", q.close);
			else
				route(sim, c, &q, now);
			memmove(h->buf, h->buf + head_len + clen, h->have - head_len - clen);
			h->have -= head_len + clen;
			h->buf[h->have] = '\0';
		}
		/* A head that has not ended within HEAD_MAX never will fit. */
		if (!c->close &&
		    (h->have == sizeof(h->buf) - 1 ||
		     (h->have > HEAD_MAX && !memmem(h->buf, h->have, "\r\n\r\n", 4)))) {
			respond_msg(c, 413, "request too large", true);
			return;
		}
	}
}

const struct sim_port_ops sim_robot_api_ops = {
	.name = "robot-api",
	.open = api_open,
	.feed = api_feed,
	.close = sim_conn_free_state,
};
