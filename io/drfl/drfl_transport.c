// SPDX-License-Identifier: MIT
/*
 * The DRFL transport: see <rtloop/drfl_transport.h> for the design.
 */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rtloop/drfl_transport.h>
#include <rtloop/sized.h>
#include <rtloop/log.h>
#include <rtloop/ring.h>
#include <rtloop/stat.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#define STATE_SLOTS 64
#define ALARM_SLOTS 16
#define ALARM_TEXT 256
#define DEFAULT_CONNECT_TIMEOUT_NS (3 * RTL_NS_PER_SEC)
#define DEFAULT_RX_TIMEOUT_NS RTL_NS_PER_SEC
#define DEFAULT_REST_SPEED 0.06		       /* deg/s: 0.001 rad/s */
#define CTRL_WATCHDOG_NS (100 * RTL_NS_PER_MS) /* Doosan's 0.1 s command time-out */
#define RESYNC_PERIODS 1000

/* A state as DRFL's thread leaves it for the rx thread. */
struct state_slot {
	int64_t t_ns; /* when the callback ran (CLOCK_MONOTONIC) */
	unsigned char bytes[RTL_UDP_STATE_SIZE];
};

struct alarm_slot {
	int64_t t_ns;
	unsigned level, group, index;
	char text[ALARM_TEXT]; /* the parameters, joined by "; ", sanitised */
};

struct rtl_drfl_transport {
	struct rtl_transport base;
	struct rtl_drfl_transport_config cfg;
	struct rtl_drfl_api api;
	struct rtl_drfl_config drfl;
	struct rtl_ring *states, *alarms;
	/* The wake-up: DRFL's thread bumps events after each commit and
	 * wakes the rx thread when it said it sleeps. */
	_Atomic uint32_t events;
	_Atomic uint32_t sleeping;
	bool connected;
	/* rx thread. */
	bool have_ts;
	double last_ts;
	uint64_t frame_seq;
	int64_t last_valid_ns;
	uint64_t mark_stale, mark_duplicate, mark_nonfinite, mark_overflow;
	struct rtl_udp_alarm_gate gate; /* info repeats: once a second */
	char last_alarm[ALARM_TEXT + 64];
	char why[512];
	/* The step's thread. */
	struct rtl_udp_cmd cmd;
	/* The safe stop, built at connect. */
	float safe_vel[6], safe_acc[6], safe_t;
	/* Each counter's writer is in <rtloop/drfl_transport.h>. */
	struct {
		RTL_DRFL_TRANSPORT_COUNTERS(RTL_STAT_ATOMIC)
	} c;
};

static struct rtl_drfl_transport *of(struct rtl_transport *base)
{
	return base->impl;
}

static uint64_t get(const _Atomic uint64_t *c)
{
	return rtl_stat_get(c);
}

/* ---- DRFL's thread ------------------------------------------------------------------- */

static void wake(struct rtl_drfl_transport *t)
{
	atomic_fetch_add(&t->events, 1);
	if (atomic_load(&t->sleeping))
		syscall(SYS_futex, (uint32_t *)&t->events, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void on_state(const void *state, void *user)
{
	struct rtl_drfl_transport *t = user;
	struct state_slot *s;

	rtl_stat_add(&t->c.callbacks, 1);
	s = rtl_ring_reserve(t->states);
	if (!s) {
		rtl_stat_add(&t->c.overflow, 1);
		return;
	}
	s->t_ns = rtl_time_now();
	memcpy(s->bytes, state, sizeof(s->bytes));
	rtl_ring_commit(t->states);
	wake(t);
}

/* @in into @out (@cap bytes) with what is not printable ASCII as '?'. */
static size_t put_clean(char *out, size_t cap, size_t at, const char *in)
{
	for (; in && *in && at + 1 < cap; in++, at++) {
		unsigned char ch = (unsigned char)*in;

		out[at] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	out[at] = '\0';
	return at;
}

static void on_alarm(const struct rtl_drfl_alarm *a, void *user)
{
	struct rtl_drfl_transport *t = user;
	struct alarm_slot *s;
	size_t at = 0;

	rtl_stat_add(&t->c.alarms, 1);
	s = rtl_ring_reserve(t->alarms);
	if (!s) {
		rtl_stat_add(&t->c.alarms_dropped, 1);
		return;
	}
	s->t_ns = rtl_time_now();
	s->level = a->level;
	s->group = a->group;
	s->index = a->index;
	s->text[0] = '\0';
	for (int i = 0; i < 3; i++) {
		if (!a->param[i] || !a->param[i][0])
			continue;
		if (at)
			at = put_clean(s->text, sizeof(s->text), at, "; ");
		at = put_clean(s->text, sizeof(s->text), at, a->param[i]);
	}
	rtl_ring_commit(t->alarms);
	wake(t);
}

/* ---- the rx thread ------------------------------------------------------------------- */

static void drain_alarms(struct rtl_drfl_transport *t)
{
	const struct alarm_slot *a;

	while ((a = rtl_ring_peek(t->alarms)) != NULL) {
		if (rtl_udp_alarm_report(&t->gate, t->last_alarm, sizeof(t->last_alarm), "DRFL",
					 a->level, a->group, a->index,
					 a->text[0] ? a->text : "(no text)", a->t_ns))
			rtl_stat_add(&t->c.alarms_logged, 1);
		else
			rtl_stat_add(&t->c.alarms_suppressed, 1);
		rtl_ring_release(t->alarms);
	}
}

/* Sleep up to @wait_ns until DRFL's thread commits a state: announce,
 * look again, sleep on the event word read before the look (@seen), so a
 * commit in between changes the word and the wait returns at once. */
static void wait_states(struct rtl_drfl_transport *t, uint32_t seen, int64_t wait_ns)
{
	struct timespec ts = { .tv_sec = wait_ns / RTL_NS_PER_SEC,
			       .tv_nsec = wait_ns % RTL_NS_PER_SEC };

	atomic_store(&t->sleeping, 1);
	if (!rtl_ring_size(t->states))
		syscall(SYS_futex, (uint32_t *)&t->events, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	atomic_store(&t->sleeping, 0);
}

/* The stream's deadline: no valid state for rx_timeout_ns. */
static int deadline(struct rtl_drfl_transport *t, int64_t now)
{
	if (t->cfg.rx_timeout_ns < 0 || now - t->last_valid_ns <= t->cfg.rx_timeout_ns)
		return 0;
	rtl_stat_add(&t->c.rx_deadline, 1);
	snprintf(t->why, sizeof(t->why),
		 "DRFL: no valid RT state for %.2f s (%llu stale, %llu duplicate, %llu "
		 "non-finite, %llu overflowed meanwhile); the controller's last alarm: %s",
		 (double)(now - t->last_valid_ns) * 1e-9,
		 (unsigned long long)(get(&t->c.stale) - t->mark_stale),
		 (unsigned long long)(get(&t->c.duplicate) - t->mark_duplicate),
		 (unsigned long long)(get(&t->c.nonfinite_state) - t->mark_nonfinite),
		 (unsigned long long)(get(&t->c.overflow) - t->mark_overflow),
		 t->last_alarm[0] ? t->last_alarm : "none");
	return -ETIMEDOUT;
}

static int drfl_op_recv(struct rtl_transport *base)
{
	struct rtl_drfl_transport *t = of(base);
	int64_t now = rtl_time_now(), wait_ns = RTL_TRANSPORT_RX_SLICE_NS;
	uint32_t seen, n;
	int ret;

	drain_alarms(t);
	ret = deadline(t, now);
	if (ret < 0)
		return ret;
	seen = atomic_load(&t->events);
	n = rtl_ring_size(t->states);
	if (n)
		return (int)(n * RTL_UDP_STATE_SIZE);
	if (t->cfg.rx_timeout_ns > 0)
		wait_ns = t->last_valid_ns + t->cfg.rx_timeout_ns + 1 - now;
	if (wait_ns > RTL_TRANSPORT_RX_SLICE_NS)
		wait_ns = RTL_TRANSPORT_RX_SLICE_NS;
	if (wait_ns > 0)
		wait_states(t, seen, wait_ns);
	drain_alarms(t);
	n = rtl_ring_size(t->states);
	if (n)
		return (int)(n * RTL_UDP_STATE_SIZE);
	ret = deadline(t, rtl_time_now());
	return ret < 0 ? ret : -EAGAIN;
}

static int drfl_op_next(struct rtl_transport *base, struct rtl_loop_frame *f, size_t cap)
{
	struct rtl_drfl_transport *t = of(base);
	double period = (double)base->period_ns * 1e-9;
	const struct state_slot *s;

	if (cap < sizeof(struct rtl_udp_frame))
		return -ENOBUFS;
	while ((s = rtl_ring_peek(t->states)) != NULL) {
		struct rtl_udp_frame *v = (struct rtl_udp_frame *)(void *)f->values;
		const char *field = NULL;
		int64_t t_ns = s->t_ns;
		double gap;

		rtl_udp_state_decode(&v->rt, s->bytes, sizeof(s->bytes));
		rtl_ring_release(t->states);
		if (rtl_udp_state_nonfinite(&v->rt, &field)) {
			if (!get(&t->c.nonfinite_state))
				rtl_log(RTL_LOG_ERROR,
					"DRFL: an RT state holds a NaN or an infinity (%s first): "
					"dropped, and counted as nonfinite_state",
					field);
			rtl_stat_add(&t->c.nonfinite_state, 1);
			continue;
		}
		gap = t->have_ts ? (v->rt.time_stamp - t->last_ts) / period : 1;
		if (t->have_ts && gap < -RESYNC_PERIODS) {
			rtl_stat_add(&t->c.resyncs, 1);
			gap = 1;
		} else if (t->have_ts && v->rt.time_stamp == t->last_ts) {
			rtl_stat_add(&t->c.duplicate, 1);
			continue;
		} else if (t->have_ts && v->rt.time_stamp < t->last_ts) {
			rtl_stat_add(&t->c.stale, 1);
			continue;
		}
		gap = nearbyint(gap) - 1;
		t->have_ts = true;
		t->last_ts = v->rt.time_stamp;
		t->last_valid_ns = f->rx_ns;
		v->seq = ++t->frame_seq;
		v->send_ns = t_ns;
		f->size = sizeof(*v);
		f->ctrl_time = v->rt.time_stamp;
		f->ctrl_skipped = gap <= 0 ? 0 : gap >= UINT32_MAX ? UINT32_MAX : (uint32_t)gap;
		f->kernel_rx_ns = 0;
		rtl_stat_add(&t->c.states, 1);
		return 1;
	}
	return 0;
}

static bool drfl_op_at_rest(struct rtl_transport *base, const struct rtl_loop_frame *f)
{
	struct rtl_drfl_transport *t = of(base);

	return rtl_udp_state_at_rest(&rtl_udp_loop_frame(f)->rt, t->cfg.rest_speed);
}

/* ---- the transmit side ---------------------------------------------------------------- */

static int drfl_op_check(struct rtl_transport *base, char *why, size_t len)
{
	struct rtl_drfl_transport *t = of(base);

	return rtl_udp_cmd_check(&t->cmd, why, len, &t->cfg.limits);
}

static int drfl_op_send(struct rtl_transport *base, int64_t now)
{
	struct rtl_drfl_transport *t = of(base);
	int ret;

	(void)now;
	if (t->cmd.mode == RTL_UDP_MODE_NONE)
		return 0;
	ret = rtl_drfl_api_send_cmd(&t->api, &t->cmd);
	if (ret < 0) {
		rtl_stat_add(&t->c.command_failed, 1);
		return ret;
	}
	rtl_stat_add(&t->c.commands, 1);
	return (int)sizeof(t->cmd);
}

static int drfl_op_send_safe(struct rtl_transport *base)
{
	struct rtl_drfl_transport *t = of(base);
	float vel[6], acc[6];

	/* DRFL takes non-const arrays: copies, so the safe set stays as built. */
	memcpy(vel, t->safe_vel, sizeof(vel));
	memcpy(acc, t->safe_acc, sizeof(acc));
	if (!t->api.speedj_rt(t->api.ctx, vel, acc, t->safe_t)) {
		rtl_stat_add(&t->c.command_failed, 1);
		return -EIO;
	}
	rtl_stat_add(&t->c.safe, 1);
	return (int)sizeof(vel);
}

/* ---- connection ------------------------------------------------------------------------ */

static void callbacks(struct rtl_drfl_transport *t, bool on)
{
	t->api.set_on_rt_monitoring_data(t->api.ctx, on ? on_state : NULL, on ? t : NULL);
	if (t->api.set_on_rt_log_alarm)
		t->api.set_on_rt_log_alarm(t->api.ctx, on ? on_alarm : NULL, on ? t : NULL);
}

static void drfl_op_disconnect(struct rtl_transport *base)
{
	struct rtl_drfl_transport *t = of(base);

	if (!t->connected)
		return;
	rtl_drfl_api_disconnect(&t->api);
	callbacks(t, false);
	t->connected = false;
}

static int drfl_op_connect(struct rtl_transport *base, struct rtl_error *err)
{
	struct rtl_drfl_transport *t = of(base);
	int64_t end;
	int ret;

	drfl_op_disconnect(base);
	/* What a previous session left behind. */
	while (rtl_ring_peek(t->states))
		rtl_ring_release(t->states);
	drain_alarms(t);
	t->last_alarm[0] = '\0';
	t->why[0] = '\0';
	t->have_ts = false;
	callbacks(t, true);
	ret = rtl_drfl_api_connect(&t->api, &t->drfl, err);
	if (ret < 0) {
		callbacks(t, false);
		return ret;
	}
	t->connected = true;
	end = rtl_time_now() + t->cfg.connect_timeout_ns;
	while (!rtl_ring_size(t->states)) {
		int64_t left = end - rtl_time_now();
		uint32_t seen = atomic_load(&t->events);

		if (left <= 0) {
			drfl_op_disconnect(base);
			return rtl_error_set(
				err, -ETIMEDOUT,
				"DRFL: RT control started on %s:%u but no state came within "
				"%.1f s; check that nothing else holds the robot's RT session "
				"(one client at a time) and the RT address fits the firmware "
				"(docs/doosan-rt.md 2.1)",
				t->drfl.host ? t->drfl.host : "192.168.137.100",
				t->drfl.port ? t->drfl.port : RTL_UDP_DEFAULT_PORT,
				(double)t->cfg.connect_timeout_ns * 1e-9);
		}
		wait_states(t, seen, left < 10 * RTL_NS_PER_MS ? left : 10 * RTL_NS_PER_MS);
	}
	drain_alarms(t);
	t->last_valid_ns = rtl_time_now();
	t->mark_stale = get(&t->c.stale);
	t->mark_duplicate = get(&t->c.duplicate);
	t->mark_nonfinite = get(&t->c.nonfinite_state);
	t->mark_overflow = get(&t->c.overflow);
	base->values_size = sizeof(struct rtl_udp_frame);
	base->rx_timeout_ns =
		t->cfg.rx_timeout_ns > 0 ? t->cfg.rx_timeout_ns + RTL_TRANSPORT_RX_SLICE_NS : 0;
	base->ctrl_watchdog_ns = CTRL_WATCHDOG_NS;
	return 0;
}

static const char *drfl_op_error(struct rtl_transport *base)
{
	return of(base)->why;
}

static const struct rtl_transport_ops drfl_ops = {
	.size = sizeof(struct rtl_transport_ops),
	.name = "drfl",
	.connect = drfl_op_connect,
	.recv = drfl_op_recv,
	.next = drfl_op_next,
	.check = drfl_op_check,
	.send = drfl_op_send,
	.send_safe = drfl_op_send_safe,
	.at_rest = drfl_op_at_rest,
	.disconnect = drfl_op_disconnect,
	.error = drfl_op_error,
};

/* ---- set-up ------------------------------------------------------------------------------ */

static bool nonneg(double v)
{
	return v >= 0 && isfinite(v);
}

/* The caller's configuration, its session settings and its table, each
 * copied at this library's size (docs/api.md, "Room to grow"). */
static int take_config(struct rtl_drfl_transport *t, const struct rtl_drfl_transport_config *cfg,
		       struct rtl_error *err)
{
	static const struct rtl_drfl_config no_session = { .size = sizeof(no_session) };
	int ret = rtl__sized_in(&t->cfg, sizeof(t->cfg), cfg,
				"DRFL transport: struct rtl_drfl_transport_config", err);

	if (ret == 0)
		ret = rtl__sized_in(&t->drfl, sizeof(t->drfl), cfg->drfl ? cfg->drfl : &no_session,
				    "DRFL transport: struct rtl_drfl_config", err);
	if (ret == 0 && !cfg->api)
		ret = rtl_error_set(err, -EINVAL, "DRFL transport: no entry-point table (api)");
	if (ret == 0)
		ret = rtl__sized_in(&t->api, sizeof(t->api), cfg->api,
				    "DRFL transport: struct rtl_drfl_api", err);
	t->cfg.api = &t->api;
	t->cfg.drfl = &t->drfl;
	return ret;
}

RTL_API int rtl_drfl_transport_create(struct rtl_drfl_transport **out,
				      const struct rtl_drfl_transport_config *user_cfg,
				      struct rtl_error *err)
{
	struct rtl_drfl_transport *t;
	const struct rtl_drfl_transport_config *cfg;
	double period;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "DRFL transport: nowhere to put it");
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return rtl_error_set(err, -ENOMEM, "DRFL transport: out of memory");
	ret = take_config(t, user_cfg, err);
	if (ret < 0) {
		free(t);
		return ret;
	}
	cfg = &t->cfg;
	ret = -EINVAL;
	if (!rtl_drfl_api_complete(cfg->api)) {
		rtl_error_set(err, -EINVAL, "DRFL transport: the entry-point table is incomplete");
		goto err_free;
	}
	if (!cfg->api->set_on_rt_monitoring_data) {
		ret = rtl_error_set(err, -ENOTSUP,
				    "DRFL transport: the table has no set_on_rt_monitoring_data; "
				    "the transport takes each RT state from that callback");
		goto err_free;
	}
	period = cfg->drfl->period_s ? cfg->drfl->period_s : 0.001;
	if (!(period >= 0.001 && period <= 1.0) || cfg->connect_timeout_ns < 0 ||
	    !nonneg(cfg->limits.max_joint_vel) || !nonneg(cfg->limits.max_linear_vel) ||
	    !nonneg(cfg->limits.max_angular_vel) || !nonneg(cfg->rest_speed) ||
	    !(nonneg(cfg->safe_decel) || cfg->safe_decel == RTL_UDP_AUTO)) {
		rtl_error_set(err, -EINVAL,
			      "DRFL transport: a period outside 0.001..1 s, a negative "
			      "time-out, limit or rest speed, or a safe deceleration that "
			      "is neither >= 0 nor AUTO");
		goto err_free;
	}
	if (!t->cfg.connect_timeout_ns)
		t->cfg.connect_timeout_ns = DEFAULT_CONNECT_TIMEOUT_NS;
	if (!t->cfg.rx_timeout_ns)
		t->cfg.rx_timeout_ns = DEFAULT_RX_TIMEOUT_NS;
	if (t->cfg.rest_speed == 0)
		t->cfg.rest_speed = DEFAULT_REST_SPEED;
	ret = rtl_ring_create(&t->states, STATE_SLOTS, sizeof(struct state_slot), NULL);
	if (ret == 0)
		ret = rtl_ring_create(&t->alarms, ALARM_SLOTS, sizeof(struct alarm_slot), NULL);
	if (ret < 0) {
		rtl_drfl_transport_destroy(t);
		return rtl_error_set(err, ret, "DRFL transport: out of memory for its rings");
	}
	/* The safe stop: zero joint velocity at the safe deceleration over
	 * one period. */
	for (int i = 0; i < 6; i++)
		t->safe_acc[i] =
			t->cfg.safe_decel > 0 ? (float)t->cfg.safe_decel : (float)RTL_UDP_AUTO;
	t->safe_t = (float)period;
	t->base.size = sizeof(t->base);
	t->base.ops = &drfl_ops;
	t->base.impl = t;
	t->base.commands = &t->cmd;
	t->base.period_ns = llround(period * 1e9);
	t->base.values_size = sizeof(struct rtl_udp_frame);
	*out = t;
	return 0;

err_free:
	free(t);
	return ret;
}

RTL_API void rtl_drfl_transport_destroy(struct rtl_drfl_transport *t)
{
	if (!t)
		return;
	drfl_op_disconnect(&t->base);
	rtl_ring_destroy(t->states);
	rtl_ring_destroy(t->alarms);
	free(t);
}

RTL_API struct rtl_transport *rtl_drfl_transport_base(struct rtl_drfl_transport *t)
{
	return t ? &t->base : NULL;
}

RTL_API struct rtl_udp_cmd *rtl_drfl_transport_command(struct rtl_drfl_transport *t)
{
	return t ? &t->cmd : NULL;
}

RTL__DEFINE_COUNTERS(rtl_drfl_transport, RTL_DRFL_TRANSPORT_COUNTERS, c)

static int telemetry_stats(const void *tr, void *snap)
{
	return rtl_drfl_transport_stats(tr, snap);
}

RTL_API int rtl_drfl_transport_telemetry(struct rtl_drfl_transport *tr, struct rtl_telemetry *t,
					 const char *fields, bool command, struct rtl_error *err)
{
	size_t n;
	const struct rtl_stat_field *f = rtl_drfl_transport_counter_fields(&n);
	int ret;

	if (!tr || !t)
		return rtl_error_set(err, -EINVAL, "DRFL telemetry: NULL transport or telemetry");
	ret = rtl_telemetry_counters(t, "transport", f, n, telemetry_stats, tr,
				     sizeof(struct rtl_drfl_transport_counters), err);
	return ret < 0 ? ret : rtl_udp_telemetry(t, fields, command, err);
}
