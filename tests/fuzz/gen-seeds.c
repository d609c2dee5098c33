// SPDX-License-Identifier: MIT
/*
 * Writes the fuzz seed corpora, one directory per harness under argv[1],
 * from the section-7 test vectors (tests/io/rtde/test-rtde-vectors.h): the
 * seeds are the same bytes the unit tests pin down, laid out as each
 * harness reads its input. Run by run-fuzz.sh; not part of the library.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test-rtde-vectors.h"

static const char *root;

static void put(const char *harness, const char *name, const uint8_t *a, size_t alen,
		const uint8_t *b, size_t blen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, harness);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", root, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Seeds for a decode harness built with -DFUZZ_TYPES=@group. */
static void group_seeds(const char *harness, const char *group)
{
	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++) {
		const struct rtde_vector *v = &rtde_vectors[i];
		const char *hit = strchr(group, v->bytes[2]);
		uint8_t sel;

		if (!hit || v->bytes[2] == 0)
			continue;
		sel = (uint8_t)(hit - group);
		put(harness, v->name, &sel, 1, v->bytes + 3, v->len - 3);
	}
}

static void framer_seeds(void)
{
	static uint8_t stream[4096];
	size_t len = 0;
	uint8_t ctl[3];

	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++) {
		memcpy(stream + len, rtde_vectors[i].bytes, rtde_vectors[i].len);
		len += rtde_vectors[i].len;
		ctl[0] = (uint8_t)i;
		ctl[1] = 0x10;
		ctl[2] = 0x00;
		put("framer", rtde_vectors[i].name, ctl, 3, rtde_vectors[i].bytes,
		    rtde_vectors[i].len);
	}
	ctl[0] = 1;
	ctl[1] = 0xFF;
	ctl[2] = 0xFF;
	put("framer", "all-max-65535", ctl, 3, stream, len);
	ctl[0] = 2;
	ctl[1] = 0x00;
	ctl[2] = 100;
	put("framer", "all-max-100", ctl, 3, stream, len);
	ctl[1] = 0x00;
	ctl[2] = 64; /* the 89-byte text message is too big */
	put("framer", "all-max-64", ctl, 3, stream, len);
	memcpy(stream + len, "\x00\x02\x53", 3);
	ctl[1] = 0x10;
	ctl[2] = 0x00;
	put("framer", "all-then-size-2", ctl, 3, stream, len + 3);
}

static void values_seeds(void)
{
	static const uint8_t q[] = { 2, 5, 7 };
	static const uint8_t slider[] = { 2, 2, 5 };
	static const uint8_t mask[] = { 1, 2 };
	static const uint8_t two_doubles[] = { 2, 5, 5 };
	static const uint8_t all[] = { 10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static uint8_t zeros[1 + 1 + 4 + 8 + 4 + 8 + 24 + 48 + 24 + 24];

	put("values", "timestamp-actual_q", q, sizeof(q), vec_u_q_v2 + 4, sizeof(vec_u_q_v2) - 4);
	put("values", "speed-slider", slider, sizeof(slider), vec_u_in_slider + 4,
	    sizeof(vec_u_in_slider) - 4);
	put("values", "speed-slider-mask", mask, sizeof(mask), vec_u_in_mask + 4,
	    sizeof(vec_u_in_mask) - 4);
	put("values", "timestamp-speed-fraction", two_doubles, sizeof(two_doubles),
	    vec_u_out_v2 + 4, sizeof(vec_u_out_v2) - 4);
	put("values", "every-type", all, sizeof(all), zeros, sizeof(zeros));
}

static void types_seeds(void)
{
	static const char *const lists[] = {
		"DOUBLE,VECTOR6D",
		"NOT_FOUND,VECTOR6D",
		"UINT32,DOUBLE",
		"IN_USE,IN_USE",
		VEC_O_NAMES,
		VEC_I_NAMES,
		"timestamp,actual_q,",
		("BOOL,UINT8,UINT32,UINT64,INT32,DOUBLE,VECTOR3D,VECTOR6D,VECTOR6INT32,"
		 "VECTOR6UINT32"),
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char name[16];

		snprintf(name, sizeof(name), "list-%zu", i);
		put("types", name, (const uint8_t *)lists[i], strlen(lists[i]), NULL, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	root = argv[1];
	if (mkdir(root, 0755) != 0 && errno != EEXIST) {
		perror(root);
		return 1;
	}
	for (size_t i = 0; i < RTDE_VECTOR_COUNT; i++)
		put("decode", rtde_vectors[i].name, rtde_vectors[i].bytes, rtde_vectors[i].len,
		    NULL, 0);
	put("decode", "vec_o_reply_lying_size", vec_o_reply_lying_size,
	    sizeof(vec_o_reply_lying_size), NULL, 0);
	group_seeds("decode-fixed", "VvSP");
	group_seeds("decode-text", "M");
	group_seeds("decode-setup", "OI");
	group_seeds("decode-data", "U");
	framer_seeds();
	values_seeds();
	types_seeds();
	return 0;
}
