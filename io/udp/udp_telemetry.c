// SPDX-License-Identifier: MIT
/*
 * rtloop's UDP stream in a loop's telemetry (<rtloop/telemetry.h>): the
 * transport's counters, and a capture that sets signals from the state
 * fields a program names and from the command the step wrote. The DRFL
 * transport hands the step the same frames, so its helper uses the same
 * capture (rtl_udp_telemetry()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/loop.h>
#include <rtloop/telemetry.h>
#include <rtloop/udp.h>
#include <rtloop/udp_transport.h>

struct capture {
	const struct rtl_udp_field *field[64];
	int sig[64];
	unsigned n;
	/* the command's signals, -1 when not asked for */
	int mode, target_time, pos, vel, acc;
};

static void capture(void *user, struct rtl_telemetry *t, struct rtl_loop *loop,
		    const struct rtl_loop_frame *f)
{
	struct capture *c = user;
	const struct rtl_udp_state *s = &rtl_udp_loop_frame(f)->rt;
	const struct rtl_udp_cmd *cmd = rtl_loop_commands(loop);
	double v[36];

	for (unsigned i = 0; i < c->n; i++)
		rtl_telemetry_set_vec(t, c->sig[i], v, rtl_udp_state_get(s, c->field[i], v, 36));
	if (c->mode < 0 || !cmd)
		return;
	rtl_telemetry_set(t, c->mode, 0, cmd->mode);
	rtl_telemetry_set(t, c->target_time, 0, cmd->target_time);
	rtl_telemetry_set_vec(t, c->pos, cmd->pos, 6);
	rtl_telemetry_set_vec(t, c->vel, cmd->vel, 6);
	rtl_telemetry_set_vec(t, c->acc, cmd->acc, 6);
}

static const struct rtl_udp_field *find(const char *name, size_t len)
{
	size_t n;
	const struct rtl_udp_field *f = rtl_udp_state_fields(&n);

	for (size_t i = 0; i < n; i++)
		if (strlen(f[i].name) == len && strncmp(f[i].name, name, len) == 0 &&
		    strcmp(f[i].name, "reserved") != 0)
			return &f[i];
	return NULL;
}

static int add_command(struct capture *c, struct rtl_telemetry *t, struct rtl_error *err)
{
	if ((c->mode = rtl_telemetry_signal(t, "cmd_mode", 1, NULL, err)) < 0)
		return c->mode;
	if ((c->target_time = rtl_telemetry_signal(t, "cmd_target_time", 1, "s", err)) < 0)
		return c->target_time;
	if ((c->pos = rtl_telemetry_signal(t, "cmd_pos", 6, "mm, deg", err)) < 0)
		return c->pos;
	if ((c->vel = rtl_telemetry_signal(t, "cmd_vel", 6, "mm/s, deg/s", err)) < 0)
		return c->vel;
	if ((c->acc = rtl_telemetry_signal(t, "cmd_acc", 6, "mm/s^2, deg/s^2", err)) < 0)
		return c->acc;
	return 0;
}

RTL_API int rtl_udp_telemetry(struct rtl_telemetry *t, const char *fields, bool command,
			      struct rtl_error *err)
{
	struct capture *c;
	const char *p = fields ? fields : "";
	int ret = 0;

	if (!t)
		return rtl_error_set(err, -EINVAL, "UDP telemetry: NULL telemetry");
	if (!p[0] && !command)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return rtl_error_set(err, -ENOMEM, "UDP telemetry: out of memory");
	c->mode = -1;
	while (ret == 0 && *p) {
		size_t len = strcspn(p, ",");
		const struct rtl_udp_field *f = find(p, len);

		if (!f)
			ret = rtl_error_set(
				err, -EINVAL,
				"UDP telemetry: '%.*s' is not a field of the state (the "
				"v1.0 layout, docs/udp.md)",
				(int)len, p);
		else if (c->n == sizeof(c->field) / sizeof(c->field[0]))
			ret = rtl_error_set(err, -ENOSPC, "UDP telemetry: at most 64 fields");
		else if ((ret = rtl_telemetry_signal(t, f->name, f->count, f->unit, err)) >= 0) {
			c->field[c->n] = f;
			c->sig[c->n++] = ret;
			ret = 0;
		}
		p += len + (p[len] == ',');
	}
	if (ret == 0 && command)
		ret = add_command(c, t, err);
	if (ret == 0)
		ret = rtl_telemetry_capture(t, capture, c, free);
	if (ret < 0)
		free(c);
	return ret;
}

static int transport_stats(const void *tr, void *snap)
{
	return rtl_udp_transport_stats(tr, snap);
}

RTL_API int rtl_udp_transport_telemetry(struct rtl_udp_transport *tr, struct rtl_telemetry *t,
					const char *fields, bool command, struct rtl_error *err)
{
	size_t n;
	const struct rtl_stat_field *f = rtl_udp_transport_counter_fields(&n);
	int ret;

	if (!tr || !t)
		return rtl_error_set(err, -EINVAL, "UDP telemetry: NULL transport or telemetry");
	ret = rtl_telemetry_counters(t, "transport", f, n, transport_stats, tr,
				     sizeof(struct rtl_udp_transport_counters), err);
	return ret < 0 ? ret : rtl_udp_telemetry(t, fields, command, err);
}
