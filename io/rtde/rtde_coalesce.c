// SPDX-License-Identifier: MIT
/*
 * The input coalescer (design in rtde_coalesce.h).
 *
 * Per recipe three frames of host bytes: pending (the caller's), staging
 * (a snapshot taken by encode) and last (committed). "Changed" is one
 * memcmp of pending against last, with the mask fields held at zero in
 * both, so a mask never makes a recipe look changed. Encode snapshots
 * pending into staging, encodes staging with the recipe's offset table
 * straight into the caller's buffer, and then patches the mask fields (and
 * the unset doubles behind them) in the wire bytes only: staging keeps the
 * caller's values exactly, so that after the commit an unset (NaN) value
 * still compares equal and a mask is never carried into the next package.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/stat.h>
#include <rtloop/rtde_coalesce.h>
#include <rtloop/sized.h>

/* Two 64-bit atomics per recipe on a single-writer path: they must be
 * plain loads and stores, not a lock. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the counters need lock-free 64-bit atomics");

/* A mask field and the values it governs. */
struct rtl_rtde_coalesce_mask {
	uint32_t mask_wire;	/* wire offset of the mask field */
	uint32_t value_host[2]; /* host offsets of the values */
	uint32_t value_wire[2]; /* wire offsets (doubles only) */
	uint32_t type_host;	/* host offset of standard_analog_output_type */
	uint8_t kind;		/* digital, slider or analog */
	uint8_t mask_type;	/* enum rtl_rtde_type of the mask field */
	uint8_t valid;		/* bits the mask may carry */
	uint8_t present;	/* bit i: value i is in the recipe */
	bool has_type;		/* standard_analog_output_type is in the recipe */
	uint8_t touched;	/* bits ever sent in a committed mask (for force) */
	uint8_t staged;		/* the mask of the last encode */
	uint32_t mask_host;	/* host offset of the mask field */
};

/* Per-recipe state. */
struct rtl_rtde_coalesce_slot {
	const struct rtl_rtde_recipe *recipe;
	struct rtl_rtde_frame pending; /* the caller's values */
	uint8_t id;
	bool force;  /* send at the next encode even if unchanged */
	bool resend; /* send at the next encode even if unchanged, masks as usual */
	bool staged; /* encoded by the last encode, waiting for commit */
	uint8_t n_masks;
	struct rtl_rtde_coalesce_mask masks[RTL_RTDE_COALESCE_MAX_MASKS];
	_Alignas(8) unsigned char pending_buf[RTL_RTDE_COALESCE_MAX_BYTES];
	_Alignas(8) unsigned char last[RTL_RTDE_COALESCE_MAX_BYTES];	/* last sent */
	_Alignas(8) unsigned char staging[RTL_RTDE_COALESCE_MAX_BYTES]; /* encoded, not committed */
};

/* One recipe's counters, written by the owner only. */
struct rtl_rtde_coalesce_counter {
	RTL_RTDE_COALESCE_COUNTERS(RTL_STAT_ATOMIC)
};

/* The coalescer (opaque to the API). */
struct rtl_rtde_coalesce {
	uint32_t n;
	int32_t beat_recipe; /* recipe of the heartbeat, -1: none */
	uint32_t beat_host;  /* its host and wire offsets */
	uint32_t beat_wire;
	uint32_t beat; /* the last heartbeat value given out */
	bool raw_masks;
	struct rtl_rtde_coalesce_slot slots[RTL_RTDE_COALESCE_MAX_RECIPES];
	/* Read by other threads: on their own cache lines, away from the
	 * owner's working state. The alignment only holds if the coalescer
	 * itself is cache-line aligned: create uses aligned_alloc(). */
	_Alignas(RTL_CACHELINE) struct rtl_rtde_coalesce_counter
		counters[RTL_RTDE_COALESCE_MAX_RECIPES];
};

/* aligned_alloc() wants a size that is a multiple of the alignment; C
 * makes every struct's size a multiple of its own, which is this one. */
_Static_assert(_Alignof(struct rtl_rtde_coalesce) == RTL_CACHELINE,
	       "the counters set the coalescer's alignment");
_Static_assert(sizeof(struct rtl_rtde_coalesce) % RTL_CACHELINE == 0,
	       "aligned_alloc() needs a multiple of the alignment");

enum mask_kind {
	MASK_DIGITAL, /* bit i of the value is output i */
	MASK_SLIDER,  /* mask 1 applies the fraction */
	MASK_ANALOG,  /* bit i applies analog output i (and bit i of the type) */
};

static const struct pair_def {
	const char *mask;
	const char *value[2];
	const char *type;
	enum mask_kind kind;
	uint8_t valid;
} pair_defs[RTL_RTDE_COALESCE_MAX_MASKS] = {
	{ "standard_digital_output_mask",
	  { "standard_digital_output", NULL },
	  NULL,
	  MASK_DIGITAL,
	  0xff },
	{ "configurable_digital_output_mask",
	  { "configurable_digital_output", NULL },
	  NULL,
	  MASK_DIGITAL,
	  0xff },
	/* Bits 2-7 of the tool mask are reserved (docs/rtde-protocol.md 5.1). */
	{ "tool_digital_output_mask", { "tool_digital_output", NULL }, NULL, MASK_DIGITAL, 0x03 },
	{ "speed_slider_mask", { "speed_slider_fraction", NULL }, NULL, MASK_SLIDER, 0x01 },
	{ "standard_analog_output_mask",
	  { "standard_analog_output_0", "standard_analog_output_1" },
	  "standard_analog_output_type",
	  MASK_ANALOG,
	  0x03 },
};

static bool handle_of(const struct rtl_rtde_recipe *r, const char *name, enum rtl_rtde_type type,
		      struct rtl_rtde_handle *h)
{
	return name && rtl_rtde_recipe_handle(r, h, name) == 0 && h->type == (uint8_t)type;
}

static double load_double(const unsigned char *p)
{
	double d;

	memcpy(&d, p, sizeof(d));
	return d;
}

/* Find the mask pairs of @s's recipe and mark the doubles behind them as
 * not set (NaN) in the pending frame. */
static void find_masks(struct rtl_rtde_coalesce_slot *s)
{
	const struct rtl_rtde_recipe *r = s->recipe;
	const double unset = NAN;

	for (size_t k = 0; k < RTL_RTDE_COALESCE_MAX_MASKS; k++) {
		const struct pair_def *d = &pair_defs[k];
		enum rtl_rtde_type mt =
			d->kind == MASK_SLIDER ? RTL_RTDE_TYPE_UINT32 : RTL_RTDE_TYPE_UINT8;
		enum rtl_rtde_type vt =
			d->kind == MASK_DIGITAL ? RTL_RTDE_TYPE_UINT8 : RTL_RTDE_TYPE_DOUBLE;
		struct rtl_rtde_coalesce_mask *m = &s->masks[s->n_masks];
		struct rtl_rtde_handle h;

		if (!handle_of(r, d->mask, mt, &h))
			continue;
		memset(m, 0, sizeof(*m));
		m->kind = (uint8_t)d->kind;
		m->mask_type = (uint8_t)mt;
		m->valid = d->valid;
		m->mask_host = h.offset;
		m->mask_wire = r->slots[h.index].wire_offset;
		for (unsigned i = 0; i < 2; i++) {
			if (!handle_of(r, d->value[i], vt, &h))
				continue;
			m->present |= (uint8_t)(1u << i);
			m->value_host[i] = h.offset;
			m->value_wire[i] = r->slots[h.index].wire_offset;
			if (vt == RTL_RTDE_TYPE_DOUBLE)
				memcpy(s->pending_buf + h.offset, &unset, sizeof(unset));
		}
		if (handle_of(r, d->type, RTL_RTDE_TYPE_UINT8, &h)) {
			m->has_type = true;
			m->type_host = h.offset;
		}
		/* A mask without its values stays 0: it is still ours, so the
		 * caller cannot apply it by accident. */
		s->n_masks++;
	}
}

static bool id_taken(const struct rtl_rtde_coalesce *c, size_t n, size_t except, uint8_t id)
{
	for (size_t i = 0; i < n; i++)
		if (i != except && c->slots[i].id == id)
			return true;
	return false;
}

/* No recipes, no heartbeat, computed masks: the state after create and
 * after a failed setup. The slots are left as they are: with n 0 nothing
 * reads them, and setup rewrites each one it hands out. */
static void clear(struct rtl_rtde_coalesce *c)
{
	c->n = 0;
	c->beat_recipe = -1;
	c->beat = 0;
	c->raw_masks = false;
}

RTL_API int rtl_rtde_coalesce_create(struct rtl_rtde_coalesce **out, struct rtl_error *err)
{
	struct rtl_rtde_coalesce *c;

	if (!out)
		return rtl_error_set(err, -EINVAL, "coalescer: nowhere to put it (out is NULL)");
	*out = NULL;
	/* Not calloc(): malloc's 16 bytes would split the counters' cache
	 * lines with the owner's state, the false sharing they are aligned
	 * against. */
	c = aligned_alloc(RTL_CACHELINE, sizeof(*c));
	if (!c)
		return rtl_error_set(err, -ENOMEM, "coalescer: out of memory (%zu bytes)",
				     sizeof(*c));
	/* Zeroed, so that every page is touched here, at set-up time, and no
	 * slot holds garbage even before it is used. */
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < RTL_RTDE_COALESCE_MAX_RECIPES; i++) {
#define ZERO(name, doc) atomic_init(&c->counters[i].name, 0);
		RTL_RTDE_COALESCE_COUNTERS(ZERO)
#undef ZERO
	}
	clear(c);
	*out = c;
	return 0;
}

RTL_API void rtl_rtde_coalesce_destroy(struct rtl_rtde_coalesce *c)
{
	free(c);
}

RTL_API int rtl_rtde_coalesce_setup(struct rtl_rtde_coalesce *c,
				    const struct rtl_rtde_recipe *const *recipes,
				    const uint8_t *ids, size_t n)
{
	if (!c)
		return -EINVAL;
	clear(c);
	if (!recipes || !ids || n == 0)
		return -EINVAL;
	if (n > RTL_RTDE_COALESCE_MAX_RECIPES)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		const struct rtl_rtde_recipe *r = recipes[i];

		if (!r || r->n == 0 || r->dir != RTL_RTDE_RECIPE_INPUT || ids[i] == 0)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (ids[j] == ids[i])
				return -EINVAL;
		if (r->host_size > RTL_RTDE_COALESCE_MAX_BYTES)
			return -E2BIG;
	}

	for (size_t i = 0; i < n; i++) {
		struct rtl_rtde_coalesce_slot *s = &c->slots[i];

		s->recipe = recipes[i];
		s->id = ids[i];
		s->force = false;
		s->resend = false;
		s->staged = false;
		s->n_masks = 0;
		/* Cannot fail: the size was checked above. */
		rtl_rtde_frame_init(&s->pending, s->pending_buf, sizeof(s->pending_buf), s->recipe);
		find_masks(s);
		memcpy(s->last, s->pending_buf, s->recipe->host_size);
#define ZERO(name, doc) atomic_store_explicit(&c->counters[i].name, 0, memory_order_relaxed);
		RTL_RTDE_COALESCE_COUNTERS(ZERO)
#undef ZERO
	}
	c->n = (uint32_t)n;
	return 0;
}

RTL_API struct rtl_rtde_frame *rtl_rtde_coalesce_frame(struct rtl_rtde_coalesce *c, size_t i)
{
	if (!c || i >= c->n)
		return NULL;
	return &c->slots[i].pending;
}

RTL_API int rtl_rtde_coalesce_set_id(struct rtl_rtde_coalesce *c, size_t i, uint8_t id)
{
	if (!c || i >= c->n || id == 0 || id_taken(c, c->n, i, id))
		return -EINVAL;
	c->slots[i].id = id;
	return 0;
}

/* The mask of @m for the values in @s's staging against the last sent
 * ones; also writes 0.0 on the wire (@wire) in place of unset doubles. */
static uint8_t compute_mask(const struct rtl_rtde_coalesce_slot *s,
			    const struct rtl_rtde_coalesce_mask *m, uint8_t *wire)
{
	const unsigned char *now = s->staging, *last = s->last;
	uint8_t mask = 0;

	if (m->kind == MASK_DIGITAL) {
		if (m->present & 1) {
			unsigned off = m->value_host[0];

			mask = (uint8_t)(now[off] ^ last[off]);
			if (s->force)
				mask |= m->touched;
		}
		return mask & m->valid;
	}
	/* Slider and analog: doubles that may be unset (NaN). The last sent
	 * value starts as NaN too, which differs from every set value: the
	 * first write always applies. */
	for (unsigned i = 0; i < 2; i++) {
		unsigned off = m->value_host[i];
		bool changed;

		if (!(m->present & (1u << i)))
			continue;
		if (isnan(load_double(now + off))) {
			rtl_rtde_store_f64(wire + m->value_wire[i], 0.0);
			continue;
		}
		changed = s->force || memcmp(now + off, last + off, sizeof(double)) != 0;
		if (m->has_type && ((now[m->type_host] ^ last[m->type_host]) >> i & 1))
			changed = true;
		if (changed)
			mask |= (uint8_t)(1u << i);
	}
	return mask & m->valid;
}

/* The mask of @m as the caller wrote it (raw masks); unset doubles still
 * go out as 0.0. */
static uint8_t raw_mask(const struct rtl_rtde_coalesce_slot *s,
			const struct rtl_rtde_coalesce_mask *m, uint8_t *wire)
{
	const unsigned char *now = s->staging;
	uint32_t mask = 0;

	if (m->mask_type == RTL_RTDE_TYPE_UINT32)
		memcpy(&mask, now + m->mask_host, sizeof(mask));
	else
		mask = now[m->mask_host];
	if (m->kind != MASK_DIGITAL)
		for (unsigned i = 0; i < 2; i++)
			if ((m->present & (1u << i)) &&
			    isnan(load_double(now + m->value_host[i]))) {
				rtl_rtde_store_f64(wire + m->value_wire[i], 0.0);
				mask &= ~(1u << i);
			}
	return (uint8_t)(mask & m->valid);
}

/* One relaxed load and store: exact with a single writer, and no locked
 * read-modify-write on the hot path. Readers need no ordering: a counter
 * is a number, not a flag that publishes data. */

RTL_API int rtl_rtde_coalesce_encode(struct rtl_rtde_coalesce *c, uint8_t *out, size_t cap)
{
	size_t total = 0, pos = 0;
	int err = 0;

	if (!c || (!out && cap > 0))
		return -EINVAL;

	/* Pass 1: which recipes go, and do they fit? Nothing is staged or
	 * counted until we know. */
	for (uint32_t i = 0; i < c->n; i++) {
		struct rtl_rtde_coalesce_slot *s = &c->slots[i];
		const struct rtl_rtde_recipe *r = s->recipe;

		/* Masks are ours: whatever the caller wrote there would make
		 * the recipe look changed. So is the heartbeat. */
		if ((int32_t)i == c->beat_recipe)
			memset(s->pending_buf + c->beat_host, 0, 4);
		for (unsigned k = 0; k < s->n_masks && !c->raw_masks; k++) {
			const struct rtl_rtde_coalesce_mask *m = &s->masks[k];

			memset(s->pending_buf + m->mask_host, 0,
			       rtl_rtde_type_size((enum rtl_rtde_type)m->mask_type));
		}
		s->staged =
			s->force || s->resend || memcmp(s->pending_buf, s->last, r->host_size) != 0;
		if (s->staged)
			total += RTL_RTDE_HEADER_SIZE + 1 + r->wire_size;
	}
	if (total > cap) {
		err = -ENOSPC;
		goto unstage;
	}

	/* Pass 2: snapshot, encode in place, patch the masks. */
	for (uint32_t i = 0; i < c->n; i++) {
		struct rtl_rtde_coalesce_slot *s = &c->slots[i];
		const struct rtl_rtde_recipe *r = s->recipe;
		struct rtl_rtde_frame staging = { s->staging, r->host_size, sizeof(s->staging) };
		uint8_t *fields;
		int len;

		if (!s->staged) {
			rtl_stat_add(&c->counters[i].suppressed, 1);
			continue;
		}
		fields = out + pos + RTL_RTDE_HEADER_SIZE + 1;
		memcpy(s->staging, s->pending_buf, r->host_size);
		len = rtl_rtde_recipe_encode(r, fields, cap - pos - RTL_RTDE_HEADER_SIZE - 1,
					     &staging);
		if (len < 0) {
			err = len;
			goto unstage;
		}
		for (unsigned k = 0; k < s->n_masks; k++) {
			struct rtl_rtde_coalesce_mask *m = &s->masks[k];

			m->staged =
				c->raw_masks ? raw_mask(s, m, fields) : compute_mask(s, m, fields);
			if (m->mask_type == RTL_RTDE_TYPE_UINT32)
				rtl_rtde_store_u32(fields + m->mask_wire, m->staged);
			else
				fields[m->mask_wire] = m->staged;
		}
		if ((int32_t)i == c->beat_recipe)
			rtl_rtde_store_u32(fields + c->beat_wire, ++c->beat);
		/* The fields already sit where the package wants them: the
		 * codec's memmove is then a no-op. */
		len = rtl_rtde_encode_data(out + pos, cap - pos, RTL_RTDE_PROTOCOL_V2,
					   RTL_RTDE_FROM_CLIENT, s->id, fields, r->wire_size);
		if (len < 0) {
			err = len;
			goto unstage;
		}
		pos += (size_t)len;
	}
	return (int)pos;

unstage:
	for (uint32_t i = 0; i < c->n; i++)
		c->slots[i].staged = false;
	return err;
}

RTL_API int rtl_rtde_coalesce_commit(struct rtl_rtde_coalesce *c)
{
	int committed = 0;

	if (!c)
		return -EINVAL;
	for (uint32_t i = 0; i < c->n; i++) {
		struct rtl_rtde_coalesce_slot *s = &c->slots[i];

		if (!s->staged)
			continue;
		/* Staging holds the values as the caller wrote them, masks 0:
		 * the masks just sent are cleared by this copy. */
		memcpy(s->last, s->staging, s->recipe->host_size);
		for (unsigned k = 0; k < s->n_masks; k++)
			s->masks[k].touched |= s->masks[k].staged;
		s->staged = false;
		s->force = false;
		s->resend = false;
		rtl_stat_add(&c->counters[i].sent, 1);
		committed++;
	}
	return committed;
}

RTL_API int rtl_rtde_coalesce_force(struct rtl_rtde_coalesce *c)
{
	if (!c)
		return -EINVAL;
	for (uint32_t i = 0; i < c->n; i++)
		c->slots[i].force = true;
	return 0;
}

RTL_API int rtl_rtde_coalesce_resend(struct rtl_rtde_coalesce *c, size_t i)
{
	if (!c || i >= c->n)
		return -EINVAL;
	c->slots[i].resend = true;
	return 0;
}

RTL_API int rtl_rtde_coalesce_set_heartbeat(struct rtl_rtde_coalesce *c, size_t i,
					    struct rtl_rtde_handle h)
{
	const struct rtl_rtde_recipe *r;

	if (!c || i >= c->n)
		return -EINVAL;
	r = c->slots[i].recipe;
	if ((h.type != RTL_RTDE_TYPE_INT32 && h.type != RTL_RTDE_TYPE_UINT32) || h.index >= r->n ||
	    r->slots[h.index].host_offset != h.offset)
		return -EINVAL;
	c->beat_recipe = (int32_t)i;
	c->beat_host = h.offset;
	c->beat_wire = r->slots[h.index].wire_offset;
	return 0;
}

RTL_API uint32_t rtl_rtde_coalesce_next_beat(struct rtl_rtde_coalesce *c)
{
	return c ? ++c->beat : 0;
}

RTL_API int rtl_rtde_coalesce_beat_offset(const struct rtl_rtde_coalesce *c)
{
	if (!c || c->beat_recipe < 0)
		return -1;
	return (int)(RTL_RTDE_HEADER_SIZE + 1 + c->beat_wire);
}

RTL_API int rtl_rtde_coalesce_beat_recipe(const struct rtl_rtde_coalesce *c)
{
	return c ? c->beat_recipe : -1;
}

RTL_API int rtl_rtde_coalesce_raw_masks(struct rtl_rtde_coalesce *c, bool raw)
{
	if (!c)
		return -EINVAL;
	c->raw_masks = raw;
	return 0;
}

/* Only the table and its getter: the stats are per recipe, and a total. */
RTL__DEFINE_COUNTER_FIELDS(rtl_rtde_coalesce, RTL_RTDE_COALESCE_COUNTERS)

/* Recipe @i's counters added to @s. */
static void add_counters(const struct rtl_rtde_coalesce *c, size_t i,
			 struct rtl_rtde_coalesce_counters *s)
{
#define ADD(name, doc) s->name += rtl_stat_get(&c->counters[i].name);
	RTL_RTDE_COALESCE_COUNTERS(ADD)
#undef ADD
}

RTL_API int rtl_rtde_coalesce_stats(const struct rtl_rtde_coalesce *c, size_t i,
				    struct rtl_rtde_coalesce_counters *out)
{
	struct rtl_rtde_coalesce_counters s = { .size = sizeof(s) };

	if (!c || i >= c->n)
		return -EINVAL;
	add_counters(c, i, &s);
	return rtl__sized_out(out, &s, sizeof(s));
}

RTL_API int rtl_rtde_coalesce_total(const struct rtl_rtde_coalesce *c,
				    struct rtl_rtde_coalesce_counters *out)
{
	struct rtl_rtde_coalesce_counters s = { .size = sizeof(s) };

	if (!c)
		return -EINVAL;
	for (uint32_t i = 0; i < c->n; i++)
		add_counters(c, i, &s);
	return rtl__sized_out(out, &s, sizeof(s));
}
