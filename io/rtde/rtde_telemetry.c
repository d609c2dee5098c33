// SPDX-License-Identifier: MIT
/*
 * The RTDE transport in a loop's telemetry (<rtloop/telemetry.h>,
 * rtl_rtde_transport_telemetry()): its counters and the client's, and
 * output and input fields as signals, set from each step's frame and
 * command by a capture.
 *
 * The fields are checked against the registry when they are added (an
 * input named as an output, a typo: refused with the name). Their handles
 * are looked up by the capture on the first step, once (string compares,
 * a few microseconds, once per run: the recipes exist only once the
 * transport has connected, and a reconnect keeps them). A field the
 * recipe lacks keeps NaN.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_fields.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/telemetry.h>

/* Fields one call may capture, outputs and inputs together. */
#define MAX_FIELDS 32

struct field {
	char name[RTL_RTDE_FIELD_NAME_MAX + 1];
	int sig;
	bool input;
	struct rtl_rtde_handle h;
};

struct capture {
	struct rtl_rtde_transport *tr;
	struct field f[MAX_FIELDS];
	unsigned n;
	bool resolved;
};

static int transport_stats(const void *tr, void *snap)
{
	return rtl_rtde_transport_stats(tr, snap);
}

static int client_stats(const void *tr, void *snap)
{
	return rtl_rtde_client_stats(rtl_rtde_transport_client((struct rtl_rtde_transport *)tr),
				     snap);
}

/* A value as doubles: each element of a vector, an integer exactly up to
 * 2^53. Returns the count. */
static unsigned as_doubles(const union rtl_rtde_value *v, enum rtl_rtde_type type, double out[6])
{
	switch (type) {
	case RTL_RTDE_TYPE_BOOL:
		out[0] = v->b;
		return 1;
	case RTL_RTDE_TYPE_UINT8:
		out[0] = v->u8;
		return 1;
	case RTL_RTDE_TYPE_UINT32:
		out[0] = v->u32;
		return 1;
	case RTL_RTDE_TYPE_UINT64:
		out[0] = (double)v->u64;
		return 1;
	case RTL_RTDE_TYPE_INT32:
		out[0] = v->i32;
		return 1;
	case RTL_RTDE_TYPE_DOUBLE:
		out[0] = v->d;
		return 1;
	case RTL_RTDE_TYPE_VECTOR3D:
		memcpy(out, v->v3d, 3 * sizeof(double));
		return 3;
	case RTL_RTDE_TYPE_VECTOR6D:
		memcpy(out, v->v6d, 6 * sizeof(double));
		return 6;
	case RTL_RTDE_TYPE_VECTOR6INT32:
		for (int i = 0; i < 6; i++)
			out[i] = v->v6i32[i];
		return 6;
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		for (int i = 0; i < 6; i++)
			out[i] = v->v6u32[i];
		return 6;
	default:
		return 0;
	}
}

static void capture(void *user, struct rtl_telemetry *t, struct rtl_loop *loop,
		    const struct rtl_loop_frame *f)
{
	struct capture *c = user;
	struct rtl_rtde_frame state = rtl_rtde_loop_state(f);
	struct rtl_rtde_frame *cmd = rtl_rtde_loop_commands(loop, 0);

	if (!c->resolved) {
		for (unsigned i = 0; i < c->n; i++)
			c->f[i].h =
				c->f[i].input
					? rtl_rtde_transport_input_handle(c->tr, 0, c->f[i].name)
					: rtl_rtde_transport_output_handle(c->tr, c->f[i].name);
		c->resolved = true;
	}
	for (unsigned i = 0; i < c->n; i++) {
		union rtl_rtde_value v;
		double d[6];
		const struct rtl_rtde_frame *from = c->f[i].input ? cmd : &state;

		if (from && rtl_rtde_frame_get(from, c->f[i].h, &v))
			rtl_telemetry_set_vec(
				t, c->f[i].sig, d,
				as_doubles(&v, (enum rtl_rtde_type)c->f[i].h.type, d));
	}
}

/* The fields of the comma-separated @names as signals of @c; outputs, or
 * inputs of recipe 0 (@input). */
static int add_fields(struct capture *c, struct rtl_telemetry *t, const char *names, bool input,
		      struct rtl_error *err)
{
	struct rtl_rtde_list it;
	const char *item;
	size_t len;

	rtl_rtde_list_init(&it, names, strlen(names));
	while (rtl_rtde_list_next(&it, &item, &len)) {
		const struct rtl_rtde_field *fd = rtl_rtde_field_find_n(item, len);
		unsigned need = input ? RTL_RTDE_FIELD_INPUT : RTL_RTDE_FIELD_OUTPUT;
		char sig[RTL_TELEMETRY_SIGNAL_NAME];
		int ret;

		if (!fd || !(fd->flags & need))
			return rtl_error_set(err, -EINVAL,
					     "RTDE telemetry: '%.*s' is not an RTDE %s field (the "
					     "field registry, docs/rtde-protocol.md)",
					     (int)len, item, input ? "input" : "output");
		if (c->n == MAX_FIELDS)
			return rtl_error_set(err, -ENOSPC, "RTDE telemetry: at most %d fields",
					     MAX_FIELDS);
		snprintf(sig, sizeof(sig), "%s", fd->name);
		ret = rtl_telemetry_signal(t, sig, rtl_rtde_type_elems(fd->type), NULL, err);
		if (ret < 0)
			return ret;
		snprintf(c->f[c->n].name, sizeof(c->f[c->n].name), "%s", fd->name);
		c->f[c->n].sig = ret;
		c->f[c->n].input = input;
		c->n++;
	}
	return 0;
}

RTL_API int rtl_rtde_transport_telemetry(struct rtl_rtde_transport *tr, struct rtl_telemetry *t,
					 const char *outputs, const char *inputs,
					 struct rtl_error *err)
{
	struct capture *c;
	size_t n;
	const struct rtl_stat_field *f;
	int ret;

	if (!tr || !t)
		return rtl_error_set(err, -EINVAL, "RTDE telemetry: NULL transport or telemetry");
	f = rtl_rtde_transport_counter_fields(&n);
	ret = rtl_telemetry_counters(t, "transport", f, n, transport_stats, tr,
				     sizeof(struct rtl_rtde_transport_counters), err);
	if (ret < 0)
		return ret;
	f = rtl_rtde_client_counter_fields(&n);
	ret = rtl_telemetry_counters(t, "client", f, n, client_stats, tr,
				     sizeof(struct rtl_rtde_client_counters), err);
	if (ret < 0 || ((!outputs || !outputs[0]) && (!inputs || !inputs[0])))
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return rtl_error_set(err, -ENOMEM, "RTDE telemetry: out of memory");
	c->tr = tr;
	ret = add_fields(c, t, outputs ? outputs : "", false, err);
	if (ret == 0)
		ret = add_fields(c, t, inputs ? inputs : "", true, err);
	if (ret == 0)
		ret = rtl_telemetry_capture(t, capture, c, free);
	if (ret < 0)
		free(c);
	return ret;
}
