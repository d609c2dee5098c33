/* SPDX-License-Identifier: MIT */
/*
 * The small linear algebra the simulated robot's modules share (robot.c,
 * moves.c, kin.c, requests.c): 3-vectors and row-major 3 x 3 matrices,
 * and a finiteness check. Inline: pure, RT-safe, no state.
 */
#ifndef RTLOOP_SIM_LINALG_H
#define RTLOOP_SIM_LINALG_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* Every one of @v[0..n) is finite. */
static inline bool all_finite(const double *v, int n)
{
	for (int i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

/* ---- 3-vectors and row-major 3 x 3 matrices ---- */

static inline double dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double norm3(const double a[3])
{
	return sqrt(dot3(a, a));
}

static inline void cross3(const double a[3], const double b[3], double out[3])
{
	double t[3] = { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
			a[0] * b[1] - a[1] * b[0] };

	memcpy(out, t, sizeof(t));
}

/* out = a * b, 3 x 3 (out may alias neither) */
static inline void matmul3(const double a[9], const double b[9], double out[9])
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			out[3 * i + j] =
				a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/* out = a * b^T */
static inline void matmul3_bt(const double a[9], const double b[9], double out[9])
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			out[3 * i + j] = a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] +
					 a[3 * i + 2] * b[3 * j + 2];
}

/* out = a^T b */
static inline void matmul3_at(const double a[9], const double b[9], double out[9])
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			out[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
}

#endif /* RTLOOP_SIM_LINALG_H */
