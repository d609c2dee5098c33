// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the UDP datagrams rtde-sim's UDP mode receives from
 * anyone who can reach its port, handled as apps/rtde-sim/udp.c's
 * on_datagram() does: the header (io/udp/udp.c), then, for a COMMAND,
 * rtl_udp_decode_command() and sim_udp_apply() on the simulated robot,
 * which then runs a control cycle; a BYE stops the robot. A server that
 * takes LIMITS reads them with rtl_udp_decode_limits(), which is fed every
 * datagram too, and what decodes is merged into the session's limits
 * (sim_udp_limits_merge()), which clamp each command before it is
 * applied (sim_udp_clamp()), as on_command() does. The socket loop
 * around it is not fuzzed; the robot is the simulator's own.
 *
 * Input: a sequence of datagrams (fuzz-udp.h). Oracles: documented codes
 * only; a decoded COMMAND has a known mode and encodes back to the same
 * bytes (but for the fields decoding ignores); apply returns only its
 * documented codes; whatever the commands say (NaN, infinities, huge
 * values), the robot's joint positions and speeds stay finite; a LIMITS
 * datagram decodes (every value finite and >= 0, AUTO allowed in the two
 * rotational ones: docs/udp.md 4.6) and then encodes back to the same
 * bytes, or is refused with -EDOM exactly when the harness finds such a
 * value, and the encoder then refuses it too; a clamped speedj or speedl
 * has no finite velocity above its limit, and a command of another mode
 * is not touched.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz-udp.h"
#include "robot.h"
#include "udp.h"

/* Is the LIMITS value at wire index @i (0 to 15) one a receiver takes? */
static bool limit_ok(int i, double v)
{
	return isfinite(v) && (v >= 0 || ((i == 1 || i == 3) && v == RTL_UDP_AUTO));
}

/* The velocity limit of axis @i for a speedj (@joint) or speedl command, as
 * docs/udp.md 9 gives it (rtde-sim's AUTO: the translational number); 0:
 * none. */
static double vel_limit(const struct rtl_udp_limits *l, bool joint, int i)
{
	if (joint)
		return l->velj[i];
	if (i < 3)
		return l->velx[0];
	return l->velx[1] == RTL_UDP_AUTO ? l->velx[0] : l->velx[1];
}

/* Clamp @c to @lim as rtde-sim does before applying it, and check it. */
static void clamp_checked(const struct rtl_udp_limits *lim, const struct sim_robot *robot,
			  struct rtl_udp_cmd *c)
{
	struct rtl_udp_cmd before = *c;
	struct sim_udp_clamp cl;
	bool speed = c->mode == RTL_UDP_MODE_SPEEDJ || c->mode == RTL_UDP_MODE_SPEEDL;
	bool clamped = sim_udp_clamp(lim, robot, c, &cl);

	FUZZ_CHECK(clamped == (cl.vel || cl.acc));
	if (!speed) {
		FUZZ_CHECK(!clamped && memcmp(&before, c, sizeof(*c)) == 0);
		return;
	}
	for (int i = 0; i < 6; i++) {
		double v = vel_limit(lim, c->mode == RTL_UDP_MODE_SPEEDJ, i);

		if (v > 0 && isfinite(c->vel[i]))
			FUZZ_CHECK(fabs(c->vel[i]) <= v);
	}
}

/* The sixteen values of a LIMITS payload, in wire order. */
static void limits_values(const uint8_t *payload, double v[16])
{
	for (int i = 0; i < 16; i++) {
		uint64_t u = 0;

		for (int b = 7; b >= 0; b--)
			u = u << 8 | payload[8 * i + b];
		memcpy(&v[i], &u, sizeof(v[i]));
	}
}

static void check_robot(const struct sim_robot *r)
{
	for (int i = 0; i < SIM_ROBOT_DOF; i++)
		FUZZ_CHECK(isfinite(r->actual_q[i]) && isfinite(r->actual_qd[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t period = 1000000; /* 1 kHz, as rtde-sim --udp */
	/* The command's reserved bytes 2-7 (docs/udp.md), ignored on receipt. */
	static const int reserved[] = { 34, 35, 36, 37, 38, 39, -1 };
	struct sim_robot_config cfg;
	struct rtl_udp_limits lim = { 0 }; /* the session's: none at the start */
	struct sim_robot *robot = malloc(sizeof(*robot));
	uint8_t *out = malloc(RTL_UDP_MAX_DATAGRAM);
	const uint8_t *p = data;
	size_t left = size, len;
	int64_t now = 0;
	uint8_t *d;

	FUZZ_CHECK(robot && out);
	sim_robot_config_default(&cfg);
	cfg.period_ns = period;
	FUZZ_CHECK(sim_robot_init(robot, &cfg) == 0);
	while ((d = fuzz_udp_next(&p, &left, &len)) != NULL) {
		struct rtl_udp_header h;
		struct rtl_udp_cmd c;
		struct rtl_udp_limits l;
		int r = fuzz_udp_header(d, len, &h);
		int rc = rtl_udp_decode_command(NULL, &c, d, len);
		int rl = rtl_udp_decode_limits(NULL, &l, d, len);

		now += period;
		FUZZ_CHECK(r < 0		      ? rl == r
			   : h.type == RTL_UDP_LIMITS ? rl == (int)len || rl == -EDOM
						      : rl == -EPROTO);
		if (r < 0) {
			FUZZ_CHECK(rc == r);
		} else if (h.type == RTL_UDP_LIMITS) {
			double v[16];
			bool ok = true;

			FUZZ_CHECK(rc == -EPROTO);
			limits_values(d + RTL_UDP_HEADER_SIZE, v);
			for (int i = 0; i < 16; i++)
				ok &= limit_ok(i, v[i]);
			FUZZ_CHECK(ok == (rl == (int)len));
			r = rtl_udp_encode_limits(out, RTL_UDP_MAX_DATAGRAM, h.seq, h.send_ns, &l);
			if (ok) {
				FUZZ_CHECK(r == (int)len);
				fuzz_udp_same(d, out, len, NULL);
				sim_udp_limits_merge(&lim, &l);
			} else {
				FUZZ_CHECK(r == -EINVAL);
			}
		} else if (h.type == RTL_UDP_COMMAND) {
			FUZZ_CHECK(rc == (int)len || rc == -EPROTO);
			if (rc > 0) {
				int enc = rtl_udp_encode_command(out, RTL_UDP_MAX_DATAGRAM, h.seq,
								 h.send_ns, &c);

				FUZZ_CHECK(c.mode < RTL_UDP_MODE_COUNT);
				/* A target time is a duration: the encoder refuses a
				 * negative or non-finite one, and rtde-sim drops
				 * such a command (bad_target_time) before applying. */
				if (!(isfinite(c.target_time) && c.target_time >= 0)) {
					FUZZ_CHECK(enc == -EINVAL);
				} else {
					FUZZ_CHECK(enc == (int)len);
					fuzz_udp_same(d, out, len, reserved);
					clamp_checked(&lim, robot, &c);
					r = sim_udp_apply(robot, &c, (int32_t)(uint32_t)h.seq, now);
					FUZZ_CHECK(r == 0 || r == -ENOTSUP || r == -EINVAL ||
						   r == -ESTALE);
				}
			}
		} else if (h.type == RTL_UDP_BYE) {
			struct sim_robot_cmd stop = { .mode = RTL_RTDE_CMD_STOP,
						      .seq = robot->last_seq + 1,
						      .watchdog_ms = -1 };

			FUZZ_CHECK(rc == -EPROTO);
			sim_robot_command(robot, &stop, now);
		} else {
			FUZZ_CHECK(rc == -EPROTO);
		}
		sim_robot_step(robot, now);
		check_robot(robot);
		free(d);
	}
	free(out);
	free(robot);
	return 0;
}
