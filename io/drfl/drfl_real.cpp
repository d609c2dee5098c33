// SPDX-License-Identifier: MIT
/*
 * The DRFL entry-point table on the vendor library (built only when Meson
 * finds DRFL and DRFLEx.h). Each entry forwards to the CDRFLEx method of
 * the same name; the logic that calls them is C (drfl_backend.c) and is
 * tested against a fake table.
 */
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

} // namespace

extern "C" RTL_API int rtl_drfl_api_real(struct rtl_drfl_api *api)
{
	if (!api)
		return -EINVAL;
	CDRFLEx *r = new (std::nothrow) CDRFLEx;
	if (!r)
		return -ENOMEM;
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
	return 0;
}

extern "C" RTL_API void rtl_drfl_api_real_free(struct rtl_drfl_api *api)
{
	if (!api || !api->ctx)
		return;
	delete robot(api->ctx);
	api->ctx = nullptr;
}
