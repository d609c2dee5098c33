/* SPDX-License-Identifier: MIT */
/*
 * rtl_udp: rtloop's 1 kHz UDP wire format, carrying the state layout of
 * Doosan's RT output ("v1.0", 1,338 bytes) down and motion commands with
 * speedl_rt semantics up.
 *
 * Design
 * ------
 * Doosan's own RT wire format is not public (docs/doosan-rt.md 2.2): only
 * the state *layout* is (RT_OUTPUT_DATA_LIST, 4.1). So rtloop defines its
 * own datagrams, and docs/udp.md is their specification:
 *
 *   every datagram = 32-byte header + payload, all little-endian
 *     0  u32 magic "RTLU" (bytes 52 54 4c 55)
 *     4  u8  version (1)
 *     5  u8  type (enum rtl_udp_type)
 *     6  u16 flags (0; ignored on receipt)
 *     8  u32 payload length (must equal the datagram length - 32, and the
 *            type's fixed size)
 *    12  u32 reserved (0)
 *    16  u64 sequence number (per sender and type: +1 per datagram; the
 *            state stream counts controller cycles, so a gap is a loss)
 *    24  i64 sender timestamp, ns of the sender's CLOCK_MONOTONIC
 *
 *   HELLO   client -> server   16 bytes: schema "v1.0" (8 bytes, NUL padded),
 *                              u32 period_ns (0: the server's), i32
 *                              loss_count (set_rt_control_input's; <= 0 off)
 *   WELCOME server -> client   16 bytes, as HELLO: the schema, period and
 *                              loss count the server streams with
 *   STATE   server -> client   1,338 bytes: the Doosan v1.0 layout, byte for
 *                              byte (deg, mm, s, Nm; see the field table)
 *   COMMAND client -> server   176 bytes: a motion command in Doosan units
 *   BYE     either way         0 bytes: the session ends (from the server:
 *                              after an ALARM that says why)
 *   ALARM   server -> client   128 bytes: u8 level, u8 group, u16 0, u32
 *                              code, char text[120] (NUL padded)
 *   LIMITS  client -> server   128 bytes: the global RT limits of
 *                              set_velx_rt / set_accx_rt / set_velj_rt /
 *                              set_accj_rt, 16 f64 (0: keep the server's)
 *
 * The codec is "struct-free": no packed struct is ever laid over the bytes.
 * The state layout is a table of (wire offset, type, count, host offset),
 * and encode/decode walk it, converting each element to and from
 * little-endian with shifts, so the code is the same on any host and any
 * ABI. The host side is struct rtl_udp_state, one named field per row of the
 * layout, in the layout's C types and units.
 *
 * Commands are in Doosan units (mm, deg, s), so a COMMAND datagram carries
 * exactly the arguments of one speedl_rt/speedj_rt/servol_rt/servoj_rt
 * call, and state and command speak the same units; the motion backends
 * convert from rtloop's SI units (rtl_motion_to_mm_deg()).
 *
 * Every function here is a pure function over caller buffers. RT-safe: no
 * allocation, no locks, no system calls.
 */
#ifndef RTLOOP_RT_UDP_H
#define RTLOOP_RT_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

#define RTL_UDP_MAGIC 0x554c5452u /* "RTLU" read as a little-endian u32 */
#define RTL_UDP_VERSION 1
#define RTL_UDP_HEADER_SIZE 32
#define RTL_UDP_HELLO_SIZE 16
#define RTL_UDP_COMMAND_SIZE 176
#define RTL_UDP_ALARM_SIZE 128
#define RTL_UDP_LIMITS_SIZE 128
/* Bytes of ALARM text, the NUL included. */
#define RTL_UDP_ALARM_TEXT 120
#define RTL_UDP_STATE_SIZE 1338 /* Doosan RT_OUTPUT_DATA_LIST v1.0, packed */
/* The largest datagram: a state. */
#define RTL_UDP_MAX_DATAGRAM (RTL_UDP_HEADER_SIZE + RTL_UDP_STATE_SIZE)
/* Doosan's RT port, used as the default. */
#define RTL_UDP_DEFAULT_PORT 12347
/* The only state schema there is. */
#define RTL_UDP_SCHEMA "v1.0"
/* Doosan's "compute it from the target" value in acc (and servo vel). */
#define RTL_UDP_AUTO (-10000.0)

enum rtl_udp_type {
	RTL_UDP_HELLO = 1,
	RTL_UDP_WELCOME = 2,
	RTL_UDP_STATE = 3,
	RTL_UDP_COMMAND = 4,
	RTL_UDP_BYE = 5,
	RTL_UDP_ALARM = 6,
	RTL_UDP_LIMITS = 7,
};

struct rtl_udp_header {
	uint8_t version;
	uint8_t type;	 /* enum rtl_udp_type */
	uint16_t flags;	 /* 0 */
	uint32_t length; /* payload bytes */
	uint64_t seq;
	int64_t send_ns;
};

/* HELLO and WELCOME payload. */
struct rtl_udp_hello {
	char schema[8];	    /* "v1.0", NUL padded */
	uint32_t period_ns; /* HELLO: wanted (0: the server's); WELCOME: streamed */
	/* set_rt_control_input's loss count: once commands flow, the server
	 * ends the session (ALARM, BYE) when more than this many control
	 * periods in a row pass without a COMMAND; <= 0: never (the value 0
	 * old clients sent). WELCOME: the count the server applies. */
	int32_t loss_count;
};

/* ALARM levels (Doosan's LOG_ALARM levels: info, warning, alarm). */
enum rtl_udp_alarm_level {
	RTL_UDP_ALARM_INFO = 0,
	RTL_UDP_ALARM_WARN = 1,
	RTL_UDP_ALARM_ERROR = 2,
};

/* ALARM codes of rtloop's stream (group RTL_UDP_ALARM_GROUP_RT); a server
 * may send others, which a client reports as they come. */
#define RTL_UDP_ALARM_GROUP_RT 1
enum rtl_udp_alarm_code {
	RTL_UDP_ALARM_CMD_TIMEOUT = 1, /* no command for 0.1 s while moving: stopped */
	RTL_UDP_ALARM_LOSS = 2,	       /* more than loss_count periods lost: session ended */
	RTL_UDP_ALARM_ACC_LIMIT = 3,   /* a command above the acceleration limit: clamped */
	RTL_UDP_ALARM_VEL_LIMIT = 4,   /* a command above the velocity limit: clamped */
	RTL_UDP_ALARM_UNSUPPORTED = 5, /* a command mode the server cannot run: stopped */
};

/* ALARM payload: 0 u8 level, 1 u8 group, 2 u16 0, 4 u32 code, 8 text[120]. */
struct rtl_udp_alarm {
	uint8_t level; /* enum rtl_udp_alarm_level */
	uint8_t group;
	uint32_t code;
	char text[RTL_UDP_ALARM_TEXT]; /* printable ASCII, NUL terminated */
};

/* LIMITS payload, Doosan units, every one f64: 0 velx trans (mm/s), 8
 * velx rot (deg/s), 16 accx trans (mm/s^2), 24 accx rot (deg/s^2), 32
 * velj[6] (deg/s), 80 accj[6] (deg/s^2). 0: keep the server's;
 * RTL_UDP_AUTO in a rotational value: derive it from the translational. */
struct rtl_udp_limits {
	double velx[2], accx[2];
	double velj[6], accj[6];
};

/* Command modes: the Doosan RT command each one stands for. */
enum rtl_udp_mode {
	RTL_UDP_MODE_NONE = 0,	 /* no command (the robot keeps its watchdog) */
	RTL_UDP_MODE_SPEEDJ = 1, /* speedj_rt(vel, acc, target_time) */
	RTL_UDP_MODE_SPEEDL = 2, /* speedl_rt(vel, acc, target_time) */
	RTL_UDP_MODE_SERVOJ = 3, /* servoj_rt(pos, vel, acc, target_time) */
	RTL_UDP_MODE_SERVOL = 4, /* servol_rt(pos, vel, acc, target_time) */
	RTL_UDP_MODE_STOP = 5,	 /* decelerate to rest at acc[0] (AUTO: default) */
};
#define RTL_UDP_MODE_COUNT 6

/*
 * COMMAND payload (176 bytes on the wire, offsets in docs/udp.md):
 *   0 u8 mode, 1 u8 flags, 2 u16 0, 4 u32 0, 8 u64 echo_seq, 16 i64 echo_ns,
 *   24 f64 target_time, 32 f64 pos[6], 80 f64 vel[6], 128 f64 acc[6].
 * Units are Doosan's: joint modes deg, deg/s, deg/s^2; Cartesian modes mm,
 * mm/s, mm/s^2 on x, y, z and deg, deg/s, deg/s^2 on the three rotations
 * (servol: ZYZ Euler angles; speedl: angular velocity about the base axes).
 * RTL_UDP_AUTO in acc (and servo vel) means "derive it".
 */
struct rtl_udp_cmd {
	uint8_t mode;  /* enum rtl_udp_mode */
	uint8_t flags; /* 0 */
	/* Sequence number and sender timestamp of the newest STATE the
	 * client had received: the server matches the number with its own
	 * send time (round trip). 0, 0 before the first. */
	uint64_t echo_seq;
	int64_t echo_ns;
	double target_time; /* s */
	double pos[6];	    /* servo modes only */
	double vel[6];
	double acc[6];
};

/* ---- the state layout ----------------------------------------------------------- */

enum rtl_udp_elem {
	RTL_UDP_F64 = 0,
	RTL_UDP_F32 = 1,
	RTL_UDP_U8 = 2,
	RTL_UDP_U16 = 3,
	RTL_UDP_U32 = 4,
};

/*
 * The v1.0 layout, one row per field: X(name, type, C type, dimensions,
 * element count, wire offset, unit). The host struct, the offsets table
 * and the tests are generated from this one list.
 */
#define RTL_UDP_STATE_FIELDS(X)                                                         \
	X(time_stamp, RTL_UDP_F64, double, , 1, 0, "s")                                 \
	X(actual_joint_position, RTL_UDP_F32, float, [6], 6, 8, "deg")                  \
	X(actual_joint_position_abs, RTL_UDP_F32, float, [6], 6, 32, "deg")             \
	X(actual_joint_velocity, RTL_UDP_F32, float, [6], 6, 56, "deg/s")               \
	X(actual_joint_velocity_abs, RTL_UDP_F32, float, [6], 6, 80, "deg/s")           \
	X(actual_tcp_position, RTL_UDP_F32, float, [6], 6, 104, "mm, deg (ZYZ)")        \
	X(actual_tcp_velocity, RTL_UDP_F32, float, [6], 6, 128, "mm/s, deg/s")          \
	X(actual_flange_position, RTL_UDP_F32, float, [6], 6, 152, "mm, deg (ZYZ)")     \
	X(actual_flange_velocity, RTL_UDP_F32, float, [6], 6, 176, "mm/s, deg/s")       \
	X(actual_motor_torque, RTL_UDP_F32, float, [6], 6, 200, "Nm")                   \
	X(actual_joint_torque, RTL_UDP_F32, float, [6], 6, 224, "Nm")                   \
	X(raw_joint_torque, RTL_UDP_F32, float, [6], 6, 248, "Nm")                      \
	X(raw_force_torque, RTL_UDP_F32, float, [6], 6, 272, "N, Nm")                   \
	X(external_joint_torque, RTL_UDP_F32, float, [6], 6, 296, "Nm")                 \
	X(external_tcp_force, RTL_UDP_F32, float, [6], 6, 320, "N, Nm")                 \
	X(target_joint_position, RTL_UDP_F32, float, [6], 6, 344, "deg")                \
	X(target_joint_velocity, RTL_UDP_F32, float, [6], 6, 368, "deg/s")              \
	X(target_joint_acceleration, RTL_UDP_F32, float, [6], 6, 392, "deg/s^2")        \
	X(target_motor_torque, RTL_UDP_F32, float, [6], 6, 416, "Nm")                   \
	X(target_tcp_position, RTL_UDP_F32, float, [6], 6, 440, "mm, deg (ZYZ)")        \
	X(target_tcp_velocity, RTL_UDP_F32, float, [6], 6, 464, "mm/s, deg/s")          \
	X(jacobian_matrix, RTL_UDP_F32, float, [6][6], 36, 488, "row-major 6x6")        \
	X(gravity_torque, RTL_UDP_F32, float, [6], 6, 632, "Nm")                        \
	X(coriolis_matrix, RTL_UDP_F32, float, [6][6], 36, 656, "row-major 6x6")        \
	X(mass_matrix, RTL_UDP_F32, float, [6][6], 36, 800, "row-major 6x6")            \
	X(solution_space, RTL_UDP_U16, uint16_t, , 1, 944, "0-7")                       \
	X(singularity, RTL_UDP_F32, float, , 1, 946, "min singular value")              \
	X(operation_speed_rate, RTL_UDP_F32, float, , 1, 950, "%")                      \
	X(joint_temperature, RTL_UDP_F32, float, [6], 6, 954, "deg C")                  \
	X(controller_digital_input, RTL_UDP_U16, uint16_t, , 1, 978, "bit mask")        \
	X(controller_digital_output, RTL_UDP_U16, uint16_t, , 1, 980, "bit mask")       \
	X(controller_analog_input_type, RTL_UDP_U8, uint8_t, [2], 2, 982, "0 V, 1 mA")  \
	X(controller_analog_input, RTL_UDP_F32, float, [2], 2, 984, "V or mA")          \
	X(controller_analog_output_type, RTL_UDP_U8, uint8_t, [2], 2, 992, "0 V, 1 mA") \
	X(controller_analog_output, RTL_UDP_F32, float, [2], 2, 994, "V or mA")         \
	X(flange_digital_input, RTL_UDP_U8, uint8_t, , 1, 1002, "bit mask")             \
	X(flange_digital_output, RTL_UDP_U8, uint8_t, , 1, 1003, "bit mask")            \
	X(flange_analog_input, RTL_UDP_F32, float, [4], 4, 1004, "V")                   \
	X(external_encoder_strobe_count, RTL_UDP_U8, uint8_t, [2], 2, 1020, "count")    \
	X(external_encoder_count, RTL_UDP_U32, uint32_t, [2], 2, 1022, "count")         \
	X(goal_joint_position, RTL_UDP_F32, float, [6], 6, 1030, "deg")                 \
	X(goal_tcp_position, RTL_UDP_F32, float, [6], 6, 1054, "mm, deg (ZYZ)")         \
	X(robot_mode, RTL_UDP_U8, uint8_t, , 1, 1078, "0 manual, 1 autonomous")         \
	X(robot_state, RTL_UDP_U8, uint8_t, , 1, 1079, "ROBOT_STATE")                   \
	X(control_mode, RTL_UDP_U16, uint16_t, , 1, 1080, "3 position, 4 torque")       \
	X(reserved, RTL_UDP_U8, uint8_t, [256], 256, 1082, "")

/* The state on the host: the layout's fields, types and units (Doosan's:
 * deg, deg/s, mm, mm/s, Nm, s), naturally aligned. */
struct rtl_udp_state {
#define RTL_UDP_MEMBER_(name, type, ctype, dims, count, off, unit) ctype name dims;
	RTL_UDP_STATE_FIELDS(RTL_UDP_MEMBER_)
#undef RTL_UDP_MEMBER_
};

/* One row of the layout. */
struct rtl_udp_field {
	const char *name;
	const char *unit;
	uint16_t offset;      /* wire offset in the 1,338-byte payload */
	uint16_t size;	      /* wire bytes: count * element size */
	uint16_t host_offset; /* offsetof(struct rtl_udp_state, name) */
	uint16_t count;	      /* elements */
	uint8_t type;	      /* enum rtl_udp_elem */
};

/* Returns the layout, one row per field; @n (may be NULL) gets the number
 * of rows. RT-safe. */
RTL_API const struct rtl_udp_field *rtl_udp_state_fields(size_t *n);

/* Returns the bytes of one element of @type (8, 4, 1, 2, 4), 0 when
 * unknown. */
RTL_API unsigned rtl_udp_elem_size(enum rtl_udp_elem type);

/*
 * Copy field @f of state @s into @out as doubles (each element, in the
 * field's units), at most @max of them. Returns the count copied, 0 for a
 * NULL pointer. RT-safe.
 */
RTL_API unsigned rtl_udp_state_get(const struct rtl_udp_state *s, const struct rtl_udp_field *f,
				   double *out, unsigned max);

/*
 * Encode @s as the 1,338-byte v1.0 layout into @out (@cap bytes).
 * Returns RTL_UDP_STATE_SIZE; -EINVAL when a pointer is NULL; -ENOSPC when
 * @cap is too small. RT-safe.
 */
RTL_API int rtl_udp_state_encode(const struct rtl_udp_state *s, uint8_t *out, size_t cap);

/*
 * Decode the v1.0 layout from @in (@len bytes, exactly RTL_UDP_STATE_SIZE)
 * into @s. Returns RTL_UDP_STATE_SIZE; -EINVAL when a pointer is NULL;
 * -EMSGSIZE when @len is not RTL_UDP_STATE_SIZE. RT-safe.
 */
RTL_API int rtl_udp_state_decode(struct rtl_udp_state *s, const uint8_t *in, size_t len);

/* ---- datagrams -------------------------------------------------------------------- */

/*
 * Check and decode the header of the datagram @buf (@len bytes). Returns
 * RTL_UDP_HEADER_SIZE (the payload follows there) and fills @h, or
 *   -EINVAL           a pointer is NULL;
 *   -EMSGSIZE         @len is shorter than the header, the payload length
 *                     disagrees with @len, or is not the type's size;
 *   -EBADMSG          the magic is not "RTLU";
 *   -EPROTONOSUPPORT  the version is not RTL_UDP_VERSION;
 *   -EPROTO           the type is unknown.
 * RT-safe.
 */
RTL_API int rtl_udp_decode_header(struct rtl_udp_header *h, const uint8_t *buf, size_t len);

/* Returns the payload size of @type, or -EPROTO when unknown. */
RTL_API int rtl_udp_payload_size(enum rtl_udp_type type);

/*
 * Build a datagram in @out (@cap bytes): header (@seq, @send_ns) and the
 * payload of the type. Return the datagram length, -EINVAL for a NULL
 * pointer (or, for a command, an unknown mode or a target_time that is
 * negative or not finite: it is a duration >= 0, never RTL_UDP_AUTO),
 * -ENOSPC when @cap is too small. RT-safe.
 */
RTL_API int rtl_udp_encode_state(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				 const struct rtl_udp_state *s);
RTL_API int rtl_udp_encode_command(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				   const struct rtl_udp_cmd *c);
/* @type is RTL_UDP_HELLO or RTL_UDP_WELCOME. Returns the datagram length, or
 * the codes above (-EINVAL also for another @type). */
RTL_API int rtl_udp_encode_hello(uint8_t *out, size_t cap, enum rtl_udp_type type, uint64_t seq,
				 int64_t send_ns, const struct rtl_udp_hello *h);
/* A BYE: the header alone. Returns the datagram length, or the codes above. */
RTL_API int rtl_udp_encode_bye(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns);
/* The text is copied up to its NUL (at most RTL_UDP_ALARM_TEXT - 1 bytes)
 * and padded with NULs. Returns the datagram length, or the codes above. */
RTL_API int rtl_udp_encode_alarm(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				 const struct rtl_udp_alarm *a);
/* Returns the datagram length, or the codes above: -EINVAL also for a
 * non-finite or negative limit (other than AUTO in a rotational one). */
RTL_API int rtl_udp_encode_limits(uint8_t *out, size_t cap, uint64_t seq, int64_t send_ns,
				  const struct rtl_udp_limits *l);

/*
 * Decode a whole datagram of the named type: the header (errors as
 * rtl_udp_decode_header()) and then the payload. Returns the datagram
 * length, or those errors, or -EPROTO when the datagram is of another type
 * (an unknown command mode is -EPROTO too). @h may be NULL. RT-safe.
 */
RTL_API int rtl_udp_decode_state(struct rtl_udp_header *h, struct rtl_udp_state *s,
				 const uint8_t *buf, size_t len);
RTL_API int rtl_udp_decode_command(struct rtl_udp_header *h, struct rtl_udp_cmd *c,
				   const uint8_t *buf, size_t len);
/* HELLO or WELCOME. Returns the datagram length, or the errors above. */
RTL_API int rtl_udp_decode_hello(struct rtl_udp_header *h, struct rtl_udp_hello *out,
				 const uint8_t *buf, size_t len);

/* An ALARM: the text is NUL terminated, and every byte that is not
 * printable ASCII becomes '?' (a peer's text goes to logs and
 * terminals). Returns the datagram length, or the errors above. */
RTL_API int rtl_udp_decode_alarm(struct rtl_udp_header *h, struct rtl_udp_alarm *a,
				 const uint8_t *buf, size_t len);
/* A LIMITS datagram. Returns the datagram length, or the errors above, or
 * -EDOM when a value is negative (other than AUTO in a rotational one) or
 * not finite. */
RTL_API int rtl_udp_decode_limits(struct rtl_udp_header *h, struct rtl_udp_limits *l,
				  const uint8_t *buf, size_t len);

/* ---- checks shared by every sender of commands ----------------------------------------- */

/* Speed limits of rtl_udp_cmd_check(), Doosan units, per axis; 0: none. */
struct rtl_udp_cmd_limits {
	double max_joint_vel;	/* deg/s, joint modes */
	double max_linear_vel;	/* mm/s, x, y, z of the Cartesian modes */
	double max_angular_vel; /* deg/s, the rotations of the Cartesian modes */
};

/*
 * May @c go to a controller? Returns 0, or -EINVAL for a NULL @c, or -EDOM
 * with the reason in @why (@len bytes): an unknown mode, a target_time outside [0, 3600] s, any
 * double that is not finite (all of them go on the wire, used by the mode or not), AUTO where it
 * means nothing (a position; a speed command's velocity), a speed above @lim (may be NULL). Mode
 * NONE passes. RT-safe.
 */
RTL_API int rtl_udp_cmd_check(const struct rtl_udp_cmd *c, char *why, size_t len,
			      const struct rtl_udp_cmd_limits *lim);

/* Returns the number of float and double values of @s that are NaN or
 * infinite (the matrices element by element); the first one's field name
 * in *@first (may be NULL). RT-safe. */
RTL_API unsigned rtl_udp_state_nonfinite(const struct rtl_udp_state *s, const char **first);

/*
 * The rate limit clients apply to a controller's alarms before they log
 * them: an info alarm (level 0) passes at most once per @RTL_UDP_ALARM_REPEAT_NS
 * for the same group and code (the newest 8 pairs are remembered); other
 * levels always pass. Zero-initialise the gate. Its check,
 * rtl_udp_alarm_gate_pass(), returns true when the alarm passes (log it),
 * false when it is held back. Pure and RT-safe; one thread at a time.
 */
#define RTL_UDP_ALARM_REPEAT_NS 1000000000LL
struct rtl_udp_alarm_gate {
	struct {
		uint32_t group, code;
		int64_t t_ns; /* 0: unused */
	} seen[8];
	unsigned next;
};
RTL_API bool rtl_udp_alarm_gate_pass(struct rtl_udp_alarm_gate *g, unsigned level, unsigned group,
				     unsigned code, int64_t now_ns);

/* Returns true when every joint of @s is slower than @rest_speed [deg/s]
 * (NaN is not), false otherwise. RT-safe. */
RTL_API bool rtl_udp_state_at_rest(const struct rtl_udp_state *s, double rest_speed);

/* Returns the name of @type: "hello", "welcome", "state", "command", "bye",
 * "alarm", "limits"; "?" when unknown. */
RTL_API const char *rtl_udp_type_name(enum rtl_udp_type type);
/* Returns the name of @mode: "none", "speedj", "speedl", "servoj",
 * "servol", "stop"; "?" when unknown. */
RTL_API const char *rtl_udp_mode_name(enum rtl_udp_mode mode);

RTL_END_DECLS

#endif /* RTLOOP_RT_UDP_H */
