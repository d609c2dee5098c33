// SPDX-License-Identifier: MIT
/*
 * The DRFL backend's logic over a table of entry points: see
 * <rtloop/drfl_backend.h>. Nothing here needs the vendor library.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rtloop/drfl_backend.h>
#include <rtloop/sized.h>
#include <rtloop/motion_backend.h>

#define DEFAULT_HOST "192.168.137.100"
#define DEFAULT_LOSS 4

static int fail(struct rtl_error *err, int code, const char *call)
{
	if (err) {
		err->code = code;
		snprintf(err->msg, sizeof(err->msg),
			 "DRFL: %s failed; check the robot is real (not virtual), in autonomous "
			 "mode with safety mode MOVE, and that the RT address fits the firmware "
			 "(docs/doosan-rt.md 2.1)",
			 call);
	}
	return code;
}

RTL_API bool rtl_drfl_api_complete(const struct rtl_drfl_api *a)
{
	if (!a || !RTL_SIZED_HAS(struct rtl_drfl_api, a, read_data_rt))
		return false;
	return a->connect_rt_control && a->disconnect_rt_control && a->set_rt_control_input &&
	       a->set_rt_control_output && a->start_rt_control && a->stop_rt_control &&
	       a->set_velx_rt && a->set_accx_rt && a->set_velj_rt && a->set_accj_rt &&
	       a->speedl_rt && a->speedj_rt && a->servol_rt && a->servoj_rt && a->read_data_rt;
}

static bool any(const double v[6])
{
	for (int i = 0; i < 6; i++)
		if (v[i] > 0)
			return true;
	return false;
}

static void to_f6(const double in[6], float out[6])
{
	for (int i = 0; i < 6; i++)
		out[i] = (float)in[i];
}

/* A joint limit (SI units; all <= 0: none, true) through @set in Doosan units. */
static bool set_joint_limit(void *ctx, bool (*set)(void *ctx, float lim[6]), const double lim[6])
{
	double v[6];
	float f[6];

	if (!any(lim))
		return true;
	rtl_motion_to_mm_deg(v, lim, RTL_MOTION_JOINT);
	to_f6(v, f);
	return set(ctx, f);
}

RTL_API int rtl_drfl_api_connect(const struct rtl_drfl_api *api,
				 const struct rtl_drfl_config *user_cfg, struct rtl_error *err)
{
	struct rtl_drfl_config cfg_copy;
	const struct rtl_drfl_config *cfg = &cfg_copy;
	double period;
	int loss, ret;
	const char *call;

	if (!api || !rtl_drfl_api_complete(api))
		return fail(err, -EINVAL, "the entry-point table (incomplete, or no .size)");
	ret = rtl__sized_in(&cfg_copy, sizeof(cfg_copy), user_cfg, "DRFL: struct rtl_drfl_config",
			    err);
	if (ret < 0)
		return ret;
	period = cfg->period_s ? cfg->period_s : 0.001;
	if (!(period >= 0.001 && period <= 1.0))
		return fail(err, -EINVAL, "the period (0.001..1 s)");
	loss = cfg->loss_count ? cfg->loss_count : DEFAULT_LOSS;
	if (!api->connect_rt_control(api->ctx, cfg->host ? cfg->host : DEFAULT_HOST,
				     cfg->port ? cfg->port : RTL_UDP_DEFAULT_PORT))
		return fail(err, -ECONNREFUSED, "connect_rt_control");
	call = "set_rt_control_output";
	if (!api->set_rt_control_output(api->ctx, RTL_UDP_SCHEMA, (float)period, loss))
		goto err_disconnect;
	call = "set_rt_control_input";
	if (cfg->set_input &&
	    !api->set_rt_control_input(api->ctx, RTL_UDP_SCHEMA, (float)period, loss))
		goto err_disconnect;
	/* Limits in Doosan units; the rotational ones derived (-10000). */
	call = "set_velx_rt";
	if (cfg->velx > 0 &&
	    !api->set_velx_rt(api->ctx, (float)rtl_motion_m_to_mm(cfg->velx), (float)RTL_UDP_AUTO))
		goto err_disconnect;
	call = "set_accx_rt";
	if (cfg->accx > 0 &&
	    !api->set_accx_rt(api->ctx, (float)rtl_motion_m_to_mm(cfg->accx), (float)RTL_UDP_AUTO))
		goto err_disconnect;
	call = "set_velj_rt";
	if (!set_joint_limit(api->ctx, api->set_velj_rt, cfg->velj))
		goto err_disconnect;
	call = "set_accj_rt";
	if (!set_joint_limit(api->ctx, api->set_accj_rt, cfg->accj))
		goto err_disconnect;
	call = "start_rt_control";
	if (!api->start_rt_control(api->ctx))
		goto err_disconnect;
	return 0;

err_disconnect:
	api->disconnect_rt_control(api->ctx);
	return fail(err, -EIO, call);
}

RTL_API int rtl_drfl_api_disconnect(const struct rtl_drfl_api *api)
{
	bool ok;

	if (!api || !rtl_drfl_api_complete(api))
		return -EINVAL;
	ok = api->stop_rt_control(api->ctx);
	ok = api->disconnect_rt_control(api->ctx) && ok;
	return ok ? 0 : -EIO;
}

RTL_API int rtl_drfl_api_send_cmd(const struct rtl_drfl_api *api, const struct rtl_udp_cmd *c)
{
	float pos[6], vel[6], acc[6], t;
	bool ok;

	if (!api || !c)
		return -EINVAL;
	t = (float)c->target_time;
	to_f6(c->pos, pos);
	to_f6(c->vel, vel);
	to_f6(c->acc, acc);
	switch (c->mode) {
	case RTL_UDP_MODE_SPEEDL:
		ok = api->speedl_rt(api->ctx, vel, acc, t);
		break;
	case RTL_UDP_MODE_SPEEDJ:
		ok = api->speedj_rt(api->ctx, vel, acc, t);
		break;
	case RTL_UDP_MODE_SERVOL:
		ok = api->servol_rt(api->ctx, pos, vel, acc, t);
		break;
	case RTL_UDP_MODE_SERVOJ:
		ok = api->servoj_rt(api->ctx, pos, vel, acc, t);
		break;
	case RTL_UDP_MODE_STOP:
	case RTL_UDP_MODE_NONE:
		/* DRFL has no RT stop: zero joint velocity at the stop's
		 * deceleration (acc[0] on every axis) keeps the time-out fed
		 * at rest. */
		for (int i = 0; i < 6; i++) {
			vel[i] = 0;
			acc[i] = (float)c->acc[0];
		}
		ok = api->speedj_rt(api->ctx, vel, acc, t);
		break;
	default:
		return -EINVAL;
	}
	return ok ? c->mode : -EIO;
}

RTL_API int rtl_drfl_api_send(const struct rtl_drfl_api *api, const struct rtl_motion_output *out,
			      double target_time)
{
	struct rtl_udp_cmd c;
	int mode;

	if (!api)
		return -EINVAL;
	mode = rtl_motion_to_udp(&c, out, target_time);
	if (mode < 0)
		return mode;
	return rtl_drfl_api_send_cmd(api, &c);
}

RTL_API int rtl_drfl_api_read(const struct rtl_drfl_api *api, struct rtl_udp_state *s)
{
	const void *p;

	if (!api || !api->read_data_rt || !s)
		return -EINVAL;
	p = api->read_data_rt(api->ctx);
	if (!p)
		return -ENODATA;
	return rtl_udp_state_decode(s, p, RTL_UDP_STATE_SIZE) < 0 ? -EIO : 0;
}
