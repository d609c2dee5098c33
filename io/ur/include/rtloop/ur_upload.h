/* SPDX-License-Identifier: MIT */
/*
 * rtl_ur_upload: rtloop_control.script onto a real UR controller (or
 * rtde-sim --boot) at every connect of the RTDE transport, as a hook of its
 * connect (struct rtl_rtde_transport_hook_ops, <rtloop/rtde_transport.h>).
 *
 * At every connect (the first and each reconnect), after the RTDE
 * handshake, the hook:
 *   1. when .unlock is set and the controller reports a protective stop,
 *      unlocks it (retrying while the controller refuses within its 5 s);
 *   2. sends the program (read once, at create) to the primary port: the
 *      controller replaces whatever program ran with it;
 *   3. sends the safe package with a new heartbeat every period and reads
 *      the data packages until the executor reports ready: bit 0 of
 *      RTL_RTDE_CMD_OUT_STATUS together with RTL_RTDE_CMD_OUT_SEQ equal to
 *      a heartbeat sent after the upload (a stale register from an earlier
 *      run cannot pass), within ready_timeout_ns. A runtime exception on
 *      the primary port fails the connect with its line and text; so does
 *      a controller message that the program did not start.
 * While the loop runs, a data package with safety_mode PROTECTIVE_STOP or
 * runtime_state not PLAYING ends the stream with a sentence that says so
 * (the loop reconnects if it was asked to, and the reconnect uploads
 * again). rtl_ur_upload_stop_program(), and the transport's destroy, stop
 * the program: through the dashboard ("stop"), or on PolyScope X
 * (controller version 10 and up, no dashboard) through the Robot API,
 * which also does the unlock there (a librtloop built without the Robot
 * API, -Drobot_api=disabled, says so and what to do instead).
 * The transport's output recipe gains the fields this needs (the
 * executor's status and heartbeat registers, robot_mode, safety_mode,
 * runtime_state); its input recipes must hold the command layout
 * (RTL_RTDE_CMD_RECIPE), whose safe package and heartbeat the wait uses.
 *
 * Use:
 *   struct rtl_ur_upload_config uc = { .size = sizeof(uc), .unlock = true };
 *   rtl_ur_upload_create(&u, &uc, &err);
 *   tc.hook = &rtl_ur_upload_hook;
 *   tc.hook_ctx = u;
 *   rtl_rtde_transport_create(&t, &tc, &err);
 *   ... the loop runs, then stops (the arm at rest) ...
 *   rtl_ur_upload_stop_program(u, &err);
 *   rtl_rtde_transport_destroy(t);
 *   rtl_ur_upload_destroy(u);
 * One upload object serves one transport, and must outlive it.
 *
 * Threads: the hook runs where the transport's connect runs (the
 * application's thread at the loop's start, the rx thread at a reconnect,
 * with no step running) and, per data package, on the rx thread (RT-safe
 * there). rtl_ur_upload_stats() from any thread; the rest is set-up time.
 */
#ifndef RTLOOP_UR_UPLOAD_H
#define RTLOOP_UR_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/rtde_transport.h>

RTL_BEGIN_DECLS

/*
 * What to upload and how. Zero means the default; set .size =
 * sizeof(struct rtl_ur_upload_config).
 */
struct rtl_ur_upload_config {
	size_t size;
	const char *script;	  /* the program's path; NULL: rtl_rtde_cmd_script_path() */
	uint16_t primary_port;	  /* 0: 30001 */
	uint16_t dashboard_port;  /* 0: 29999 */
	uint16_t robot_api_port;  /* PolyScope X's Robot API, used instead; 0: 80 */
	bool no_dashboard;	  /* neither interface: no unlock, no stop at exit */
	bool unlock;		  /* unlock a protective stop before uploading (when asked) */
	int64_t ready_timeout_ns; /* 0: 5 s */
};

/* What the upload did (rtl_ur_upload_stats()). Set .size. */
struct rtl_ur_upload_counters {
	size_t size;
	uint64_t uploads;	/* programs sent */
	uint64_t unlocks;	/* protective stops unlocked before an upload */
	int64_t ready_ns;	/* the last upload's time to ready */
	uint64_t program_stops; /* programs stopped (dashboard or Robot API) */
};

/* The upload: opaque (rtl_ur_upload_create()). */
struct rtl_ur_upload;

/*
 * An upload for @cfg (copied; the script path is read now, so a missing
 * program fails here, not at the first connect). Connects to nothing.
 * Returns 0 and sets *@out, or, with @err filled and *@out NULL:
 *   -EINVAL        @out or @cfg NULL, .size 0 or too small, an empty or
 *                  too large program
 *   -E2BIG         @cfg of a newer rtloop with fields this one does not
 *                  know set
 *   -ENAMETOOLONG  the program's path is too long
 *   -ENOENT, -EACCES, -EIO  the program cannot be read (the sentence
 *                  names the path and where meson install puts it)
 *   -ENOMEM        out of memory
 * Not RT-safe.
 */
RTL_API int rtl_ur_upload_create(struct rtl_ur_upload **out, const struct rtl_ur_upload_config *cfg,
				 struct rtl_error *err);

/* Free @u (NULL: nothing). Stops nothing: the transport's destroy (the
 * hook's finish) or rtl_ur_upload_stop_program() does. Not RT-safe. */
RTL_API void rtl_ur_upload_destroy(struct rtl_ur_upload *u);

/*
 * The hook: put it in struct rtl_rtde_transport_config.hook with the
 * upload as hook_ctx. Its connected returns, with the sentence, what the
 * steps above fail with: the unlock's and the primary client's codes,
 * -EINVAL (no command layout's safe package with a heartbeat), -ENOEXEC
 * (the controller rejected the program: its line and column), -EAGAIN
 * (the controller did not start it: bring the arm up), -ETIMEDOUT (no
 * ready executor within ready_timeout_ns: what the data showed), the
 * RTDE connection's failure, or -ENOTSUP (PolyScope X, and a librtloop
 * built without the Robot API). Its frame ends the stream with -EPERM
 * (protective stop) or -ESRCH (the program stopped).
 */
RTL_API extern const struct rtl_rtde_transport_hook_ops rtl_ur_upload_hook;

/* A snapshot of the counters into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written); any thread (relaxed
 * loads). Returns 0, or -EINVAL (@u or @out NULL, out->size not set). */
RTL_API int rtl_ur_upload_stats(const struct rtl_ur_upload *u, struct rtl_ur_upload_counters *out);

/*
 * Stop the uploaded program through the dashboard, or the Robot API on
 * PolyScope X (not with no_dashboard): call it after the loop's stop at
 * exit has brought the arm to rest. Idempotent: 0 when no program of ours
 * runs; the transport's destroy calls it (through the hook's finish) when
 * one still does. Returns 0, or the interface's error with @err filled
 * (-ENOTSUP: PolyScope X, and a librtloop built without the Robot API).
 * Not RT-safe (it connects and waits, bounded by the client's time-outs).
 */
RTL_API int rtl_ur_upload_stop_program(struct rtl_ur_upload *u, struct rtl_error *err);

RTL_END_DECLS

#endif /* RTLOOP_UR_UPLOAD_H */
