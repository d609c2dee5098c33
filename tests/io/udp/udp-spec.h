/* SPDX-License-Identifier: MIT */
/*
 * The conformance material of docs/udp.md for the tests: the byte vectors,
 * the sequences and the state table, as tests/io/udp/udp-spec-extract.py
 * extracted them at build time, and the reading of a vector's "fields:"
 * into rtloop's structs (docs/udp.md section 12 gives the syntax).
 *
 * The fields are parsed here, in C, against the codec's own structs and
 * layout table (rtl_udp_state_fields()), so the page needs no second
 * description of the types: a key the page uses that the codec does not
 * know, or a value that does not parse, is an error that names the vector
 * and its line.
 */
#ifndef RTL_TEST_UDP_SPEC_H
#define RTL_TEST_UDP_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/udp.h>

/* One byte vector of the page. */
struct udp_spec_vector {
	const char *name;
	unsigned line; /* of its block in docs/udp.md */
	const uint8_t *bytes;
	size_t len;
	const char *fields; /* its fields: lines, joined */
	const char *decode; /* "" (it decodes) or an error name */
	const char *encode; /* "" (it encodes back), "EINVAL" or "none" */
};

/* One line of a sequence block. */
struct udp_spec_step {
	const char *vector;
	const char *from;    /* "", "client" or "second" */
	const char *outcome; /* counters, "-", key=value checks */
	unsigned line;
};

struct udp_spec_sequence {
	const char *name;
	unsigned line;
	const struct udp_spec_step *steps;
	size_t n;
};

/* One row of the page's state table. */
struct udp_spec_row {
	const char *name;
	unsigned offset, bytes;
	const char *type; /* "f32[6]", "u16", "f32[6][6]" ... */
	unsigned line;
};

/* Everything on the page; *@n gets the count. */
const struct udp_spec_vector *udp_spec_vectors(size_t *n);
const struct udp_spec_row *udp_spec_rows(size_t *n);
/* By name: NULL when the page has none. */
const struct udp_spec_vector *udp_spec_vector(const char *name);
const struct udp_spec_sequence *udp_spec_sequence(const char *name);

/* A vector's fields, read into rtloop's structs. */
struct udp_spec_msg {
	unsigned type;	 /* enum rtl_udp_type, or the number of an unknown one */
	bool has_header; /* seq and send_ns were given */
	struct rtl_udp_header h;
	struct rtl_udp_hello hello;
	struct rtl_udp_cmd cmd;
	struct rtl_udp_alarm alarm;
	struct rtl_udp_limits limits;
	struct rtl_udp_state state;
};

/* Read @v's fields into @m (zeroed first). 0, or -EINVAL with the reason
 * (the vector's name and line, the key) in @why. */
int udp_spec_fields(const struct udp_spec_vector *v, struct udp_spec_msg *m, char *why, size_t len);

/* Decode @len bytes as a datagram of @type into @m (zeroed first) with the
 * codec's decoder of that type (rtl_udp_decode_header() for BYE and for a
 * type the codec does not know). Returns what the decoder returned. */
int udp_spec_decode(const uint8_t *buf, size_t len, unsigned type, struct udp_spec_msg *m);

/* Encode @m with the codec's encoder of its type into @out. Returns what
 * the encoder returned (-EINVAL for a type it has no encoder for). */
int udp_spec_encode(const struct udp_spec_msg *m, uint8_t *out, size_t cap);

/* Do @a and @b (of @a's type) say the same, header and payload, bit for
 * bit in every float? true, or false with the first difference in @why. */
bool udp_spec_same(const struct udp_spec_msg *a, const struct udp_spec_msg *b, char *why,
		   size_t len);

/* The errno of an error name of the page ("EMSGSIZE" ...), 0 if unknown. */
int udp_spec_errno(const char *name);

/* The first offset at which @a and @b differ outside the header's seq and
 * send_ns (bytes 16 to 31), or -1 when they are the same but for those
 * (a length difference counts at the shorter length). */
long udp_spec_diff_but_stamps(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* The outcome words of a step: is @word one of them? */
bool udp_spec_outcome_has(const struct udp_spec_step *s, const char *word);
/* The value of "key=value" in a step's outcome into @out; false if absent. */
bool udp_spec_outcome_value(const struct udp_spec_step *s, const char *key, char *out, size_t len);
/* Every outcome word that is not "-", a key=value with one of @keys, or one
 * of @counters (both NULL-terminated): NULL when there is none, else the
 * first such word (in a static buffer). */
const char *udp_spec_outcome_unknown(const struct udp_spec_step *s, const char *const *counters,
				     const char *const *keys);

#endif /* RTL_TEST_UDP_SPEC_H */
