// SPDX-License-Identifier: MIT
/* rtde-sim's settings table (apps/rtde-sim/options.c): each entry that
 * names its field of struct sim_setup stores there and nowhere else, in a
 * field of the size its kind needs. The table's stores go through an
 * offset and a size, which the compiler does not check against the
 * field's type: this test does, for every entry. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "options.h"

/* The bytes of @su at @off, @size long, as an unsigned integer. */
static uint64_t field_uint(const struct sim_setup *su, size_t off, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)su + off, size); /* little-endian hosts */
	return v;
}

/* Only the entry's own bytes may differ between @a and @b. */
static void only_field_changed(const struct sim_setup *a, const struct sim_setup *b,
			       const struct sim_option *o)
{
	const unsigned char *x = (const void *)a, *y = (const void *)b;

	for (size_t i = 0; i < sizeof(*a); i++)
		if (i < o->off || i >= o->off + o->size)
			cr_assert_eq(x[i], y[i], "--%s wrote byte %zu outside its field [%zu, %zu)",
				     o->name, i, o->off, o->off + o->size);
}

Test(sim_options, every_named_field_fits_its_kind_and_range)
{
	int named = 0;

	for (size_t i = 0; i < SIM_OPT_COUNT; i++) {
		const struct sim_option *o = sim_option_at(i);

		cr_assert(o != NULL && o->id == (enum sim_option_id)i, "entry %zu", i);
		if (!o->size)
			continue;
		named++;
		cr_assert_leq(o->off + o->size, sizeof(struct sim_setup), "--%s", o->name);
		switch (o->kind) {
		case SIM_OPT_FLAG:
			cr_assert_eq(o->size, sizeof(bool), "--%s: a flag needs a bool", o->name);
			break;
		case SIM_OPT_DOUBLE:
			cr_assert_eq(o->size, sizeof(double), "--%s: needs a double", o->name);
			break;
		case SIM_OPT_UINT:
			cr_assert(o->size == 1 || o->size == 2 || o->size == 4 || o->size == 8,
				  "--%s: %zu bytes", o->name, o->size);
			cr_assert(o->size == 8 || o->max < (UINT64_C(1) << (8 * o->size)),
				  "--%s: max %llu does not fit %zu bytes", o->name,
				  (unsigned long long)o->max, o->size);
			break;
		default:
			cr_assert_fail("--%s: a text entry names a field", o->name);
		}
	}
	cr_assert_gt(named, 10, "the table names its fields");
}

Test(sim_options, each_setter_stores_its_value_in_its_field_only)
{
	char why[256];

	for (size_t i = 0; i < SIM_OPT_COUNT; i++) {
		const struct sim_option *o = sim_option_at(i);
		struct sim_setup before, after;
		double d;

		if (!o->size)
			continue;
		memset(&before, 0, sizeof(before));
		after = before;
		switch (o->kind) {
		case SIM_OPT_FLAG:
			cr_assert_eq(
				sim_option_set_flag(&after, o, SIM_STYLE_FLAG, why, sizeof(why)), 0,
				"--%s: %s", o->name, why);
			cr_assert_eq(field_uint(&after, o->off, o->size), 1, "--%s", o->name);
			break;
		case SIM_OPT_UINT:
			cr_assert_eq(sim_option_set_uint(&after, o, o->max, SIM_STYLE_FLAG, why,
							 sizeof(why)),
				     0, "--%s: %s", o->name, why);
			cr_assert_eq(field_uint(&after, o->off, o->size), o->max, "--%s", o->name);
			break;
		default:
			cr_assert_eq(sim_option_set_double(&after, o, o->dmax, SIM_STYLE_FLAG, why,
							   sizeof(why)),
				     0, "--%s: %s", o->name, why);
			memcpy(&d, (const char *)&after + o->off, sizeof(d));
			cr_assert_eq(d, o->dmax, "--%s", o->name);
		}
		only_field_changed(&before, &after, o);
	}
}
