/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for Doosan's DRFLEx.h, for tests and demos only: the RT part of
 * DRAFramework::CDRFLEx that rtloop's DRFL table (io/drfl/drfl_real.cpp)
 * calls, with the vendor's names and argument types, implemented over
 * rtloop's own UDP stream (docs/udp.md) so that the DRFL transport runs
 * end to end against `rtde-sim --udp` without the closed library.
 *
 * What it models of DRFL (docs/doosan-rt.md 2 and 3):
 *   connect_rt_control   a UDP socket connect(2)ed to the controller; no
 *                        datagram yet (so, like DRFL, it succeeds without
 *                        a server)
 *   set_rt_control_output / _input  "v1.0" and 0.001..1 s only (else
 *                        false); the input's loss count goes to the
 *                        server in HELLO
 *   start_rt_control     HELLO every 100 ms until the WELCOME and the
 *                        first state (3 s at most, else false); then a
 *                        thread of the library receives: each state is
 *                        copied into the read_data_rt() buffer and handed
 *                        to the set_on_rt_monitoring_data callback, each
 *                        ALARM to the set_on_rt_log_alarm callback
 *   set_velx_rt ... set_accj_rt  stored, and sent as one LIMITS datagram
 *                        (now, or at start)
 *   speedl_rt ... servoj_rt  one COMMAND datagram, not blocking; true
 *                        means "sent", never "applied" (3.1); false when
 *                        RT control is not started, the server ended the
 *                        session, or the socket refused the datagram
 *   stop_rt_control      BYE; the receiving thread ends
 *   disconnect_rt_control  stop, close
 * A BYE from the server (it closed the session: its loss count) stops the
 * stream: no more states, commands return false.
 *
 * Not a Doosan library: nothing here is Doosan's code, and the wire is
 * rtloop's, not Doosan's (which is not public).
 */
#ifndef RTLOOP_TESTS_DRFLEX_STANDIN_H
#define RTLOOP_TESTS_DRFLEX_STANDIN_H

#include <atomic>
#include <cstdint>
#include <thread>

#include <rtloop/udp.h>

namespace DRAFramework
{

#define MAX_STRING_SIZE 256

/* RT_OUTPUT_DATA_LIST v1.0: packed, the fields of docs/doosan-rt.md 4.1. */
#pragma pack(push, 1)
typedef struct _RT_OUTPUT_DATA_LIST {
#define RTL_STANDIN_MEMBER_(name, type, ctype, dims, count, off, unit) ctype name dims;
	RTL_UDP_STATE_FIELDS(RTL_STANDIN_MEMBER_)
#undef RTL_STANDIN_MEMBER_
} RT_OUTPUT_DATA_LIST, *LPRT_OUTPUT_DATA_LIST;
#pragma pack(pop)
static_assert(sizeof(RT_OUTPUT_DATA_LIST) == RTL_UDP_STATE_SIZE, "the v1.0 layout is 1,338 bytes");

typedef struct _LOG_ALARM {
	unsigned char _iLevel;
	unsigned char _iGroup;
	unsigned int _iIndex;
	char _szParam[3][MAX_STRING_SIZE];
} LOG_ALARM, *LPLOG_ALARM;

typedef void (*TOnRTMonitoringDataCB)(const LPRT_OUTPUT_DATA_LIST);
typedef void (*TOnLogAlarmCB)(LPLOG_ALARM);

class CDRFLEx
{
      public:
	CDRFLEx();
	~CDRFLEx();
	CDRFLEx(const CDRFLEx &) = delete;
	CDRFLEx &operator=(const CDRFLEx &) = delete;

	bool connect_rt_control(const char *ip = "192.168.137.100", unsigned int port = 12347);
	bool disconnect_rt_control();
	bool set_rt_control_input(const char *version, float period, int loss);
	bool set_rt_control_output(const char *version, float period, int loss);
	bool start_rt_control();
	bool stop_rt_control();
	bool set_velx_rt(float trans, float rot = -10000);
	bool set_accx_rt(float trans, float rot = -10000);
	bool set_velj_rt(float vel[6]);
	bool set_accj_rt(float acc[6]);
	bool speedl_rt(float vel[6], float acc[6], float time);
	bool speedj_rt(float vel[6], float acc[6], float time);
	bool servol_rt(float pos[6], float vel[6], float acc[6], float time);
	bool servoj_rt(float pos[6], float vel[6], float acc[6], float time);
	LPRT_OUTPUT_DATA_LIST read_data_rt();
	void set_on_rt_monitoring_data(TOnRTMonitoringDataCB cb);
	void set_on_rt_log_alarm(TOnLogAlarmCB cb);

      private:
	bool command(uint8_t mode, const float *pos, const float *vel, const float *acc,
		     float time);
	bool send_limits();
	bool handshake();
	void receive();
	void stop_thread();

	int fd_ = -1;
	float out_period_ = 0;
	int in_loss_ = 0;
	std::atomic<bool> started_{ false };
	std::atomic<bool> closed_by_server_{ false };
	std::atomic<bool> quit_{ false };
	std::thread rx_;
	uint64_t tx_seq_ = 0;	  /* commands (and the BYE) */
	uint64_t limits_seq_ = 0; /* LIMITS: a sequence of their own */
	struct rtl_udp_limits limits_ = {};
	bool have_limits_ = false;
	/* The newest state: two buffers, the index of the newest published. */
	RT_OUTPUT_DATA_LIST buf_[2] = {};
	std::atomic<int> newest_{ -1 };
	std::atomic<uint64_t> echo_seq_{ 0 };
	std::atomic<int64_t> echo_ns_{ 0 };
	std::atomic<TOnRTMonitoringDataCB> on_state_{ nullptr };
	std::atomic<TOnLogAlarmCB> on_alarm_{ nullptr };
};

} // namespace DRAFramework

#endif /* RTLOOP_TESTS_DRFLEX_STANDIN_H */
