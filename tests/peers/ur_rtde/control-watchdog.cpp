// SPDX-License-Identifier: MIT
//
// ur_rtde's RTDE watchdog: setWatchdog(2) makes the control script stop
// when input_int_register_0 goes 500 ms without an input package. Kicked
// every 20 ms for a second the program runs; left alone for 1.5 s it has
// stopped, and ur_rtde's next command fails instead of hanging.
//
//   ur_rtde-control-watchdog HOST
#include <ur_rtde/rtde_control_interface.h>

#include <chrono>
#include <exception>
#include <thread>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		ur_rtde::RTDEControlInterface ctl(host);

		peer::check(ctl.setWatchdog(2.0), "setWatchdog(2 Hz)");
		for (int i = 0; i < 50; i++) {
			ctl.kickWatchdog();
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		}
		peer::check(ctl.isProgramRunning(), "kicked every 20 ms, the script runs");
		std::this_thread::sleep_for(std::chrono::milliseconds(1500));
		peer::check(!ctl.isProgramRunning(),
			    "left alone for 1.5 s, the watchdog stopped it");
		peer::check(!ctl.zeroFtSensor(), "a command then fails");
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
