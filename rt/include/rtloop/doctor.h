/* SPDX-License-Identifier: MIT */
#ifndef RTLOOP_DOCTOR_H
#define RTLOOP_DOCTOR_H
#include <rtloop/compiler.h>
#endif
