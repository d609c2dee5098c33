// SPDX-License-Identifier: MIT
/* The parts of _rtloop, registered in this order by PyInit__rtloop(). */
#include "_module.h"

int rtl_py_sim_register(PyObject *module);
int rtl_py_recording_register(PyObject *module);

const rtl_py_part_fn rtl_py_parts[] = {
	rtl_py_sim_register,
	rtl_py_recording_register,
	/* Receive before Control: Control is a Receive. */
	rtl_py_receive_register,
	rtl_py_control_register,
};
const size_t rtl_py_parts_n = sizeof(rtl_py_parts) / sizeof(rtl_py_parts[0]);
