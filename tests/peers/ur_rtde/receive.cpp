// SPDX-License-Identifier: MIT
//
// ur_rtde's RTDEReceiveInterface against rtde-sim, as a user reads a robot:
// connect with the defaults (port 30004, every output, the controller's
// rate), read the joints, the timestamp and the modes for about a second,
// and check them against what rtde-sim simulates: a UR5e at rest at its
// start pose, RUNNING, safety NORMAL, timestamps from 42 s in steps of the
// 500 Hz period. The counts go out as facts for the report check.
//
//   ur_rtde-receive HOST [SECONDS]
#include <ur_rtde/rtde_receive_interface.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";
	const double seconds = argc > 2 ? std::atof(argv[2]) : 1.0;
	const double start_q[6] = { 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 };

	try {
		ur_rtde::RTDEReceiveInterface rx(host);
		peer::check(rx.isConnected(), "RTDEReceiveInterface connects to " + host);

		long reads = 0, distinct = 0, bad_q = 0, backwards = 0;
		double first = -1, last = -1, min_step = 1e9;
		const auto end = clock::now() + std::chrono::duration<double>(seconds);
		while (clock::now() < end) {
			double ts = rx.getTimestamp();
			std::vector<double> q = rx.getActualQ();
			reads++;
			if (q.size() != 6) {
				bad_q++;
			} else {
				for (int i = 0; i < 6; i++)
					if (std::fabs(q[i] - start_q[i]) > 1e-6)
						bad_q++;
			}
			if (first < 0)
				first = ts;
			if (ts < last)
				backwards++;
			if (ts > last) {
				if (last >= 0 && ts - last < min_step)
					min_step = ts - last;
				if (last >= 0 || ts > 0)
					distinct++;
				last = ts;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		int32_t robot_mode = rx.getRobotMode();
		int32_t safety_mode = rx.getSafetyMode();
		uint32_t status = rx.getRobotStatus();
		double scaling = rx.getSpeedScaling();

		peer::check(first >= 42.0, "the first timestamp is rtde-sim's start (>= 42 s): " +
						   std::to_string(first));
		peer::check(
			last - first > 0.5 * seconds && last - first < seconds + 0.5,
			"timestamps advance with the wall clock: " + std::to_string(last - first) +
				" s in " + std::to_string(seconds) + " s");
		peer::check(backwards == 0, "timestamps never go back");
		peer::check(min_step > 0.0019, "timestamps step by whole 2 ms periods (smallest " +
						       std::to_string(min_step) + " s)");
		peer::check(distinct > 10, "distinct packages seen: " + std::to_string(distinct));
		peer::check(bad_q == 0,
			    "actual_q is the start pose (0, -pi/2, pi/2, -pi/2, -pi/2, 0) at rest");
		peer::check(robot_mode == 7,
			    "robot mode 7 (RUNNING): " + std::to_string(robot_mode));
		peer::check(safety_mode == 1,
			    "safety mode 1 (NORMAL): " + std::to_string(safety_mode));
		peer::check((status & 3) == 3,
			    "robot status: power on, program running: " + std::to_string(status));
		peer::check(scaling == 1.0,
			    "speed scaling 1.0 at rest: " + std::to_string(scaling));
		peer::fact("reads", reads);
		peer::fact("distinct", distinct);
		peer::fact("first_timestamp", first);
		peer::fact("last_timestamp", last);
		rx.disconnect();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
