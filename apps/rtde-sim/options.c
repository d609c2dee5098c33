// SPDX-License-Identifier: MIT
/*
 * rtde-sim's settings table and its setters (see options.h for the design).
 *
 * The ranges are the command line's: rtde-sim's --help and docs/rtde-sim.md
 * describe them. One switch maps each entry to its field, so the command
 * line and rtloop.Sim cannot disagree on what a setting does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/rtde_fields.h>
#include <rtloop/time.h>

#include "options.h"

/* Where an entry stores its value: a field of struct sim_setup, or OWN
 * for the few the setters handle themselves (options.h, .size). */
#define AT(field) \
	.off = offsetof(struct sim_setup, field), .size = sizeof(((struct sim_setup *)0)->field)
#define OWN .size = 0

/* One entry; U, D and F give it its kind, the word for its value, then
 * its range (U, D) and its field as the variable part. */
#define ENTRY(id_, name_, kind_, what_, fault_, udp_, effect_, ...) \
	[id_] = { .id = id_,                                        \
		  .name = name_,                                    \
		  .kind = kind_,                                    \
		  .fault = fault_,                                  \
		  .udp = udp_,                                      \
		  .what = what_,                                    \
		  .effect = effect_,                                \
		  __VA_ARGS__ }
#define U(id_, name_, fault_, udp_, min_, max_, at_, effect_)                             \
	ENTRY(id_, name_, SIM_OPT_UINT, "an integer", fault_, udp_, effect_, .min = min_, \
	      .max = max_, at_)
#define D(id_, name_, fault_, udp_, min_, max_, at_, effect_)                              \
	ENTRY(id_, name_, SIM_OPT_DOUBLE, "a number", fault_, udp_, effect_, .dmin = min_, \
	      .dmax = max_, at_)
#define F(id_, name_, fault_, udp_, at_, effect_) \
	ENTRY(id_, name_, SIM_OPT_FLAG, "a flag", fault_, udp_, effect_, at_)

// clang-format off
static const struct sim_option table[SIM_OPT_COUNT] = {
	U(SIM_OPT_MAX_CLIENTS, "max-clients", true, false, 1, SIM_MAX_SESSIONS, AT(sim.max_clients),
	  "clients served at once; more are told so and closed after 1 s"),
	D(SIM_OPT_HANDSHAKE_TIMEOUT, "handshake-timeout", true, false, 0.0, 3600.0, OWN,
	  "close a connection idle this many s before its first START (0: never)"),
	U(SIM_OPT_SEND_BUFFER, "send-buffer", true, false, 4096, 1u << 30, AT(sim.send_buffer),
	  "per-client send queue in bytes: a client that overflows it is disconnected"),
	U(SIM_OPT_SNDBUF, "sndbuf", true, false, 1, INT_MAX, AT(srv.sndbuf),
	  "SO_SNDBUF of client sockets in bytes"),
	[SIM_OPT_CONTROLLER_VERSION] = {
		.id = SIM_OPT_CONTROLLER_VERSION, .name = "controller-version",
		.kind = SIM_OPT_TEXT, .fault = true, .what = "a version X.Y.Z or X.Y.Z.B",
		.effect = "answer this version of the profile's line: newer fields are NOT_FOUND" },
	U(SIM_OPT_MAX_PROTOCOL, "max-protocol", true, false, 1, 2, AT(sim.max_protocol),
	  "highest RTDE protocol accepted (1: protocol v1 only)"),
	F(SIM_OPT_FIELDBUS, "fieldbus", true, false, AT(sim.fieldbus),
	  "registers 0-23 and the standard inputs are IN_USE (an EtherNet/IP adapter)"),
	D(SIM_OPT_START_TIME, "start-time", false, true, 0.0, 1e7, AT(sim.start_time_s),
	  "timestamp of the first cycle in s"),
	F(SIM_OPT_TEXT_V2, "text-v2", true, false, AT(sim.text_v2),
	  "text messages in the v2 layout even to v1 sessions"),
	U(SIM_OPT_JITTER_US, "jitter-us", true, false, 0, 1000000, AT(sim.faults.jitter_us),
	  "delay each cycle's send by 0..N us"),
	U(SIM_OPT_SKIP_EVERY, "skip-every", true, true, 2, 1000000, AT(sim.faults.skip_every),
	  "skip packages in every N cycles, never resent"),
	U(SIM_OPT_SKIP_COUNT, "skip-count", true, true, 1, 1000000, AT(sim.faults.skip_count),
	  "packages skipped per skip-every cycles (default 1)"),
	U(SIM_OPT_STALL_MS, "stall-ms", true, false, 1, 60000, AT(sim.faults.stall_ms),
	  "stall the sender this many ms every stall-every s"),
	D(SIM_OPT_STALL_EVERY, "stall-every", true, false, 0.001, 1e7, AT(sim.faults.stall_every_s),
	  "seconds between stalls"),
	U(SIM_OPT_BURST, "burst", true, false, 2, 10000, AT(sim.faults.burst),
	  "hold this many packages every burst-every s, then write them together"),
	D(SIM_OPT_BURST_EVERY, "burst-every", true, false, 0.001, 1e7, AT(sim.faults.burst_every_s),
	  "seconds between bursts (default 1)"),
	F(SIM_OPT_FRAGMENT, "fragment", true, false, AT(sim.faults.fragment),
	  "write the stream in random small pieces"),
	U(SIM_OPT_FRAGMENT_MAX, "fragment-max", true, false, 1, 65535, AT(sim.faults.fragment_max),
	  "largest piece in bytes (default 7)"),
	U(SIM_OPT_RESET_AFTER, "reset-after", true, false, 1, UINT64_MAX,
	  AT(sim.faults.reset_after),
	  "reset (RST) each connection after N data packages"),
	U(SIM_OPT_TEXT_EVERY, "text-every", true, false, 1, UINT32_MAX, AT(sim.faults.text_every),
	  "an INFO text message after every N-th data package"),
	U(SIM_OPT_SEED, "seed", true, true, 0, UINT64_MAX, OWN,
	  "seed of the fault generator and the robot's noise (default 1)"),
	U(SIM_OPT_ECHO_REGISTER, "echo-register", false, false, 0, RTL_RTDE_REG_COUNT - 1,
	  AT(sim.echo_register),
	  "clients echo timestamps in input_double_register_N"),
	D(SIM_OPT_DURATION, "duration", false, true, 0.001, 1e7, AT(srv.duration_s),
	  "stop after this many s"),
	D(SIM_OPT_CONTACT_Z, "contact-z", false, true, -2.0, 2.0, OWN,
	  "a horizontal contact plane at this height in m"),
	D(SIM_OPT_CONTACT_STIFFNESS, "contact-stiffness", false, true, 0.0, 1e7,
	  AT(sim.robot.contact.stiffness),
	  "of the contact plane, N/m (default 5000)"),
	D(SIM_OPT_CONTACT_DAMPING, "contact-damping", false, true, 0.0, 1e6,
	  AT(sim.robot.contact.damping),
	  "of the contact plane, N s/m (default 50)"),
	D(SIM_OPT_FORCE_NOISE, "force-noise", false, true, 0.0, 1e4, OWN,
	  "standard deviation of the force in N (torque: N/10)"),
	U(SIM_OPT_WATCHDOG_MS, "watchdog-ms", false, true, 0, 60000, OWN,
	  "heartbeat timeout in ms when the client asks for the default (0: off)"),
	F(SIM_OPT_BOOT, "boot", false, false, AT(sim.ctrl.boot),
	  "start as after boot: powered off, brakes on, no program running"),
	F(SIM_OPT_LOCAL_CONTROL, "local-control", true, false, AT(sim.ctrl.local),
	  "start in local control: the dashboard refuses power, brakes, load and play"),
	F(SIM_OPT_NO_DASHBOARD, "no-dashboard", true, false, OWN,
	  "serve no dashboard server (a controller without port 29999)"),
	D(SIM_OPT_POWER_ON_TIME, "power-on-time", false, false, 0.001, 60.0,
	  AT(sim.ctrl.power_on_s),
	  "seconds from power on to IDLE (default 0.5)"),
	D(SIM_OPT_BRAKE_RELEASE_TIME, "brake-release-time", false, false, 0.001, 60.0,
	  AT(sim.ctrl.brake_release_s),
	  "seconds from brake release to RUNNING (default 0.5)"),
	D(SIM_OPT_UNLOCK_DELAY, "unlock-delay", false, false, 0.0, 60.0,
	  AT(sim.ctrl.unlock_delay_s),
	  "a protective stop can be unlocked this many s after it (default 5, as UR's)"),
	D(SIM_OPT_PROTECTIVE_STOP_AFTER, "protective-stop-after", true, false, 0.001, 1e7,
	  AT(sim.ctrl.protective_stop_after_s),
	  "a protective stop this many s after the rtloop program started (once)"),
	[SIM_OPT_CONTROL_SCRIPT] = {
		.id = SIM_OPT_CONTROL_SCRIPT, .name = "control-script",
		.kind = SIM_OPT_TEXT, .what = "a file name",
		.effect = "the rtloop program uploads are compared with (default: this build's)" },
	D(SIM_OPT_PUSH_X, "push-x", true, false, -200.0, 200.0, AT(sim.robot.push[0]),
	  "in teach mode a hand pushes the tool with this force along base x, N"),
	D(SIM_OPT_PUSH_Y, "push-y", true, false, -200.0, 200.0, AT(sim.robot.push[1]),
	  "the hand's force along base y, N"),
	D(SIM_OPT_PUSH_Z, "push-z", true, false, -200.0, 200.0, AT(sim.robot.push[2]),
	  "the hand's force along base z, N"),
	D(SIM_OPT_PUSH_AFTER, "push-after", true, false, 0.0, 1e7, AT(sim.robot.push_after),
	  "the hand pushes from this many s after teach mode begins (default 0)"),
	D(SIM_OPT_PUSH_FOR, "push-for", true, false, 0.0, 1e7, AT(sim.robot.push_for),
	  "the hand pushes this many s (default 0: until teach mode ends)"),
	[SIM_OPT_EXTERNAL_CONTROL_URP] = {
		.id = SIM_OPT_EXTERNAL_CONTROL_URP, .name = "external-control-urp",
		.kind = SIM_OPT_TEXT, .what = "a .urp name",
		.effect = "the program holding the External Control URCap: load + play fetch its "
			  "script (default external_control.urp)" },
	[SIM_OPT_URCAP_HOST] = {
		.id = SIM_OPT_URCAP_HOST, .name = "urcap-host",
		.kind = SIM_OPT_TEXT, .what = "an IPv4 address",
		.effect = "where the URCap's script sender is (default 127.0.0.1)" },
	U(SIM_OPT_URCAP_PORT, "urcap-port", false, false, 1, 65535, AT(sim.ctrl.urcap_port),
	  "the URCap's script sender port (default 50002)"),
};
// clang-format on

void sim_setup_default(struct sim_setup *su)
{
	memset(su, 0, sizeof(*su));
	sim_opts_default(&su->sim);
	su->sim.robot.contact.stiffness = 5000.0;
	su->sim.robot.contact.damping = 50.0;
	su->srv.bind = "127.0.0.1";
	su->srv.port = RTL_RTDE_PORT;
	/* The service ports stay 0 (ephemeral) here: rtde-sim puts them on
	 * the controller's numbers when RTDE is on 30004 (main.c). */
	su->udp_port = RTL_UDP_DEFAULT_PORT;
}

const struct sim_option *sim_option_at(size_t i)
{
	return i < SIM_OPT_COUNT ? &table[i] : NULL;
}

const struct sim_option *sim_option_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < SIM_OPT_COUNT; i++) {
		const char *a = table[i].name, *b = name;

		while (*a && (*a == *b || (*a == '-' && *b == '_'))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return &table[i];
	}
	return NULL;
}

const char *sim_option_name(const struct sim_option *o, enum sim_option_style style, char *buf,
			    size_t cap)
{
	size_t len;

	if (!cap)
		return buf;
	snprintf(buf, cap, "%s%s", style == SIM_STYLE_FLAG ? "--" : "", o->name);
	len = strlen(buf);
	if (style == SIM_STYLE_KEY)
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '-')
				buf[i] = '_';
	return buf;
}

static int fail(char *why, size_t cap, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t cap, int code, const char *fmt, ...)
{
	va_list ap;

	if (why && cap) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int wrong_kind(const struct sim_option *o, enum sim_option_style style, char *why,
		      size_t cap)
{
	char n[48];

	return fail(why, cap, -EINVAL, "%s takes %s", sim_option_name(o, style, n, sizeof(n)),
		    o->what);
}

/* Entry @o's field of @su (o->size bytes), for the entries that are not OWN. */
static void *field(struct sim_setup *su, const struct sim_option *o)
{
	return (char *)su + o->off;
}

int sim_option_set_uint(struct sim_setup *su, const struct sim_option *o, uint64_t v,
			enum sim_option_style style, char *why, size_t cap)
{
	uint32_t v32 = (uint32_t)v;
	char n[48];

	if (o->kind != SIM_OPT_UINT)
		return wrong_kind(o, style, why, cap);
	if (v < o->min || v > o->max)
		return fail(why, cap, -ERANGE,
			    "%s %" PRIu64 " is out of range [%" PRIu64 ", %" PRIu64 "]",
			    sim_option_name(o, style, n, sizeof(n)), v, o->min, o->max);
	/* The fields are unsigned, uint32_t, size_t, uint64_t or an int
	 * that the range keeps within INT_MAX: 4 or 8 bytes. */
	if (o->size == sizeof(v32))
		memcpy(field(su, o), &v32, sizeof(v32));
	else if (o->size == sizeof(v))
		memcpy(field(su, o), &v, sizeof(v));
	else if (o->id == SIM_OPT_SEED) /* one seed for the faults and the noise */
		su->sim.faults.seed = su->sim.robot.seed = v;
	else if (o->id == SIM_OPT_WATCHDOG_MS)
		su->sim.robot.watchdog_ns = (int64_t)v * RTL_NS_PER_MS;
	else
		return wrong_kind(o, style, why, cap);
	return 0;
}

int sim_option_set_double(struct sim_setup *su, const struct sim_option *o, double d,
			  enum sim_option_style style, char *why, size_t cap)
{
	struct sim_robot_config *rc = &su->sim.robot;
	char n[48];

	if (o->kind != SIM_OPT_DOUBLE)
		return wrong_kind(o, style, why, cap);
	if (!isfinite(d))
		return fail(why, cap, -EINVAL, "%s must be a finite number",
			    sim_option_name(o, style, n, sizeof(n)));
	if (d < o->dmin || d > o->dmax)
		return fail(why, cap, -ERANGE, "%s %g is out of range [%g, %g]",
			    sim_option_name(o, style, n, sizeof(n)), d, o->dmin, o->dmax);
	if (o->size == sizeof(d)) {
		memcpy(field(su, o), &d, sizeof(d));
	} else if (o->id == SIM_OPT_HANDSHAKE_TIMEOUT) {
		su->sim.handshake_timeout_ns = d > 0 ? llround(d * 1e9) : -1;
	} else if (o->id == SIM_OPT_CONTACT_Z) {
		rc->contact.point[2] = d;
		rc->contact.enabled = true;
	} else if (o->id == SIM_OPT_FORCE_NOISE) {
		rc->force_noise = d;
		rc->torque_noise = d / 10.0;
	} else {
		return wrong_kind(o, style, why, cap);
	}
	return 0;
}

int sim_option_set_flag(struct sim_setup *su, const struct sim_option *o,
			enum sim_option_style style, char *why, size_t cap)
{
	const bool on = true;

	if (o->kind == SIM_OPT_FLAG && o->size == sizeof(on))
		memcpy(field(su, o), &on, sizeof(on));
	else if (o->kind == SIM_OPT_FLAG && o->id == SIM_OPT_NO_DASHBOARD)
		su->srv.service_port[SIM_PORT_DASHBOARD] = -1;
	else
		return wrong_kind(o, style, why, cap);
	return 0;
}

/* X.Y.Z or X.Y.Z.B, X in 1..255, Y 0..255, Z 0..65535. */
static int parse_version(const char *arg, struct rtl_rtde_controller_version *v)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	int used = 0, n = sscanf(arg, "%u.%u.%u%n.%u%n", &a, &b, &c, &used, &d, &used);

	if (n < 3 || arg[used] || a == 0 || a > 255 || b > 255 || c > 65535)
		return -EINVAL;
	v->major = a;
	v->minor = b;
	v->bugfix = c;
	v->build = n == 4 ? d : 0;
	return 0;
}

int sim_option_set_text(struct sim_setup *su, const struct sim_option *o, const char *text,
			enum sim_option_style style, char *why, size_t cap)
{
	char n[48];

	if (o->kind == SIM_OPT_TEXT && o->id == SIM_OPT_CONTROL_SCRIPT) {
		if (!text || !*text)
			return fail(why, cap, -EINVAL, "%s needs a file name",
				    sim_option_name(o, style, n, sizeof(n)));
		/* The caller keeps the text alive (argv, or rtloop.Sim's copy). */
		su->sim.ctrl.control_script = text;
		return 0;
	}
	if (o->kind == SIM_OPT_TEXT && o->id == SIM_OPT_EXTERNAL_CONTROL_URP) {
		size_t len = text ? strlen(text) : 0;

		if (len < 5 || len >= 64 || strcmp(text + len - 4, ".urp") || strchr(text, '/'))
			return fail(why, cap, -EINVAL, "%s '%s' is not %s",
				    sim_option_name(o, style, n, sizeof(n)), text ? text : "",
				    o->what);
		su->sim.ctrl.external_control_urp = text; /* kept alive by the caller */
		return 0;
	}
	if (o->kind == SIM_OPT_TEXT && o->id == SIM_OPT_URCAP_HOST) {
		struct in_addr a;

		if (!text || inet_pton(AF_INET, text, &a) != 1)
			return fail(why, cap, -EINVAL, "%s '%s' is not %s",
				    sim_option_name(o, style, n, sizeof(n)), text ? text : "",
				    o->what);
		su->sim.ctrl.urcap_host = text;
		return 0;
	}
	if (o->kind != SIM_OPT_TEXT || o->id != SIM_OPT_CONTROLLER_VERSION)
		return wrong_kind(o, style, why, cap);
	if (!text || parse_version(text, &su->sim.version))
		return fail(why, cap, -EINVAL, "%s '%s' is not %s",
			    sim_option_name(o, style, n, sizeof(n)), text ? text : "", o->what);
	return 0;
}

int sim_setup_check(const struct sim_setup *su, enum sim_option_style style, char *why, size_t cap)
{
	const struct sim_opts *s = &su->sim;
	const struct sim_faults *f = &s->faults;
	const struct sim_profile *p = sim_profile(s->profile);
	char a[48], b[48];
	struct in_addr addr;

#define NAME(buf, id) sim_option_name(&table[id], style, buf, sizeof(buf))
	if (!p)
		return fail(why, cap, -EINVAL, "no such profile");
	if (s->version.major) {
		uint64_t v = rtl_rtde_version_pack(&s->version);
		uint64_t pv = rtl_rtde_version_pack(&p->version);

		if (rtl_rtde_version_line(v) != rtl_rtde_version_line(pv))
			return fail(why, cap, -EINVAL,
				    "%s %u.%u.%u is not a %s version; choose the profile of its "
				    "line with %s",
				    NAME(a, SIM_OPT_CONTROLLER_VERSION), s->version.major,
				    s->version.minor, s->version.bugfix, p->name,
				    style == SIM_STYLE_FLAG ? "--profile" : "profile");
	}
	if (f->skip_every && f->skip_count >= f->skip_every)
		return fail(why, cap, -EINVAL, "%s %u must be below %s %u",
			    NAME(a, SIM_OPT_SKIP_COUNT), f->skip_count, NAME(b, SIM_OPT_SKIP_EVERY),
			    f->skip_every);
	if (!f->skip_every && f->skip_count != 1)
		return fail(why, cap, -EINVAL, "%s needs %s", NAME(a, SIM_OPT_SKIP_COUNT),
			    NAME(b, SIM_OPT_SKIP_EVERY));
	if ((f->stall_ms != 0) != (f->stall_every_s > 0))
		return fail(why, cap, -EINVAL, "%s and %s go together", NAME(a, SIM_OPT_STALL_MS),
			    NAME(b, SIM_OPT_STALL_EVERY));
	if (s->fieldbus && s->echo_register >= 0 && s->echo_register < RTL_RTDE_REG_FIELDBUS_END)
		return fail(why, cap, -EINVAL,
			    "%s %d is in the fieldbus range that %s makes IN_USE; use 24..47",
			    NAME(a, SIM_OPT_ECHO_REGISTER), s->echo_register,
			    NAME(b, SIM_OPT_FIELDBUS));
	if (!su->srv.bind || inet_pton(AF_INET, su->srv.bind, &addr) != 1)
		return fail(why, cap, -EINVAL, "%s %s: not an IPv4 address",
			    style == SIM_STYLE_FLAG ? "--bind" : "bind",
			    su->srv.bind ? su->srv.bind : "(none)");
#undef NAME
	return 0;
}

void sim_setup_udp(const struct sim_setup *su, struct sim_udp_opts *o)
{
	sim_udp_opts_default(o);
	o->bind = su->srv.bind;
	o->port = su->udp_port;
	o->duration_s = su->srv.duration_s;
	o->start_time_s = su->sim.start_time_s;
	o->skip_every = su->sim.faults.skip_every;
	o->skip_count = su->sim.faults.skip_count;
	o->robot = su->sim.robot;
}
