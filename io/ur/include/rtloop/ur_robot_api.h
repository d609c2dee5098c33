/* SPDX-License-Identifier: MIT */
/*
 * rtl_ur_robot_api: a client of PolyScope X's Robot API, the REST interface
 * (HTTP, port 80, under /universal-robots/robot-api, PolyScope X 10.11 and
 * up) that replaces the dashboard server of CB3 and e-Series: power, brakes,
 * protective stop, programs and the queries of the robot's state.
 *
 * Design
 * ------
 * One libcurl easy handle per client, reused so that keep-alive holds one
 * TCP connection across calls; every request is bounded by the configured
 * connect and total time-outs (CURLOPT_CONNECTTIMEOUT_MS, CURLOPT_TIMEOUT_MS)
 * and every reply body by RTL_UR_ROBOT_API_BODY bytes. The replies are tiny
 * JSON objects ({"mode": "IDLE"}); the client reads the one string field it
 * needs with a small bounded scanner (ur_robot_api.c) and maps it onto the
 * dashboard's enums (<rtloop/ur_dashboard.h>), so callers handle one set of
 * modes whichever interface the controller has. docs/ur-dashboard.md has
 * the endpoints.
 *
 * Every failure is -errno and, in @err, one sentence with the cause and the
 * fix. Unlike the dashboard there is no session to lose: a failed call
 * leaves the client usable (libcurl reconnects on the next one).
 *
 * Thread and RT safety: one client per thread (no locks inside). Nothing
 * here is RT-safe: these are bring-up calls that block up to the time-out
 * and allocate. The library never prints.
 */
#ifndef RTLOOP_UR_ROBOT_API_H
#define RTLOOP_UR_ROBOT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/ur_dashboard.h>

RTL_BEGIN_DECLS

/* The path every endpoint is under. */
#define RTL_UR_ROBOT_API_BASE "/universal-robots/robot-api"
/* Bytes of a reply body at most: a longer one is -EMSGSIZE. */
#define RTL_UR_ROBOT_API_BODY 16384

/* Fill with rtl_ur_robot_api_config_init() (it sets .size; docs/api.md,
 * "Room to grow"). */
struct rtl_ur_robot_api_config {
	size_t size;
	const char *host;	    /* name or address of the controller */
	uint16_t port;		    /* RTL_UR_ROBOT_API_PORT (80) */
	int64_t connect_timeout_ns; /* TCP connect: 3 s */
	int64_t timeout_ns;	    /* each request, connect included: 5 s */
};

struct rtl_ur_robot_api;

/* The defaults above; host stays NULL. */
RTL_API void rtl_ur_robot_api_config_init(struct rtl_ur_robot_api_config *cfg);

/*
 * Make a client for @cfg->host. Sends nothing (the first call connects).
 * On success *@out is the client (free it with rtl_ur_robot_api_destroy()).
 * Returns 0 or, with @err filled:
 *   -EINVAL  @cfg, @cfg->host or @out NULL, a host too long or empty, or a
 *            time-out <= 0.
 *   -ENOMEM  out of memory (or libcurl could not start).
 *   -ENOTSUP this librtloop was built without the Robot API (no libcurl):
 *            every call on a client returns it then too.
 */
RTL_API int rtl_ur_robot_api_create(struct rtl_ur_robot_api **out,
				    const struct rtl_ur_robot_api_config *cfg,
				    struct rtl_error *err);

/* Close the connection and free @api (NULL: nothing). */
RTL_API void rtl_ur_robot_api_destroy(struct rtl_ur_robot_api *api);

/*
 * The codes every call below may return, besides its own:
 *   -ECONNREFUSED  nothing listens on the port: the Robot API is off, or
 *                  the controller is not PolyScope X (10.11 or newer).
 *   -EHOSTUNREACH  the host name does not resolve, or no route to it.
 *   -ETIMEDOUT     no connection or no whole reply within the time-out.
 *   -ECONNRESET    the peer closed before a whole reply.
 *   -EPERM         HTTP 4xx to a state change: refused; in local control
 *                  the sentence says to switch to remote control.
 *   -EOPNOTSUPP    HTTP 404 (405): this PolyScope X has no such endpoint.
 *   -EIO           HTTP 5xx, or another status the call never gets.
 *   -EPROTO        a reply body that is not the JSON the call expects.
 *   -EMSGSIZE      a reply body longer than RTL_UR_ROBOT_API_BODY.
 *   -ENOMEM        out of memory.
 *   -EINVAL        @api is NULL.
 */

/* PUT /robotstate/v1/state {"action": "POWER_ON"} (and the others). The
 * reply comes when the controller accepted the action, not when the arm got
 * there: poll rtl_ur_robot_api_robot_mode(). Each returns 0 or a code
 * above. */
RTL_API int rtl_ur_robot_api_power_on(struct rtl_ur_robot_api *api, struct rtl_error *err);
RTL_API int rtl_ur_robot_api_power_off(struct rtl_ur_robot_api *api, struct rtl_error *err);
RTL_API int rtl_ur_robot_api_brake_release(struct rtl_ur_robot_api *api, struct rtl_error *err);
/* Returns 0 or a code above, or also -EAGAIN, as the dashboard's: refused
 * while in remote control, which is the controller's "too early after the
 * stop" (it allows the unlock 5 s after it); try again. */
RTL_API int rtl_ur_robot_api_unlock_protective_stop(struct rtl_ur_robot_api *api,
						    struct rtl_error *err);

/* GET /robotstate/v1/robotmode {"mode": "<NAME>"} into *@mode. Returns 0 or
 * a code above (-EPROTO also for a mode rtloop does not know). */
RTL_API int rtl_ur_robot_api_robot_mode(struct rtl_ur_robot_api *api, enum rtl_ur_robot_mode *mode,
					struct rtl_error *err);
/* GET /robotstate/v1/safetymode {"mode": "<NAME>"} into *@status. Returns 0
 * or a code above (-EPROTO also for a mode rtloop does not know). */
RTL_API int rtl_ur_robot_api_safety_mode(struct rtl_ur_robot_api *api,
					 enum rtl_ur_safety_status *status, struct rtl_error *err);
/* GET /program/v1/state {"state": "<STOPPED|PLAYING|PAUSED>"} into @prog
 * (the name from "name" when the reply has one, else "<unnamed>"). Returns
 * 0 or a code above (-EPROTO also for a state rtloop does not know). */
RTL_API int rtl_ur_robot_api_program_state(struct rtl_ur_robot_api *api,
					   struct rtl_ur_program *prog, struct rtl_error *err);
/* GET /system/v1/controlmode {"mode": "REMOTE"|"LOCAL"}: *@remote. Returns 0
 * or a code above (-EPROTO also for another mode). */
RTL_API int rtl_ur_robot_api_is_in_remote_control(struct rtl_ur_robot_api *api, bool *remote,
						  struct rtl_error *err);
/* GET /versions/v1 {"marketingVersion": "10.13.0", ...} into *@v. Returns 0
 * or a code above (-EPROTO also for a version that is not X.Y.Z). */
RTL_API int rtl_ur_robot_api_version(struct rtl_ur_robot_api *api, struct rtl_ur_version *v,
				     struct rtl_error *err);

/* PUT /program/v1/loaded {"name": "<program>"}. Returns 0 or a code above,
 * or -ENOENT on 404 (no such program), -EINVAL @program NULL, empty, too long or with a quote, a
 * backslash or a control character in it. */
RTL_API int rtl_ur_robot_api_load(struct rtl_ur_robot_api *api, const char *program,
				  struct rtl_error *err);
/* PUT /program/v1/state {"action": "play"|"pause"|"stop"}. Each returns 0
 * or a code above. */
RTL_API int rtl_ur_robot_api_play(struct rtl_ur_robot_api *api, struct rtl_error *err);
RTL_API int rtl_ur_robot_api_pause(struct rtl_ur_robot_api *api, struct rtl_error *err);
RTL_API int rtl_ur_robot_api_stop(struct rtl_ur_robot_api *api, struct rtl_error *err);

/*
 * Find the string member @key of the JSON object in @body (@len bytes) and
 * copy its value to @out (@cap bytes, NUL-terminated). Bounded: reads no
 * more than @len bytes. Returns the value's length, or -EPROTO when @body
 * is not an object or has no such string member, -EMSGSIZE when it does
 * not fit in @cap. Only members of the outer object count.
 */
RTL_API int rtl_ur_robot_api_json_string(char *out, size_t cap, const char *body, size_t len,
					 const char *key);

RTL_END_DECLS

#endif /* RTLOOP_UR_ROBOT_API_H */
