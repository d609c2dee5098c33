// SPDX-License-Identifier: MIT
//
// Force mode against a surface with ur_rtde: rtde-sim has a contact plane
// 2 cm under the tool (--contact-z); moveUntilContact() finds it going
// down at 2 cm/s; then forceMode() with a 10 N press along
// z (compliant z only) is streamed at 500 Hz for 3 s, then
// forceModeStop(). The arm must come down onto the plane and hold the
// force; zeroFtSensor() there takes the press as the bias; setPayload()
// and setTcp() reach the simulator.
//
//   ur_rtde-control-force HOST
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
		const double z0 = rx.getActualTCPPose()[2];
		peer::check(ctl.moveUntilContact({ 0, 0, -0.02, 0, 0, 0 }),
			    "moveUntilContact() going down");
		const double zc = rx.getActualTCPPose()[2];
		peer::check(zc < z0 - 0.015 && zc > z0 - 0.025,
			    "it stopped at the surface, 2 cm down: " +
				    std::to_string((zc - z0) * 1000) + " mm");
		const std::vector<double> frame = { 0, 0, 0, 0, 0, 0 };
		const std::vector<int> sel = { 0, 0, 1, 0, 0, 0 };
		const std::vector<double> wrench = { 0, 0, -10, 0, 0, 0 };
		const std::vector<double> limits = { 2, 2, 0.1, 1, 1, 1 };

		for (int i = 0; i < 1500; i++) {
			auto t = ctl.initPeriod();
			if (!ctl.forceMode(frame, sel, wrench, 2, limits)) {
				peer::check(false, "forceMode() at cycle " + std::to_string(i));
				break;
			}
			ctl.waitPeriod(t);
		}
		const std::vector<double> f = rx.getActualTCPForce();
		const double z1 = rx.getActualTCPPose()[2];
		peer::check(std::fabs(std::fabs(f[2]) - 10.0) < 1.0,
			    "the tool presses 10 N on the surface: " + std::to_string(f[2]) + " N");
		peer::check(z1 < z0 - 0.015, "the tool came down onto the plane: " +
						     std::to_string((z1 - z0) * 1000) + " mm");
		peer::check(ctl.forceModeStop(), "forceModeStop()");
		peer::check(ctl.zeroFtSensor(), "zeroFtSensor() on the surface");
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		const double f_after = rx.getActualTCPForce()[2];
		peer::check(std::fabs(f_after) < 1.0,
			    "the zeroed sensor reads about 0 N: " + std::to_string(f_after));
		peer::check(ctl.setPayload(1.5, { 0, 0, 0.08 }), "setPayload(1.5 kg)");
		peer::check(ctl.setTcp({ 0, 0, 0.1, 0, 0, 0 }), "setTcp(10 cm along z)");
		const std::vector<double> tcp = ctl.getTCPOffset();
		peer::check(tcp.size() == 6 && std::fabs(tcp[2] - 0.1) < 1e-9,
			    "getTCPOffset() reads the TCP back");
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		const double z_tcp = rx.getActualTCPPose()[2];
		peer::check(std::fabs(z_tcp - (z1 - 0.1)) < 2e-3,
			    "the TCP is 10 cm below the flange's old point: " +
				    std::to_string(z_tcp));
		peer::fact("z_tcp", z_tcp);
		peer::fact("z", z1);
		peer::fact("force_z", f[2]);
		ctl.stopScript();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
