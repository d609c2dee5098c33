// SPDX-License-Identifier: MIT
//
// Point-to-point moves with ur_rtde: moveJ and moveL (synchronous), an
// asynchronous moveJ stopped half-way with stopJ(), its progress from
// getAsyncOperationProgress(), an asynchronous moveL stopped by stopL(), an
// asynchronous moveL path of three waypoints whose progress names each
// waypoint in turn, and a synchronous moveJ path with a blend.
//
//   ur_rtde-control-moves HOST
#include <ur_rtde/rtde_control_interface.h>
#include <ur_rtde/rtde_receive_interface.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <set>
#include <thread>
#include <vector>

#include "../peer-check.h"

static double dist(const std::vector<double> &a, const std::vector<double> &b, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (a[i] - b[i]) * (a[i] - b[i]);
	return std::sqrt(s);
}

// The receive interface's newest package may be a cycle older than the
// control interface's "done": read positions a few cycles later.
static void settle()
{
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";

	try {
		ur_rtde::RTDEControlInterface ctl(host);
		ur_rtde::RTDEReceiveInterface rx(host);
		std::vector<double> q = rx.getActualQ();

		q[0] += 0.3;
		peer::check(ctl.moveJ(q, 1.0, 2.0), "moveJ() to base + 0.3 rad");
		settle();
		peer::check(dist(rx.getActualQ(), q, 6) < 1e-6, "moveJ() returns on its target");

		std::vector<double> p = rx.getActualTCPPose();
		p[2] += 0.05;
		peer::check(ctl.moveL(p, 0.2, 1.0), "moveL() 5 cm up");
		settle();
		peer::check(dist(rx.getActualTCPPose(), p, 3) < 1e-5,
			    "moveL() returns on its target");

		// Asynchronous, stopped half-way.
		std::vector<double> far = rx.getActualQ(), start = far;
		far[0] -= 1.0;
		peer::check(ctl.moveJ(far, 0.5, 1.0, true), "moveJ(async) returns at once");
		std::this_thread::sleep_for(std::chrono::milliseconds(600));
		int progress = ctl.getAsyncOperationProgress();
		peer::check(progress >= 0,
			    "the async move runs: progress " + std::to_string(progress));
		ctl.stopJ(2.0, false);
		settle();
		const std::vector<double> mid = rx.getActualQ();
		peer::check(mid[0] < start[0] - 0.05 && mid[0] > far[0] + 0.3,
			    "stopJ() left the arm between start and target: " +
				    std::to_string(mid[0] - start[0]) + " rad of -1.0");
		peer::check(ctl.getAsyncOperationProgress() < 0, "the async operation is over");
		peer::check(ctl.isSteady(), "isSteady() after stopJ()");

		// moveL asynchronous, stopped by stopL().
		std::vector<double> pl = rx.getActualTCPPose(), pl0 = pl;
		pl[0] += 0.2;
		peer::check(ctl.moveL(pl, 0.1, 0.5, true), "moveL(async) 20 cm along x");
		std::this_thread::sleep_for(std::chrono::milliseconds(600));
		ctl.stopL(1.0, false);
		settle();
		const std::vector<double> pm = rx.getActualTCPPose();
		peer::check(pm[0] > pl0[0] + 0.01 && pm[0] < pl[0] - 0.05,
			    "stopL() left the tool on the way: " +
				    std::to_string((pm[0] - pl0[0]) * 1000) + " mm of 200");
		peer::check(std::fabs(pm[1] - pl0[1]) < 1e-4 && std::fabs(pm[2] - pl0[2]) < 1e-4,
			    "on the line of the move");

		// A path of three linear waypoints, asynchronous.
		std::vector<double> p0 = rx.getActualTCPPose();
		std::vector<std::vector<double>> path;
		for (int k = 1; k <= 3; k++) {
			std::vector<double> w = p0;
			w[1] += 0.03 * k;
			w.insert(w.end(), { 0.1, 0.5, 0.0 }); // speed, acceleration, blend
			path.push_back(w);
		}
		peer::check(ctl.moveL(path, true), "moveL(path, async)");
		std::set<int> seen;
		for (int i = 0; i < 1000; i++) {
			int pr = ctl.getAsyncOperationProgress();
			if (pr >= 0)
				seen.insert(pr);
			else if (i > 20)
				break;
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
		}
		peer::check(seen.count(0) && seen.count(1) && seen.count(2),
			    "progress named waypoints 0, 1 and 2 (" + std::to_string(seen.size()) +
				    " values seen)");
		const std::vector<double> end = rx.getActualTCPPose();
		peer::check(std::fabs(end[1] - (p0[1] + 0.09)) < 1e-5,
			    "the path ends on its last waypoint: " +
				    std::to_string(end[1] - p0[1]));

		// A joint path of two waypoints with a blend, synchronous.
		std::vector<double> j0 = rx.getActualQ();
		std::vector<std::vector<double>> jpath;
		for (int k = 1; k <= 2; k++) {
			std::vector<double> w = j0;
			w[0] += 0.15 * k;
			w[4] -= 0.1 * k;
			w.insert(w.end(), { 0.8, 1.5, k == 1 ? 0.02 : 0.0 }); // speed, accel, blend
			jpath.push_back(w);
		}
		peer::check(ctl.moveJ(jpath, false), "moveJ(path) with a blend");
		settle();
		std::vector<double> jend = rx.getActualQ(),
				    jlast(jpath[1].begin(), jpath[1].begin() + 6);
		// ur_rtde writes the path into the script with 6 significant digits
		peer::check(dist(jend, jlast, 6) < 1e-4,
			    "the joint path ends on its last waypoint: " +
				    std::to_string(dist(jend, jlast, 6)));
		for (int i = 0; i < 6; i++)
			peer::fact(("q" + std::to_string(i)).c_str(), rx.getActualQ()[i]);
		ctl.stopScript();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
