/* SPDX-License-Identifier: MIT */
/*
 * Private to io/: a bounded, always NUL-terminated text writer for messages
 * built where snprintf is not welcome (the framer's error, the client's
 * data-path errors on the receive thread). Strings and unsigned decimals
 * only; text past the capacity is cut. RT-safe: no stdio, no allocation.
 */
#ifndef RTLOOP_IO_TXT_H
#define RTLOOP_IO_TXT_H

#include <stddef.h>
#include <stdint.h>

struct txt {
	char *b;
	size_t cap; /* > 0: room for the terminator */
	size_t n;   /* strlen(b) */
};

static inline void t_str(struct txt *t, const char *s)
{
	while (*s && t->n + 1 < t->cap)
		t->b[t->n++] = *s++;
	t->b[t->n] = '\0';
}

static inline void t_u64(struct txt *t, uint64_t v)
{
	char d[21];
	int k = 0;

	do {
		d[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k > 0 && t->n + 1 < t->cap)
		t->b[t->n++] = d[--k];
	t->b[t->n] = '\0';
}

#endif /* RTLOOP_IO_TXT_H */
