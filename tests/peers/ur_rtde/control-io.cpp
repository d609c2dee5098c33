// SPDX-License-Identifier: MIT
//
// ur_rtde's RTDEIOInterface: standard, configurable and tool digital
// outputs, an analog output and the speed slider, each read back through
// RTDEReceiveInterface from what the simulated controller reports.
//
//   ur_rtde-control-io HOST
#include <ur_rtde/rtde_io_interface.h>
#include <ur_rtde/rtde_receive_interface.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		ur_rtde::RTDEIOInterface io(host);
		ur_rtde::RTDEReceiveInterface rx(host);
		auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); };

		peer::check(io.setStandardDigitalOut(3, true), "setStandardDigitalOut(3, true)");
		peer::check(io.setConfigurableDigitalOut(1, true),
			    "setConfigurableDigitalOut(1, true)");
		peer::check(io.setToolDigitalOut(0, true), "setToolDigitalOut(0, true)");
		peer::check(io.setAnalogOutputVoltage(0, 0.5), "setAnalogOutputVoltage(0, 0.5)");
		peer::check(io.setSpeedSlider(0.25), "setSpeedSlider(0.25)");
		settle();
		const uint64_t bits = rx.getActualDigitalOutputBits();
		peer::check(rx.getDigitalOutState(3), "standard output 3 reads true");
		peer::check(bits == ((1u << 3) | (1u << 9) | (1u << 16)),
			    "output bits: standard 3, configurable 1, tool 0: " +
				    std::to_string(bits));
		peer::check(std::fabs(rx.getStandardAnalogOutput0() - 5.0) < 1e-9,
			    "analog output 0 at half of 10 V: " +
				    std::to_string(rx.getStandardAnalogOutput0()));
		peer::check(std::fabs(rx.getTargetSpeedFraction() - 0.25) < 1e-9,
			    "the speed slider at 0.25");
		peer::check(io.setStandardDigitalOut(3, false), "setStandardDigitalOut(3, false)");
		settle();
		peer::check(!rx.getDigitalOutState(3), "standard output 3 reads false again");
		peer::fact("bits", (unsigned long)rx.getActualDigitalOutputBits());
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
