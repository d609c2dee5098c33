// SPDX-License-Identifier: MIT
/*
 * The service table, the output queue of a service connection and the
 * queue of outgoing connection requests (see ports.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ports.h"
#include "sim.h"

static const struct {
	const char *name;
	uint16_t port;
	const struct sim_port_ops *ops;
} ports[SIM_PORT_COUNT] = {
	[SIM_PORT_DASHBOARD] = { "dashboard", SIM_DASHBOARD_PORT, &sim_dashboard_ops },
	[SIM_PORT_PRIMARY] = { "primary", SIM_PRIMARY_PORT, &sim_script_ops },
	[SIM_PORT_SECONDARY] = { "secondary", SIM_SECONDARY_PORT, &sim_script_ops },
	[SIM_PORT_REALTIME] = { "realtime", SIM_REALTIME_PORT, &sim_script_ops },
	[SIM_PORT_ROBOT_API] = { "robot-api", SIM_ROBOT_API_PORT, &sim_robot_api_ops },
};

const struct sim_port_ops *sim_port_ops(enum sim_port_kind k)
{
	return (unsigned)k < SIM_PORT_COUNT ? ports[k].ops : NULL;
}

const char *sim_port_name(enum sim_port_kind k)
{
	return (unsigned)k < SIM_PORT_COUNT ? ports[k].name : "?";
}

uint16_t sim_port_default(enum sim_port_kind k)
{
	return (unsigned)k < SIM_PORT_COUNT ? ports[k].port : 0;
}

int sim_conn_write(struct sim_conn *c, const void *p, size_t n)
{
	size_t waiting = c->len - c->off;

	if (waiting + n > SIM_CONN_OUT_MAX) {
		c->close = true;
		return -ENOBUFS;
	}
	if (c->off && c->len + n > c->cap) {
		/* Move what waits to the front before growing. */
		memmove(c->out, c->out + c->off, waiting);
		c->off = 0;
		c->len = waiting;
	}
	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		uint8_t *q;

		while (cap < c->len + n)
			cap *= 2;
		q = realloc(c->out, cap);
		if (!q)
			return -ENOMEM;
		c->out = q;
		c->cap = cap;
	}
	memcpy(c->out + c->len, p, n);
	c->len += n;
	return 0;
}

int sim_conn_printf(struct sim_conn *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	return sim_conn_write(c, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void sim_conn_free_state(struct sim *sim, struct sim_conn *c)
{
	(void)sim;
	free(c->state);
	c->state = NULL;
}

int sim_conn_connect(struct sim *sim, const char *host, uint16_t port,
		     const struct sim_port_ops *ops, void *ctx)
{
	struct in_addr a;

	if (!host || !port || !ops || inet_pton(AF_INET, host, &a) != 1)
		return -EINVAL;
	for (int i = 0; i < SIM_MAX_DIALS; i++) {
		struct sim_dial *d = &sim->dials[i];

		if (d->state != SIM_DIAL_FREE)
			continue;
		*d = (struct sim_dial){
			.state = SIM_DIAL_QUEUED,
			.addr = a.s_addr,
			.port = port,
			.ops = ops,
			.ctx = ctx,
			.slot = -1,
		};
		return i;
	}
	return -EMFILE;
}

void sim_conn_drop(struct sim *sim, int handle)
{
	struct sim_dial *d;

	if (handle < 0 || handle >= SIM_MAX_DIALS)
		return;
	d = &sim->dials[handle];
	if (d->state == SIM_DIAL_QUEUED)
		d->state = SIM_DIAL_FREE; /* never made: nothing to close */
	else if (d->state == SIM_DIAL_ACTIVE)
		d->state = SIM_DIAL_DROP;
}
