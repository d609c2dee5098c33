/* SPDX-License-Identifier: MIT */
/*
 * What the parts of _rtloop share. Each part (recordings, the simulator,
 * receive, control) is one C file with one registration function that
 * adds its types and functions to the module; py_parts lists them.
 */
#ifndef RTLOOP_PY_MODULE_H
#define RTLOOP_PY_MODULE_H

#include <Python.h>

#include <string.h>

/* rtloop.Error, a subclass of OSError. */
extern PyObject *py_error;

/* @v as printf's %g into @buf (PyErr_Format() has no %g): returns @buf. */
const char *py_g(char buf[32], double v);

/* Raise rtloop.Error(errno = |@code|, @msg or strerror); returns NULL. */
PyObject *py_raise(int code, const char *msg);

typedef int (*py_part_fn)(PyObject *module);
extern const py_part_fn py_parts[];
extern const size_t py_parts_n;

/* rtloop.Receive (_receive.c) and rtloop.Control (_control.c). */
int py_receive_register(PyObject *module);
int py_control_register(PyObject *module);
/* rtloop.Motion (_motion.c). */
int py_motion_register(PyObject *module);
/* rtloop.Telemetry (_telemetry.c). */
int py_telemetry_register(PyObject *module);
int py_rig_register(PyObject *module);

#endif /* RTLOOP_PY_MODULE_H */
