/* SPDX-License-Identifier: MIT */
/*
 * rtl_udp_transport: the 1 kHz UDP stream (<rtloop/udp.h>) as a
 * transport of the control loop.
 *
 * Design
 * ------
 * One connected UDP socket, one datagram per call, no framing state:
 *   connect  connect(2) the socket to the address resolved at init (so
 *            ICMP "port unreachable" comes back as ECONNREFUSED, and only
 *            the server's datagrams are received), turn on SO_TIMESTAMPNS,
 *            send HELLO every 100 ms until a WELCOME and the first STATE
 *            arrive or the connect time-out ends. The first STATE is kept
 *            and handed to the loop as its first frame. The safe STOP
 *            datagram is encoded here, once.
 *   recv     one recvmsg(2), waiting at most the loop's receive slice
 *            (SO_RCVTIMEO; then -EAGAIN). A silent controller is the
 *            loop's business: no state for rx_timeout_ns is a lost
 *            connection, even while other datagrams keep coming. The kernel's
 *            receive time (CLOCK_REALTIME, from SO_TIMESTAMPNS) is moved to
 *            CLOCK_MONOTONIC with the offset between the two clocks read
 *            right after the call: mono = kernel_rt - (rt_now - mono_now),
 *            mono_now being the midpoint of two monotonic reads around the
 *            realtime read. The error is the time between those reads
 *            (tens of ns) plus any clock step in between; a result later
 *            than now or more than 1 s old is discarded (0).
 *   next     decode the datagram into the slot as struct rtl_udp_frame;
 *            ctrl_time = the sender's timestamp in s; ctrl_skipped = the
 *            gap in state sequence numbers (the server numbers its control
 *            cycles, so a gap is exactly the datagrams lost or skipped).
 *            Duplicates and stale datagrams (older numbers) are dropped
 *            and counted, each under its name, as malformed ones and states
 *            holding a NaN or an infinity (which never reach the step); a
 *            jump back by more than 1000 is a restarted server and
 *            resynchronises. An ALARM is logged (the loop's log; an
 *            info alarm repeated within a second is only counted); a BYE
 *            from the server ends the stream (-ECONNRESET, error() with
 *            the server's last alarm). No valid state for rx_timeout_ns, counted from
 *            the last one, ends the stream (-ETIMEDOUT, and error() names
 *            what came meanwhile), however much else keeps arriving.
 *   send     streaming: the command struct (rtl_loop_commands(), a struct
 *            rtl_udp_cmd in Doosan units) is sent in every cycle while
 *            its mode is not NONE, unchanged or not. Doosan's velocity
 *            commands time out 0.1 s after the last datagram and its loss
 *            count counts periods without one, so suppressing repeats would
 *            stop the robot; a datagram is 208 bytes. The echo fields are
 *            filled here from the newest state received. Non-blocking:
 *            EAGAIN is -EAGAIN and nothing is counted as sent (the sequence
 *            number is not consumed).
 *   send_safe  the STOP datagram at cfg.safe_decel encoded at connect, in
 *            a buffer of its own, with a fresh sequence number, send time
 *            and echo (the user's command struct is never read: send_safe
 *            may run on the rx thread or the watch thread).
 *   at_rest  every |actual_joint_velocity| below rest_speed.
 *   check    mode known, target_time in [0, 3600] s, every value finite,
 *            the configured speed limits (Doosan units, per axis).
 *   disconnect  a BYE (best effort) and close.
 *
 * Threads: as the contract of <rtloop/loop.h>: connect while no step
 * runs; recv, next and at_rest on the rx thread; check and send on the
 * step's thread holding the transmit side; send_safe on any thread
 * holding it. The echo values cross
 * from the rx thread to the transmit owner as two relaxed atomics: the
 * pair may tear (a number from one state, a time from the next), which
 * the server tolerates because it matches the number with its own clock.
 */
#ifndef RTLOOP_UDP_TRANSPORT_H
#define RTLOOP_UDP_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/loop.h>
#include <rtloop/stat.h>
#include <rtloop/udp.h>

RTL_BEGIN_DECLS

/* The transport's configuration. Set .size =
 * sizeof(struct rtl_udp_transport_config); zero is the default for every
 * other field. */
struct rtl_udp_transport_config {
	size_t size;	   /* sizeof(struct rtl_udp_transport_config) */
	const char *host;  /* default "127.0.0.1" */
	uint16_t port;	   /* default RTL_UDP_DEFAULT_PORT (12347) */
	int64_t period_ns; /* asked for in HELLO; 0: the server's */
	/* Sent in HELLO: once commands flow, the server ends the session when
	 * more than this many periods in a row pass without one (Doosan's
	 * set_rt_control_input loss count); <= 0: off. */
	int32_t loss_count;
	int64_t connect_timeout_ns; /* default 3 s */
	/* No valid state for this long (counted from the last one, however
	 * many other datagrams come) = lost connection: recv() or next()
	 * return -ETIMEDOUT and error() says what came instead; default 1 s,
	 * < 0: never. */
	int64_t rx_timeout_ns;
	/* Deceleration of the safe STOP, in the units of the last motion
	 * (mm/s^2 or deg/s^2); default (0) RTL_UDP_AUTO. */
	double safe_decel;
	/* Limits checked before each send, Doosan units, per axis; 0: none.
	 * Joint modes: |vel| <= max_joint_vel (deg/s). Cartesian: x, y, z
	 * <= max_linear_vel (mm/s), the rotations <= max_angular_vel
	 * (deg/s). */
	double max_joint_vel;
	double max_linear_vel;
	double max_angular_vel;
	/* Do not ask for kernel receive timestamps (kernel_rx_ns stays 0). */
	bool no_kernel_timestamps;
	/* At rest: every joint's actual velocity below this [deg/s].
	 * 0: 0.06 deg/s (0.001 rad/s). */
	double rest_speed;
};

/* What a frame of this transport carries (rtl_udp_loop_frame()). */
struct rtl_udp_frame {
	uint64_t seq;	 /* the state datagram's sequence number */
	int64_t send_ns; /* the server's send time (its CLOCK_MONOTONIC) */
	struct rtl_udp_state rt;
};

/*
 * The transport's counters, declared once: X(name, what it counts); the
 * snapshot, the transport's atomics and the table
 * rtl_udp_transport_counter_fields() are made from it. Every dropped
 * datagram is counted under its own name (bad and reordered are sums of
 * the named ones). New counters go at the end.
 */
#define RTL_UDP_TRANSPORT_COUNTERS(X)                                                     \
	X(datagrams, "datagrams received, any kind")                                      \
	X(states, "state frames handed to the loop")                                      \
	X(bad, "malformed datagrams (header or length), dropped: the sum of malformed")   \
	X(reordered, "older or duplicate state numbers, dropped: stale + duplicate")      \
	X(other, "well-formed datagrams that are not states")                             \
	X(resyncs, "the sequence jumped back (the server restarted)")                     \
	X(commands, "command datagrams sent")                                             \
	X(safe, "safe STOP datagrams sent")                                               \
	X(would_block, "sends refused with EAGAIN")                                       \
	X(no_kernel_ts, "frames without a usable kernel timestamp")                       \
	X(malformed, "bad length, magic, version or type, or empty")                      \
	X(stale, "a state number older than the newest")                                  \
	X(duplicate, "the newest state number again")                                     \
	X(nonfinite_state, "a state holding a NaN or an infinity")                        \
	X(rx_deadline, "streams given up: no valid state for rx_timeout_ns")              \
	X(alarms, "the server's ALARMs (logged)")                                         \
	X(alarms_suppressed, "info ALARMs repeated within a second: counted, not logged") \
	X(server_byes, "the server's BYEs: the session ended (recv()/next() -ECONNRESET)")

/* A snapshot of the counters (rtl_udp_transport_stats()). Set .size. */
struct rtl_udp_transport_counters {
	size_t size;
	RTL_UDP_TRANSPORT_COUNTERS(RTL_STAT_U64)
};

/* The transport: opaque (rtl_udp_transport_create()). */
struct rtl_udp_transport;

/*
 * A transport for @cfg (copied). Resolves cfg->host once (IPv4;
 * reconnects reuse the address). Does not connect. Not RT-safe.
 * Returns 0 and sets *@out, or -EINVAL (NULL, a negative limit, rest speed
 * or deceleration, a period above 1 s), -EHOSTUNREACH (the host does not
 * resolve) or -ENOMEM, with @err filled.
 */
RTL_API int rtl_udp_transport_create(struct rtl_udp_transport **out,
				     const struct rtl_udp_transport_config *cfg,
				     struct rtl_error *err);

/* Close the socket and free. NULL is accepted. Not RT-safe. */
RTL_API void rtl_udp_transport_destroy(struct rtl_udp_transport *t);

/* Returns the loop's view of @t (for struct rtl_loop_config.transport),
 * NULL for a NULL @t. RT-safe. */
RTL_API struct rtl_transport *rtl_udp_transport_base(struct rtl_udp_transport *t);

/* Returns the state in loop frame @f of this transport. RT-safe. */
RTL_INLINE const struct rtl_udp_frame *rtl_udp_loop_frame(const struct rtl_loop_frame *f)
{
	return (const struct rtl_udp_frame *)(const void *)f->values;
}

/* Returns the command the step writes (also rtl_loop_commands()), NULL for
 * a NULL @t. RT-safe. */
RTL_API struct rtl_udp_cmd *rtl_udp_transport_command(struct rtl_udp_transport *t);

/* A snapshot of the counters into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written); any thread (relaxed
 * loads). Returns 0, or -EINVAL (@t or @out NULL, out->size not set).
 * RT-safe. */
RTL_API int rtl_udp_transport_stats(const struct rtl_udp_transport *t,
				    struct rtl_udp_transport_counters *out);

/* Returns the counters' table (names, what each counts, offsets in the
 * snapshot); sets *@n (may be NULL) to its length. RT-safe. */
RTL_API const struct rtl_stat_field *rtl_udp_transport_counter_fields(size_t *n);

struct rtl_telemetry;

/*
 * A loop's telemetry @t (<rtloop/telemetry.h>, docs/telemetry.md) over the
 * UDP stream's frames (or DRFL's, the same): as signals named after them,
 * the state's fields @fields (comma-separated, Doosan's units; NULL or "":
 * none) and, with @command, the command the step wrote ("cmd_mode",
 * "cmd_target_time", "cmd_pos", "cmd_vel", "cmd_acc"), set by a capture
 * from each step's frame. Set-up time. Returns 0, or -EINVAL (NULL, a name
 * that is not a field of the state: named), -ENOSPC, -EEXIST, -EBUSY (the
 * telemetry's), -ENOMEM, with @err filled.
 */
RTL_API int rtl_udp_telemetry(struct rtl_telemetry *t, const char *fields, bool command,
			      struct rtl_error *err);

/*
 * @tr's counters in @t as "transport.*", then rtl_udp_telemetry(@t,
 * @fields, @command). Set-up time. Returns 0 or its errors, with @err
 * filled.
 */
RTL_API int rtl_udp_transport_telemetry(struct rtl_udp_transport *tr, struct rtl_telemetry *t,
					const char *fields, bool command, struct rtl_error *err);

/*
 * A controller's alarm as both the UDP and the DRFL transport report it:
 * "<level> <group>.<code>: <text>" ("info", "warning", "alarm") into @last
 * (@len bytes, kept for the message of a stream's end); then, when @gate
 * lets it pass (rtl_udp_alarm_gate_pass(): info repeats once a second),
 * rtl_log() "<who> <last>" at the level's log level. Returns whether it
 * was logged. On the rx thread: RT-safe as rtl_log() is.
 */
RTL_API bool rtl_udp_alarm_report(struct rtl_udp_alarm_gate *gate, char *last, size_t len,
				  const char *who, unsigned level, unsigned group, unsigned code,
				  const char *text, int64_t now_ns);

RTL_END_DECLS

#endif /* RTLOOP_UDP_TRANSPORT_H */
