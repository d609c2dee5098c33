// SPDX-License-Identifier: MIT
//
// The URCL DashboardClient commands that rtde-sim's dashboard does not
// answer yet (docs/peers.md, "Pending"): URCL holds each answer to the
// documented reply of a real controller. Registered as its own test
// (peers-urcl-dashboard-pending), outside the default peers suite, to be
// enabled once the simulator knows the commands.
//
//   urcl-dashboard-pending HOST
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
		ok = dash.commandGetSerialNumber(s);
		peer::check(ok, "commandGetSerialNumber(): " + s);
		ok = dash.commandGetRobotModel(s);
		peer::check(ok, "commandGetRobotModel(): " + s);
		peer::check(dash.commandIsProgramSaved(), "commandIsProgramSaved()");
		peer::check(dash.commandAddToLog("peers suite"), "commandAddToLog()");
		peer::check(dash.commandPopup("peers suite"), "commandPopup()");
		ok = dash.commandGetOperationalMode(s);
		peer::check(ok, "commandGetOperationalMode(): " + s);
		peer::check(dash.commandSaveLog(), "commandSaveLog()");
		peer::check(dash.commandLoadInstallation("default.installation"),
			    "commandLoadInstallation()");
		peer::check(dash.commandRestartSafety(),
			    "commandRestartSafety() reaches POWER_OFF");
		dash.disconnect();
	} catch (const std::exception &e) {
		peer::check(false, std::string("URCL threw: ") + e.what());
	}
	return peer::exit_status();
}
