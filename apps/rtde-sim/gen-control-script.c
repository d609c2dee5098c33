// SPDX-License-Identifier: MIT
/*
 * gen-control-script: write rtloop_control.script from its template,
 * putting the constants of <rtloop/rtde_cmd.h> where the template names
 * them (@RTL_RTDE_CMD_...@), so the URScript program and the library share
 * one source of truth. Run by the build (apps/rtde-sim/meson.build).
 *
 * A placeholder the table below does not know, one left unclosed, and a
 * constant of the table the template never uses are errors: a constant
 * added to the header without its place in the program fails the build.
 *
 * Usage: gen-control-script TEMPLATE OUTPUT
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde_cmd.h>

struct constant {
	const char *name;
	double value;
	bool integer;
	bool used;
};

#define INT_(name)                                 \
	{                                          \
#name, (double)(name), true, false \
	}
#define REAL_(name)                                 \
	{                                           \
#name, (double)(name), false, false \
	}

static struct constant constants[] = {
	INT_(RTL_RTDE_CMD_REG_MODE),
	INT_(RTL_RTDE_CMD_REG_SEQ),
	INT_(RTL_RTDE_CMD_REG_WATCHDOG_MS),
	INT_(RTL_RTDE_CMD_REG_PARAM0),
	INT_(RTL_RTDE_CMD_REG_ACCEL),
	INT_(RTL_RTDE_CMD_REG_TIME),
	INT_(RTL_RTDE_CMD_REG_LOOKAHEAD),
	INT_(RTL_RTDE_CMD_REG_GAIN),
	INT_(RTL_RTDE_CMD_OUT_MODE),
	INT_(RTL_RTDE_CMD_OUT_SEQ),
	INT_(RTL_RTDE_CMD_OUT_WD_TRIPS),
	INT_(RTL_RTDE_CMD_OUT_STATUS),
	INT_(RTL_RTDE_CMD_IDLE),
	INT_(RTL_RTDE_CMD_SPEEDJ),
	INT_(RTL_RTDE_CMD_SPEEDL),
	INT_(RTL_RTDE_CMD_SERVOJ),
	INT_(RTL_RTDE_CMD_STOP),
	INT_(RTL_RTDE_CMD_STATUS_READY),
	{ "RTL_RTDE_CMD_STATUS_READY_WATCHDOG",
	  (double)(RTL_RTDE_CMD_STATUS_READY | RTL_RTDE_CMD_STATUS_WATCHDOG), true, false },
	{ "RTL_RTDE_CMD_WATCHDOG_DEFAULT_S", RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS / 1000.0, false,
	  false },
	REAL_(RTL_RTDE_CMD_LOOKAHEAD_DEFAULT),
	REAL_(RTL_RTDE_CMD_LOOKAHEAD_MIN),
	REAL_(RTL_RTDE_CMD_LOOKAHEAD_MAX),
	REAL_(RTL_RTDE_CMD_GAIN_DEFAULT),
	REAL_(RTL_RTDE_CMD_GAIN_MIN),
	REAL_(RTL_RTDE_CMD_GAIN_MAX),
	REAL_(RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT),
	REAL_(RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT),
};

#define N_CONSTANTS (sizeof(constants) / sizeof(constants[0]))

static struct constant *find(const char *name, size_t len)
{
	for (size_t i = 0; i < N_CONSTANTS; i++)
		if (strlen(constants[i].name) == len && !memcmp(constants[i].name, name, len))
			return &constants[i];
	return NULL;
}

/* URScript's literals: integers as such, reals with a decimal point. */
static void put_value(FILE *out, const struct constant *c)
{
	char buf[64];

	if (c->integer) {
		fprintf(out, "%ld", (long)c->value);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", c->value);
	fputs(buf, out);
	if (!strpbrk(buf, ".e"))
		fputs(".0", out);
}

int main(int argc, char **argv)
{
	FILE *in, *out;
	char line[1024];
	unsigned lineno = 0;
	int status = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s TEMPLATE OUTPUT\n", argv[0]);
		return 2;
	}
	in = fopen(argv[1], "r");
	if (!in) {
		perror(argv[1]);
		return 1;
	}
	out = fopen(argv[2], "w");
	if (!out) {
		perror(argv[2]);
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		const char *p = line;

		lineno++;
		for (const char *at; (at = strchr(p, '@')) != NULL;) {
			const char *end = strchr(at + 1, '@');
			struct constant *c = end ? find(at + 1, (size_t)(end - at - 1)) : NULL;

			fwrite(p, 1, (size_t)(at - p), out);
			if (!c) {
				fprintf(stderr,
					"%s:%u: %s placeholder '%.*s': every @NAME@ must be a "
					"constant of <rtloop/rtde_cmd.h> listed in "
					"gen-control-script.c\n",
					argv[1], lineno, end ? "unknown" : "unclosed",
					(int)strcspn(at, "\n"), at);
				status = 1;
				p = at + 1;
				continue;
			}
			put_value(out, c);
			c->used = true;
			p = end + 1;
		}
		fputs(p, out);
	}
	for (size_t i = 0; i < N_CONSTANTS; i++) {
		if (!constants[i].used) {
			fprintf(stderr, "%s: %s is never used: the program would not follow it\n",
				argv[1], constants[i].name);
			status = 1;
		}
	}
	if (ferror(in) || fclose(out) != 0) {
		perror(argv[2]);
		status = 1;
	}
	fclose(in);
	if (status)
		remove(argv[2]);
	return status;
}
