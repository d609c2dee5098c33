// SPDX-License-Identifier: MIT
/*
 * The upload of rtloop_control.script as a hook of the RTDE transport's
 * connect (see <rtloop/ur_upload.h>).
 *
 * The transport hands the hook a connection that has finished its
 * handshake and built its safe package; the hook brings the controller's
 * program up on it with the management clients of io/ur (the dashboard, or
 * the Robot API on PolyScope X, through the one table of
 * <rtloop/ur_manage.h>) and the primary client, and reads the executor's
 * registers through the transport's own calls (rtl_rtde_transport_send_safe(),
 * rtl_rtde_transport_receive()). What it remembers between connects (the
 * controller's host and version, whether a program of ours runs) is here,
 * so the stop at the end needs no connection of the transport.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/sized.h>
#include <rtloop/stat.h>
#include <rtloop/time.h>
#include <rtloop/ur_dashboard.h>
#include <rtloop/ur_manage.h>
#include <rtloop/ur_primary.h>
#include <rtloop/ur_robot_api.h>
#include <rtloop/ur_upload.h>

/* RTDE runtime_state PLAYING (safety_mode and robot_mode are the
 * dashboard's numbers: enum rtl_ur_safety_status, enum rtl_ur_robot_mode). */
#define UR_RUNTIME_PLAYING 2
#define DEFAULT_READY_TIMEOUT_NS (5 * RTL_NS_PER_SEC)
/* The primary connection's connect and send. */
#define PRIMARY_TIMEOUT_NS (3 * RTL_NS_PER_SEC)
/* How long a refused unlock (the controller's 5 s) is retried. */
#define UNLOCK_RETRY_NS (8 * RTL_NS_PER_SEC)
#define HOST_MAX 256

/* The configuration's first version ended with ready_timeout_ns. */
struct rtl_ur_upload {
	struct rtl_ur_upload_config cfg;
	char *program;
	size_t program_len;
	char program_path[PATH_MAX];
	/* Of the last connect: the controller's numeric address (the
	 * transport resolved it once), its name as configured, its major
	 * version (the dashboard or the Robot API). */
	char host_ip[HOST_MAX];
	char host[HOST_MAX];
	unsigned major;
	/* The outputs the wait and the watch read. */
	struct rtl_rtde_handle h_status, h_seq, h_robot_mode, h_safety, h_runtime;
	/* A program of ours runs (set by the connect, on the rx thread at a
	 * reconnect; read by the frame hook there and by the stop). */
	atomic_bool uploaded;
	struct {
		_Atomic uint64_t uploads, unlocks, program_stops;
		_Atomic int64_t ready_ns;
	} c;
	unsigned char frame[RTL_RTDE_MAX_PACKAGE_SIZE]; /* the readiness wait's decodes */
};

/* ---- set-up ------------------------------------------------------------------------------- */

/* Read the program once (create): a missing file fails here, not at the
 * first connect. */
static int read_program(struct rtl_ur_upload *u, struct rtl_error *err)
{
	const char *path = u->cfg.script;
	FILE *f;
	long len;
	int ret;

	if (!path) {
		ret = rtl_rtde_cmd_script_path(u->program_path, sizeof(u->program_path), err);
		if (ret < 0)
			return ret;
	} else if (snprintf(u->program_path, sizeof(u->program_path), "%s", path) >=
		   (int)sizeof(u->program_path)) {
		return rtl_error_set(err, -ENAMETOOLONG, "upload: the program's path is too long");
	}
	f = fopen(u->program_path, "rb");
	if (!f)
		return rtl_error_set(
			err, -errno,
			"upload: %s cannot be read: %s; fix: name rtloop_control.script "
			"(meson install puts it under <prefix>/share/rtloop/)",
			u->program_path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return rtl_error_set(err, -EIO, "upload: %s cannot be read", u->program_path);
	}
	if (len == 0 || len > (1L << 20)) {
		fclose(f);
		return rtl_error_set(err, -EINVAL,
				     "upload: %s is %s; fix: name rtloop_control.script",
				     u->program_path, len ? "larger than 1 MiB" : "empty");
	}
	u->program = malloc((size_t)len);
	if (!u->program) {
		fclose(f);
		return rtl_error_set(err, -ENOMEM, "upload: out of memory");
	}
	u->program_len = fread(u->program, 1, (size_t)len, f);
	fclose(f);
	if (u->program_len != (size_t)len)
		return rtl_error_set(err, -EIO, "upload: %s cannot be read", u->program_path);
	return 0;
}

RTL_API int rtl_ur_upload_create(struct rtl_ur_upload **out, const struct rtl_ur_upload_config *cfg,
				 struct rtl_error *err)
{
	struct rtl_ur_upload *u;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "upload: nowhere to put it");
	*out = NULL;
	if (!cfg)
		return rtl_error_set(err, -EINVAL, "upload: no configuration");
	u = calloc(1, sizeof(*u));
	if (!u)
		return rtl_error_set(err, -ENOMEM, "upload: out of memory");
	ret = rtl__sized_in(&u->cfg, sizeof(u->cfg), cfg, "struct rtl_ur_upload_config", err);
	if (ret == 0)
		ret = read_program(u, err);
	if (ret < 0) {
		free(u->program);
		free(u);
		return ret;
	}
	*out = u;
	return 0;
}

RTL_API void rtl_ur_upload_destroy(struct rtl_ur_upload *u)
{
	if (!u)
		return;
	free(u->program);
	free(u);
}

RTL_API int rtl_ur_upload_stats(const struct rtl_ur_upload *u, struct rtl_ur_upload_counters *out)
{
	struct rtl_ur_upload_counters s;

	if (!u)
		return -EINVAL;
	s = (struct rtl_ur_upload_counters){
		.size = sizeof(s),
		.uploads = rtl_stat_get(&u->c.uploads),
		.unlocks = rtl_stat_get(&u->c.unlocks),
		.ready_ns = atomic_load_explicit(&u->c.ready_ns, memory_order_relaxed),
		.program_stops = rtl_stat_get(&u->c.program_stops),
	};
	return rtl__sized_out(out, &s, sizeof(s));
}

/* ---- the controller's management interface ------------------------------------------------ */

static uint16_t primary_port(const struct rtl_ur_upload *u)
{
	return u->cfg.primary_port ? u->cfg.primary_port : RTL_UR_PRIMARY_PORT;
}

/*
 * The controller's management interface, for the unlock before an upload
 * and the stop at exit: the dashboard server on CB3 and e-Series, the
 * Robot API on PolyScope X, which has no dashboard; either through the
 * table of <rtloop/ur_manage.h>. One connection per use: these are rare,
 * set-up-time calls. On success *@ops and *@h are the interface and its
 * client (close with ops->close(h)); ops->close(NULL) is safe after a
 * failure.
 */
static int mgmt_open(const struct rtl_ur_upload *u, const struct rtl_ur_manage_ops **ops, void **h,
		     struct rtl_error *err)
{
	int r;

	if (rtl_ur_is_polyscope_x(u->major)) {
		struct rtl_ur_robot_api_config ac;
		struct rtl_ur_robot_api *api = NULL;

		rtl_ur_robot_api_config_init(&ac);
		ac.host = u->host_ip;
		if (u->cfg.robot_api_port)
			ac.port = u->cfg.robot_api_port;
		r = rtl_ur_robot_api_create(&api, &ac, err);
		*ops = &rtl_ur_robot_api_manage;
		*h = api;
	} else {
		struct rtl_ur_dashboard_config dc;
		struct rtl_ur_dashboard *d = NULL;

		rtl_ur_dashboard_config_init(&dc);
		dc.host = u->host_ip;
		if (u->cfg.dashboard_port)
			dc.port = u->cfg.dashboard_port;
		dc.controller_major = u->major;
		r = rtl_ur_dashboard_create(&d, &dc, err);
		*ops = &rtl_ur_dashboard_manage;
		*h = d;
	}
	return r;
}

/* Unlock a protective stop before the upload, when asked and when there
 * is one; a refusal as too early (the controller's 5 s) is retried. */
static int unlock_if_stopped(struct rtl_ur_upload *u, struct rtl_error *err)
{
	const struct rtl_ur_manage_ops *ops;
	enum rtl_ur_safety_status st;
	int64_t until = rtl_time_now() + UNLOCK_RETRY_NS;
	void *h;
	int ret = mgmt_open(u, &ops, &h, err);

	if (!ret)
		ret = ops->safety(h, &st, err);
	if (!ret && st == RTL_UR_SAFETY_PROTECTIVE_STOP) {
		while ((ret = ops->unlock(h, err)) == -EAGAIN && rtl_time_now() < until)
			rtl_time_sleep_until(rtl_time_now() + 200 * RTL_NS_PER_MS);
		if (!ret)
			rtl_stat_add(&u->c.unlocks, 1);
	}
	ops->close(h);
	return ret;
}

RTL_API int rtl_ur_upload_stop_program(struct rtl_ur_upload *u, struct rtl_error *err)
{
	const struct rtl_ur_manage_ops *ops;
	void *h;
	int ret;

	if (!u || !atomic_load(&u->uploaded) || u->cfg.no_dashboard)
		return 0;
	ret = mgmt_open(u, &ops, &h, err);
	if (!ret)
		ret = ops->stop(h, err);
	ops->close(h);
	if (!ret) {
		atomic_store(&u->uploaded, false);
		rtl_stat_add(&u->c.program_stops, 1);
	}
	return ret;
}

/* ---- the readiness wait ------------------------------------------------------------------- */

/* The readiness wait's view of one data package. */
struct ready_view {
	bool seen;
	int32_t status, seq, robot_mode, safety_mode;
	uint32_t runtime_state;
};

static void view_of(const struct rtl_ur_upload *u, const struct rtl_rtde_frame *fr,
		    struct ready_view *v)
{
	v->seen = true;
	v->status = rtl_rtde_frame_get_int(fr, u->h_status);
	v->seq = rtl_rtde_frame_get_int(fr, u->h_seq);
	v->robot_mode = rtl_rtde_frame_get_int(fr, u->h_robot_mode);
	v->safety_mode = rtl_rtde_frame_get_int(fr, u->h_safety);
	v->runtime_state = (uint32_t)rtl_rtde_frame_get_uint(fr, u->h_runtime);
}

/* What the controller says about the program: a runtime exception or a
 * message that it did not start fails the start-up, with its words. */
static int program_messages(const struct rtl_ur_upload *u, struct rtl_ur_primary *p,
			    struct rtl_error *err)
{
	struct rtl_ur_robot_msg m;
	char said[256];

	while (rtl_ur_primary_next_msg(p, &m)) {
		/* The controller's words go into a sentence: escaped, as every
		 * controller text the RTDE side logs. */
		rtl_rtde_text_sanitize(said, sizeof(said), m.text, strlen(m.text));
		if (m.type == RTL_UR_RMSG_RUNTIME_EXCEPTION)
			return rtl_error_set(
				err, -ENOEXEC,
				"the controller rejected %s at line %d, column %d: %s; fix: use "
				"the "
				"rtloop_control.script of this rtloop version (meson install, or "
				"RTLOOP_CONTROL_SCRIPT), unmodified",
				u->program_path, (int)m.line, (int)m.column, said);
		if (m.type == RTL_UR_RMSG_KEY && strstr(m.text, "did not start"))
			return rtl_error_set(
				err, -EAGAIN,
				"the controller did not start %s: %s; fix: bring the "
				"arm up first (rtloop-arm up %s: power on, brake "
				"release; with --unlock after a protective stop), with "
				"the pendant in remote control",
				u->program_path, said, u->host);
	}
	return 0;
}

/* Send the program and wait, bounded, for its executor (the steps of
 * <rtloop/ur_upload.h>). */
static int upload(struct rtl_ur_upload *u, struct rtl_rtde_transport *t, struct rtl_error *err)
{
	const int64_t timeout =
		u->cfg.ready_timeout_ns > 0 ? u->cfg.ready_timeout_ns : DEFAULT_READY_TIMEOUT_NS;
	struct rtl_rtde_frame fr = { u->frame, 0, sizeof(u->frame) };
	struct rtl_ur_primary *p = NULL;
	struct ready_view last = { 0 };
	struct rtl_error perr = { 0 };
	int64_t start, deadline,
		period = rtl_rtde_client_info(rtl_rtde_transport_client(t))->period_ns;
	int64_t next_beat_at = 0;
	uint32_t first_beat = 0, last_beat = 0;
	bool beat_sent = false;
	int ret;

	ret = rtl_ur_primary_create(&p, u->host_ip, primary_port(u), PRIMARY_TIMEOUT_NS, &perr);
	if (ret < 0)
		return rtl_error_set(err, ret, "upload: %s", perr.msg);
	ret = rtl_ur_primary_send_script(p, u->program, u->program_len, PRIMARY_TIMEOUT_NS, &perr);
	if (ret < 0) {
		rtl_ur_primary_destroy(p);
		return rtl_error_set(err, ret, "upload: %s", perr.msg);
	}
	rtl_stat_add(&u->c.uploads, 1);
	atomic_store(&u->uploaded, true);
	start = rtl_time_now();
	deadline = start + timeout;
	for (;;) {
		int64_t now = rtl_time_now();
		struct rtl_error rerr = { 0 };
		int got;

		/* A new heartbeat every period, in the safe package (mode stop),
		 * after what an earlier send left in flight. */
		if (now >= next_beat_at) {
			uint32_t beat;
			int sent = rtl_rtde_transport_send_safe(t, &beat);

			if (sent >= 0) {
				if (!beat_sent)
					first_beat = beat;
				last_beat = beat;
				beat_sent = true;
			} else if (sent != -EAGAIN) {
				ret = rtl_error_set(err, sent,
						    "upload: sending on the RTDE connection failed "
						    "while waiting for the executor: %s",
						    strerror(-sent));
				break;
			}
			next_beat_at = now + period;
		}
		/* The data packages until the next beat is due (what the
		 * handshake's last read left in the client first). */
		got = rtl_rtde_transport_receive(
			t, &fr, next_beat_at < deadline ? next_beat_at : deadline, &rerr);
		if (got < 0) {
			ret = rtl_error_set(err, got, "upload: while waiting for the executor: %s",
					    rerr.msg);
			break;
		}
		if (got > 0)
			view_of(u, &fr, &last);
		/* Ready: the executor runs and has seen a heartbeat sent after
		 * the upload (a stale register of an earlier run cannot pass). */
		if (last.seen && beat_sent && (last.status & RTL_RTDE_CMD_STATUS_READY) &&
		    (uint32_t)last.seq - first_beat <= last_beat - first_beat) {
			atomic_store_explicit(&u->c.ready_ns, rtl_time_now() - start,
					      memory_order_relaxed);
			ret = 0;
			break;
		}
		ret = rtl_ur_primary_poll(p, 0, &perr);
		if (ret < 0) {
			ret = rtl_error_set(err, ret, "upload: %s", perr.msg);
			break;
		}
		ret = program_messages(u, p, err);
		if (ret < 0)
			break;
		if (rtl_time_now() >= deadline) {
			ret = rtl_error_set(
				err, -ETIMEDOUT,
				"upload: %s was sent to %s:%u but its executor did not report "
				"ready "
				"within %.1f s (%s); fix: power on and release the brakes "
				"(rtloop-arm up %s), put the pendant in remote control, close any "
				"popup, and check the pendant's log for an error",
				u->program_path, u->host_ip, (unsigned)primary_port(u),
				(double)timeout / 1e9,
				!last.seen ? "no data package arrived"
				: last.safety_mode == RTL_UR_SAFETY_PROTECTIVE_STOP
					? "the robot is in protective stop"
				: last.robot_mode != RTL_UR_ROBOT_MODE_RUNNING
					? "the robot is not running: powered off or brakes held"
				: last.runtime_state != UR_RUNTIME_PLAYING
					? "no program is playing"
					: "the executor is silent",
				u->host);
			break;
		}
	}
	rtl_ur_primary_destroy(p);
	return ret;
}

/* ---- the hook ----------------------------------------------------------------------------- */

/* Every connect: remember the controller, unlock when asked, upload,
 * wait for the executor. */
static int hook_connected(struct rtl_rtde_transport *t, void *ctx, struct rtl_error *err)
{
	struct rtl_ur_upload *u = ctx;
	const char *ip = rtl_rtde_transport_address(t), *host = rtl_rtde_transport_host(t);
	int ret;

	snprintf(u->host_ip, sizeof(u->host_ip), "%s", ip ? ip : "");
	snprintf(u->host, sizeof(u->host), "%s", host ? host : "");
	u->major = rtl_rtde_client_info(rtl_rtde_transport_client(t))->version.major;
	u->h_status = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_STATUS);
	u->h_seq = rtl_rtde_transport_output_handle(t, RTL_RTDE_CMD_FIELD_OUT_SEQ);
	u->h_robot_mode = rtl_rtde_transport_output_handle(t, "robot_mode");
	u->h_safety = rtl_rtde_transport_output_handle(t, "safety_mode");
	u->h_runtime = rtl_rtde_transport_output_handle(t, "runtime_state");
	if (!rtl_rtde_transport_has_safe_heartbeat(t))
		return rtl_error_set(
			err, -EINVAL,
			"upload: the readiness wait needs the command layout's safe "
			"package and heartbeat (RTL_RTDE_CMD_RECIPE in an input recipe)");
	if (u->cfg.unlock && !u->cfg.no_dashboard) {
		ret = unlock_if_stopped(u, err);
		if (ret < 0)
			return ret;
	}
	return upload(u, t, err);
}

/* While the program should run (rx thread, each data package): a
 * protective stop or a program that stopped ends the stream with the
 * reason. RT-safe: reads and, on the way out, one formatted sentence. */
static int hook_frame(struct rtl_rtde_transport *t, const struct rtl_rtde_frame *fr, void *ctx,
		      struct rtl_error *why)
{
	struct rtl_ur_upload *u = ctx;
	int32_t safety;
	uint32_t runtime;

	(void)t;
	if (!atomic_load_explicit(&u->uploaded, memory_order_relaxed))
		return 0;
	safety = rtl_rtde_frame_get_int(fr, u->h_safety);
	runtime = (uint32_t)rtl_rtde_frame_get_uint(fr, u->h_runtime);
	if (safety == RTL_UR_SAFETY_PROTECTIVE_STOP)
		return rtl_error_set(
			why, -EPERM,
			"the controller is in protective stop: the program stopped and the "
			"arm is held; fix: find the cause, then unlock (pendant, or "
			"--unlock: the reconnect unlocks and uploads again)");
	if (runtime != UR_RUNTIME_PLAYING)
		return rtl_error_set(why, -ESRCH,
				     "the program on the controller stopped (runtime_state %u): "
				     "someone pressed stop, or another program replaced it; the "
				     "reconnect uploads it again",
				     runtime);
	return 0;
}

/* The transport's destroy: every exit leaves no program of ours running
 * (the loop's stop at exit has brought the arm to rest before). */
static void hook_finish(struct rtl_rtde_transport *t, void *ctx)
{
	(void)t;
	rtl_ur_upload_stop_program(ctx, NULL);
}

RTL_API const struct rtl_rtde_transport_hook_ops rtl_ur_upload_hook = {
	.size = sizeof(struct rtl_rtde_transport_hook_ops),
	.name = "upload",
	.outputs = RTL_RTDE_CMD_FIELD_OUT_STATUS "," RTL_RTDE_CMD_FIELD_OUT_SEQ
						 ",robot_mode,safety_mode,runtime_state",
	.connected = hook_connected,
	.frame = hook_frame,
	.finish = hook_finish,
};
