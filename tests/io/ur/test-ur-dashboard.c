// SPDX-License-Identifier: MIT
/*
 * The dashboard client (<rtloop/ur_dashboard.h>) against a scripted fake
 * dashboard server: a thread with a listening socket on 127.0.0.1 port 0
 * that greets, answers each command line from a script (unscripted ones
 * with the controller's "could not understand"), and misbehaves on
 * request: no greeting, a foreign greeting, a reply never sent, a reply
 * cut by a close, a reply one byte per write, a flood without newline.
 * Every case asserts the exact code and that the message names the cause
 * and the fix. Waits are bounded by the client's own timeouts; time-outs
 * are checked against a lower bound and a generous upper one, never by
 * sleeping.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/tcp.h>
#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>

#define MS RTL_NS_PER_MS
#define SEC RTL_NS_PER_SEC

/* Script replies with a special meaning. */
#define SILENT "\001silent"	  /* never answer (until the client closes) */
#define FLOOD "\001flood"	  /* text without a newline until the client closes */
#define CUT "\001cut:"		  /* send what follows without newline, then close */
#define NO_GREETING "\001nogreet" /* as the greeting: accept, say nothing */

struct pair {
	const char *cmd, *reply;
};

struct fake {
	int lfd;
	uint16_t port;
	pthread_t th;
	const char *greeting;
	const char *version; /* the PolyscopeVersion reply */
	const struct pair *script;
	bool dribble; /* every reply one byte per send() */
	char got[4096];
	pthread_mutex_t lock;
};

static void put(struct fake *f, int fd, const char *s)
{
	int64_t dl = rtl_time_now() + 5 * SEC;

	if (!f->dribble) {
		rtl_tcp_send_all(fd, s, strlen(s), dl);
		return;
	}
	for (; *s; s++)
		if (rtl_tcp_send_all(fd, s, 1, dl) < 0)
			return;
}

/* Read until the client closes (bounded). */
static void drain(int fd)
{
	char b[256];

	while (rtl_tcp_recv(fd, b, sizeof(b), rtl_time_now() + 5 * SEC) > 0)
		;
}

static const char *lookup(const struct fake *f, const char *cmd)
{
	if (strcmp(cmd, "PolyscopeVersion") == 0 && f->version)
		return f->version;
	for (const struct pair *p = f->script; p && p->cmd; p++)
		if (strcmp(p->cmd, cmd) == 0)
			return p->reply;
	return NULL;
}

static void *serve(void *arg)
{
	struct fake *f = arg;
	char buf[1024], line[1024], out[1200];
	size_t have = 0;
	int fd = rtl_tcp_accept(f->lfd, 5 * SEC, NULL);

	if (fd < 0)
		return NULL;
	if (f->greeting && strcmp(f->greeting, NO_GREETING) == 0) {
		drain(fd);
		goto out;
	}
	snprintf(out, sizeof(out), "%s\n",
		 f->greeting ? f->greeting : "Connected: Universal Robots Dashboard Server");
	put(f, fd, out);
	for (;;) {
		char *nl = memchr(buf, '\n', have);
		const char *reply;
		ssize_t r;

		if (!nl) {
			r = rtl_tcp_recv(fd, buf + have, sizeof(buf) - have,
					 rtl_time_now() + 5 * SEC);
			if (r <= 0)
				break;
			have += (size_t)r;
			continue;
		}
		*nl = '\0';
		snprintf(line, sizeof(line), "%s", buf);
		have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, have);
		pthread_mutex_lock(&f->lock);
		strncat(f->got, line, sizeof(f->got) - strlen(f->got) - 2);
		strcat(f->got, "|");
		pthread_mutex_unlock(&f->lock);
		reply = lookup(f, line);
		if (reply && strcmp(reply, SILENT) == 0) {
			drain(fd);
			break;
		}
		if (reply && strcmp(reply, FLOOD) == 0) {
			char junk[512];

			memset(junk, 'A', sizeof(junk));
			while (rtl_tcp_send_all(fd, junk, sizeof(junk), rtl_time_now() + SEC) == 0)
				;
			break;
		}
		if (reply && strncmp(reply, CUT, strlen(CUT)) == 0) {
			put(f, fd, reply + strlen(CUT));
			break;
		}
		if (reply)
			snprintf(out, sizeof(out), "%s\n", reply);
		else
			snprintf(out, sizeof(out), "could not understand: '%s'\n", line);
		put(f, fd, out);
		if (strcmp(line, "quit") == 0)
			break;
	}
out:
	close(fd);
	return NULL;
}

static struct fake F;

static void fake_start(const struct pair *script)
{
	memset(&F.got, 0, sizeof(F.got));
	pthread_mutex_init(&F.lock, NULL);
	F.script = script;
	if (!F.version)
		F.version = "URSoftware 5.11.1.108318 (Dec 06 2021)";
	F.lfd = rtl_tcp_listen(&F.port, NULL, 0, NULL);
	cr_assert_geq(F.lfd, 0);
	cr_assert_eq(pthread_create(&F.th, NULL, serve, &F), 0);
}

static void fake_stop(void)
{
	pthread_join(F.th, NULL);
	close(F.lfd);
	memset(&F, 0, sizeof(F));
}

static struct rtl_ur_dashboard *D;
static struct rtl_error E;

static int dial(int64_t timeout_ns)
{
	struct rtl_ur_dashboard_config cfg;

	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = F.port;
	cfg.timeout_ns = timeout_ns;
	cfg.connect_timeout_ns = timeout_ns;
	cfg.robot_api_port = 0;
	memset(&E, 0, sizeof(E));
	return rtl_ur_dashboard_create(&D, &cfg, &E);
}

static void start(const struct pair *script)
{
	fake_start(script);
	cr_assert_eq(dial(2 * SEC), 0, "%s", E.msg);
}

static void finish(void)
{
	rtl_ur_dashboard_destroy(D);
	D = NULL;
	fake_stop();
}

static bool said(const char *what)
{
	return strstr(E.msg, what) != NULL;
}

static bool sent(const char *cmd)
{
	bool yes;

	pthread_mutex_lock(&F.lock);
	yes = strstr(F.got, cmd) != NULL;
	pthread_mutex_unlock(&F.lock);
	return yes;
}

/* ---- happy paths ---------------------------------------------------------------------------- */

static const struct pair HAPPY[] = {
	{ "power on", "Powering on" },
	{ "power off", "Powering off" },
	{ "brake release", "Brake releasing" },
	{ "unlock protective stop", "Protective stop releasing" },
	{ "close safety popup", "closing safety popup" },
	{ "close popup", "closing popup" },
	{ "robotmode", "Robotmode: IDLE" },
	{ "safetystatus", "Safetystatus: PROTECTIVE_STOP" },
	{ "programState", "PLAYING rtloop.urp" },
	{ "is in remote control", "true" },
	{ "load /programs/rtloop.urp", "Loading program: /programs/rtloop.urp" },
	{ "play", "Starting program" },
	{ "pause", "Pausing program" },
	{ "stop", "Stopped" },
	{ "quit", "Disconnected" },
	{ NULL, NULL },
};

Test(ur_dashboard, connect_reads_greeting_and_version)
{
	const struct rtl_ur_version *v;

	start(HAPPY);
	v = rtl_ur_dashboard_version(D);
	cr_assert_eq(v->major, 5);
	cr_assert_eq(v->minor, 11);
	cr_assert_eq(v->patch, 1);
	cr_assert_eq(v->build, 108318);
	finish();
}

Test(ur_dashboard, every_command_happy_path)
{
	enum rtl_ur_robot_mode mode = RTL_UR_ROBOT_MODE_NO_CONTROLLER;
	enum rtl_ur_safety_status st = RTL_UR_SAFETY_NORMAL;
	struct rtl_ur_program prog;
	struct rtl_ur_version v;
	bool remote = false;

	start(HAPPY);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_power_off(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_brake_release(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_unlock_protective_stop(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_close_safety_popup(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_close_popup(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &mode, &E), 0, "%s", E.msg);
	cr_assert_eq(mode, RTL_UR_ROBOT_MODE_IDLE);
	cr_assert_eq(rtl_ur_dashboard_safety_status(D, &st, &E), 0, "%s", E.msg);
	cr_assert_eq(st, RTL_UR_SAFETY_PROTECTIVE_STOP);
	cr_assert_eq(rtl_ur_dashboard_program_state(D, &prog, &E), 0, "%s", E.msg);
	cr_assert_eq(prog.state, RTL_UR_PROGRAM_PLAYING);
	cr_assert_str_eq(prog.name, "rtloop.urp");
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), 0, "%s", E.msg);
	cr_assert(remote);
	cr_assert_eq(rtl_ur_dashboard_polyscope_version(D, &v, &E), 0, "%s", E.msg);
	cr_assert_eq(v.minor, 11);
	cr_assert_eq(rtl_ur_dashboard_load(D, "/programs/rtloop.urp", &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_play(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_pause(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_stop(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_quit(D, &E), 0, "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_play(D, &E), -ENOTCONN);
	cr_assert(said("connect again"), "%s", E.msg);
	finish();
}

Test(ur_dashboard, raw_command_returns_the_line)
{
	static const struct pair s[] = { { "get serial number", "20235501783" }, { NULL, NULL } };
	char reply[64];

	start(s);
	cr_assert_eq(rtl_ur_dashboard_command(D, reply, sizeof(reply), "get serial number", &E),
		     11);
	cr_assert_str_eq(reply, "20235501783");
	cr_assert_eq(rtl_ur_dashboard_command(D, reply, sizeof(reply), "a\nb", &E), -EINVAL);
	finish();
}

Test(ur_dashboard, names_and_parsers)
{
	enum rtl_ur_robot_mode m;
	enum rtl_ur_safety_status s;
	struct rtl_ur_version v;

	cr_assert_str_eq(rtl_ur_robot_mode_name(RTL_UR_ROBOT_MODE_NO_CONTROLLER), "NO_CONTROLLER");
	cr_assert_str_eq(rtl_ur_robot_mode_name(RTL_UR_ROBOT_MODE_RUNNING), "RUNNING");
	cr_assert_str_eq(rtl_ur_robot_mode_name((enum rtl_ur_robot_mode)42), "?");
	cr_assert_str_eq(rtl_ur_safety_status_name(RTL_UR_SAFETY_FAULT), "FAULT");
	cr_assert_str_eq(rtl_ur_program_state_name(RTL_UR_PROGRAM_PAUSED), "PAUSED");
	cr_assert_eq(rtl_ur_robot_mode_parse(&m, "BACKDRIVE"), 0);
	cr_assert_eq(m, RTL_UR_ROBOT_MODE_BACKDRIVE);
	cr_assert_eq(rtl_ur_robot_mode_parse(&m, "idle"), -EINVAL);
	cr_assert_eq(rtl_ur_safety_status_parse(&s, "SYSTEM_THREE_POSITION_ENABLING_STOP"), 0);
	cr_assert_eq(s, RTL_UR_SAFETY_SYSTEM_THREE_POSITION_ENABLING_STOP);
	cr_assert_eq(rtl_ur_version_parse(&v, "URSoftware 3.15.7.106331 (Jun 30 2021)"), 0);
	cr_assert_eq(v.major, 3);
	cr_assert_eq(v.minor, 15);
	cr_assert_eq(v.patch, 7);
	cr_assert_eq(v.build, 106331);
	cr_assert_eq(rtl_ur_version_parse(&v, "5.6"), 0);
	cr_assert_eq(v.minor, 6);
	cr_assert_eq(v.patch, 0);
	cr_assert_eq(rtl_ur_version_parse(&v, "URSoftware x"), -EINVAL);
	cr_assert_eq(rtl_ur_version_parse(&v, "5.6x"), -EINVAL);
}

/* ---- refusals ------------------------------------------------------------------------------- */

Test(ur_dashboard, not_in_remote_control)
{
	static const struct pair s[] = {
		{ "power on", "Command is not allowed due to safety reasons" },
		{ "brake release", "The robot is not in remote control" },
		{ "is in remote control", "false" },
		{ NULL, NULL },
	};
	bool remote = true;

	start(s);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), -EPERM);
	cr_assert(said("refused 'power on'") && said("remote control") && said("Remote Control"),
		  "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_brake_release(D, &E), -EPERM);
	cr_assert(said("not in remote control") && said("switch to Remote Control"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), 0, "%s", E.msg);
	cr_assert(!remote);
	finish();
}

Test(ur_dashboard, protective_stop_refusals)
{
	static const struct pair s[] = {
		{ "brake release", "Brake release not possible: robot is in protective stop" },
		{ "unlock protective stop", "Cannot unlock protective stop until 5s after "
					    "occurrence. Always inspect cause of "
					    "protective stop before unlocking" },
		{ NULL, NULL },
	};

	start(s);
	cr_assert_eq(rtl_ur_dashboard_brake_release(D, &E), -EPERM);
	cr_assert(said("protective stop") && said("unlock protective stop"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_unlock_protective_stop(D, &E), -EAGAIN);
	cr_assert(said("5 s") && said("unlock again") && said("cause"), "%s", E.msg);
	finish();
}

Test(ur_dashboard, load_and_play_refusals)
{
	static const struct pair s[] = {
		{ "load nope.urp", "File not found: nope.urp" },
		{ "load broken.urp", "Error while loading program: broken.urp" },
		{ "play", "Failed to execute: play" },
		{ "stop", "Failed to execute: stop" },
		{ NULL, NULL },
	};

	start(s);
	cr_assert_eq(rtl_ur_dashboard_load(D, "nope.urp", &E), -ENOENT);
	cr_assert(said("File not found") && said("/programs"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_load(D, "broken.urp", &E), -EIO);
	cr_assert(said("did not load") && said("teach pendant"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_play(D, &E), -EIO);
	cr_assert(said("Failed to execute: play") && said("program must be loaded"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_stop(D, &E), -EIO);
	cr_assert_eq(rtl_ur_dashboard_load(D, "two\nlines", &E), -EINVAL);
	cr_assert_eq(rtl_ur_dashboard_load(D, "", &E), -EINVAL);
	/* Refusals keep the connection. */
	cr_assert_eq(rtl_ur_dashboard_load(D, "nope.urp", &E), -ENOENT);
	finish();
}

Test(ur_dashboard, unknown_command_at_the_peer)
{
	static const struct pair s[] = { { NULL, NULL } };

	start(s); /* nothing scripted: "could not understand" */
	cr_assert_eq(rtl_ur_dashboard_close_safety_popup(D, &E), -EOPNOTSUPP);
	cr_assert(said("does not know") && said("update PolyScope"), "%s", E.msg);
	finish();
}

Test(ur_dashboard, wrong_reply_is_eproto_and_keeps_the_connection)
{
	static const struct pair s[] = {
		{ "power on", "Sure thing" },	 { "robotmode", "Robotmode: DANCING" },
		{ "programState", "RUNNING x" }, { "is in remote control", "maybe" },
		{ "power off", "Powering off" }, { NULL, NULL },
	};
	enum rtl_ur_robot_mode m;
	struct rtl_ur_program p;
	bool remote;

	start(s);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), -EPROTO);
	cr_assert(said("'Sure thing'") && said("Powering on") && said("29999"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), -EPROTO);
	cr_assert(said("DANCING") && said("report the PolyScope version"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_program_state(D, &p, &E), -EPROTO);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), -EPROTO);
	cr_assert_eq(rtl_ur_dashboard_power_off(D, &E), 0, "%s", E.msg);
	finish();
}

/* ---- the version gate ----------------------------------------------------------------------- */

Test(ur_dashboard, cb3_lacks_remote_control_query_refused_locally)
{
	static const struct pair s[] = { { "safetymode", "Safetymode: NORMAL" }, { NULL, NULL } };
	enum rtl_ur_safety_status st = RTL_UR_SAFETY_FAULT;
	bool remote;

	F.version = "URSoftware 3.10.0.106330 (Mar 19 2019)";
	start(s);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), -EOPNOTSUPP);
	cr_assert(said("5.6") && said("3.10.0") && said("CB3") && said("teach pendant"), "%s",
		  E.msg);
	cr_assert(!sent("is in remote control"));
	/* 3.10 has no safetystatus: the typed call asks safetymode. */
	cr_assert_eq(rtl_ur_dashboard_safety_status(D, &st, &E), 0, "%s", E.msg);
	cr_assert_eq(st, RTL_UR_SAFETY_NORMAL);
	cr_assert(sent("safetymode|") && !sent("safetystatus"));
	finish();
}

Test(ur_dashboard, e_series_before_5_4_uses_safetymode_and_5_5_lacks_remote)
{
	static const struct pair s[] = { { "safetymode", "Safetymode: REDUCED" }, { NULL, NULL } };
	enum rtl_ur_safety_status st;
	bool remote;

	F.version = "URSoftware 5.3.1.64192 (Jun 04 2019)";
	start(s);
	cr_assert_eq(rtl_ur_dashboard_safety_status(D, &st, &E), 0, "%s", E.msg);
	cr_assert_eq(st, RTL_UR_SAFETY_REDUCED);
	cr_assert_eq(rtl_ur_dashboard_is_in_remote_control(D, &remote, &E), -EOPNOTSUPP);
	cr_assert(said("from PolyScope 5.6") && said("update PolyScope"), "%s", E.msg);
	finish();
}

Test(ur_dashboard, cb3_old_lacks_unlock)
{
	static const struct pair s[] = { { NULL, NULL } };

	F.version = "URSoftware 3.0.15547 (Jan 01 2015)";
	start(s);
	cr_assert_eq(rtl_ur_dashboard_unlock_protective_stop(D, &E), -EOPNOTSUPP);
	cr_assert(said("from PolyScope 3.1") && said("3.0."), "%s", E.msg);
	cr_assert(!sent("unlock"));
	finish();
}

/* ---- hostile peers -------------------------------------------------------------------------- */

Test(ur_dashboard, silent_peer_times_out_bounded, .timeout = 10)
{
	static const struct pair s[] = { { "robotmode", SILENT }, { NULL, NULL } };
	enum rtl_ur_robot_mode m;
	int64_t t0;

	start(s);
	rtl_ur_dashboard_set_timeout(D, 200 * MS);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), -ETIMEDOUT);
	cr_assert_geq(rtl_time_now() - t0, 200 * MS);
	cr_assert_lt(rtl_time_now() - t0, 3 * SEC);
	cr_assert(said("no reply within 0.2 s") && said("connect again"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), -ENOTCONN);
	finish();
}

Test(ur_dashboard, no_greeting_times_out_bounded, .timeout = 10)
{
	int64_t t0;

	F.greeting = NO_GREETING;
	fake_start(NULL);
	t0 = rtl_time_now();
	cr_assert_eq(dial(200 * MS), -ETIMEDOUT);
	cr_assert_lt(rtl_time_now() - t0, 3 * SEC);
	cr_assert(said("greeting") && said("no reply"), "%s", E.msg);
	cr_assert_null(D);
	fake_stop();
}

Test(ur_dashboard, foreign_greeting_is_eproto)
{
	F.greeting = "SSH-2.0-OpenSSH_9.2p1 Debian-2";
	fake_start(NULL);
	cr_assert_eq(dial(SEC), -EPROTO);
	cr_assert(said("SSH-2.0") && said("not a UR dashboard server") && said("29999"), "%s",
		  E.msg);
	cr_assert_null(D);
	fake_stop();
}

Test(ur_dashboard, version_reply_not_ursoftware_is_eproto)
{
	F.version = "hello";
	fake_start(NULL);
	cr_assert_eq(dial(SEC), -EPROTO);
	cr_assert(said("PolyscopeVersion") && said("'hello'"), "%s", E.msg);
	fake_stop();
}

Test(ur_dashboard, peer_closes_mid_reply)
{
	static const struct pair s[] = { { "robotmode", CUT "Robotmo" }, { NULL, NULL } };
	enum rtl_ur_robot_mode m;

	start(s);
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), -ECONNRESET);
	cr_assert(said("closed the connection") && said("connect again"), "%s", E.msg);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), -ENOTCONN);
	finish();
}

Test(ur_dashboard, reply_split_into_single_bytes)
{
	enum rtl_ur_robot_mode m;
	struct rtl_ur_program p;

	F.dribble = true;
	start(HAPPY);
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), 0, "%s", E.msg);
	cr_assert_eq(m, RTL_UR_ROBOT_MODE_IDLE);
	cr_assert_eq(rtl_ur_dashboard_program_state(D, &p, &E), 0, "%s", E.msg);
	cr_assert_str_eq(p.name, "rtloop.urp");
	cr_assert_eq(rtl_ur_dashboard_version(D)->build, 108318);
	finish();
}

Test(ur_dashboard, flood_without_newline_is_bounded, .timeout = 10)
{
	static const struct pair s[] = { { "robotmode", FLOOD }, { NULL, NULL } };
	enum rtl_ur_robot_mode m;

	start(s);
	cr_assert_eq(rtl_ur_dashboard_robot_mode(D, &m, &E), -EMSGSIZE);
	cr_assert(said("longer than 1024 bytes") && said("not a UR dashboard server"), "%s", E.msg);
	finish();
}

Test(ur_dashboard, crlf_replies_are_accepted)
{
	static const struct pair s[] = { { "power on", "Powering on\r" }, { NULL, NULL } };

	start(s);
	cr_assert_eq(rtl_ur_dashboard_power_on(D, &E), 0, "%s", E.msg);
	finish();
}

/* ---- PolyScope X and refused connections ---------------------------------------------------- */

/* A port where nothing listens (bound, then closed). */
static uint16_t closed_port(void)
{
	uint16_t port;
	int fd = rtl_tcp_listen(&port, NULL, 0, NULL);

	cr_assert_geq(fd, 0);
	close(fd);
	return port;
}

static int robot_api_lfd;

static void *robot_api(void *arg)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				 "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
	char b[1024];
	int fd = rtl_tcp_accept(robot_api_lfd, 5 * SEC, NULL);

	(void)arg;
	if (fd < 0)
		return NULL;
	rtl_tcp_recv(fd, b, sizeof(b), rtl_time_now() + 5 * SEC);
	rtl_tcp_send_all(fd, ok, sizeof(ok) - 1, rtl_time_now() + 5 * SEC);
	close(fd);
	return NULL;
}

Test(ur_dashboard, refused_without_robot_api_names_the_dashboard_setting)
{
	struct rtl_ur_dashboard_config cfg;

	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = closed_port();
	cfg.robot_api_port = closed_port();
	cr_assert_eq(rtl_ur_dashboard_create(&D, &cfg, &E), -ECONNREFUSED);
	cr_assert(said("connection refused") && said("Settings > Security > Services"), "%s",
		  E.msg);
}

Test(ur_dashboard, polyscope_x_recognised_by_robot_api)
{
	struct rtl_ur_dashboard_config cfg;
	uint16_t api;
	pthread_t th;

	robot_api_lfd = rtl_tcp_listen(&api, NULL, 0, NULL);
	cr_assert_geq(robot_api_lfd, 0);
	cr_assert_eq(pthread_create(&th, NULL, robot_api, NULL), 0);
	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = closed_port();
	cfg.robot_api_port = api;
	cr_assert_eq(rtl_ur_dashboard_create(&D, &cfg, &E), -EPROTONOSUPPORT);
	cr_assert(said("PolyScope X") && said("Robot API") && said("no dashboard server"), "%s",
		  E.msg);
	pthread_join(th, NULL);
	close(robot_api_lfd);
}

Test(ur_dashboard, polyscope_x_recognised_by_rtde_version)
{
	struct rtl_ur_dashboard_config cfg;

	rtl_ur_dashboard_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = closed_port();
	cfg.controller_major = 10;
	cr_assert_eq(rtl_ur_dashboard_create(&D, &cfg, &E), -EPROTONOSUPPORT);
	cr_assert(said("PolyScope X") && said("teach pendant"), "%s", E.msg);
	cr_assert_null(D);
}

Test(ur_dashboard, connect_rejects_bad_arguments)
{
	struct rtl_ur_dashboard_config cfg;

	rtl_ur_dashboard_config_init(&cfg);
	cr_assert_eq(rtl_ur_dashboard_create(&D, &cfg, &E), -EINVAL);
	cr_assert_eq(rtl_ur_dashboard_create(&D, NULL, &E), -EINVAL);
	cr_assert_eq(cfg.port, RTL_UR_DASHBOARD_PORT);
	cr_assert_eq(rtl_ur_dashboard_power_on(NULL, &E), -EINVAL);
}
