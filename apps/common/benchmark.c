// SPDX-License-Identifier: MIT
/*
 * rtl_bench: the reporting plumbing of the apps that measure (see benchmark.h).
 */
#include "benchmark.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_stat3 bench_stat3(const double *v, unsigned n)
{
	struct bench_stat3 s = { NAN, NAN, NAN, 0 };
	double tmp[BENCH_MAX_VALUES];

	for (unsigned i = 0; i < n && i < BENCH_MAX_VALUES; i++)
		if (isfinite(v[i]))
			tmp[s.n++] = v[i];
	if (!s.n)
		return s;
	qsort(tmp, s.n, sizeof(tmp[0]), cmp_double);
	s.min = tmp[0];
	s.max = tmp[s.n - 1];
	s.med = s.n % 2 ? tmp[s.n / 2] : (tmp[s.n / 2 - 1] + tmp[s.n / 2]) / 2.0;
	return s;
}

void bench_machine(char *buf, size_t len, bool with_version)
{
	struct utsname un;

	if (uname(&un) < 0) {
		snprintf(buf, len, "unknown");
		return;
	}
	snprintf(buf, len, "%s %s %s%s%s, %ld CPUs online", un.sysname, un.release,
		 with_version ? un.version : "", with_version ? " " : "", un.machine,
		 sysconf(_SC_NPROCESSORS_ONLN));
}

void bench_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}

_Static_assert(BENCH_OPT_MAX_REPS <= BENCH_MAX_VALUES, "bench_stat3() would drop repetitions");

FILE *bench_json_open(const char *prog, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		fprintf(stderr, "%s: cannot write --json '%s': %s\n", prog, path, strerror(errno));
	return f;
}

void bench_json_close(FILE *f)
{
	if (f != stdout)
		fclose(f);
	else
		fflush(f);
}
