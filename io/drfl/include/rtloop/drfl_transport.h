/* SPDX-License-Identifier: MIT */
/*
 * rtl_drfl_transport: a Doosan robot through the vendor's DRFL library as
 * a transport of the control loop, like RTDE and the UDP stream: the rx
 * thread, the ring, the statistics, histograms, tracepoints, watchdog,
 * safe set and stop-on-exit are the loop's own (<rtloop/loop.h>).
 *
 * Design
 * ------
 * DRFL receives the RT stream itself, on a thread of its own, and offers
 * each state two ways: read_data_rt() (a buffer it overwrites every cycle)
 * and the set_on_rt_monitoring_data() callback, called for every state.
 * The transport takes the callback: polling read_data_rt() would need a
 * sleep-and-look loop and still miss or repeat states.
 *
 *   DRFL's thread   callback: copy the 1,338-byte state and the time into
 *                   a slot of a lock-free SPSC ring (<rtloop/ring.h>, 64
 *                   slots), bump an event word and FUTEX_WAKE the rx
 *                   thread if it sleeps. A full ring drops the state,
 *                   counted (overflow). Alarms (set_on_rt_log_alarm) go
 *                   the same way into a ring of their own.
 *   recv            the rx thread: the loop's alarms first (logged; the
 *                   same info alarm again within 1 s is counted, not
 *                   logged: Doosan's limit messages come every cycle a
 *                   limit is hit); then the states waiting, or a futex
 *                   wait of at most the receive slice. No valid state for
 *                   rx_timeout_ns (however many bad ones come) ends the
 *                   stream: -ETIMEDOUT, and error() says what came instead
 *                   and the controller's last alarm.
 *   next            one state per call, decoded (rtl_udp_state_decode())
 *                   into a struct rtl_udp_frame (the UDP transport's, so
 *                   a step reads both the same way: rtl_udp_loop_frame()).
 *                   DRFL gives no sequence number: the state's time_stamp
 *                   does its work. A time_stamp equal to the newest is a
 *                   duplicate, older a stale state (both dropped, counted;
 *                   older by more than 1000 periods: the controller
 *                   restarted, resynchronised); ctrl_skipped is the gap in
 *                   periods. States holding a NaN or an infinity are
 *                   dropped and counted (nonfinite_state).
 *   check, send     the step writes a struct rtl_udp_cmd (Doosan units,
 *                   rtl_motion_to_udp()), checked by rtl_udp_cmd_check()
 *                   and sent as its DRFL call (rtl_drfl_api_send_cmd()) in
 *                   every period while its mode is not NONE: the 0.1 s
 *                   command time-out and the loss count of
 *                   set_rt_control_input count periods without one. A
 *                   call that returns false is -EIO, counted
 *                   (command_failed); true means sent, never applied.
 *   send_safe       speedj_rt with zero velocity at safe_decel on every
 *                   axis and the period as target time, from floats built
 *                   at connect (the user's command is never read).
 *   at_rest         every |actual_joint_velocity| below rest_speed.
 *   connect         register the callbacks, rtl_drfl_api_connect() (Doosan's
 *                   call order, <rtloop/drfl_backend.h>), then wait for the
 *                   first state (connect_timeout_ns).
 *   disconnect      rtl_drfl_api_disconnect() (stop_rt_control,
 *                   disconnect_rt_control), then unregister.
 *
 * Threads: the loop's contract; besides, the two callbacks run on DRFL's
 * thread and touch only the two rings, the event word and counters of
 * their own. DRFL must call each callback from one thread at a time (it
 * has one receiving thread).
 *
 * Preconditions DRFL leaves to the application (docs/doosan-rt.md 7: the
 * TCP API's safety mode, authority, STANDBY) are not done here.
 */
#ifndef RTLOOP_DRFL_TRANSPORT_H
#define RTLOOP_DRFL_TRANSPORT_H

#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/drfl_backend.h>
#include <rtloop/loop.h>
#include <rtloop/stat.h>
#include <rtloop/udp.h>
#include <rtloop/udp_transport.h>

RTL_BEGIN_DECLS

/* The transport's configuration. Set .size =
 * sizeof(struct rtl_drfl_transport_config); zero is the default for every
 * other field. */
struct rtl_drfl_transport_config {
	size_t size; /* sizeof(struct rtl_drfl_transport_config) */
	/* The entry points (copied): every one of <rtloop/drfl_api.h>,
	 * set_on_rt_monitoring_data included (set_on_rt_log_alarm may be
	 * NULL: alarms are then not reported). */
	const struct rtl_drfl_api *api;
	/* The RT session (copied; NULL: the defaults): address, period,
	 * set_rt_control_input's loss count, the global limits
	 * (<rtloop/drfl_backend.h>). A pointer, not a member: each config
	 * grows on its own (docs/api.md). */
	const struct rtl_drfl_config *drfl;
	int64_t connect_timeout_ns; /* first state after start; default 3 s */
	/* No valid state for this long = lost connection; default 1 s. */
	int64_t rx_timeout_ns;
	/* Deceleration of the safe stop [deg/s^2]; 0: AUTO. */
	double safe_decel;
	/* Checked before each send (rtl_udp_cmd_check()); 0: none. */
	struct rtl_udp_cmd_limits limits;
	/* At rest: every joint below this [deg/s]; 0: 0.06 deg/s. */
	double rest_speed;
};

/*
 * The transport's counters, declared once: X(name, what it counts); the
 * snapshot, the transport's atomics and the table
 * rtl_drfl_transport_counter_fields() are made from it. Each has one
 * writer: DRFL's thread (callbacks, overflow, alarms, alarms_dropped), the
 * rx thread (states to alarms_suppressed), or the holder of the transmit
 * side (commands, command_failed, safe). New counters go at the end.
 */
#define RTL_DRFL_TRANSPORT_COUNTERS(X)                                                  \
	X(callbacks, "states DRFL handed over")                                         \
	X(states, "states handed to the loop")                                          \
	X(overflow, "states dropped: the ring to the rx thread was full")               \
	X(stale, "states dropped: time_stamp older than the newest")                    \
	X(duplicate, "states dropped: the newest time_stamp again")                     \
	X(nonfinite_state, "states dropped: a NaN or an infinity in a float or double") \
	X(resyncs, "time_stamp jumped back more than 1000 periods")                     \
	X(rx_deadline, "streams given up: no valid state for rx_timeout_ns")            \
	X(alarms, "alarms DRFL reported")                                               \
	X(alarms_logged, "alarms logged")                                               \
	X(alarms_suppressed, "info alarms repeated within 1 s: counted, not logged")    \
	X(alarms_dropped, "alarms dropped: the alarm ring was full")                    \
	X(commands, "*_rt calls that returned true (sent)")                             \
	X(command_failed, "*_rt calls that returned false")                             \
	X(safe, "safe stops sent")

/* A snapshot of the counters (rtl_drfl_transport_stats()). Set .size. */
struct rtl_drfl_transport_counters {
	size_t size;
	RTL_DRFL_TRANSPORT_COUNTERS(RTL_STAT_U64)
};

/* The transport: opaque (rtl_drfl_transport_create()). */
struct rtl_drfl_transport;

/*
 * A transport for @cfg (copied, the table too). Does not connect. Returns
 * 0 and sets *@out, or -EINVAL (NULL, an incomplete table, a negative
 * time-out, limit, rest speed or deceleration, a period outside
 * 0.001..1 s), -ENOTSUP (no set_on_rt_monitoring_data) or -ENOMEM, with
 * @err filled. Not RT-safe.
 */
RTL_API int rtl_drfl_transport_create(struct rtl_drfl_transport **out,
				      const struct rtl_drfl_transport_config *cfg,
				      struct rtl_error *err);

/* Disconnect if connected, and free. NULL is accepted. Not RT-safe. */
RTL_API void rtl_drfl_transport_destroy(struct rtl_drfl_transport *t);

/* Returns the loop's view of @t (for struct rtl_loop_config.transport),
 * NULL for a NULL @t. */
RTL_API struct rtl_transport *rtl_drfl_transport_base(struct rtl_drfl_transport *t);

/* Returns the command the step writes (also rtl_loop_commands()), NULL for
 * a NULL @t. */
RTL_API struct rtl_udp_cmd *rtl_drfl_transport_command(struct rtl_drfl_transport *t);

/* A snapshot of the counters into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written); any thread (relaxed
 * loads). Returns 0, or -EINVAL (@t or @out NULL, out->size not set).
 * RT-safe. */
RTL_API int rtl_drfl_transport_stats(const struct rtl_drfl_transport *t,
				     struct rtl_drfl_transport_counters *out);

/* Returns the counters' table (names, what each counts, offsets in the
 * snapshot); sets *@n (may be NULL) to its length. RT-safe. */
RTL_API const struct rtl_stat_field *rtl_drfl_transport_counter_fields(size_t *n);

struct rtl_telemetry;

/*
 * @tr's counters in a loop's telemetry @t (<rtloop/telemetry.h>) as
 * "transport.*", then the state's fields and the command as the UDP
 * stream's are (rtl_udp_telemetry(), <rtloop/udp_transport.h>): DRFL's
 * frames are the same. Set-up time. Returns 0 or its errors, with @err
 * filled.
 */
RTL_API int rtl_drfl_transport_telemetry(struct rtl_drfl_transport *tr, struct rtl_telemetry *t,
					 const char *fields, bool command, struct rtl_error *err);

RTL_END_DECLS

#endif /* RTLOOP_DRFL_TRANSPORT_H */
