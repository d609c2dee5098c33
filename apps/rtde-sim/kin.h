/* SPDX-License-Identifier: MIT */
/*
 * sim_kin: a UR arm's kinematics (the UR5e's, or any struct sim_dh through
 * the _dh variants: the CB3 profile's UR5) as the controller's get_forward_kin() and
 * get_inverse_kin() answer them, for the request handlers of rtde-sim.
 *
 * Poses are UR's: x, y, z [m] and a rotation vector [rad], base frame, of
 * the TCP at @tcp_offset from the flange (NULL: the flange itself, as
 * sim_robot_fk()).
 *
 * The inverse is closed form: a UR arm has three parallel axes (2, 3, 4)
 * and a wrist offset, which give up to 8 solutions (shoulder left/right,
 * wrist up/down, elbow up/down). Each is put at the 2 pi representative of
 * every joint nearest q_near within the joint limits, checked with the
 * forward kinematics, and the one nearest q_near wins, "nearest" meaning
 * the smallest sum of squared joint differences (Euclidean distance in
 * joint space), as UR picks the solution closest to the qnear it is given.
 *
 * Pure functions: no allocation, no state, RT-safe.
 */
#ifndef RTLOOP_SIM_KIN_H
#define RTLOOP_SIM_KIN_H

#include "robot.h"

/* Largest FK error [m, rad] an inverse solution may have to be accepted. */
#define SIM_KIN_TOL 1e-6

/*
 * The TCP pose of joint vector @q: sim_robot_fk() with its inputs checked.
 * Returns 0, or -EINVAL when @q or @pose is NULL or an input is not finite.
 */
int sim_kin_forward(const double q[SIM_ROBOT_DOF], const double tcp_offset[6], double pose[6]);

/*
 * The joint vector @q_out whose TCP pose at @tcp_offset is @pose, the one of
 * the up to 8 solutions nearest @q_near (sum of squares), each joint at its
 * representative q + 2 pi k nearest q_near[i] within the default UR5e
 * limits of sim_robot_config_default() (+-2 pi, the elbow +-pi). At a wrist
 * singularity (q5 = 0 or pi) only q4 + q6 is defined: q6 takes q_near[5]'s
 * value. Returns 0; -EINVAL when a pointer other than @tcp_offset is NULL
 * or an input is not finite; -ERANGE when the pose is out of reach (UR's
 * "no solution"); -EDOM when solutions exist but none within the joint
 * limits. @q_out is written only on success.
 */
int sim_kin_inverse(const double pose[6], const double tcp_offset[6],
		    const double q_near[SIM_ROBOT_DOF], double q_out[SIM_ROBOT_DOF]);

/*
 * sim_kin_inverse() within the limits @q_min .. @q_max (NULL: the default
 * ones), for a controller configured with others. Same returns; also
 * -EINVAL when a limit is not finite or min > max.
 */
int sim_kin_inverse_limited(const double pose[6], const double tcp_offset[6],
			    const double q_near[SIM_ROBOT_DOF], const double q_min[SIM_ROBOT_DOF],
			    const double q_max[SIM_ROBOT_DOF], double q_out[SIM_ROBOT_DOF]);

/*
 * Every analytic solution of @pose (no wrapping, no limits, each verified
 * with the forward kinematics), at most 8, in @sol; q6 at a wrist
 * singularity from @q_near (NULL: 0). Returns how many, or -EINVAL. For
 * tests and for a caller that wants to choose a branch itself.
 */
int sim_kin_solutions(const double pose[6], const double tcp_offset[6],
		      const double q_near[SIM_ROBOT_DOF], double sol[8][SIM_ROBOT_DOF]);

/*
 * The same for the arm @dh (NULL: the UR5e); the functions above are
 * these with the UR5e's table. The default limits are the same for every
 * model.
 */
int sim_kin_forward_dh(const struct sim_dh *dh, const double q[SIM_ROBOT_DOF],
		       const double tcp_offset[6], double pose[6]);
int sim_kin_inverse_dh(const struct sim_dh *dh, const double pose[6], const double tcp_offset[6],
		       const double q_near[SIM_ROBOT_DOF], const double q_min[SIM_ROBOT_DOF],
		       const double q_max[SIM_ROBOT_DOF], double q_out[SIM_ROBOT_DOF]);
int sim_kin_solutions_dh(const struct sim_dh *dh, const double pose[6], const double tcp_offset[6],
			 const double q_near[SIM_ROBOT_DOF], double sol[8][SIM_ROBOT_DOF]);

#endif /* RTLOOP_SIM_KIN_H */
