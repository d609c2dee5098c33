// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the recipe loaders of io/rtde/rtde_recipe.c, which
 * read files a user was handed: UR's rtde_config XML (through expat), the
 * text format (one name per line) and comma-separated name lists.
 *
 * Built twice: with -DFUZZ_RECIPE_XML the input after the two control bytes
 * is an XML document, else a text recipe (or, when byte 0 says so, a names
 * list). Byte 0 picks the direction, the flags and the controller version;
 * byte 1 the recipe key (XML: NULL, "out", "in", "state"). The source is a
 * heap block of exactly its size with no NUL after it (the list builder
 * alone takes a C string and gets a NUL-terminated copy).
 *
 * Oracles: documented codes only; a failure leaves the recipe empty and
 * its first error in the report; a success has its slots and runs inside
 * the wire and host sizes and in wire order; a zero package decodes and
 * encodes back to zeros; the recipe's names rebuilt as a list give the
 * same recipe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/rtde_recipe.h>

#include "fuzz-common.h"

static void check_code(int r)
{
	FUZZ_CHECK(r > 0 || r == -ENOENT || r == -EEXIST || r == -E2BIG || r == -EPROTO ||
		   r == -EBADMSG || r == -EINVAL);
}

static void check_report(const struct rtl_rtde_report *rep, int r)
{
	FUZZ_CHECK(rep->len < RTL_RTDE_REPORT_TEXT_MAX && rep->text[rep->len] == '\0');
	FUZZ_CHECK(strlen(rep->text) == rep->len);
	FUZZ_CHECK(memchr(rep->field, '\0', sizeof(rep->field)));
	if (r < 0)
		FUZZ_CHECK(rep->error == r && rep->errors >= 1);
	else
		FUZZ_CHECK(rep->error == 0 && rep->errors == 0);
}

static void check_recipe(const struct rtl_rtde_recipe *r, const struct rtl_rtde_recipe_opts *o)
{
	struct rtl_rtde_recipe *again;
	struct rtl_rtde_frame f;
	uint8_t *wire, *back;
	unsigned char *host;
	uint32_t at = 0;
	char *names;
	int n;

	FUZZ_CHECK(r->n > 0 && r->n <= RTL_RTDE_RECIPE_MAX_FIELDS && r->n_runs <= r->n);
	for (uint32_t i = 0; i < r->n; i++) {
		const struct rtl_rtde_slot *s = &r->slots[i];

		FUZZ_CHECK(rtl_rtde_type_is_value((enum rtl_rtde_type)s->type));
		FUZZ_CHECK(s->size == rtl_rtde_type_size((enum rtl_rtde_type)s->type));
		FUZZ_CHECK(s->wire_offset == at);
		FUZZ_CHECK(s->host_offset + s->size <= r->host_size);
		FUZZ_CHECK(r->fields[i] && r->fields[i]->type == s->type);
		at += s->size;
	}
	FUZZ_CHECK(at == r->wire_size);

	/* A zero package decodes and encodes back to zeros. */
	wire = calloc(1, r->wire_size);
	back = malloc(r->wire_size);
	host = malloc(r->host_size);
	FUZZ_CHECK(wire && back && host);
	FUZZ_CHECK(rtl_rtde_frame_init(&f, host, r->host_size, r) == 0);
	FUZZ_CHECK(rtl_rtde_recipe_decode(r, &f, wire, r->wire_size) == 0);
	FUZZ_CHECK(rtl_rtde_recipe_encode(r, back, r->wire_size, &f) == (int)r->wire_size);
	FUZZ_CHECK(memcmp(wire, back, r->wire_size) == 0);

	/* Its names, as a list, build the same recipe. */
	names = malloc(64 * 1024);
	again = malloc(sizeof(*again));
	FUZZ_CHECK(names && again);
	n = rtl_rtde_recipe_names(r, names, 64 * 1024);
	FUZZ_CHECK(n > 0 && (size_t)n == strlen(names));
	FUZZ_CHECK(rtl_rtde_recipe_from_list(again, o, names, NULL) == (int)r->n);
	FUZZ_CHECK(again->wire_size == r->wire_size && again->host_size == r->host_size);
	FUZZ_CHECK(memcmp(again->slots, r->slots, r->n * sizeof(r->slots[0])) == 0);
	free(again);
	free(names);
	free(host);
	free(back);
	free(wire);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t versions[] = { 0, RTL_RTDE_VERSION(3, 15, 8, 0),
					     RTL_RTDE_VERSION(5, 26, 0, 0),
					     RTL_RTDE_VERSION(10, 13, 0, 0) };
	struct rtl_rtde_recipe_opts o = { .size = sizeof(o) };
	struct rtl_rtde_recipe *r;
	struct rtl_rtde_report *rep;
	char *src;
	size_t len;
	int ret;

	if (size < 2)
		return 0;
	rtl_log_set_handler(NULL, NULL);
	o.dir = data[0] & 1 ? RTL_RTDE_RECIPE_INPUT : RTL_RTDE_RECIPE_OUTPUT;
	o.flags = (data[0] >> 1) & 3;
	o.controller_version = versions[(data[0] >> 3) & 3];
	len = size - 2;
	src = malloc(len + 1);
	r = malloc(sizeof(*r));
	rep = malloc(sizeof(*rep));
	FUZZ_CHECK(src && r && rep);
	memcpy(src, data + 2, len);
#ifdef FUZZ_RECIPE_XML
	{
		static const char *const keys[] = { NULL, "out", "in", "state" };

		ret = rtl_rtde_recipe_from_xml(r, &o, src, len, keys[data[1] & 3], rep);
		FUZZ_CHECK(ret != -ENOMEM);
	}
#else
	if (data[0] & 0x80) {
		src[len] = '\0';
		ret = rtl_rtde_recipe_from_list(r, &o, src, rep);
	} else {
		ret = rtl_rtde_recipe_from_text(r, &o, src, len, rep);
	}
#endif
	check_code(ret);
	check_report(rep, ret);
	if (ret > 0) {
		FUZZ_CHECK((uint32_t)ret == r->n);
		check_recipe(r, &o);
	} else {
		FUZZ_CHECK(r->n == 0);
	}
	free(rep);
	free(r);
	free(src);
	return 0;
}
