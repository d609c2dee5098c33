// SPDX-License-Identifier: MIT
/* The parts of _rtloop, registered in this order by PyInit__rtloop(). */
#include "_module.h"

int py_sim_register(PyObject *module);
int py_recording_register(PyObject *module);

const py_part_fn py_parts[] = {
	py_sim_register,
	py_recording_register,
	py_telemetry_register,
	/* Receive before Control: Control is a Receive. */
	py_receive_register,
	py_control_register,
	py_motion_register,
	py_rig_register,
};
const size_t py_parts_n = sizeof(py_parts) / sizeof(py_parts[0]);
