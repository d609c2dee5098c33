// SPDX-License-Identifier: MIT
/* rtloop from C++17: a class that owns the RTDE transport and the loop.
 *
 * - The C API takes plain function pointers and a void *user. The class
 *   hands it static member functions (on_connected, on_step) with `this` as
 *   the user pointer; each casts it back and calls the member function. No
 *   lambda crosses into C, and no exception may: the trampolines are
 *   noexcept, and the step itself only does arithmetic (it runs on a
 *   real-time thread: no allocation, no locks, no throwing).
 * - RAII: the constructor creates (and throws std::runtime_error with
 *   rtloop's message on failure); std::unique_ptr with the library's
 *   destroy functions frees in reverse order: the loop (which stops the arm
 *   first) before the transport it uses.
 *
 * The loop swings joint 0 on a slow sine for SECONDS, then its step
 * returns -ECANCELED and the loop stops the arm.
 * Usage: cpp_loop [PORT [SECONDS]] (default 30004, 2 s), against rtde-sim
 * or a robot running rtloop_control.script. */
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include <rtloop/loop.h>
#include <rtloop/rtde_cmd.h>
#include <rtloop/rtde_transport.h>
#include <rtloop/time.h>

namespace
{

// unique_ptr deleters: the library's destroy functions (which accept NULL).
struct LoopDeleter {
	void operator()(rtl_loop *l) const noexcept
	{
		rtl_loop_destroy(l);
	}
};
struct TransportDeleter {
	void operator()(rtl_rtde_transport *t) const noexcept
	{
		rtl_rtde_transport_destroy(t);
	}
};

class JointSwing
{
      public:
	JointSwing(std::uint16_t port, double seconds)
	    : duration_ns_(static_cast<std::int64_t>(seconds * double(RTL_NS_PER_SEC)))
	{
		rtl_error err{};
		rtl_rtde_client_config cc{}; // zero: the safe defaults
		cc.size = sizeof(cc);
		cc.outputs = "timestamp,actual_q";
		cc.inputs[0] = RTL_RTDE_CMD_RECIPE;
		rtl_rtde_transport_config tc{};
		tc.size = sizeof(tc);
		tc.port = port;
		tc.client = &cc;
		tc.connected = &JointSwing::on_connected;
		tc.user = this;

		rtl_rtde_transport *t = nullptr;
		if (rtl_rtde_transport_create(&t, &tc, &err) < 0)
			throw std::runtime_error(err.msg);
		transport_.reset(t);

		rtl_loop_config lc{};
		lc.size = sizeof lc;
		lc.transport = rtl_rtde_transport_base(transport_.get());
		lc.step = &JointSwing::on_step;
		lc.user = this;
		lc.rt_mode = RTL_LOOP_RT_DEGRADE; // run without SCHED_FIFO, and say so
		rtl_loop *l = nullptr;
		if (rtl_loop_create(&l, &lc, &err) < 0)
			throw std::runtime_error(err.msg); // transport_ frees itself
		loop_.reset(l);
	}

	// The loop and its threads hold `this`: neither copy nor move.
	JointSwing(const JointSwing &) = delete;
	JointSwing &operator=(const JointSwing &) = delete;

	// Connect, run until the step ends it, stop the arm. The loop's
	// result: -ECANCELED when the step ended it as planned.
	int run()
	{
		rtl_error err{};
		int ret = rtl_loop_run(loop_.get(), &err);

		if (ret != -ECANCELED && err.msg[0])
			std::fprintf(stderr, "cpp_loop: %s\n", err.msg);
		return ret;
	}

	void report() const
	{
		rtl_loop_counters st{};
		st.size = sizeof st;

		rtl_loop_stats(loop_.get(), &st);
		std::printf("cpp_loop: %" PRIu64 " steps, %" PRIu64
			    " sent; joint 0 moved %.4f rad; "
			    "stop %s\n",
			    steps_, st.sends, q_last_ - q_first_,
			    st.stop_unconfirmed ? "NOT confirmed" : "confirmed at rest");
		rtl_loop_report(loop_.get(), stdout, false);
	}

      private:
	// The C callbacks: static members, `this` in the user pointer.
	static void on_connected(rtl_rtde_transport *t, void *user) noexcept
	{
		static_cast<JointSwing *>(user)->connected(t);
	}
	static int on_step(rtl_loop *loop, const rtl_loop_frame *f, void *user) noexcept
	{
		return static_cast<JointSwing *>(user)->step(loop, *f);
	}

	// Once per connect, while no step runs: resolve the field handles.
	void connected(rtl_rtde_transport *t)
	{
		ts_ = rtl_rtde_transport_output_handle(t, "timestamp");
		q_ = rtl_rtde_transport_output_handle(t, "actual_q");
		mode_ = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_MODE);
		qd0_ = rtl_rtde_transport_input_handle(t, 0, RTL_RTDE_CMD_FIELD_PARAM0);
	}

	// Every frame, on the loop's real-time thread.
	int step(rtl_loop *loop, const rtl_loop_frame &f)
	{
		rtl_rtde_frame in = rtl_rtde_loop_state(&f);
		rtl_rtde_frame *out = rtl_rtde_loop_commands(loop, 0);
		double q[6] = {};

		if (steps_ == 0)
			first_rx_ns_ = f.rx_ns;
		if (rtl_rtde_frame_get_vec6(&in, q_, q)) {
			if (steps_ == 0)
				q_first_ = q[0];
			q_last_ = q[0];
		}
		rtl_rtde_frame_set_int(out, mode_, RTL_RTDE_CMD_SPEEDJ);
		rtl_rtde_frame_set_double(
			out, qd0_, 0.2 * std::sin(2.0 * rtl_rtde_frame_get_double(&in, ts_)));
		steps_++;
		return f.rx_ns - first_rx_ns_ < duration_ns_ ? 0 : -ECANCELED;
	}

	// Declared before loop_, so destroyed after it.
	std::unique_ptr<rtl_rtde_transport, TransportDeleter> transport_;
	std::unique_ptr<rtl_loop, LoopDeleter> loop_;
	rtl_rtde_handle ts_{}, q_{}, mode_{}, qd0_{};
	std::int64_t duration_ns_;
	std::int64_t first_rx_ns_ = 0;
	std::uint64_t steps_ = 0;
	double q_first_ = 0, q_last_ = 0;
};

} // namespace

int main(int argc, char **argv)
{
	auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 0);
	double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;

	try {
		JointSwing swing(port, seconds);
		int ret = swing.run();

		swing.report();
		return ret == -ECANCELED ? 0 : 1;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "cpp_loop: %s\n", e.what());
		return 1;
	}
}
