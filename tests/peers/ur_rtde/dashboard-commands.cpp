// SPDX-License-Identifier: MIT
//
// The DashboardClient calls a bring-up does not use (docs/peers.md, "The
// rest of the dashboard"): each is checked against what a real e-Series
// controller answers.
//
//   ur_rtde-dashboard-commands HOST PORT
#include <ur_rtde/dashboard_client.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <regex>

#include "../peer-check.h"

// Runs @call, which must not throw, and checks its answer against @pattern.
static void expect(const std::string &what, const std::function<std::string()> &call,
		   const std::string &pattern)
{
	try {
		std::string answer = call();
		peer::check(std::regex_match(answer, std::regex(pattern)),
			    what + ": \"" + answer + "\" matches /" + pattern + "/");
	} catch (const std::exception &e) {
		peer::check(false, what + " threw: " + e.what());
	}
}

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";
	const int port = argc > 2 ? std::atoi(argv[2]) : 29999;

	try {
		ur_rtde::DashboardClient dash(host, port);
		dash.connect();
		// A number of eleven digits, the year first (20yy...).
		expect(
			"getSerialNumber()", [&] { return dash.getSerialNumber(); }, "20[0-9]{9}");
		expect(
			"getRobotModel()", [&] { return dash.getRobotModel(); },
			"UR(3|5|10|16|20|30)e?");
		expect(
			"isProgramSaved",
			[&] {
				dash.send("isProgramSaved\n");
				return dash.receive();
			},
			"(true|false) .*");
		expect(
			"addToLog()",
			[&] {
				dash.send("addToLog peers suite\n");
				return dash.receive();
			},
			"Added log message");
		expect(
			"popup()",
			[&] {
				dash.send("popup peers suite\n");
				return dash.receive();
			},
			"showing popup");
		expect(
			"get operational mode",
			[&] {
				dash.send("get operational mode\n");
				return dash.receive();
			},
			"NONE|MANUAL|AUTOMATIC");
		expect(
			"load installation",
			[&] {
				dash.send("load installation default.installation\n");
				return dash.receive();
			},
			"Loading installation: .*default\\.installation");
		expect(
			"restartSafety()",
			[&] {
				dash.send("restart safety\n");
				return dash.receive();
			},
			"Restarting safety");
		dash.disconnect();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
