// SPDX-License-Identifier: MIT
/*
 * The Robot API client (<rtloop/ur_robot_api.h>) against a scripted fake
 * HTTP server: a thread with a listening socket on 127.0.0.1 port 0 that
 * reads each request (request line, headers, Content-Length body), records
 * it, and answers from a script: a status and a body, or a misbehaviour
 * (never answer, close without a reply). Every case asserts the exact code
 * and that the message names the cause and the fix; time-outs are bounded
 * by the client's own and checked against a generous upper bound.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rtloop/time.h>
#include <rtloop/ur_robot_api.h>

#define MS RTL_NS_PER_MS

#define SILENT "\001silent" /* read the request, never answer */
#define CLOSE "\001close"   /* read the request, close without a reply */
#define MAX_STEPS 16

struct step {
	int status;
	const char *body; /* or SILENT / CLOSE */
};

struct fake {
	int lfd;
	uint16_t port;
	pthread_t thread;
	struct step steps[MAX_STEPS];
	int nsteps;
	int served;
	int accepts;
	char method[MAX_STEPS][8];
	char path[MAX_STEPS][128];
	char body[MAX_STEPS][128];
	volatile int stop;
};

/* Read one request from @fd into slot @i; false on EOF or error. */
static bool read_request(struct fake *f, int fd, int i)
{
	char buf[4096];
	size_t have = 0;
	char *end = NULL;
	long clen = 0;

	while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (f->stop || have == sizeof(buf))
			return false;
		if (poll(&p, 1, 50) <= 0)
			continue;
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
	}
	*end = '\0';
	sscanf(buf, "%7s %127s", f->method[i], f->path[i]);
	for (char *h = strstr(buf, "\r\n"); h; h = strstr(h + 2, "\r\n"))
		if (!strncasecmp(h + 2, "Content-Length:", 15))
			clen = strtol(h + 17, NULL, 10);
	{
		size_t got = have - (size_t)(end + 4 - buf);
		size_t want = (size_t)clen < sizeof(f->body[i]) - 1 ? (size_t)clen
								    : sizeof(f->body[i]) - 1;

		memcpy(f->body[i], end + 4, got < want ? got : want);
		while (got < want) {
			ssize_t n = read(fd, f->body[i] + got, want - got);

			if (n <= 0)
				return false;
			got += (size_t)n;
		}
		f->body[i][want] = '\0';
	}
	return true;
}

static void *serve(void *arg)
{
	struct fake *f = arg;

	while (!f->stop && f->served < f->nsteps) {
		struct pollfd p = { f->lfd, POLLIN, 0 };
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		f->accepts++;
		while (!f->stop && f->served < f->nsteps) {
			int i = f->served;
			const struct step *s = &f->steps[i];
			char out[1024];
			int n;

			if (!read_request(f, fd, i))
				break;
			f->served++;
			if (!strcmp(s->body, SILENT)) {
				while (!f->stop) {
					char c;
					struct pollfd q = { fd, POLLIN, 0 };

					if (poll(&q, 1, 50) > 0 && read(fd, &c, 1) <= 0)
						break;
				}
				break;
			}
			if (!strcmp(s->body, CLOSE))
				break;
			n = snprintf(out, sizeof(out),
				     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
				     "Content-Length: %zu\r\n\r\n%s",
				     s->status, strlen(s->body), s->body);
			if (write(fd, out, (size_t)n) != n)
				break;
		}
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake *f, const struct step *steps, int n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);

	memset(f, 0, sizeof(*f));
	if (n)
		memcpy(f->steps, steps, sizeof(*steps) * (size_t)n);
	f->nsteps = n;
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(f->lfd, 0);
	cr_assert_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(f->lfd, 4), 0);
	cr_assert_eq(getsockname(f->lfd, (struct sockaddr *)&sa, &len), 0);
	f->port = ntohs(sa.sin_port);
	cr_assert_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

static void fake_stop(struct fake *f)
{
	f->stop = 1;
	pthread_join(f->thread, NULL);
	close(f->lfd);
}

/* A librtloop built without libcurl (-Drobot_api=disabled) has no client:
 * the tests of the client skip, with the library's sentence as the
 * reason. */
static void need_robot_api(void)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = NULL;
	struct rtl_error e = { 0 };

	rtl_ur_robot_api_config_init(&cfg);
	cfg.host = "127.0.0.1";
	if (rtl_ur_robot_api_create(&api, &cfg, &e) == -ENOTSUP)
		cr_skip_test("%s", e.msg);
	rtl_ur_robot_api_destroy(api);
}

static struct rtl_ur_robot_api *client(uint16_t port, int64_t timeout_ns)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = NULL;
	struct rtl_error e = { 0 };

	rtl_ur_robot_api_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = port;
	cfg.timeout_ns = timeout_ns;
	cr_assert_eq(rtl_ur_robot_api_create(&api, &cfg, &e), 0, "%s", e.msg);
	return api;
}

Test(ur_robot_api, json_scanner_reads_outer_strings_only)
{
	char v[32];
	const char *j = " {\"a\": {\"mode\": \"X\"}, \"n\": 1.5, \"l\": [1, \"]\"], "
			"\"mode\" : \"IDLE\"}";

	cr_assert_eq(rtl_ur_robot_api_json_string(v, sizeof(v), j, strlen(j), "mode"), 4);
	cr_assert_str_eq(v, "IDLE");
	cr_assert_eq(rtl_ur_robot_api_json_string(v, sizeof(v), j, strlen(j), "none"), -EPROTO);
	cr_assert_eq(rtl_ur_robot_api_json_string(v, sizeof(v), "<html>", 6, "mode"), -EPROTO);
	cr_assert_eq(rtl_ur_robot_api_json_string(v, sizeof(v), "{\"mode\": \"IDL", 13, "mode"),
		     -EPROTO);
	cr_assert_eq(
		rtl_ur_robot_api_json_string(v, sizeof(v), "{\"m\": \"a\\\"b\\u0041\"}", 19, "m"),
		4);
	cr_assert_str_eq(v, "a\"bA");
	cr_assert_eq(rtl_ur_robot_api_json_string(v, 4, "{\"m\": \"abcdef\"}", 15, "m"), -EMSGSIZE);
}

Test(ur_robot_api, open_rejects_bad_config)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = NULL;
	struct rtl_error e = { 0 };

	need_robot_api();
	rtl_ur_robot_api_config_init(&cfg);
	cr_assert_eq(cfg.port, 80);
	cr_assert_eq(rtl_ur_robot_api_create(&api, &cfg, &e), -EINVAL);
	cfg.host = "a/b";
	cr_assert_eq(rtl_ur_robot_api_create(&api, &cfg, &e), -EINVAL);
	cfg.host = "ur";
	cfg.timeout_ns = 0;
	cr_assert_eq(rtl_ur_robot_api_create(&api, &cfg, &e), -EINVAL);
	rtl_ur_robot_api_destroy(NULL);
}

Test(ur_robot_api, happy_paths_send_the_documented_requests)
{
	static const struct step steps[] = {
		{ 200, "{\"mode\": \"POWER_OFF\"}" },
		{ 200, "{\"mode\": \"NORMAL\"}" },
		{ 200, "{\"state\": \"playing\", \"name\": \"rtloop_control\"}" },
		{ 200, "{\"mode\": \"REMOTE\"}" },
		{ 200, "{\"marketingVersion\": \"10.13.0\", \"baselineVersion\": \"x\"}" },
		{ 200, "{}" },
		{ 200, "{}" },
		{ 200, "{}" },
		{ 200, "{}" },
		{ 200, "{}" },
		{ 200, "{}" },
		{ 200, "{}" },
		{ 200, "{}" },
	};
	struct fake f;
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	enum rtl_ur_robot_mode m;
	enum rtl_ur_safety_status s;
	struct rtl_ur_program p;
	struct rtl_ur_version v;
	bool remote = false;

	need_robot_api();
	fake_start(&f, steps, (int)(sizeof(steps) / sizeof(steps[0])));
	api = client(f.port, 2000 * MS);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), 0, "%s", e.msg);
	cr_assert_eq(m, RTL_UR_ROBOT_MODE_POWER_OFF);
	cr_assert_eq(rtl_ur_robot_api_safety_mode(api, &s, &e), 0, "%s", e.msg);
	cr_assert_eq(s, RTL_UR_SAFETY_NORMAL);
	cr_assert_eq(rtl_ur_robot_api_program_state(api, &p, &e), 0, "%s", e.msg);
	cr_assert_eq(p.state, RTL_UR_PROGRAM_PLAYING);
	cr_assert_str_eq(p.name, "rtloop_control");
	cr_assert_eq(rtl_ur_robot_api_is_in_remote_control(api, &remote, &e), 0, "%s", e.msg);
	cr_assert(remote);
	cr_assert_eq(rtl_ur_robot_api_version(api, &v, &e), 0, "%s", e.msg);
	cr_assert_eq(v.major, 10);
	cr_assert_eq(v.minor, 13);
	cr_assert_eq(rtl_ur_robot_api_power_on(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_brake_release(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_unlock_protective_stop(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_power_off(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_load(api, "rtloop_control", &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_play(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_pause(api, &e), 0, "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_stop(api, &e), 0, "%s", e.msg);
	rtl_ur_robot_api_destroy(api);
	fake_stop(&f);

	cr_assert_eq(f.served, 13);
	/* Keep-alive: one connection for all of them. */
	cr_assert_eq(f.accepts, 1);
	cr_assert_str_eq(f.method[0], "GET");
	cr_assert_str_eq(f.path[0], "/universal-robots/robot-api/robotstate/v1/robotmode");
	cr_assert_str_eq(f.path[1], "/universal-robots/robot-api/robotstate/v1/safetymode");
	cr_assert_str_eq(f.path[2], "/universal-robots/robot-api/program/v1/state");
	cr_assert_str_eq(f.path[3], "/universal-robots/robot-api/system/v1/controlmode");
	cr_assert_str_eq(f.path[4], "/universal-robots/robot-api/versions/v1");
	cr_assert_str_eq(f.method[5], "PUT");
	cr_assert_str_eq(f.path[5], "/universal-robots/robot-api/robotstate/v1/state");
	cr_assert_str_eq(f.body[5], "{\"action\": \"POWER_ON\"}");
	cr_assert_str_eq(f.body[6], "{\"action\": \"BRAKE_RELEASE\"}");
	cr_assert_str_eq(f.body[7], "{\"action\": \"UNLOCK_PROTECTIVE_STOP\"}");
	cr_assert_str_eq(f.body[8], "{\"action\": \"POWER_OFF\"}");
	cr_assert_str_eq(f.path[9], "/universal-robots/robot-api/program/v1/loaded");
	cr_assert_str_eq(f.body[9], "{\"name\": \"rtloop_control\"}");
	cr_assert_str_eq(f.path[10], "/universal-robots/robot-api/program/v1/state");
	cr_assert_str_eq(f.body[10], "{\"action\": \"play\"}");
	cr_assert_str_eq(f.body[11], "{\"action\": \"pause\"}");
	cr_assert_str_eq(f.body[12], "{\"action\": \"stop\"}");
}

Test(ur_robot_api, refusal_in_local_control_says_switch_to_remote)
{
	static const struct step steps[] = {
		{ 403, "{\"message\": \"The robot is in local control\"}" },
		{ 200, "{\"mode\": \"LOCAL\"}" },
		{ 404, "{\"message\": \"no such program\"}" },
		{ 404, "{}" },
	};
	struct fake f;
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	bool remote = true;
	enum rtl_ur_robot_mode m;

	need_robot_api();
	fake_start(&f, steps, 4);
	api = client(f.port, 2000 * MS);
	cr_assert_eq(rtl_ur_robot_api_power_on(api, &e), -EPERM);
	cr_assert(strstr(e.msg, "remote control"), "%s", e.msg);
	cr_assert(strstr(e.msg, "local control"), "%s", e.msg);
	cr_assert(strstr(e.msg, "HTTP 403"), "%s", e.msg);
	/* The client stays usable after a refusal. */
	cr_assert_eq(rtl_ur_robot_api_is_in_remote_control(api, &remote, &e), 0, "%s", e.msg);
	cr_assert(!remote);
	cr_assert_eq(rtl_ur_robot_api_load(api, "nope", &e), -ENOENT);
	cr_assert(strstr(e.msg, "nope"), "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), -EOPNOTSUPP);
	cr_assert(strstr(e.msg, "10.11"), "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_load(api, "a\"b", &e), -EINVAL);
	rtl_ur_robot_api_destroy(api);
	fake_stop(&f);
}

Test(ur_robot_api, silent_server_times_out_within_bound)
{
	static const struct step steps[] = { { 0, SILENT } };
	struct fake f;
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	enum rtl_ur_robot_mode m;
	int64_t t0;

	need_robot_api();
	fake_start(&f, steps, 1);
	api = client(f.port, 300 * MS);
	t0 = rtl_time_now();
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), -ETIMEDOUT);
	cr_assert_lt(rtl_time_now() - t0, 3000 * MS);
	cr_assert(strstr(e.msg, "no reply"), "%s", e.msg);
	cr_assert(strstr(e.msg, "allow more time"), "%s", e.msg);
	rtl_ur_robot_api_destroy(api);
	fake_stop(&f);
}

Test(ur_robot_api, non_json_body_is_eproto)
{
	static const struct step steps[] = {
		{ 200, "<html>It works!</html>" },
		{ 200, "{\"mode\": \"FLYING\"}" },
	};
	struct fake f;
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	enum rtl_ur_robot_mode m;

	need_robot_api();
	fake_start(&f, steps, 2);
	api = client(f.port, 2000 * MS);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), -EPROTO);
	cr_assert(strstr(e.msg, "not the Robot API"), "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), -EPROTO);
	cr_assert(strstr(e.msg, "FLYING"), "%s", e.msg);
	rtl_ur_robot_api_destroy(api);
	fake_stop(&f);
}

Test(ur_robot_api, server_that_closes_is_econnreset)
{
	static const struct step steps[] = { { 0, CLOSE } };
	struct fake f;
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };

	need_robot_api();
	fake_start(&f, steps, 1);
	api = client(f.port, 2000 * MS);
	cr_assert_eq(rtl_ur_robot_api_power_on(api, &e), -ECONNRESET);
	cr_assert(strstr(e.msg, "closed the connection"), "%s", e.msg);
	rtl_ur_robot_api_destroy(api);
	fake_stop(&f);
}

Test(ur_robot_api, refused_port_says_robot_api_off_or_not_polyscope_x)
{
	struct fake f;
	struct rtl_ur_robot_api *api;
	struct rtl_error e = { 0 };
	enum rtl_ur_robot_mode m;
	uint16_t port;

	need_robot_api();
	/* A port that was just free: nothing listens there now. */
	fake_start(&f, NULL, 0);
	port = f.port;
	fake_stop(&f);
	api = client(port, 2000 * MS);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(api, &m, &e), -ECONNREFUSED);
	cr_assert(strstr(e.msg, "Robot API is off"), "%s", e.msg);
	cr_assert(strstr(e.msg, "PolyScope X"), "%s", e.msg);
	rtl_ur_robot_api_destroy(api);
}

/* Without libcurl the calls are there (one set of symbols in both builds)
 * and each names the build as the cause, with the fix; the JSON scanner
 * (above) works in both. */
Test(ur_robot_api, without_libcurl_every_call_names_the_build)
{
	struct rtl_ur_robot_api_config cfg;
	struct rtl_ur_robot_api *api = (struct rtl_ur_robot_api *)1;
	struct rtl_error e = { 0 };
	enum rtl_ur_robot_mode m;
	enum rtl_ur_safety_status st;
	struct rtl_ur_program prog;
	struct rtl_ur_version v;
	bool remote;
	int ret;

	rtl_ur_robot_api_config_init(&cfg);
	cfg.host = "127.0.0.1";
	ret = rtl_ur_robot_api_create(&api, &cfg, &e);
	if (ret == 0) {
		rtl_ur_robot_api_destroy(api);
		cr_skip_test("this librtloop has the Robot API (built with libcurl)");
	}
	cr_assert_eq(ret, -ENOTSUP, "%s", e.msg);
	cr_assert_null(api);
	cr_assert(strstr(e.msg, "this librtloop was built without the Robot API "
				"(-Drobot_api=disabled, libcurl)"),
		  "%s", e.msg);
	cr_assert(strstr(e.msg, "fix:"), "%s", e.msg);
	cr_assert_eq(rtl_ur_robot_api_power_on(NULL, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_power_off(NULL, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_brake_release(NULL, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_unlock_protective_stop(NULL, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_robot_mode(NULL, &m, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_safety_mode(NULL, &st, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_program_state(NULL, &prog, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_is_in_remote_control(NULL, &remote, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_version(NULL, &v, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_load(NULL, "p", &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_play(NULL, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_pause(NULL, &e), -ENOTSUP);
	cr_assert_eq(rtl_ur_robot_api_stop(NULL, &e), -ENOTSUP);
	cr_assert(strstr(e.msg, "-Drobot_api=disabled"), "%s", e.msg);
	rtl_ur_robot_api_destroy(NULL);
}
