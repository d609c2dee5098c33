// SPDX-License-Identifier: MIT
/*
 * gen-control-script: write rtloop_control.script from its template,
 * putting the constants of <rtloop/rtde_cmd.h> where the template names
 * them (@RTL_RTDE_CMD_...@), so the URScript program and the library share
 * one source of truth. Run by the build (io/rtde/script/meson.build).
 *
 * A placeholder the table below does not know, one left unclosed, and a
 * constant of the table the template never uses are errors: a constant
 * added to the header without its place in the program fails the build.
 *
 * With a third argument it also writes a C file that holds the program
 * as sim_control_program[] (and its length), so rtde-sim knows the
 * program of its own build and can compare what a client uploads with it.
 *
 * Usage: gen-control-script TEMPLATE OUTPUT [C-OUTPUT]
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
	/* BIT_: the flag's mask; main() replaces the value by its bit's
	 * index, as URScript tests a bit with integer_to_binary_list() (it
	 * has no bitwise operators). */
	unsigned long mask;
};

#define INT_(name)                                    \
	{                                             \
#name, (double)(name), true, false, 0 \
	}
#define REAL_(name)                                    \
	{                                              \
#name, (double)(name), false, false, 0 \
	}
#define BIT_(name)                                                  \
	{                                                           \
#name "_BIT", 0, true, false, (unsigned long)(name) \
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
	INT_(RTL_RTDE_CMD_STATUS_FORCE),
	INT_(RTL_RTDE_CMD_STATUS_TEACH),
	{ "RTL_RTDE_CMD_STATUS_READY_WATCHDOG",
	  (double)(RTL_RTDE_CMD_STATUS_READY | RTL_RTDE_CMD_STATUS_WATCHDOG), true, false, 0 },
	{ "RTL_RTDE_CMD_WATCHDOG_DEFAULT_S", RTL_RTDE_CMD_WATCHDOG_DEFAULT_MS / 1000.0, false,
	  false, 0 },
	REAL_(RTL_RTDE_CMD_LOOKAHEAD_DEFAULT),
	REAL_(RTL_RTDE_CMD_LOOKAHEAD_MIN),
	REAL_(RTL_RTDE_CMD_LOOKAHEAD_MAX),
	REAL_(RTL_RTDE_CMD_GAIN_DEFAULT),
	REAL_(RTL_RTDE_CMD_GAIN_MIN),
	REAL_(RTL_RTDE_CMD_GAIN_MAX),
	REAL_(RTL_RTDE_CMD_JOINT_ACCEL_DEFAULT),
	REAL_(RTL_RTDE_CMD_LINEAR_ACCEL_DEFAULT),
	/* requests (the commands beside the stream) */
	INT_(RTL_RTDE_REQ_REG_ID),
	INT_(RTL_RTDE_REQ_REG_KIND),
	INT_(RTL_RTDE_REQ_REG_FLAGS),
	INT_(RTL_RTDE_REQ_REG_ARG0),
	INT_(RTL_RTDE_REQ_OUT_ID),
	INT_(RTL_RTDE_REQ_OUT_STATE),
	INT_(RTL_RTDE_REQ_OUT_REASON),
	INT_(RTL_RTDE_REQ_OUT_RESULT0),
	INT_(RTL_RTDE_REQ_NRESULT),
	INT_(RTL_RTDE_REQ_MOVE_J),
	INT_(RTL_RTDE_REQ_MOVE_L),
	INT_(RTL_RTDE_REQ_STOP_MOVE),
	INT_(RTL_RTDE_REQ_PATH_ADD),
	INT_(RTL_RTDE_REQ_ZERO_FT_SENSOR),
	INT_(RTL_RTDE_REQ_SET_PAYLOAD),
	INT_(RTL_RTDE_REQ_SET_TCP),
	INT_(RTL_RTDE_REQ_FORWARD_KIN),
	INT_(RTL_RTDE_REQ_INVERSE_KIN),
	INT_(RTL_RTDE_REQ_FORCE_MODE),
	INT_(RTL_RTDE_REQ_FORCE_LIMITS),
	INT_(RTL_RTDE_REQ_END_FORCE_MODE),
	INT_(RTL_RTDE_REQ_TEACH_MODE),
	INT_(RTL_RTDE_REQ_END_TEACH_MODE),
	INT_(RTL_RTDE_REQ_MOVE_UNTIL_CONTACT),
	INT_(RTL_RTDE_REQ_STATE_NONE),
	INT_(RTL_RTDE_REQ_STATE_ACCEPTED),
	INT_(RTL_RTDE_REQ_STATE_RUNNING),
	INT_(RTL_RTDE_REQ_STATE_DONE),
	INT_(RTL_RTDE_REQ_STATE_FAILED),
	INT_(RTL_RTDE_REQ_OK),
	INT_(RTL_RTDE_REQ_BAD_ARGUMENT),
	INT_(RTL_RTDE_REQ_UNREACHABLE),
	INT_(RTL_RTDE_REQ_INTERRUPTED),
	INT_(RTL_RTDE_REQ_NO_SOLUTION),
	INT_(RTL_RTDE_REQ_UNKNOWN_KIND),
	INT_(RTL_RTDE_REQ_PATH_FULL),
	INT_(RTL_RTDE_REQ_WATCHDOG),
	INT_(RTL_RTDE_REQ_NOT_ALLOWED),
	INT_(RTL_RTDE_REQ_NO_CONTACT),
	INT_(RTL_RTDE_REQ_PATH_MAX),
	BIT_(RTL_RTDE_REQ_FLAG_PATH),
	BIT_(RTL_RTDE_REQ_FLAG_LINEAR),
	BIT_(RTL_RTDE_REQ_FLAG_NEAR),
	REAL_(RTL_RTDE_REQ_JOINT_SPEED_DEFAULT),
	REAL_(RTL_RTDE_REQ_TOOL_SPEED_DEFAULT),
	REAL_(RTL_RTDE_REQ_FORCE_LIMIT_DEFAULT),
	REAL_(RTL_RTDE_REQ_FORCE_DAMPING_DEFAULT),
	REAL_(RTL_RTDE_REQ_FORCE_GAIN_DEFAULT),
	REAL_(RTL_RTDE_REQ_CONTACT_FORCE_DEFAULT),
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

/* The program at @script as a C array in @c_path. */
static int write_c(const char *script, const char *c_path)
{
	FILE *in = fopen(script, "rb"), *out;
	size_t n = 0;
	int ch;

	if (!in) {
		perror(script);
		return 1;
	}
	out = fopen(c_path, "w");
	if (!out) {
		perror(c_path);
		fclose(in);
		return 1;
	}
	fprintf(out,
		"/* Generated by gen-control-script from %s: do not edit. */\n"
		"#include <stddef.h>\n\n"
		"extern const char sim_control_program[];\n"
		"extern const size_t sim_control_program_len;\n"
		"const char sim_control_program[] = {",
		script);
	while ((ch = fgetc(in)) != EOF)
		fprintf(out, "%s%d,", n++ % 16 ? "" : "\n\t", ch);
	fprintf(out, "\n\t0\n};\nconst size_t sim_control_program_len = %zu;\n", n);
	fclose(in);
	if (ferror(out) | fclose(out)) {
		perror(c_path);
		remove(c_path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	FILE *in, *out;
	char line[1024];
	unsigned lineno = 0;
	int status = 0;

	/* A BIT_ mask must be one bit of the 32 that
	 * integer_to_binary_list() returns. */
	for (size_t i = 0; i < N_CONSTANTS; i++) {
		unsigned long m = constants[i].mask;
		int bit = 0;

		if (!m)
			continue;
		if ((m & (m - 1)) || m > 0xfffffffful) {
			fprintf(stderr, "%s: not one bit of 32: %#lx\n", constants[i].name, m);
			return 1;
		}
		while (!(m & 1ul)) {
			m >>= 1;
			bit++;
		}
		constants[i].value = bit;
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s TEMPLATE OUTPUT [C-OUTPUT]\n", argv[0]);
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
	if (!status && argc == 4)
		status = write_c(argv[2], argv[3]);
	if (status)
		remove(argv[2]);
	return status;
}
