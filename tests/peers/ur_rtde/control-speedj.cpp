// SPDX-License-Identifier: MIT
//
// A speedj loop with ur_rtde's RTDEControlInterface, as its users write
// one: 500 Hz with initPeriod()/waitPeriod(), the base joint at 0.2 rad/s
// for a second, then speedStop(); then speedL, the tool up at 5 cm/s for
// half a second, and speedStop() again. The control script runs in rtde-sim's
// model of it; the joints come back through RTDEReceiveInterface, and the
// final joint angle goes out as a fact for the report check.
//
//   ur_rtde-control-speedj HOST
#include <ur_rtde/rtde_control_interface.h>
#include <ur_rtde/rtde_receive_interface.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <vector>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	using clock = std::chrono::steady_clock;
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		ur_rtde::RTDEControlInterface ctl(host);
		ur_rtde::RTDEReceiveInterface rx(host);
		const std::vector<double> q0 = rx.getActualQ();
		const std::vector<double> qd = { 0.2, 0, 0, 0, 0, 0 };
		double qd_seen = 0;
		const auto start = clock::now();

		peer::check(ctl.isProgramRunning(),
			    "the control script runs after the constructor");
		for (int i = 0; i < 500; i++) {
			auto t = ctl.initPeriod();
			if (!ctl.speedJ(qd, 1.0, 0.002)) {
				peer::check(false, "speedJ() at cycle " + std::to_string(i));
				break;
			}
			if (i == 400)
				qd_seen = rx.getActualQd()[0];
			ctl.waitPeriod(t);
		}
		peer::check(std::fabs(qd_seen - 0.2) < 1e-6,
			    "the base joint turns at 0.2 rad/s: " + std::to_string(qd_seen));
		peer::check(ctl.speedStop(2.0), "speedStop() returns when the arm is at rest");
		const std::vector<double> q1 = rx.getActualQ();
		const double moved = q1[0] - q0[0];
		const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
		// at least 1 s less the ramps; never faster than 0.2 rad/s
		peer::check(moved > 0.15 && moved <= 0.2 * elapsed + 1e-6,
			    "the base joint moved 0.2 rad/s for the loop's time: " +
				    std::to_string(moved) + " rad in " + std::to_string(elapsed) +
				    " s");
		for (int i = 1; i < 6; i++)
			peer::check(std::fabs(q1[i] - q0[i]) < 1e-9,
				    "joint " + std::to_string(i) + " did not move");
		peer::check(rx.getActualQd()[0] == 0.0, "at rest after speedStop()");

		const std::vector<double> p0 = rx.getActualTCPPose();
		const std::vector<double> xd = { 0, 0, 0.05, 0, 0, 0 };
		double vz = 0;
		for (int i = 0; i < 250; i++) {
			auto t = ctl.initPeriod();
			if (!ctl.speedL(xd, 0.5, 0.002)) {
				peer::check(false, "speedL() at cycle " + std::to_string(i));
				break;
			}
			if (i == 200)
				vz = rx.getActualTCPSpeed()[2];
			ctl.waitPeriod(t);
		}
		peer::check(std::fabs(vz - 0.05) < 1e-3,
			    "the tool rises at 5 cm/s: " + std::to_string(vz));
		peer::check(ctl.speedStop(1.0), "speedStop() after speedL");
		const std::vector<double> p1 = rx.getActualTCPPose();
		peer::check(p1[2] - p0[2] > 0.015,
			    "speedL raised the tool: " + std::to_string((p1[2] - p0[2]) * 1000) +
				    " mm");
		peer::check(std::fabs(p1[0] - p0[0]) < 1e-4 && std::fabs(p1[1] - p0[1]) < 1e-4,
			    "on a straight line up");
		peer::check(rx.getActualTCPSpeed()[2] == 0.0, "at rest after speedStop()");
		peer::fact("q0", rx.getActualQ()[0]);
		ctl.stopScript();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
