// SPDX-License-Identifier: MIT
/*
 * Runner for tap-shim.h: runs every registered test in registration order,
 * one after the other in this process, and prints TAP. A fatal check ends the
 * test through longjmp, the way a Criterion assertion ends it; so does a
 * skip, which TAP then reports as "ok ... # SKIP reason".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>

#include "tap-shim.h"

static struct shim_test *head, **tail = &head;
static jmp_buf abort_test;
static int failures;
static bool skipped;
static char skip_reason[256];

void shim_register(struct shim_test *t)
{
	*tail = t;
	tail = &t->next;
}

void shim_check(bool ok, bool fatal, const char *file, int line, const char *expr)
{
	if (ok)
		return;
	failures++;
	printf("# %s:%d: check failed: %s\n", file, line, expr);
	fflush(stdout);
	if (fatal)
		longjmp(abort_test, 1);
}

void shim_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	skipped = true;
	longjmp(abort_test, 1);
}

/* setjmp in its own frame: nothing of main's is live across the longjmp. */
static int run_one(struct shim_test *t)
{
	failures = 0;
	skipped = false;
	if (setjmp(abort_test) == 0)
		t->fn();
	return failures;
}

int main(void)
{
	int n = 0, i = 0, failed = 0;

	for (struct shim_test *t = head; t; t = t->next)
		n++;
	printf("TAP version 13\n1..%d\n", n);
	for (struct shim_test *t = head; t; t = t->next) {
		int bad = run_one(t);

		i++;
		if (skipped && !bad)
			printf("ok %d - %s::%s # SKIP %s\n", i, t->suite, t->name, skip_reason);
		else
			printf("%s %d - %s::%s\n", bad ? "not ok" : "ok", i, t->suite, t->name);
		fflush(stdout);
		failed += bad != 0;
	}
	return failed ? 1 : 0;
}
