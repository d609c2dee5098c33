/* SPDX-License-Identifier: MIT */
/*
 * What the stream harnesses share: the invariant check, the chunker that
 * cuts a byte stream into the pieces of successive reads.
 *
 * Chunking: the stream a peer sends arrives in reads of any size, and a
 * parser that holds state across reads must not care where they end. The
 * harness input names the cut: a seed byte of 0 feeds the whole stream in
 * one piece, any other value seeds a xorshift generator that picks 1..4
 * bytes or 1..300 bytes per piece, so both byte-at-a-time and large reads
 * are explored. Every piece is copied into a heap block of exactly its
 * size, so ASan sees any read past the bytes of one read.
 *
 * Invariant violations trap (__builtin_trap()): libFuzzer reports them as
 * a crash with the input that broke the rule.
 */
#ifndef RTL_FUZZ_COMMON_H
#define RTL_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond)                  \
	do {                              \
		if (!(cond))              \
			__builtin_trap(); \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_chunker {
	const uint8_t *p;
	size_t left;
	uint32_t rng; /* 0: one piece */
};

static inline void fuzz_chunker_init(struct fuzz_chunker *c, uint8_t seed, const uint8_t *p,
				     size_t len)
{
	c->p = p;
	c->left = len;
	c->rng = seed ? 0x9E3779B9u * seed : 0;
}

static inline uint32_t fuzz_rand(uint32_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 17;
	*rng ^= *rng << 5;
	return *rng;
}

/* The next piece as a fresh heap copy (free() it), *@n its size; NULL at
 * the end of the stream. */
static inline uint8_t *fuzz_chunk_next(struct fuzz_chunker *c, size_t *n)
{
	uint8_t *piece;
	size_t k = c->left;

	if (c->left == 0)
		return NULL;
	if (c->rng) {
		uint32_t r = fuzz_rand(&c->rng);

		k = 1 + r % (r & 1 ? 4 : 300);
		if (k > c->left)
			k = c->left;
	}
	piece = malloc(k);
	FUZZ_CHECK(piece);
	memcpy(piece, c->p, k);
	c->p += k;
	c->left -= k;
	*n = k;
	return piece;
}

#endif /* RTL_FUZZ_COMMON_H */
