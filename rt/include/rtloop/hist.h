/* SPDX-License-Identifier: MIT */
#ifndef RTLOOP_HIST_H
#define RTLOOP_HIST_H
#include <rtloop/compiler.h>
#endif
