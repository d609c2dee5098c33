// SPDX-License-Identifier: MIT
/*
 * _rtloop: the module, its exception and the registration of each part
 * (_module.h). Every C error reaches Python as rtloop.Error (a subclass of
 * OSError, errno set) carrying the library's sentence.
 */
#include "_module.h"

#include <rtloop/version.h>

PyObject *py_error;

PyObject *py_raise(int code, const char *msg)
{
	PyObject *args;

	if (code < 0)
		code = -code;
	args = Py_BuildValue("(is)", code, msg && msg[0] ? msg : strerror(code));
	if (args) {
		PyErr_SetObject(py_error, args);
		Py_DECREF(args);
	}
	return NULL;
}

const char *py_g(char buf[32], double v)
{
	snprintf(buf, 32, "%g", v);
	return buf;
}

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "rtloop._rtloop",
	.m_doc = "rtloop's C core for Python (use the rtloop package)",
	.m_size = -1,
};

PyMODINIT_FUNC PyInit__rtloop(void);

PyMODINIT_FUNC PyInit__rtloop(void)
{
	PyObject *m = PyModule_Create(&module);

	if (!m)
		return NULL;
	py_error = PyErr_NewExceptionWithDoc(
		"rtloop.Error",
		"An rtloop call failed: the message is the library's, errno its code.",
		PyExc_OSError, NULL);
	if (!py_error || PyModule_AddObjectRef(m, "Error", py_error) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", RTL_VERSION_STRING) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	for (size_t i = 0; i < py_parts_n; i++) {
		if (py_parts[i](m) < 0) {
			Py_DECREF(m);
			return NULL;
		}
	}
	return m;
}
