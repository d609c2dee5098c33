/* SPDX-License-Identifier: MIT */
/*
 * What the parts of _rtloop share. Each part (recordings, the simulator,
 * receive, control) is one C file with one registration function that
 * adds its types and functions to the module; rtl_py_parts lists them.
 */
#ifndef RTLOOP_PY_MODULE_H
#define RTLOOP_PY_MODULE_H

#include <Python.h>

#include <string.h>

/* rtloop.Error, a subclass of OSError. */
extern PyObject *rtl_py_error;

/* Raise rtloop.Error(errno = |@code|, @msg or strerror); returns NULL. */
PyObject *rtl_py_raise(int code, const char *msg);

typedef int (*rtl_py_part_fn)(PyObject *module);
extern const rtl_py_part_fn rtl_py_parts[];
extern const size_t rtl_py_parts_n;

/* rtloop.Receive (_receive.c) and rtloop.Control (_control.c). */
int rtl_py_receive_register(PyObject *module);
int rtl_py_control_register(PyObject *module);

#endif /* RTLOOP_PY_MODULE_H */
