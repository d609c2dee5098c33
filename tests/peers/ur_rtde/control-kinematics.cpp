// SPDX-License-Identifier: MIT
//
// Kinematics with ur_rtde: getForwardKinematics() of the actual joints is
// the actual TCP pose; getInverseKinematics() of it gives the joints back
// (with and without a q_near); the has-solution and safety-limit queries
// answer true for reachable targets and false for unreachable ones. With
// "upper", ur_rtde uses the upper range of the registers (24-47,
// FLAG_UPPER_RANGE_REGISTERS), as a user does beside a fieldbus.
//
//   ur_rtde-control-kinematics HOST [upper]
#include <ur_rtde/rtde_control_interface.h>
#include <ur_rtde/rtde_receive_interface.h>

#include <cmath>
#include <exception>
#include <vector>

#include "../peer-check.h"

static double dist(const std::vector<double> &a, const std::vector<double> &b)
{
	double s = 0;
	for (size_t i = 0; i < a.size() && i < b.size(); i++)
		s += (a[i] - b[i]) * (a[i] - b[i]);
	return std::sqrt(s);
}

int main(int argc, char **argv)
{
	const std::string host = argc > 1 ? argv[1] : "127.0.0.1";
	const bool upper = argc > 2 && std::string(argv[2]) == "upper";
	const uint16_t flags =
		ur_rtde::RTDEControlInterface::FLAG_UPLOAD_SCRIPT |
		(upper ? ur_rtde::RTDEControlInterface::FLAG_UPPER_RANGE_REGISTERS : 0);

	try {
		ur_rtde::RTDEControlInterface ctl(host, -1, flags);
		ur_rtde::RTDEReceiveInterface rx(host, -1, {}, false, upper);
		const std::vector<double> q = rx.getActualQ();
		const std::vector<double> fk = ctl.getForwardKinematics();

		peer::check(fk.size() == 6 && dist(fk, rx.getActualTCPPose()) < 1e-9,
			    "FK of the actual joints is the actual TCP pose");
		const std::vector<double> ik = ctl.getInverseKinematics(fk);
		peer::check(dist(ik, q) < 1e-6,
			    "IK of that pose is the actual joints: " + std::to_string(dist(ik, q)));
		std::vector<double> near = q;
		near[0] += 0.05;
		const std::vector<double> ik2 = ctl.getInverseKinematics(fk, near);
		peer::check(dist(ik2, q) < 1e-6, "IK near a nearby q_near is the same branch");
		std::vector<double> q2 = q;
		q2[1] += 0.3;
		q2[3] -= 0.2;
		const std::vector<double> fk2 = ctl.getForwardKinematics(q2, { 0, 0, 0, 0, 0, 0 });
		peer::check(dist(ctl.getInverseKinematics(fk2, q2), q2) < 1e-6,
			    "IK(FK(q)) = q for another pose");
		peer::check(ctl.getInverseKinematicsHasSolution(fk2),
			    "a reachable pose has a solution");
		std::vector<double> far = fk2;
		far[0] = 3.0;
		peer::check(!ctl.getInverseKinematicsHasSolution(far), "3 m away has none");
		peer::check(ctl.isPoseWithinSafetyLimits(fk2),
			    "a reachable pose is within the limits");
		peer::check(!ctl.isPoseWithinSafetyLimits(far), "an unreachable pose is not");
		peer::check(ctl.isJointsWithinSafetyLimits(q2), "joints within the limits");
		std::vector<double> bad = q;
		bad[2] = 4.0; // the elbow's limit is pi
		peer::check(!ctl.isJointsWithinSafetyLimits(bad), "an elbow at 4 rad is not");
		peer::fact("fk_z", fk[2]);
		ctl.stopScript();
	} catch (const std::exception &e) {
		peer::check(false, std::string("ur_rtde threw: ") + e.what());
	}
	return peer::exit_status();
}
