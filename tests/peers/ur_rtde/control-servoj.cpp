// SPDX-License-Identifier: MIT
//
// A servoj loop with ur_rtde, as its users write one: a 2 s sine on the
// wrist-3 joint streamed at 500 Hz with servoJ(q, 0, 0, 0.002, 0.1, 300),
// then servoStop(); then servoL to a pose 2 cm along x. Checks that the arm
// tracks the stream (a bounded lag of a lookahead filter) and ends where
// the last target was.
//
//   ur_rtde-control-servoj HOST
#include <ur_rtde/rtde_control_interface.h>
#include <ur_rtde/rtde_receive_interface.h>

#include <cmath>
#include <exception>
#include <vector>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		ur_rtde::RTDEControlInterface ctl(host);
		ur_rtde::RTDEReceiveInterface rx(host);
		const std::vector<double> q0 = rx.getActualQ();
		std::vector<double> q = q0;
		double max_err = 0, max_speed = 0;

		for (int i = 0; i < 1000; i++) {
			auto t = ctl.initPeriod();
			q[5] = q0[5] + 0.2 * std::sin(2 * M_PI * 0.5 * i * 0.002);
			if (!ctl.servoJ(q, 0, 0, 0.002, 0.1, 300)) {
				peer::check(false, "servoJ() at cycle " + std::to_string(i));
				break;
			}
			if (i > 100) {
				max_err = std::fmax(max_err, std::fabs(rx.getActualQ()[5] - q[5]));
				max_speed = std::fmax(max_speed, std::fabs(rx.getActualQd()[5]));
			}
			ctl.waitPeriod(t);
		}
		peer::check(max_speed > 0.3, "the wrist follows the sine (peak " +
						     std::to_string(max_speed) + " rad/s of 0.63)");
		peer::check(max_err < 0.1,
			    "tracking error under 0.1 rad: " + std::to_string(max_err));
		peer::check(ctl.servoStop(4.0), "servoStop()");
		const std::vector<double> q1 = rx.getActualQ();
		peer::check(std::fabs(q1[5] - q[5]) < 0.05,
			    "it stops near the last target: " + std::to_string(q1[5] - q[5]));

		const std::vector<double> p0 = rx.getActualTCPPose();
		std::vector<double> p = p0;
		for (int i = 0; i < 750; i++) {
			auto t = ctl.initPeriod();
			p[0] = p0[0] + 0.02 * std::fmin(1.0, i / 500.0);
			if (!ctl.servoL(p, 0, 0, 0.002, 0.1, 300)) {
				peer::check(false, "servoL() at cycle " + std::to_string(i));
				break;
			}
			ctl.waitPeriod(t);
		}
		const std::vector<double> p1 = rx.getActualTCPPose();
		peer::check(std::fabs(p1[0] - p[0]) < 1e-3,
			    "servoL brought the tool 2 cm along x: " +
				    std::to_string((p1[0] - p0[0]) * 1000) + " mm");
		peer::check(ctl.servoStop(4.0), "servoStop() after servoL");
		peer::fact("q5", rx.getActualQ()[5]);
		ctl.stopScript();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
