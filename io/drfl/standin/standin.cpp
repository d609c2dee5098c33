// SPDX-License-Identifier: MIT
/*
 * The DRFL stand-in (DRFLEx.h has what it models): CDRFLEx's RT calls
 * over rtloop's UDP stream, for tests only.
 */
#include <arpa/inet.h>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "DRFLEx.h"

namespace DRAFramework
{

namespace
{

int64_t now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool good_period(const char *version, float period)
{
	return version && !strcmp(version, RTL_UDP_SCHEMA) && period >= 0.001f && period <= 1.0f;
}

/* A limit as DRFL takes it: >= 0, or AUTO where @auto_ok. */
bool good_limit(float v, bool auto_ok)
{
	return std::isfinite(v) && (v >= 0 || (auto_ok && v == (float)RTL_UDP_AUTO));
}

} // namespace

CDRFLEx::CDRFLEx() = default;

CDRFLEx::~CDRFLEx()
{
	disconnect_rt_control();
}

bool CDRFLEx::connect_rt_control(const char *ip, unsigned int port)
{
	struct sockaddr_in a = {};
	struct timeval tv = { 0, 50 * 1000 };

	if (fd_ >= 0 || !ip || port == 0 || port > 65535)
		return false;
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		return false;
	fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd_ < 0)
		return false;
	/* The receiving thread looks at its quit flag every 50 ms. */
	if (setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd_, (const struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd_);
		fd_ = -1;
		return false;
	}
	return true;
}

bool CDRFLEx::disconnect_rt_control()
{
	if (fd_ < 0)
		return false;
	stop_rt_control();
	close(fd_);
	fd_ = -1;
	return true;
}

bool CDRFLEx::set_rt_control_output(const char *version, float period, int loss)
{
	(void)loss; /* reserved and unused, as in DRFL */
	if (fd_ < 0 || !good_period(version, period))
		return false;
	out_period_ = period;
	return true;
}

bool CDRFLEx::set_rt_control_input(const char *version, float period, int loss)
{
	if (fd_ < 0 || !good_period(version, period))
		return false;
	in_loss_ = loss;
	return true;
}

bool CDRFLEx::handshake()
{
	uint8_t buf[RTL_UDP_MAX_DATAGRAM], tx[RTL_UDP_HEADER_SIZE + RTL_UDP_HELLO_SIZE];
	struct rtl_udp_hello h = {};
	struct rtl_udp_header hd;
	int64_t end = now_ns() + 3000000000LL, next_hello = 0;
	bool welcomed = false;
	int len;

	memcpy(h.schema, RTL_UDP_SCHEMA, sizeof(RTL_UDP_SCHEMA));
	h.period_ns = (uint32_t)llroundf(out_period_ * 1e9f);
	h.loss_count = in_loss_ > 0 ? in_loss_ : 0;
	while (now_ns() < end) {
		ssize_t n;

		if (now_ns() >= next_hello) {
			len = rtl_udp_encode_hello(tx, sizeof(tx), RTL_UDP_HELLO, 0, now_ns(), &h);
			if (send(fd_, tx, (size_t)len, MSG_NOSIGNAL) < 0 && errno != ECONNREFUSED)
				return false;
			next_hello = now_ns() + 100000000LL;
		}
		n = recv(fd_, buf, sizeof(buf), 0);
		if (n < 0 || rtl_udp_decode_header(&hd, buf, (size_t)n) < 0)
			continue;
		if (hd.type == RTL_UDP_WELCOME) {
			welcomed = true;
		} else if (hd.type == RTL_UDP_STATE && welcomed) {
			memcpy(&buf_[0], buf + RTL_UDP_HEADER_SIZE, sizeof(buf_[0]));
			echo_seq_.store(hd.seq, std::memory_order_relaxed);
			echo_ns_.store(hd.send_ns, std::memory_order_relaxed);
			newest_.store(0, std::memory_order_release);
			return true;
		}
	}
	return false;
}

bool CDRFLEx::start_rt_control()
{
	if (fd_ < 0 || started_.load() || out_period_ == 0)
		return false;
	closed_by_server_.store(false);
	newest_.store(-1);
	if (!handshake())
		return false;
	started_.store(true);
	if (have_limits_ && !send_limits()) {
		started_.store(false);
		return false;
	}
	quit_.store(false);
	rx_ = std::thread(&CDRFLEx::receive, this);
	return true;
}

void CDRFLEx::stop_thread()
{
	quit_.store(true);
	if (rx_.joinable())
		rx_.join();
}

bool CDRFLEx::stop_rt_control()
{
	uint8_t tx[RTL_UDP_HEADER_SIZE];
	bool was = started_.exchange(false);

	stop_thread();
	if (!was)
		return false;
	if (!closed_by_server_.load()) {
		int len = rtl_udp_encode_bye(tx, sizeof(tx), ++tx_seq_, now_ns());

		send(fd_, tx, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	return true;
}

/* The library's receiving thread: states to the buffer and the callback,
 * alarms to theirs, a BYE ends the stream. */
void CDRFLEx::receive()
{
	uint8_t buf[RTL_UDP_MAX_DATAGRAM];

	while (!quit_.load(std::memory_order_relaxed)) {
		struct rtl_udp_header h;
		ssize_t n = recv(fd_, buf, sizeof(buf), 0);

		if (n < 0 || rtl_udp_decode_header(&h, buf, (size_t)n) < 0)
			continue;
		if (h.type == RTL_UDP_STATE) {
			int i = newest_.load(std::memory_order_relaxed) == 0 ? 1 : 0;
			TOnRTMonitoringDataCB cb = on_state_.load(std::memory_order_acquire);

			memcpy(&buf_[i], buf + RTL_UDP_HEADER_SIZE, sizeof(buf_[i]));
			newest_.store(i, std::memory_order_release);
			echo_seq_.store(h.seq, std::memory_order_relaxed);
			echo_ns_.store(h.send_ns, std::memory_order_relaxed);
			if (cb)
				cb(&buf_[i]);
		} else if (h.type == RTL_UDP_ALARM) {
			struct rtl_udp_alarm a;
			LOG_ALARM la = {};
			TOnLogAlarmCB cb = on_alarm_.load(std::memory_order_acquire);

			if (rtl_udp_decode_alarm(&h, &a, buf, (size_t)n) < 0 || !cb)
				continue;
			la._iLevel = a.level;
			la._iGroup = a.group;
			la._iIndex = a.code;
			memcpy(la._szParam[0], a.text, sizeof(a.text));
			cb(&la);
		} else if (h.type == RTL_UDP_BYE) {
			closed_by_server_.store(true);
			return;
		}
	}
}

bool CDRFLEx::send_limits()
{
	uint8_t tx[RTL_UDP_HEADER_SIZE + RTL_UDP_LIMITS_SIZE];
	int len = rtl_udp_encode_limits(tx, sizeof(tx), ++limits_seq_, now_ns(), &limits_);

	return len > 0 && send(fd_, tx, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) == len;
}

bool CDRFLEx::set_velx_rt(float trans, float rot)
{
	if (!good_limit(trans, false) || !good_limit(rot, true))
		return false;
	limits_.velx[0] = trans;
	limits_.velx[1] = rot;
	have_limits_ = true;
	return !started_.load() || send_limits();
}

bool CDRFLEx::set_accx_rt(float trans, float rot)
{
	if (!good_limit(trans, false) || !good_limit(rot, true))
		return false;
	limits_.accx[0] = trans;
	limits_.accx[1] = rot;
	have_limits_ = true;
	return !started_.load() || send_limits();
}

bool CDRFLEx::set_velj_rt(float vel[6])
{
	for (int i = 0; i < 6; i++)
		if (!vel || !good_limit(vel[i], false))
			return false;
	for (int i = 0; i < 6; i++)
		limits_.velj[i] = vel[i];
	have_limits_ = true;
	return !started_.load() || send_limits();
}

bool CDRFLEx::set_accj_rt(float acc[6])
{
	for (int i = 0; i < 6; i++)
		if (!acc || !good_limit(acc[i], false))
			return false;
	for (int i = 0; i < 6; i++)
		limits_.accj[i] = acc[i];
	have_limits_ = true;
	return !started_.load() || send_limits();
}

bool CDRFLEx::command(uint8_t mode, const float *pos, const float *vel, const float *acc,
		      float time)
{
	uint8_t tx[RTL_UDP_HEADER_SIZE + RTL_UDP_COMMAND_SIZE];
	struct rtl_udp_cmd c = {};
	int len;

	if (!started_.load(std::memory_order_relaxed) ||
	    closed_by_server_.load(std::memory_order_relaxed) || !vel || !acc)
		return false;
	c.mode = mode;
	c.echo_seq = echo_seq_.load(std::memory_order_relaxed);
	c.echo_ns = echo_ns_.load(std::memory_order_relaxed);
	c.target_time = time;
	for (int i = 0; i < 6; i++) {
		c.pos[i] = pos ? pos[i] : 0;
		c.vel[i] = vel[i];
		c.acc[i] = acc[i];
	}
	len = rtl_udp_encode_command(tx, sizeof(tx), tx_seq_ + 1, now_ns(), &c);
	if (len < 0 || send(fd_, tx, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) != len)
		return false;
	tx_seq_++;
	return true;
}

bool CDRFLEx::speedl_rt(float vel[6], float acc[6], float time)
{
	return command(RTL_UDP_MODE_SPEEDL, nullptr, vel, acc, time);
}

bool CDRFLEx::speedj_rt(float vel[6], float acc[6], float time)
{
	return command(RTL_UDP_MODE_SPEEDJ, nullptr, vel, acc, time);
}

bool CDRFLEx::servol_rt(float pos[6], float vel[6], float acc[6], float time)
{
	return pos && command(RTL_UDP_MODE_SERVOL, pos, vel, acc, time);
}

bool CDRFLEx::servoj_rt(float pos[6], float vel[6], float acc[6], float time)
{
	return pos && command(RTL_UDP_MODE_SERVOJ, pos, vel, acc, time);
}

LPRT_OUTPUT_DATA_LIST CDRFLEx::read_data_rt()
{
	int i = newest_.load(std::memory_order_acquire);

	return i < 0 ? nullptr : &buf_[i];
}

void CDRFLEx::set_on_rt_monitoring_data(TOnRTMonitoringDataCB cb)
{
	on_state_.store(cb, std::memory_order_release);
}

void CDRFLEx::set_on_rt_log_alarm(TOnLogAlarmCB cb)
{
	on_alarm_.store(cb, std::memory_order_release);
}

} // namespace DRAFramework
