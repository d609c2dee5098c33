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

/*
 * The library's RT callbacks, as the table passes them on. DRFL calls them
 * on its own thread: @state is the packed RT_OUTPUT_DATA_LIST v1.0
 * (RTL_UDP_STATE_SIZE bytes, little-endian), valid during the call only.
 */
typedef void (*rtl_drfl_state_fn)(const void *state, void *user);

/* One alarm (DRFL's LOG_ALARM): level 0 info, 1 warning, 2 alarm; group,
 * index (the code) and up to three parameter strings (NULL when absent),
 * valid during the call only. */
struct rtl_drfl_alarm {
	unsigned level;
	unsigned group;
	unsigned index;
	const char *param[3];
};
typedef void (*rtl_drfl_alarm_fn)(const struct rtl_drfl_alarm *alarm, void *user);

/* The DRFL entry points, with the vendor's argument types; ctx is the
 * library's robot object. Every entry up to read_data_rt is required. Set
 * .size = sizeof(struct rtl_drfl_api): an entry added later is then "not
 * there" for a table built before it (RTL_OPS_HAS()). */
struct rtl_drfl_api {
	size_t size; /* sizeof(struct rtl_drfl_api) */
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
	/* Optional for the backend, required by the DRFL transport
	 * (<rtloop/drfl_transport.h>): set_on_rt_monitoring_data and
	 * set_on_rt_log_alarm with a user pointer. NULL @fn unregisters. The
	 * vendor's callbacks carry no user pointer, so the real table keeps
	 * one registration per process (Doosan allows one RT client). */
	void (*set_on_rt_monitoring_data)(void *ctx, rtl_drfl_state_fn fn, void *user);
	void (*set_on_rt_log_alarm)(void *ctx, rtl_drfl_alarm_fn fn, void *user);
};

RTL_END_DECLS

#endif /* RTLOOP_DRFL_API_H */
