// SPDX-License-Identifier: MIT
//
// URCL's DashboardClient (the G5 policy: e-Series and CB3) against
// rtde-sim --boot, as the ROS driver's dashboard node uses it: connect,
// read the version and the modes, power on (URCL waits for IDLE itself),
// release the brakes (it waits for RUNNING), load, play, pause, stop, power
// off. URCL checks every answer against its table of the documented
// replies; the report check then finds the simulator's counters moved.
// URCL's dashboard port is fixed at 29999: the test runs it in a private
// network namespace.
//
//   urcl-dashboard HOST
#include <ur_client_library/ur/dashboard_client.h>

#include <chrono>
#include <exception>

#include "../peer-check.h"

int main(int argc, char **argv)
{
	using namespace urcl;
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		DashboardClient dash(host);
		if (!peer::check(dash.connect(3, std::chrono::seconds(1)),
				 "DashboardClient::connect()"))
			return peer::exit_status();
		std::string s;
		bool ok;
		ok = dash.commandPolyscopeVersion(s);
		peer::check(ok, "commandPolyscopeVersion(): " + s);
		peer::fact("polyscope_version", s);
		ok = dash.commandRobotMode(s) && s == "POWER_OFF";
		peer::check(ok, "commandRobotMode(): a booted controller is powered off: " + s);
		ok = dash.commandSafetyMode(s) && s == "NORMAL";
		peer::check(ok, "commandSafetyMode(): " + s);
		ok = dash.commandSafetyStatus(s) && s == "NORMAL";
		peer::check(ok, "commandSafetyStatus(): " + s);
		peer::check(dash.commandIsInRemoteControl(), "commandIsInRemoteControl()");
		peer::check(dash.commandPowerOn(std::chrono::seconds(10)),
			    "commandPowerOn() reaches IDLE");
		peer::check(dash.commandBrakeRelease(), "commandBrakeRelease() reaches RUNNING");
		peer::check(dash.commandLoadProgram("rtloop_control.urp"),
			    "commandLoadProgram(rtloop_control.urp): STOPPED rtloop_control.urp");
		ok = dash.commandGetLoadedProgram(s);
		peer::check(ok, "commandGetLoadedProgram(): " + s);
		peer::check(dash.commandPlay(), "commandPlay(): PLAYING");
		peer::check(dash.commandRunning(), "commandRunning() is true");
		ok = dash.commandProgramState(s);
		peer::check(ok, "commandProgramState(): " + s);
		peer::check(dash.commandPause(), "commandPause(): PAUSED");
		peer::check(dash.commandStop(), "commandStop(): STOPPED");
		peer::check(!dash.commandRunning(), "commandRunning() is false after the stop");
		peer::check(dash.commandClosePopup(), "commandClosePopup()");
		peer::check(dash.commandCloseSafetyPopup(), "commandCloseSafetyPopup()");
		peer::check(dash.commandPowerOff(), "commandPowerOff() reaches POWER_OFF");
		peer::check(dash.commandQuit(), "commandQuit()");
		dash.disconnect();
	} catch (const std::exception &e) {
		peer::check(false, std::string("URCL threw: ") + e.what());
	}
	return peer::exit_status();
}
