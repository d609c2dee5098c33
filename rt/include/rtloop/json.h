/* SPDX-License-Identifier: MIT */
/*
 * The one JSON string writer of the library and its apps: every report
 * (loop, doctor, benchmarks, simulator, traces) quotes its text through it,
 * so they all escape alike.
 */
#ifndef RTLOOP_JSON_H
#define RTLOOP_JSON_H

#include <stdio.h>

#include <rtloop/compiler.h>

RTL_BEGIN_DECLS

/*
 * Write @s to @f as a JSON string: quoted, with the double quote and the
 * backslash escaped, newline and tab as \n and \t, other control characters
 * (and DEL) as \u00XX. NULL writes "". Not RT-safe (stdio).
 */
RTL_API void rtl_json_string(FILE *f, const char *s);

RTL_END_DECLS

#endif /* RTLOOP_JSON_H */
