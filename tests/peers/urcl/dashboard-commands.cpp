// SPDX-License-Identifier: MIT
//
// The URCL DashboardClient commands a bring-up does not use (docs/peers.md,
// "The rest of the dashboard"): URCL holds each answer to the documented
// reply of a real controller.
//
//   urcl-dashboard-commands HOST
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
		/* saved: a .urp loaded from disk */
		peer::check(dash.commandLoadProgram("rtloop_control.urp"), "commandLoadProgram()");
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
