// SPDX-License-Identifier: MIT
//
// ur_rtde's DashboardClient against rtde-sim --boot, as a cell's start-up
// script uses it: connect, ask the version and the modes, power on, wait
// for IDLE, release the brakes, wait for RUNNING, load and play the
// program, stop it, power off. Every answer is checked against what a
// real e-Series controller says; the report check then confirms that the
// simulator counted one power on, one brake release and one power off.
//
//   ur_rtde-dashboard HOST PORT
#include <ur_rtde/dashboard_client.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <regex>
#include <thread>

#include "../peer-check.h"

// Polls robotmode until it answers @want, for at most @seconds.
static bool wait_mode(ur_rtde::DashboardClient &dash, const std::string &want, double seconds)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	while (std::chrono::steady_clock::now() < end) {
		if (dash.robotmode() == want)
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
	return false;
}

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";
	const int port = argc > 2 ? std::atoi(argv[2]) : 29999;

	try {
		ur_rtde::DashboardClient dash(host, port);
		dash.connect();
		peer::check(dash.isConnected(),
			    "DashboardClient connects to " + host + ":" + std::to_string(port));

		std::string version = dash.polyscopeVersion();
		peer::check(std::regex_match(version, std::regex("5\\.[0-9]+\\.[0-9]+\\.[0-9]+")),
			    "polyscopeVersion() is an e-Series X.Y.Z.B: " + version);
		peer::fact("polyscope_version", version);
		peer::check(dash.isInRemoteControl(), "isInRemoteControl() is true");
		peer::check(dash.robotmode() == "Robotmode: POWER_OFF",
			    "a booted controller is powered off");
		peer::check(dash.safetymode() == "Safetymode: NORMAL",
			    "safetymode() answers NORMAL");
		peer::check(dash.safetystatus() == "Safetystatus: NORMAL",
			    "safetystatus() answers NORMAL");
		peer::check(!dash.running(), "running() is false before any program");

		dash.powerOn();
		peer::check(wait_mode(dash, "Robotmode: IDLE", 5), "powerOn() brings IDLE");
		dash.brakeRelease();
		peer::check(wait_mode(dash, "Robotmode: RUNNING", 5),
			    "brakeRelease() brings RUNNING");

		dash.loadURP("rtloop_control.urp");
		peer::check(dash.getLoadedProgram().find("rtloop_control.urp") != std::string::npos,
			    "getLoadedProgram() names the loaded program: " +
				    dash.getLoadedProgram());
		dash.play(); // throws unless "Starting program"
		peer::check(dash.running(), "running() is true after play()");
		peer::check(dash.programState().rfind("PLAYING", 0) == 0,
			    "programState() starts with PLAYING: " + dash.programState());
		dash.stop(); // throws unless "Stopped"
		peer::check(!dash.running(), "running() is false after stop()");
		dash.unlockProtectiveStop(); // no stop to unlock: still "Protective stop releasing"
		dash.closePopup();
		dash.closeSafetyPopup();

		dash.powerOff();
		peer::check(wait_mode(dash, "Robotmode: POWER_OFF", 5),
			    "powerOff() brings POWER_OFF");
		dash.quit();
		dash.disconnect();
		peer::check(!dash.isConnected(), "disconnect()");
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
