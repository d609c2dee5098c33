// SPDX-License-Identifier: MIT
/*
 * The Robot API client of PolyScope X (see <rtloop/ur_robot_api.h>).
 *
 * libcurl does the HTTP: one easy handle per client, reused for keep-alive,
 * with the connect and total time-outs set on it once. The body of a reply
 * is collected into a fixed buffer by the write callback, which refuses
 * more than RTL_UR_ROBOT_API_BODY bytes (curl then stops the transfer).
 *
 * The replies are read with the bounded JSON scanner of ur_robot_api_json.c
 * (rtl_ur_robot_api_json_string()), which is built without libcurl too.
 *
 * Built only with libcurl (-Drobot_api, meson.build); without it
 * ur_robot_api_none.c provides the same symbols, failing with -ENOTSUP.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <rtloop/sized.h>
#include <rtloop/ur_robot_api.h>

#define HOST_MAX 256
#define NAME_MAX_BYTES 200

struct rtl_ur_robot_api {
	CURL *curl;
	char host[HOST_MAX];
	uint16_t port;
	int64_t timeout_ns;
	char base[HOST_MAX + 64]; /* http://host:port/universal-robots/robot-api */
	size_t body_len;
	bool body_overflow;
	char body[RTL_UR_ROBOT_API_BODY + 1];
};

/* ---- the client --------------------------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_start(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct rtl_ur_robot_api *api = ctx;
	size_t bytes = size * n;

	if (api->body_len + bytes > RTL_UR_ROBOT_API_BODY) {
		api->body_overflow = true;
		return 0; /* curl ends the transfer with CURLE_WRITE_ERROR */
	}
	memcpy(api->body + api->body_len, p, bytes);
	api->body_len += bytes;
	api->body[api->body_len] = '\0';
	return bytes;
}

static long ms_of(int64_t ns)
{
	int64_t ms = (ns + 999999) / 1000000;

	return ms < 1 ? 1 : (long)ms;
}

int rtl_ur_robot_api_create(struct rtl_ur_robot_api **out,
			    const struct rtl_ur_robot_api_config *user_cfg, struct rtl_error *err)
{
	struct rtl_ur_robot_api_config full, *cfg = &full;
	struct rtl_ur_robot_api *api;
	size_t hl;
	int ret;

	if (out)
		*out = NULL;
	ret = rtl__sized_in(&full, sizeof(full), user_cfg, "struct rtl_ur_robot_api_config", err);
	if (ret < 0)
		return ret;
	if (!cfg->host || !out)
		return rtl_error_set(err, -EINVAL, "robot api: no configuration, host or result");
	hl = strlen(cfg->host);
	if (!hl || hl >= HOST_MAX || strpbrk(cfg->host, "/?#@ \t\r\n"))
		return rtl_error_set(err, -EINVAL,
				     "robot api: host '%.64s' is empty, too long or not a host "
				     "name: give the controller's name or address",
				     cfg->host);
	if (cfg->timeout_ns <= 0 || cfg->connect_timeout_ns <= 0)
		return rtl_error_set(err, -EINVAL, "robot api: time-outs must be > 0");
	pthread_once(&curl_once, curl_start);
	if (curl_init_rc != CURLE_OK)
		return rtl_error_set(err, -ENOMEM, "robot api: libcurl did not start: %s",
				     curl_easy_strerror(curl_init_rc));
	api = calloc(1, sizeof(*api));
	if (!api)
		return rtl_error_set(err, -ENOMEM, "robot api: out of memory");
	api->curl = curl_easy_init();
	if (!api->curl) {
		free(api);
		return rtl_error_set(err, -ENOMEM, "robot api: libcurl: no handle (out of memory)");
	}
	memcpy(api->host, cfg->host, hl + 1);
	api->port = cfg->port ? cfg->port : RTL_UR_ROBOT_API_PORT;
	api->timeout_ns = cfg->timeout_ns;
	/* An IPv6 literal needs brackets in a URL. */
	snprintf(api->base, sizeof(api->base),
		 strchr(api->host, ':') ? "http://[%s]:%u" RTL_UR_ROBOT_API_BASE
					: "http://%s:%u" RTL_UR_ROBOT_API_BASE,
		 api->host, api->port);
	curl_easy_setopt(api->curl, CURLOPT_CONNECTTIMEOUT_MS, ms_of(cfg->connect_timeout_ns));
	curl_easy_setopt(api->curl, CURLOPT_TIMEOUT_MS, ms_of(cfg->timeout_ns));
	curl_easy_setopt(api->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(api->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(api->curl, CURLOPT_WRITEDATA, api);
	/* No proxy from the environment: the controller is on the cell's
	 * network, and a proxy would turn "refused" into a proxy's 502. */
	curl_easy_setopt(api->curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(api->curl, CURLOPT_PROTOCOLS_STR, "http");
	*out = api;
	return 0;
}

void rtl_ur_robot_api_destroy(struct rtl_ur_robot_api *api)
{
	if (!api)
		return;
	curl_easy_cleanup(api->curl);
	free(api);
}

/* The transport's failure of @method @path, as -errno and a sentence. */
static int transport_error(struct rtl_ur_robot_api *api, CURLcode rc, const char *method,
			   const char *path, struct rtl_error *err)
{
	long os_errno = 0;

	curl_easy_getinfo(api->curl, CURLINFO_OS_ERRNO, &os_errno);
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		if (os_errno == EHOSTUNREACH || os_errno == ENETUNREACH)
			return rtl_error_set(err, -EHOSTUNREACH,
					     "robot api: no route to %s: check the cable, the "
					     "address and this computer's network settings",
					     api->host);
		return rtl_error_set(err, -ECONNREFUSED,
				     "robot api: %s:%u refused the connection: the Robot API is "
				     "off, or the controller is not PolyScope X 10.11 or newer "
				     "(CB3 and e-Series have the dashboard server on 29999); "
				     "check the address and port",
				     api->host, api->port);
	case CURLE_COULDNT_RESOLVE_HOST:
		return rtl_error_set(err, -EHOSTUNREACH,
				     "robot api: cannot resolve '%s': check the controller's "
				     "name or give its address",
				     api->host);
	case CURLE_OPERATION_TIMEDOUT:
		return rtl_error_set(err, -ETIMEDOUT,
				     "robot api: no reply to %s %s from %s:%u within %.1f s: is "
				     "the controller up and on this network? Check the cable and "
				     "address, or allow more time",
				     method, path, api->host, api->port,
				     (double)api->timeout_ns / 1e9);
	case CURLE_WRITE_ERROR:
		if (api->body_overflow)
			return rtl_error_set(err, -EMSGSIZE,
					     "robot api: the reply to %s %s is longer than %u "
					     "bytes: not the Robot API? Check the port",
					     method, path, RTL_UR_ROBOT_API_BODY);
		break;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
		return rtl_error_set(err, -ECONNRESET,
				     "robot api: %s:%u closed the connection before a whole reply "
				     "to %s %s: the controller restarted, or the port is not the "
				     "Robot API; try again",
				     api->host, api->port, method, path);
	case CURLE_OUT_OF_MEMORY:
		return rtl_error_set(err, -ENOMEM, "robot api: out of memory");
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return rtl_error_set(err, -EPROTO,
				     "robot api: %s:%u does not speak HTTP (%s) to %s %s: check "
				     "the port",
				     api->host, api->port, curl_easy_strerror(rc), method, path);
	default:
		break;
	}
	return rtl_error_set(err, -EIO, "robot api: %s %s on %s:%u failed: %s", method, path,
			     api->host, api->port, curl_easy_strerror(rc));
}

/*
 * One request: @method @path (under the base) with the JSON @body (NULL:
 * none). On 2xx returns 0 with the reply in api->body; otherwise the error.
 * @what names the step for the sentences ("power on").
 */
static int request(struct rtl_ur_robot_api *api, const char *method, const char *path,
		   const char *body, const char *what, bool state_change, struct rtl_error *err)
{
	struct curl_slist *hdrs = NULL;
	char url[sizeof(api->base) + 128];
	char msg[200];
	long status = 0;
	CURLcode rc;

	if (!api)
		return rtl_error_set(err, -EINVAL, "robot api: no client");
	snprintf(url, sizeof(url), "%s%s", api->base, path);
	api->body_len = 0;
	api->body_overflow = false;
	api->body[0] = '\0';
	curl_easy_setopt(api->curl, CURLOPT_URL, url);
	if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		if (!hdrs)
			return rtl_error_set(err, -ENOMEM, "robot api: out of memory");
		curl_easy_setopt(api->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(api->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		curl_easy_setopt(api->curl, CURLOPT_HTTPGET, 0L);
		curl_easy_setopt(api->curl, CURLOPT_NOBODY, 0L);
		curl_easy_setopt(api->curl, CURLOPT_POST, 1L);
	} else {
		curl_easy_setopt(api->curl, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(api->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(api->curl, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(api->curl);
	/* @body and @hdrs end with this call: the handle keeps no pointer to them. */
	curl_easy_setopt(api->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(api->curl, CURLOPT_POSTFIELDS, NULL);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK)
		return transport_error(api, rc, method, path, err);
	curl_easy_getinfo(api->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return 0;
	if (rtl_ur_robot_api_json_string(msg, sizeof(msg), api->body, api->body_len, "message") < 0)
		snprintf(msg, sizeof(msg), "no message");
	if (status == 404 || status == 405)
		return rtl_error_set(err, -EOPNOTSUPP,
				     "robot api: %s: %s %s answered HTTP %ld (%s): this PolyScope "
				     "X has no such endpoint; update it to 10.11 or newer",
				     what, method, path, status, msg);
	if (status >= 400 && status < 500)
		return rtl_error_set(
			err, -EPERM,
			state_change ? "robot api: %s refused (HTTP %ld: %s): if the robot "
				       "is in local control, switch to remote control on the "
				       "teach pendant; otherwise read the pendant's popup"
				     : "robot api: %s refused (HTTP %ld: %s): check the "
				       "controller's settings (Robot API access)",
			what, status, msg);
	return rtl_error_set(err, -EIO,
			     "robot api: %s: %s %s answered HTTP %ld (%s): look at the "
			     "controller's log",
			     what, method, path, status, msg);
}

/* GET @path and read the string member @key of the reply into @out: 0, the
 * request's error, or -EPROTO with the sentence. */
static int get_field(struct rtl_ur_robot_api *api, const char *path, const char *what,
		     const char *key, char *out, size_t cap, struct rtl_error *err)
{
	int r = request(api, "GET", path, NULL, what, false, err);

	if (r)
		return r;
	if (rtl_ur_robot_api_json_string(out, cap, api->body, api->body_len, key) >= 0)
		return 0;
	return rtl_error_set(err, -EPROTO,
			     "robot api: %s: the reply is not a JSON object with a string "
			     "\"%s\" (got '%.60s'): not the Robot API on %s:%u? Check the port",
			     what, key, api->body, api->host, api->port);
}

/* The values read and parsed by get_parsed(). */
enum parsed { P_ROBOT_MODE, P_SAFETY_MODE, P_VERSION };

static const struct parsed_field {
	const char *path, *what, *key;
	const char *unknown; /* the sentence's end when the value does not parse */
} parsed_fields[] = {
	[P_ROBOT_MODE] = { "/robotstate/v1/robotmode", "robot mode", "mode",
			   "is not one rtloop knows: update rtloop, or report it" },
	[P_SAFETY_MODE] = { "/robotstate/v1/safetymode", "safety mode", "mode",
			    "is not one rtloop knows: update rtloop, or report it" },
	[P_VERSION] = { "/versions/v1", "version", "marketingVersion",
			"is not X.Y.Z: not the Robot API? Check the port" },
};

/* get_field() of @which, parsed into @out (the type the parse of @which
 * takes): 0, the request's error, or -EPROTO with the sentence. */
static int get_parsed(struct rtl_ur_robot_api *api, enum parsed which, void *out,
		      struct rtl_error *err)
{
	const struct parsed_field *f = &parsed_fields[which];
	char v[64];
	int r = get_field(api, f->path, f->what, f->key, v, sizeof(v), err);

	if (r)
		return r;
	r = which == P_ROBOT_MODE    ? rtl_ur_robot_mode_parse(out, v)
	    : which == P_SAFETY_MODE ? rtl_ur_safety_status_parse(out, v)
				     : rtl_ur_version_parse(out, v);
	if (r)
		return rtl_error_set(err, -EPROTO, "robot api: %s '%s' %s", f->what, v, f->unknown);
	return 0;
}

/* PUT {"action": @action} to @path; @what names the step. */
static int put_action(struct rtl_ur_robot_api *api, const char *path, const char *action,
		      const char *what, struct rtl_error *err)
{
	char body[64];

	snprintf(body, sizeof(body), "{\"action\": \"%s\"}", action);
	return request(api, "PUT", path, body, what, true, err);
}

static int state_action(struct rtl_ur_robot_api *api, const char *action, const char *what,
			struct rtl_error *err)
{
	return put_action(api, "/robotstate/v1/state", action, what, err);
}

int rtl_ur_robot_api_power_on(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	return state_action(api, "POWER_ON", "power on", err);
}

int rtl_ur_robot_api_power_off(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	return state_action(api, "POWER_OFF", "power off", err);
}

int rtl_ur_robot_api_brake_release(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	return state_action(api, "BRAKE_RELEASE", "brake release", err);
}

int rtl_ur_robot_api_unlock_protective_stop(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	struct rtl_error e2 = { 0 };
	bool remote = false;
	int r = state_action(api, "UNLOCK_PROTECTIVE_STOP", "unlock protective stop", err);

	/* The Robot API refuses an early unlock like any other refusal; in
	 * remote control a refused unlock is that one (the 5 s rule), which
	 * the dashboard's contract calls -EAGAIN. */
	if (r == -EPERM && rtl_ur_robot_api_is_in_remote_control(api, &remote, &e2) == 0 && remote)
		return rtl_error_set(err, -EAGAIN,
				     "robot api: unlock protective stop refused in remote control: "
				     "too early after the stop (the controller allows it 5 s after "
				     "it); try again");
	return r;
}

int rtl_ur_robot_api_robot_mode(struct rtl_ur_robot_api *api, enum rtl_ur_robot_mode *mode,
				struct rtl_error *err)
{
	return get_parsed(api, P_ROBOT_MODE, mode, err);
}

int rtl_ur_robot_api_safety_mode(struct rtl_ur_robot_api *api, enum rtl_ur_safety_status *status,
				 struct rtl_error *err)
{
	return get_parsed(api, P_SAFETY_MODE, status, err);
}

int rtl_ur_robot_api_program_state(struct rtl_ur_robot_api *api, struct rtl_ur_program *prog,
				   struct rtl_error *err)
{
	static const enum rtl_ur_program_state states[] = {
		RTL_UR_PROGRAM_STOPPED,
		RTL_UR_PROGRAM_PLAYING,
		RTL_UR_PROGRAM_PAUSED,
	};
	char v[64];
	int r = get_field(api, "/program/v1/state", "program state", "state", v, sizeof(v), err);

	if (r)
		return r;
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		/* PolyScope X has been seen to answer in either case. */
		if (!strcasecmp(v, rtl_ur_program_state_name(states[i]))) {
			prog->state = states[i];
			if (rtl_ur_robot_api_json_string(prog->name, sizeof(prog->name), api->body,
							 api->body_len, "name") < 0 ||
			    !prog->name[0])
				snprintf(prog->name, sizeof(prog->name), "<unnamed>");
			return 0;
		}
	}
	return rtl_error_set(err, -EPROTO,
			     "robot api: program state '%s' is not one rtloop knows (STOPPED, "
			     "PLAYING, PAUSED): update rtloop, or report it",
			     v);
}

int rtl_ur_robot_api_is_in_remote_control(struct rtl_ur_robot_api *api, bool *remote,
					  struct rtl_error *err)
{
	char v[32];
	int r = get_field(api, "/system/v1/controlmode", "control mode", "mode", v, sizeof(v), err);

	if (r)
		return r;
	if (!strcasecmp(v, "REMOTE"))
		*remote = true;
	else if (!strcasecmp(v, "LOCAL"))
		*remote = false;
	else
		return rtl_error_set(err, -EPROTO,
				     "robot api: control mode '%s' is neither LOCAL nor REMOTE: "
				     "update rtloop, or report it",
				     v);
	return 0;
}

int rtl_ur_robot_api_version(struct rtl_ur_robot_api *api, struct rtl_ur_version *v,
			     struct rtl_error *err)
{
	return get_parsed(api, P_VERSION, v, err);
}

int rtl_ur_robot_api_load(struct rtl_ur_robot_api *api, const char *program, struct rtl_error *err)
{
	char body[NAME_MAX_BYTES + 32];
	size_t n;
	int r;

	if (!program || !(n = strlen(program)) || n > NAME_MAX_BYTES)
		return rtl_error_set(err, -EINVAL,
				     "robot api: load: the program name is empty or longer than "
				     "%d bytes",
				     NAME_MAX_BYTES);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)program[i] < 0x20 || program[i] == '"' || program[i] == '\\')
			return rtl_error_set(err, -EINVAL,
					     "robot api: load: the program name has a quote, a "
					     "backslash or a control character: rename it");
	snprintf(body, sizeof(body), "{\"name\": \"%s\"}", program);
	r = request(api, "PUT", "/program/v1/loaded", body, "load", true, err);
	if (r == -EOPNOTSUPP)
		return rtl_error_set(err, -ENOENT,
				     "robot api: load: no program '%s' on the controller: check "
				     "its name on the teach pendant (Programs)",
				     program);
	return r;
}

static int program_action(struct rtl_ur_robot_api *api, const char *action, struct rtl_error *err)
{
	return put_action(api, "/program/v1/state", action, action, err);
}

int rtl_ur_robot_api_play(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	return program_action(api, "play", err);
}

int rtl_ur_robot_api_pause(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	return program_action(api, "pause", err);
}

int rtl_ur_robot_api_stop(struct rtl_ur_robot_api *api, struct rtl_error *err)
{
	return program_action(api, "stop", err);
}
