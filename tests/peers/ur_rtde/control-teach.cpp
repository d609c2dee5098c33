// SPDX-License-Identifier: MIT
//
// Teach mode with ur_rtde: teachMode(), a hand pushes the tool (rtde-sim's
// --push-z 10 --push-after 0.5 --push-for 1: 10 N up for 1 s, which moves a
// free arm at 0.1 m/s), endTeachMode(). The tool must have moved 10 cm up
// and stand still after.
//
//   ur_rtde-control-teach HOST
#include <ur_rtde/rtde_control_interface.h>
#include <ur_rtde/rtde_receive_interface.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <thread>
#include <vector>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		ur_rtde::RTDEControlInterface ctl(host);
		ur_rtde::RTDEReceiveInterface rx(host);
		const std::vector<double> p0 = rx.getActualTCPPose();

		peer::check(ctl.teachMode(), "teachMode()");
		std::this_thread::sleep_for(std::chrono::milliseconds(2000));
		peer::check(ctl.endTeachMode(), "endTeachMode()");
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
		const std::vector<double> p1 = rx.getActualTCPPose();
		const double dz = p1[2] - p0[2];
		peer::check(std::fabs(dz - 0.1) < 0.005, "the hand moved the tool 10 cm up: " +
								 std::to_string(dz * 1000) + " mm");
		peer::check(std::fabs(p1[0] - p0[0]) < 1e-3 && std::fabs(p1[1] - p0[1]) < 1e-3,
			    "and not sideways");
		peer::check(rx.getActualTCPSpeed()[2] == 0.0, "the arm stands still after");
		peer::fact("z", p1[2]);
		ctl.stopScript();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
