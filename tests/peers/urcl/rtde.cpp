// SPDX-License-Identifier: MIT
//
// URCL's RTDE client against rtde-sim, as the ROS driver uses it: recipe
// files (urcl/output_recipe.txt, urcl/input_recipe.txt), init, start, read
// data packages for about a second, and write an input package (the speed
// slider at 0.5 and two registers outside rtloop's layout, in one
// sendPackage()) whose values
// must come back in the outputs: target_speed_fraction follows the slider,
// input registers read back as outputs. The report check then finds the
// inputs applied on the simulator's side.
//
//   urcl-rtde HOST PORT OUTPUT_RECIPE INPUT_RECIPE [SECONDS]
#include <ur_client_library/comm/pipeline.h>
#include <ur_client_library/rtde/rtde_client.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "../peer-check.h"

// The names of a recipe file, one a line, as RTDEClient reads it.
static std::vector<std::string> read_recipe(const char *path)
{
	std::vector<std::string> names;
	std::ifstream f(path);
	for (std::string line; std::getline(f, line);)
		if (!line.empty())
			names.push_back(line);
	return names;
}

int main(int argc, char **argv)
{
	using namespace urcl;
	using clock = std::chrono::steady_clock;
	if (argc < 5) {
		std::fprintf(stderr, "usage: %s HOST PORT OUTPUT_RECIPE INPUT_RECIPE [SECONDS]\n",
			     argv[0]);
		return 2;
	}
	const double seconds = argc > 5 ? std::atof(argv[5]) : 1.0;
	const double start_q[6] = { 0, -M_PI / 2, M_PI / 2, -M_PI / 2, -M_PI / 2, 0 };

	try {
		const std::vector<std::string> input_recipe = read_recipe(argv[4]);
		comm::INotifier notifier;
		rtde_interface::RTDEClient client(argv[1], notifier, argv[3], argv[4], 0.0, false,
						  static_cast<uint32_t>(std::atoi(argv[2])));
		if (!peer::check(client.init(),
				 "RTDEClient::init() negotiates and sets up both recipes"))
			return peer::exit_status();
		VersionInformation v = client.getVersion();
		peer::check(v.major == 5,
			    "the controller is an e-Series (5.x): " + std::to_string(v.major) +
				    "." + std::to_string(v.minor) + "." + std::to_string(v.bugfix));
		peer::check(client.getMaxFrequency() == 500.0,
			    "the maximum rate is 500 Hz: " +
				    std::to_string(client.getMaxFrequency()));
		peer::check(client.start(), "RTDEClient::start()");

		rtde_interface::DataPackage pkg(client.getOutputRecipe());
		long packages = 0, timeouts = 0, bad_q = 0, gaps = 0;
		double first = -1, last = -1, slider = -1, reg_d = 0;
		int32_t mode = -1, safety = -1, reg_i = 0;
		bool wrote = false;
		const auto t0 = clock::now();
		const auto end = t0 + std::chrono::duration<double>(seconds);
		while (clock::now() < end) {
			if (!client.getDataPackage(pkg, std::chrono::milliseconds(100))) {
				timeouts++;
				continue;
			}
			double ts = 0;
			vector6d_t q{};
			pkg.getData("timestamp", ts);
			pkg.getData("actual_q", q);
			pkg.getData("robot_mode", mode);
			pkg.getData("safety_mode", safety);
			pkg.getData("target_speed_fraction", slider);
			pkg.getData("input_double_register_44", reg_d);
			pkg.getData("input_int_register_44", reg_i);
			if (ts == last)
				continue; // the background reader's newest package, again
			if (last >= 0 && std::fabs(ts - last - 0.002) > 1e-6)
				gaps++;
			if (first < 0)
				first = ts;
			last = ts;
			packages++;
			for (int i = 0; i < 6; i++)
				if (std::fabs(q[i] - start_q[i]) > 1e-6)
					bad_q++;
			if (!wrote &&
			    clock::now() - t0 > std::chrono::duration<double>(seconds / 3)) {
				// One package with every field: RTDEWriter double-buffers, so
				// values set by separate send*() calls can leave in two packages,
				// the later one carrying the other buffer's stale fields.
				auto &writer = client.getWriter();
				rtde_interface::DataPackage in(input_recipe);
				in.setData("speed_slider_mask", uint32_t{ 1 });
				in.setData("speed_slider_fraction", 0.5);
				in.setData("input_double_register_44", 1.25);
				in.setData("input_int_register_44", int32_t{ 4242 });
				peer::check(writer.sendPackage(in),
					    "RTDEWriter::sendPackage(): slider 0.5, registers 1.25 "
					    "and 4242");
				wrote = true;
			}
		}
		client.pause();
		peer::check(packages > 10, "data packages read: " + std::to_string(packages));
		peer::check(first >= 42.0, "the first timestamp is rtde-sim's start (>= 42 s)");
		peer::check(bad_q == 0, "actual_q is the start pose at rest");
		peer::check(mode == 7 && safety == 1, "robot mode RUNNING (7), safety NORMAL (1)");
		peer::check(slider == 0.5,
			    "target_speed_fraction follows the slider: " + std::to_string(slider));
		peer::check(reg_d == 1.25,
			    "input_double_register_44 reads back 1.25: " + std::to_string(reg_d));
		peer::check(reg_i == 4242,
			    "input_int_register_44 reads back 4242: " + std::to_string(reg_i));
		peer::fact("packages", packages);
		peer::fact("timeouts", timeouts);
		peer::fact("gaps", gaps);
		peer::fact("first_timestamp", first);
		peer::fact("last_timestamp", last);
	} catch (const std::exception &e) {
		peer::check(false, std::string("URCL threw: ") + e.what());
	}
	return peer::exit_status();
}
