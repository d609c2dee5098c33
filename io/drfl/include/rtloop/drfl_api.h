/* SPDX-License-Identifier: MIT */
/*
 * rtl_drfl_api: the table of DRFL entry points the DRFL backend calls
 * (<rtloop/drfl_backend.h>). A header of its own, valid C and C++, so the
 * C++ file that fills it from the vendor library (drfl_real.cpp) needs
 * nothing else of rtloop.
 */
#ifndef RTLOOP_DRFL_API_H
#define RTLOOP_DRFL_API_H

#include <stdbool.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/* The DRFL entry points, with the vendor's argument types; ctx is the
 * library's robot object. Every entry is required. */
struct rtl_drfl_api {
	void *ctx;
	bool (*connect_rt_control)(void *ctx, const char *ip, unsigned int port);
	bool (*disconnect_rt_control)(void *ctx);
	bool (*set_rt_control_input)(void *ctx, const char *version, float period, int loss);
	bool (*set_rt_control_output)(void *ctx, const char *version, float period, int loss);
	bool (*start_rt_control)(void *ctx);
	bool (*stop_rt_control)(void *ctx);
	bool (*set_velx_rt)(void *ctx, float trans, float rot);
	bool (*set_accx_rt)(void *ctx, float trans, float rot);
	bool (*set_velj_rt)(void *ctx, float vel[6]);
	bool (*set_accj_rt)(void *ctx, float acc[6]);
	bool (*speedl_rt)(void *ctx, float vel[6], float acc[6], float t);
	bool (*speedj_rt)(void *ctx, float vel[6], float acc[6], float t);
	bool (*servol_rt)(void *ctx, float pos[6], float vel[6], float acc[6], float t);
	bool (*servoj_rt)(void *ctx, float pos[6], float vel[6], float acc[6], float t);
	/* The latest RT_OUTPUT_DATA_LIST (packed, RTL_UDP_STATE_SIZE bytes), or
	 * NULL before the first. */
	const void *(*read_data_rt)(void *ctx);
};

RTL_END_DECLS

#endif /* RTLOOP_DRFL_API_H */
