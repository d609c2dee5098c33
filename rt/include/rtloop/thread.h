/* SPDX-License-Identifier: MIT */
#ifndef RTLOOP_THREAD_H
#define RTLOOP_THREAD_H
#include <rtloop/compiler.h>
#endif
