// SPDX-License-Identifier: MIT
//
// The UR Client Library's UrDriver in headless mode, as a user of URCL (or
// of UR's ROS 2 driver) runs it: it sends its External Control program to
// the controller, the program connects back to the driver's reverse,
// trajectory and script command ports, and the driver then streams servoj
// targets at the controller's rate, forwards a joint trajectory and a
// spline, and stops control. Every step is checked against the joints the
// RTDE stream reports; the final joints go out as facts for the report.
// With "urcap", the driver is not headless: it serves the program on its
// script sender port, and the program is started as UR's ROS 2 driver has
// it started, by the dashboard's load and play of a program holding the
// External Control URCap, which fetches the script from there.
//
//   urcl-external-control HOST SCRIPT OUTPUT_RECIPE INPUT_RECIPE [urcap]
#include <ur_client_library/ur/dashboard_client.h>
#include <ur_client_library/ur/ur_driver.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "../peer-check.h"

using namespace urcl;

static std::atomic<bool> program_running{ false };
static std::atomic<int> trajectory_result{ -100 };

static bool joints(UrDriver &d, vector6d_t &q)
{
	// One package, kept: the driver allocates it on the first call.
	static std::unique_ptr<rtde_interface::DataPackage> pkg;

	return d.getDataPackageBlocking(pkg) && pkg && pkg->getData("actual_q", q);
}

// Keep the trajectory forwarding alive (the program's keep-alive) until a
// result arrives or @seconds pass.
static bool wait_result(UrDriver &d, double seconds)
{
	const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	vector6d_t q;

	trajectory_result = -100;
	while (trajectory_result == -100 && std::chrono::steady_clock::now() < end) {
		joints(d, q);
		d.writeTrajectoryControlMessage(control::TrajectoryControlMessage::TRAJECTORY_NOOP);
	}
	return trajectory_result != -100;
}

static double dist(const vector6d_t &a, const vector6d_t &b)
{
	double s = 0;
	for (int i = 0; i < 6; i++)
		s += (a[i] - b[i]) * (a[i] - b[i]);
	return std::sqrt(s);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		std::fprintf(stderr, "usage: %s HOST SCRIPT OUTPUT_RECIPE INPUT_RECIPE\n", argv[0]);
		return 2;
	}
	try {
		UrDriverConfiguration cfg;
		cfg.robot_ip = argv[1];
		cfg.script_file = argv[2];
		cfg.output_recipe_file = argv[3];
		cfg.input_recipe_file = argv[4];
		const bool urcap = argc > 5 && std::string(argv[5]) == "urcap";

		cfg.headless_mode = !urcap;
		cfg.handle_program_state = [](bool running) { program_running = running; };
		UrDriver d(cfg);
		d.registerTrajectoryDoneCallback([](control::TrajectoryResult r) {
			trajectory_result = static_cast<int>(r);
		});
		d.startRTDECommunication(false); // read here, one package per cycle
		if (urcap) {
			DashboardClient dash(argv[1]);

			peer::check(dash.connect(3, std::chrono::seconds(1)),
				    "the dashboard connects");
			peer::check(dash.commandLoadProgram("external_control.urp"),
				    "load external_control.urp");
			peer::check(dash.commandPlay(), "play: the URCap fetches the program");
			dash.disconnect();
		}

		vector6d_t q0{}, q{};
		for (int i = 0; i < 5000 && !program_running; i++)
			joints(d, q0);
		if (!peer::check(program_running, "the External Control program connected back"))
			return peer::exit_status();
		peer::check(joints(d, q0), "RTDE data packages arrive");

		// servoj: the wrist turns 0.2 rad in 1 s, streamed every cycle.
		vector6d_t target = q0;
		for (int i = 0; i < 600; i++) {
			if (!joints(d, q))
				break;
			target[5] = q0[5] + 0.2 * std::fmin(1.0, i / 500.0);
			d.writeJointCommand(target, comm::ControlMode::MODE_SERVOJ,
					    RobotReceiveTimeout::millisec(100));
		}
		peer::check(std::fabs(q[5] - target[5]) < 0.02,
			    "servoj brought wrist 3 to its target: " +
				    std::to_string(q[5] - q0[5]) + " rad of 0.2");

		// A forwarded joint trajectory of three points, 1 s apart.
		vector6d_t p1 = q, p2 = q, p3 = q;
		p1[0] += 0.1;
		p2[0] += 0.2;
		p3[0] += 0.3;
		p3[1] -= 0.1;
		d.writeTrajectoryControlMessage(control::TrajectoryControlMessage::TRAJECTORY_START,
						3);
		d.writeTrajectoryPoint(p1, false, 1.0);
		d.writeTrajectoryPoint(p2, false, 1.0);
		d.writeTrajectoryPoint(p3, false, 1.0);
		peer::check(wait_result(d, 10.0), "the trajectory ended with a result");
		peer::check(trajectory_result ==
				    static_cast<int>(
					    control::TrajectoryResult::TRAJECTORY_RESULT_SUCCESS),
			    "the trajectory result is SUCCESS: " +
				    std::to_string(trajectory_result));
		for (int i = 0; i < 10; i++)
			joints(d, q);
		peer::check(dist(q, p3) < 1e-3, "the arm is on the last point: " +
							std::to_string(dist(q, p3)) + " rad");

		// A cubic spline back to where the trajectory began, through one point.
		vector6d_t s1 = p2, zero{};
		d.writeTrajectoryControlMessage(control::TrajectoryControlMessage::TRAJECTORY_START,
						2);
		d.writeTrajectorySplinePoint(s1, zero, 1.0);
		d.writeTrajectorySplinePoint(p1, zero, 1.0);
		peer::check(wait_result(d, 10.0), "the spline ended with a result");
		peer::check(trajectory_result ==
				    static_cast<int>(
					    control::TrajectoryResult::TRAJECTORY_RESULT_SUCCESS),
			    "the spline result is SUCCESS: " + std::to_string(trajectory_result));
		for (int i = 0; i < 10; i++)
			joints(d, q);
		peer::check(dist(q, p1) < 1e-3, "the arm is on the spline's end: " +
							std::to_string(dist(q, p1)) + " rad");

		// Script commands.
		peer::check(d.setPayload(1.2, { 0, 0, 0.05 }),
			    "setPayload() through the script command port");
		peer::check(d.zeroFTSensor(), "zeroFTSensor()");
		for (int i = 0; i < 50; i++)
			joints(d, q);
		for (int i = 0; i < 6; i++)
			peer::fact(("q" + std::to_string(i)).c_str(), q[i]);

		peer::check(d.stopControl(), "stopControl()");
		for (int i = 0; i < 500 && program_running; i++)
			joints(d, q);
		peer::check(!program_running, "the program ended after stopControl()");
	} catch (const std::exception &e) {
		peer::check(false, std::string("URCL threw: ") + e.what());
	}
	return peer::exit_status();
}
