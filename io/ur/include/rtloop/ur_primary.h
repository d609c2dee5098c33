/* SPDX-License-Identifier: MIT */
/*
 * rtl_ur_primary: Universal Robots' primary (30001) and secondary (30002)
 * interfaces: a codec for the subset rtloop needs at bring-up, and a small
 * blocking client that sends URScript programs and reports what the
 * controller said about them.
 *
 * Design
 * ------
 * The wire format is docs/ur-primary.md: a stream of messages, each an
 * int32 length (big-endian, the 5-byte header included) and a uint8 type.
 * ROBOT_STATE (16) is a sequence of sub-packages with the same kind of
 * header; ROBOT_MESSAGE (20) carries a timestamp, a source and a
 * robot-message type, then its body. The codec is plain functions over
 * byte buffers: rtl_ur_frame() cuts a stream, rtl_ur_state_next() walks a
 * robot state, and one decoder per message reads a body with every read
 * bounded by the length it was given, never by a length inside the bytes
 * (a declared sub-package or string that overruns its container is an
 * error, -EBADMSG). The encoders write the same layouts (the simulator and
 * the tests use them), computing the size first and writing only if it
 * fits.
 *
 * Robot mode data differs between controller versions (docs/ur-primary.md
 * 4.1): its layout is chosen from the major and minor version of the
 * version message, which every controller sends first on both ports.
 *
 * The client (rtl_ur_primary_create() ... rtl_ur_primary_destroy()) owns its
 * socket and runs on the caller's thread: every call that waits takes a
 * timeout. It keeps the version, the latest robot mode data, and the robot
 * messages in a bounded queue (the oldest is dropped and counted when the
 * caller does not drain it); every message it rejects or does not know is
 * counted under its own name in struct rtl_ur_primary_counters, and only a
 * broken framing ends the connection. The library never prints.
 *
 * Thread safety: the codec is reentrant and RT-safe (no allocation, no
 * locks, no system calls). A client is used by one thread at a time; its
 * calls are set-up calls (not RT-safe).
 */
#ifndef RTLOOP_UR_PRIMARY_H
#define RTLOOP_UR_PRIMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

#define RTL_UR_PRIMARY_PORT 30001
#define RTL_UR_SECONDARY_PORT 30002
#define RTL_UR_REALTIME_PORT 30003

/* Bytes of a message or sub-package header: int32 length + uint8 type. */
#define RTL_UR_HEADER 5
/* Bytes of a robot message's header after the package header: uint64
 * timestamp, int8 source, uint8 robot-message type. */
#define RTL_UR_MSG_HEADER (RTL_UR_HEADER + 10)
/* The largest message accepted (a real controller's largest is a few kB):
 * a declared length above it breaks the framing (-EMSGSIZE). */
#define RTL_UR_MAX_MESSAGE 65536
/* Bytes kept of a text, title or project name (terminating NUL included);
 * longer strings are cut and flagged. */
#define RTL_UR_TEXT 512
#define RTL_UR_NAME 64
/* Robot messages the client queues before it drops the oldest. */
#define RTL_UR_QUEUE 32

/* Message types (the byte after the length). */
enum rtl_ur_msg_id {
	RTL_UR_MSG_ROBOT_STATE = 16,
	RTL_UR_MSG_ROBOT_MESSAGE = 20,
};

/* Sub-package types of ROBOT_STATE; only ROBOT_MODE is decoded. */
enum rtl_ur_state_type {
	RTL_UR_STATE_ROBOT_MODE = 0,
	RTL_UR_STATE_JOINT = 1,
	RTL_UR_STATE_TOOL = 2,
	RTL_UR_STATE_MASTERBOARD = 3,
	RTL_UR_STATE_CARTESIAN = 4,
	RTL_UR_STATE_KINEMATICS = 5,
	RTL_UR_STATE_CONFIGURATION = 6,
	RTL_UR_STATE_FORCE_MODE = 7,
	RTL_UR_STATE_ADDITIONAL = 8,
};

/* Robot-message types (the byte after timestamp and source). */
enum rtl_ur_robot_msg_id {
	RTL_UR_RMSG_TEXT = 0,
	RTL_UR_RMSG_LABEL = 1,
	RTL_UR_RMSG_POPUP = 2,
	RTL_UR_RMSG_VERSION = 3,
	RTL_UR_RMSG_SAFETY_MODE = 5,
	RTL_UR_RMSG_ERROR_CODE = 6,
	RTL_UR_RMSG_KEY = 7,
	RTL_UR_RMSG_REQUEST_VALUE = 9,
	RTL_UR_RMSG_RUNTIME_EXCEPTION = 10,
};

/* The version message (robot-message type 3). */
struct rtl_ur_version_msg {
	uint64_t timestamp;
	int8_t source;
	char project[RTL_UR_NAME]; /* "URControl" */
	uint8_t major, minor;
	int32_t bugfix; /* the "svn revision" field of older documents */
	int32_t build;
	char build_date[RTL_UR_NAME];
	bool cut; /* a string was longer than its field here */
};

/* Robot mode data (ROBOT_STATE sub-package 0). */
struct rtl_ur_robot_mode_data {
	uint64_t timestamp; /* controller time, microseconds */
	bool real_robot_connected;
	bool real_robot_enabled;
	bool power_on;
	bool emergency_stopped;
	bool protective_stopped;
	bool program_running;
	bool program_paused;
	int8_t robot_mode;    /* -1 NO_CONTROLLER ... 7 RUNNING, 8 UPDATING_FIRMWARE */
	uint8_t control_mode; /* 0 position, 1 teach, 2 force, 3 torque */
	double target_speed_fraction;
	double speed_scaling;		    /* 3.0 and later */
	double target_speed_fraction_limit; /* 3.2 and later; 0 before */
	uint8_t reserved;		    /* 3.5 and later (and 5.x); 0 before */
};

/*
 * A robot message other than the version message. Which fields carry
 * meaning depends on @type:
 *   TEXT               text
 *   ERROR_CODE         code, argument, report_level, data_type, data, text
 *   KEY                code, argument, title, text
 *   RUNTIME_EXCEPTION  line, column, text
 */
struct rtl_ur_robot_msg {
	uint64_t timestamp;
	int8_t source;
	uint8_t type; /* enum rtl_ur_robot_msg_id */
	int32_t code, argument;
	int32_t report_level;
	uint8_t data_type;
	uint32_t data;
	int32_t line, column;
	char title[RTL_UR_NAME];
	char text[RTL_UR_TEXT];
	bool cut; /* the title or text was longer than its field here */
};

/* ---- codec -------------------------------------------------------------- */

/*
 * Is there a complete message at the start of @buf (@len bytes)? Returns 1
 * and its length in *@msg_len, 0 when more bytes are needed, or -EBADMSG
 * (declared length below the 5-byte header) or -EMSGSIZE (above
 * RTL_UR_MAX_MESSAGE): the framing is lost and the stream cannot be
 * resynchronised. RT-safe.
 */
RTL_API int rtl_ur_frame(size_t *msg_len, const uint8_t *buf, size_t len);

/*
 * The type byte of the complete message @msg (@len bytes, as rtl_ur_frame()
 * measured it). Returns the type (0..255) or -EBADMSG when @len is below
 * the header or differs from the declared length. RT-safe.
 */
RTL_API int rtl_ur_msg_type(const uint8_t *msg, size_t len);

/*
 * Walk the sub-packages of the ROBOT_STATE message @msg (@len bytes). Start
 * with *@off = 0; each call returns 1 with the next sub-package (header
 * included) in *@sub / *@sub_len and its type in *@type, 0 at the end, or
 * -EBADMSG when @msg is not a ROBOT_STATE or a sub-package declares a
 * length below its header or beyond the end of the message. RT-safe.
 */
RTL_API int rtl_ur_state_next(size_t *off, const uint8_t **sub, size_t *sub_len, uint8_t *type,
			      const uint8_t *msg, size_t len);

/*
 * Returns the robot-message type of ROBOT_MESSAGE @msg (@len bytes), or
 * -EBADMSG when it is not one or is shorter than RTL_UR_MSG_HEADER. RT-safe.
 */
RTL_API int rtl_ur_robot_msg_type(const uint8_t *msg, size_t len);

/*
 * The layout of robot mode data for controller @major.@minor: returns its
 * size in bytes, header included (38 for 3.0-3.1, 46 for 3.2-3.4, 47 for 3.5 and
 * later and for 5.x and later), or -EPROTONOSUPPORT for majors below 3.
 * RT-safe.
 */
RTL_API int rtl_ur_robot_mode_size(uint8_t major, uint8_t minor);

/*
 * Decode the robot mode sub-package @sub (@len bytes, header included) of a
 * controller @major.@minor into @out. A longer sub-package than the
 * version's layout is accepted (fields are appended in newer versions; the
 * rest is ignored). Returns 0, -EBADMSG (not sub-package 0, or shorter than
 * the layout), -EPROTONOSUPPORT (major below 3). RT-safe.
 */
RTL_API int rtl_ur_decode_robot_mode(struct rtl_ur_robot_mode_data *out, const uint8_t *sub,
				     size_t len, uint8_t major, uint8_t minor);

/*
 * Decode the version message @msg (@len bytes). Returns 0, -EBADMSG (not a
 * version message, a body shorter than its fields, or a project name
 * longer than what follows it), -EINVAL (a NULL pointer). Strings longer
 * than their field are cut and out->cut is set. RT-safe.
 */
RTL_API int rtl_ur_decode_version(struct rtl_ur_version_msg *out, const uint8_t *msg, size_t len);

/*
 * Decode the robot message @msg (@len bytes) of type TEXT, ERROR_CODE, KEY
 * or RUNTIME_EXCEPTION. Returns 0, -ENOMSG (a robot-message type this
 * codec does not decode: out->type, timestamp and source are filled),
 * -EBADMSG (not a robot message, a body shorter than its fields, a title
 * longer than what follows it), -EINVAL (a NULL pointer). RT-safe.
 */
RTL_API int rtl_ur_decode_robot_msg(struct rtl_ur_robot_msg *out, const uint8_t *msg, size_t len);

/*
 * Encoders: write one complete message into @buf (@cap bytes). Each
 * returns the bytes written, or -ENOBUFS (@cap too small; nothing
 * meaningful written), -EMSGSIZE (above RTL_UR_MAX_MESSAGE), -EINVAL (a
 * NULL pointer, an unknown type, or a version this codec has no layout
 * for). Strings are written up to their NUL. RT-safe.
 */
RTL_API int rtl_ur_encode_version(uint8_t *buf, size_t cap, const struct rtl_ur_version_msg *v);
/* Types TEXT, ERROR_CODE, KEY and RUNTIME_EXCEPTION. Returns the bytes
 * written, or a code above (-EINVAL for another type). */
RTL_API int rtl_ur_encode_robot_msg(uint8_t *buf, size_t cap, const struct rtl_ur_robot_msg *m);
/* A ROBOT_STATE holding one robot mode sub-package in the layout of
 * controller @major.@minor. Returns the bytes written, or a code above
 * (-EINVAL for a major below 3). */
RTL_API int rtl_ur_encode_robot_state(uint8_t *buf, size_t cap, uint8_t major, uint8_t minor,
				      const struct rtl_ur_robot_mode_data *mode);

/* ---- client ------------------------------------------------------------- */

/* What the client received, and everything it rejected, each by name:
 * X(name, what it counts), declared once; the snapshot, the client's own
 * counters and rtl_ur_primary_counter_fields() are made from it. New
 * counters go at the end. */
#define RTL_UR_PRIMARY_COUNTERS(X)                                           \
	X(messages, "complete messages framed")                              \
	X(robot_states, "ROBOT_STATE messages")                              \
	X(robot_modes, "robot mode data decoded")                            \
	X(robot_msgs, "robot messages queued")                               \
	X(bad_length, "a declared length below the header (fatal)")          \
	X(too_long, "a declared length above the bound (fatal)")             \
	X(sub_overrun, "a sub-package beyond its message (message dropped)") \
	X(bad_robot_mode, "robot mode data shorter than its layout")         \
	X(bad_robot_msg, "a robot message shorter than its fields")          \
	X(bad_version, "a version message that did not decode")              \
	X(unknown_type, "messages of another type (skipped)")                \
	X(unknown_sub, "sub-packages not decoded (skipped)")                 \
	X(unknown_robot_msg, "robot-message types not decoded (skipped)")    \
	X(queue_dropped, "robot messages dropped from a full queue")         \
	X(cut_strings, "messages with a text cut to fit")

/* A snapshot of the counters (rtl_ur_primary_stats()). Set .size. */
struct rtl_ur_primary_counters {
	size_t size;
	RTL_UR_PRIMARY_COUNTERS(RTL_STAT_U64)
};

struct rtl_ur_primary;

/*
 * Connect to @host port @port (RTL_UR_PRIMARY_PORT, RTL_UR_SECONDARY_PORT,
 * or any other) and wait for the version message; @timeout_ns bounds the
 * connect and, again, the wait for the version (> 0). Messages before the
 * version message are processed as usual. On success *@out owns the
 * connection. Returns 0 or, with @err filled:
 *   the errors of rtl_tcp_connect() (-ECONNREFUSED, -ETIMEDOUT, ...);
 *   -ETIMEDOUT        connected, but no version message in time;
 *   -ECONNRESET       the peer closed before sending it;
 *   -EBADMSG, -EMSGSIZE  the stream is not framed as the primary interface;
 *   -EPROTONOSUPPORT  a controller older than 3.0;
 *   -EINVAL, -ENOMEM.
 */
RTL_API int rtl_ur_primary_create(struct rtl_ur_primary **out, const char *host, uint16_t port,
				  int64_t timeout_ns, struct rtl_error *err);

/* Close the connection and free @c (NULL is fine). */
RTL_API void rtl_ur_primary_destroy(struct rtl_ur_primary *c);

/* Returns the controller's version message (valid until close), NULL for a
 * NULL @c. */
RTL_API const struct rtl_ur_version_msg *rtl_ur_primary_version(const struct rtl_ur_primary *c);

/*
 * Receive and process what arrives within @timeout_ns (0: only what is
 * already there), returning after the first read that completed at least
 * one message. Returns the number of messages processed (0 at the
 * timeout), or with @err filled: -ECONNRESET (the peer closed; a message
 * cut in the middle is named), -EBADMSG or -EMSGSIZE (framing lost), other
 * -errno of recv. After an error the connection is unusable.
 */
RTL_API int rtl_ur_primary_poll(struct rtl_ur_primary *c, int64_t timeout_ns,
				struct rtl_error *err);

/* The latest robot mode data into @out (may be NULL). Returns true, or false
 * when none arrived yet (or @c is NULL). */
RTL_API bool rtl_ur_primary_robot_mode(const struct rtl_ur_primary *c,
				       struct rtl_ur_robot_mode_data *out);

/* Take the oldest queued robot message into @out (may be NULL: dropped).
 * Returns true, or false when the queue is empty (or @c is NULL). */
RTL_API bool rtl_ur_primary_next_msg(struct rtl_ur_primary *c, struct rtl_ur_robot_msg *out);

/* The counters since connect into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written), from the thread that uses
 * @c. Returns 0, or -EINVAL (@c or @out NULL, out->size not set). */
RTL_API int rtl_ur_primary_stats(const struct rtl_ur_primary *c,
				 struct rtl_ur_primary_counters *out);

/* Returns the counters' names and descriptions, in the snapshot's order;
 * *@n (may be NULL) gets their number. */
RTL_API const struct rtl_stat_field *rtl_ur_primary_counter_fields(size_t *n);

/*
 * Send the URScript program @text (@len bytes) as it is, followed by a
 * newline unless it ends with one, within @timeout_ns. Returns 0 or, with
 * @err filled: -ETIMEDOUT, -EPIPE/-ECONNRESET (the peer closed), -EINVAL
 * (empty program or NULL).
 */
RTL_API int rtl_ur_primary_send_script(struct rtl_ur_primary *c, const char *text, size_t len,
				       int64_t timeout_ns, struct rtl_error *err);

/*
 * Send @text as rtl_ur_primary_send_script() does, then watch the stream
 * for @wait_ns for a runtime exception (the controller reports compile
 * and runtime errors of a program this way). Returns 0 when none came, or
 * with @err filled: -ENOEXEC with a sentence naming the line, column and
 * message and the fix; if @rtx is not NULL it receives the message. Also
 * the errors of send_script() and poll(). Messages stay queued.
 */
RTL_API int rtl_ur_primary_run_script(struct rtl_ur_primary *c, struct rtl_ur_robot_msg *rtx,
				      const char *text, size_t len, int64_t wait_ns,
				      struct rtl_error *err);

RTL_END_DECLS

#endif /* RTLOOP_UR_PRIMARY_H */
