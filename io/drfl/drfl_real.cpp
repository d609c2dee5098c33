// SPDX-License-Identifier: MIT
/*
 * The DRFL entry-point table on the vendor library (built only when Meson
 * finds DRFL and DRFLEx.h). Each entry forwards to the CDRFLEx method of
 * the same name; the logic that calls them is C (drfl_backend.c) and is
 * tested against a fake table.
 */
#include <atomic>
#include <cerrno>
#include <new>

#include "DRFLEx.h"

#include <rtloop/drfl_real.h>

using namespace DRAFramework;

namespace
{

CDRFLEx *robot(void *ctx)
{
	return static_cast<CDRFLEx *>(ctx);
}

bool connect_rt(void *c, const char *ip, unsigned int port)
{
	return robot(c)->connect_rt_control(ip, port);
}

bool disconnect_rt(void *c)
{
	return robot(c)->disconnect_rt_control();
}

bool set_input(void *c, const char *v, float period, int loss)
{
	return robot(c)->set_rt_control_input(v, period, loss);
}

bool set_output(void *c, const char *v, float period, int loss)
{
	return robot(c)->set_rt_control_output(v, period, loss);
}

bool start_rt(void *c)
{
	return robot(c)->start_rt_control();
}

bool stop_rt(void *c)
{
	return robot(c)->stop_rt_control();
}

bool velx(void *c, float t, float r)
{
	return robot(c)->set_velx_rt(t, r);
}

bool accx(void *c, float t, float r)
{
	return robot(c)->set_accx_rt(t, r);
}

bool velj(void *c, float v[6])
{
	return robot(c)->set_velj_rt(v);
}

bool accj(void *c, float a[6])
{
	return robot(c)->set_accj_rt(a);
}

bool speedl(void *c, float v[6], float a[6], float t)
{
	return robot(c)->speedl_rt(v, a, t);
}

bool speedj(void *c, float v[6], float a[6], float t)
{
	return robot(c)->speedj_rt(v, a, t);
}

bool servol(void *c, float p[6], float v[6], float a[6], float t)
{
	return robot(c)->servol_rt(p, v, a, t);
}

bool servoj(void *c, float p[6], float v[6], float a[6], float t)
{
	return robot(c)->servoj_rt(p, v, a, t);
}

const void *read_rt(void *c)
{
	return robot(c)->read_data_rt();
}

/* The vendor's callbacks take no user pointer: one registration per
 * process, handed from the registering thread to DRFL's thread through
 * atomics (the function last, so DRFL never sees a function without its
 * user pointer). */
std::atomic<void *> state_user{ nullptr };
std::atomic<rtl_drfl_state_fn> state_fn{ nullptr };
std::atomic<void *> alarm_user{ nullptr };
std::atomic<rtl_drfl_alarm_fn> alarm_fn{ nullptr };

void on_rt_state(const LPRT_OUTPUT_DATA_LIST data)
{
	rtl_drfl_state_fn fn = state_fn.load(std::memory_order_acquire);

	if (fn && data)
		fn(data, state_user.load(std::memory_order_relaxed));
}

void on_rt_alarm(LPLOG_ALARM a)
{
	rtl_drfl_alarm_fn fn = alarm_fn.load(std::memory_order_acquire);
	struct rtl_drfl_alarm out = {};

	if (!fn || !a)
		return;
	out.level = a->_iLevel;
	out.group = a->_iGroup;
	out.index = a->_iIndex;
	for (int i = 0; i < 3; i++)
		out.param[i] = a->_szParam[i][0] ? a->_szParam[i] : nullptr;
	fn(&out, alarm_user.load(std::memory_order_relaxed));
}

void set_state_cb(void *c, rtl_drfl_state_fn fn, void *user)
{
	state_fn.store(nullptr, std::memory_order_release);
	state_user.store(user, std::memory_order_relaxed);
	state_fn.store(fn, std::memory_order_release);
	robot(c)->set_on_rt_monitoring_data(fn ? on_rt_state : nullptr);
}

void set_alarm_cb(void *c, rtl_drfl_alarm_fn fn, void *user)
{
	alarm_fn.store(nullptr, std::memory_order_release);
	alarm_user.store(user, std::memory_order_relaxed);
	alarm_fn.store(fn, std::memory_order_release);
	robot(c)->set_on_rt_log_alarm(fn ? on_rt_alarm : nullptr);
}

} // namespace

extern "C" RTL_API int rtl_drfl_api_real(struct rtl_drfl_api *api)
{
	if (!api)
		return -EINVAL;
	CDRFLEx *r = new (std::nothrow) CDRFLEx;
	if (!r)
		return -ENOMEM;
	api->size = sizeof(*api);
	api->ctx = r;
	api->connect_rt_control = connect_rt;
	api->disconnect_rt_control = disconnect_rt;
	api->set_rt_control_input = set_input;
	api->set_rt_control_output = set_output;
	api->start_rt_control = start_rt;
	api->stop_rt_control = stop_rt;
	api->set_velx_rt = velx;
	api->set_accx_rt = accx;
	api->set_velj_rt = velj;
	api->set_accj_rt = accj;
	api->speedl_rt = speedl;
	api->speedj_rt = speedj;
	api->servol_rt = servol;
	api->servoj_rt = servoj;
	api->read_data_rt = read_rt;
	api->set_on_rt_monitoring_data = set_state_cb;
	api->set_on_rt_log_alarm = set_alarm_cb;
	return 0;
}

extern "C" RTL_API void rtl_drfl_api_real_free(struct rtl_drfl_api *api)
{
	if (!api || !api->ctx)
		return;
	delete robot(api->ctx);
	api->ctx = nullptr;
}
