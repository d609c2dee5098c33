/* SPDX-License-Identifier: MIT */
#ifndef RTLOOP_MEM_H
#define RTLOOP_MEM_H
#include <rtloop/compiler.h>
#endif
