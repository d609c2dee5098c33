// SPDX-License-Identifier: MIT
/*
 * Set-up of the SPSC ring. Everything on the hot path is static inline in
 * <rtloop/ring.h>; this file only validates geometry and allocates.
 */
#include <errno.h>
#include <stdlib.h>

#include <rtloop/error.h>
#include <rtloop/ring.h>

static bool geometry_ok(uint32_t capacity, size_t slot_size)
{
	if (capacity == 0 || capacity > RTL_RING_MAX_CAPACITY)
		return false;
	if (capacity & (capacity - 1))
		return false;
	if (slot_size == 0 || slot_size > UINT32_MAX)
		return false;
	/* The storage size must be representable. */
	if (slot_size > SIZE_MAX / capacity)
		return false;
	return true;
}

RTL_API size_t rtl_ring_storage_size(uint32_t capacity, size_t slot_size)
{
	return geometry_ok(capacity, slot_size) ? (size_t)capacity * slot_size : 0;
}

static void side_init(struct rtl_ring_side *s, void *storage, uint32_t capacity, size_t slot_size,
		      uint32_t start)
{
	atomic_init(&s->index, start);
	s->limit = start;
	s->hard_limit = start;
	atomic_init(&s->counter, 0);
	s->mask = capacity - 1;
	s->capacity = capacity;
	s->slot_size = slot_size;
	s->slots = storage;
}

RTL_API int rtl_ring_init_at(struct rtl_ring *r, void *storage, uint32_t capacity, size_t slot_size,
			     uint32_t start)
{
	if (!r || !storage || ((uintptr_t)r % RTL_RING_ALIGN) != 0)
		return -EINVAL;
	if (!geometry_ok(capacity, slot_size))
		return -EINVAL;
	side_init(&r->prod, storage, capacity, slot_size, start);
	side_init(&r->cons, storage, capacity, slot_size, start);
	/* The producer may run ahead of the (empty) consumer by a capacity. */
	r->prod.limit = start + capacity;
	r->prod.hard_limit = start + capacity;
	return 0;
}

RTL_API int rtl_ring_init(struct rtl_ring *r, void *storage, uint32_t capacity, size_t slot_size)
{
	return rtl_ring_init_at(r, storage, capacity, slot_size, 0);
}

RTL_API int rtl_ring_create(struct rtl_ring **out, uint32_t capacity, size_t slot_size,
			    struct rtl_error *err)
{
	size_t ctl = sizeof(struct rtl_ring);
	size_t bytes;
	struct rtl_ring *r;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "rtl_ring_create: out is NULL");
	if (!geometry_ok(capacity, slot_size))
		return rtl_error_set(
			err, -EINVAL,
			"ring of %u slots of %zu bytes: the capacity must be a power of "
			"two from 1 to %u and a slot 1 byte to 4 GiB (fix: round the "
			"capacity up to a power of two)",
			(unsigned)capacity, slot_size, (unsigned)RTL_RING_MAX_CAPACITY);
	bytes = rtl_ring_storage_size(capacity, slot_size);
	if (bytes > SIZE_MAX - ctl - RTL_RING_ALIGN)
		return rtl_error_set(err, -ENOMEM, "ring of %u slots of %zu bytes: too large",
				     (unsigned)capacity, slot_size);
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	bytes = (ctl + bytes + RTL_RING_ALIGN - 1) / RTL_RING_ALIGN * RTL_RING_ALIGN;
	r = aligned_alloc(RTL_RING_ALIGN, bytes);
	if (!r)
		return rtl_error_set(err, -ENOMEM, "ring of %zu bytes: out of memory", bytes);
	memset(r, 0, bytes);
	ret = rtl_ring_init(r, (unsigned char *)r + ctl, capacity, slot_size);
	if (ret < 0) {
		free(r);
		return rtl_error_set(err, ret, "ring: set-up failed");
	}
	*out = r;
	return 0;
}

RTL_API void rtl_ring_destroy(struct rtl_ring *r)
{
	free(r);
}
