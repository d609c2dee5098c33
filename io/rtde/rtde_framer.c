// SPDX-License-Identifier: MIT
/*
 * RTDE framer: turns the bytes of TCP reads, in whatever slicing the kernel
 * delivers them, into whole packages.
 *
 * The state is a partial package (fill bytes of it in the assembly buffer,
 * its declared size once the 3-byte header is in) and the not yet consumed
 * rest of the last feed. rtl_rtde_framer_next() takes one of two paths:
 *
 * - Nothing partial and a whole package at the front of the fed bytes: the
 *   common case for a reader that keeps up. The package is returned in
 *   place, without a copy.
 * - Otherwise the bytes are appended to the assembly buffer, header first,
 *   until the declared size is reached or the feed runs out.
 *
 * The declared size is checked as soon as the two size bytes are known, on
 * either path, before any body byte is waited for: a stream that is not
 * RTDE (or has slipped) fails at its first bad header, at a known offset,
 * and the framer then refuses everything until reset, so no later byte is
 * ever misread as a package. The error text is assembled by hand rather
 * than with snprintf so that the error path stays as RT-safe as the rest.
 *
 * The struct and its assembly storage are one allocation: the storage is a
 * flexible array member sized at create, so a framer is one pointer for its
 * owner and one free() at the end, and nothing can hand the framer storage
 * that is too small or that lives shorter than the framer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde.h>

#include "txt.h"

struct rtl_rtde_framer {
	uint32_t max_size;
	uint32_t fill;	   /* bytes of the partial package in buf */
	uint32_t need;	   /* its declared size, 0 until the header is in */
	const uint8_t *in; /* fed bytes not consumed yet */
	size_t in_len;
	uint64_t offset;		    /* stream offset of in[0] */
	struct rtl_rtde_framer_error error; /* code != 0: failed until reset */
	uint8_t buf[];			    /* assembly storage, max_size bytes */
};

/*
 * Check the declared @size of the package starting at stream offset @at;
 * on a bad size record the error and fail the framer.
 */
static int check_size(struct rtl_rtde_framer *f, uint64_t at, uint32_t size)
{
	struct rtl_rtde_framer_error *e = &f->error;
	bool small = size < RTL_RTDE_HEADER_SIZE;
	struct txt t = { e->err.msg, sizeof(e->err.msg), 0 };

	if (!small && size <= f->max_size)
		return 0;

	e->err.code = -EMSGSIZE;
	e->offset = at;
	e->value = size;
	e->limit = small ? RTL_RTDE_HEADER_SIZE : f->max_size;
	t_str(&t, "RTDE framer: package at stream offset ");
	t_u64(&t, at);
	t_str(&t, " declares size ");
	t_u64(&t, size);
	t_str(&t, small ? " (minimum " : " (maximum ");
	t_u64(&t, e->limit);
	t_str(&t, "); the stream is not RTDE or is out of sync: reconnect");

	f->in = NULL;
	f->in_len = 0;
	return e->err.code;
}

RTL_API int rtl_rtde_framer_create(struct rtl_rtde_framer **out, size_t max_size,
				   struct rtl_error *err)
{
	struct rtl_rtde_framer *f;

	if (!out)
		return rtl_error_set(err, -EINVAL, "rtl_rtde_framer_create: out is NULL");
	*out = NULL;
	if (max_size < RTL_RTDE_HEADER_SIZE || max_size > RTL_RTDE_MAX_PACKAGE_SIZE)
		return rtl_error_set(err, -EINVAL,
				     "RTDE framer of %zu bytes: give %d to %d "
				     "(RTL_RTDE_MAX_PACKAGE_SIZE accepts every package)",
				     max_size, RTL_RTDE_HEADER_SIZE, RTL_RTDE_MAX_PACKAGE_SIZE);
	f = malloc(sizeof(*f) + max_size);
	if (!f)
		return rtl_error_set(err, -ENOMEM, "RTDE framer: out of memory");
	/* Touch every page now, at set-up, rather than on the receive path
	 * the first time a package straddles reads. */
	memset(f, 0, sizeof(*f) + max_size);
	f->max_size = (uint32_t)max_size;
	rtl_rtde_framer_reset(f);
	*out = f;
	return 0;
}

RTL_API void rtl_rtde_framer_destroy(struct rtl_rtde_framer *f)
{
	free(f);
}

RTL_API void rtl_rtde_framer_reset(struct rtl_rtde_framer *f)
{
	f->fill = 0;
	f->need = 0;
	f->in = NULL;
	f->in_len = 0;
	f->offset = 0;
	memset(&f->error, 0, sizeof(f->error));
}

RTL_API int rtl_rtde_framer_feed(struct rtl_rtde_framer *f, const void *data, size_t len)
{
	if (!f || (!data && len > 0))
		return -EINVAL;
	if (f->error.err.code)
		return f->error.err.code;
	if (f->in_len > 0)
		return -EBUSY;
	if (len == 0)
		return 0;
	f->in = data;
	f->in_len = len;
	return 0;
}

/* Move up to @n fed bytes into the assembly buffer. */
static void take(struct rtl_rtde_framer *f, size_t n)
{
	if (n > f->in_len)
		n = f->in_len;
	memcpy(f->buf + f->fill, f->in, n);
	f->fill += (uint32_t)n;
	f->in += n;
	f->in_len -= n;
	f->offset += n;
}

RTL_API int rtl_rtde_framer_next(struct rtl_rtde_framer *f, const uint8_t **pkg, size_t *len)
{
	int err;

	if (!f || !pkg || !len)
		return -EINVAL;
	if (f->error.err.code)
		return f->error.err.code;

	/* Fast path: a whole package at the front of the fed bytes. */
	if (f->fill == 0 && f->in_len >= 2) {
		uint32_t size = rtl_rtde_load_u16(f->in);

		err = check_size(f, f->offset, size);
		if (err)
			return err;
		if (f->in_len >= size) {
			*pkg = f->in;
			*len = size;
			f->in += size;
			f->in_len -= size;
			f->offset += size;
			return 1;
		}
	}

	if (f->in_len == 0)
		return 0;

	/* Slow path: assemble, header first. The size is checked as soon as
	 * its two bytes are in (need == 0 means "not known yet": a declared 0
	 * never passes the check). */
	if (f->fill < RTL_RTDE_HEADER_SIZE) {
		take(f, RTL_RTDE_HEADER_SIZE - f->fill);
		if (f->fill >= 2 && f->need == 0) {
			f->need = rtl_rtde_load_u16(f->buf);
			err = check_size(f, f->offset - f->fill, f->need);
			if (err)
				return err;
		}
		if (f->fill < RTL_RTDE_HEADER_SIZE)
			return 0;
	}
	take(f, f->need - f->fill);
	if (f->fill < f->need)
		return 0;

	*pkg = f->buf;
	*len = f->need;
	/* The buffer is reused by the next call, which is exactly how long
	 * the caller may use the package. */
	f->fill = 0;
	f->need = 0;
	return 1;
}

RTL_API const struct rtl_rtde_framer_error *
rtl_rtde_framer_last_error(const struct rtl_rtde_framer *f)
{
	return f->error.err.code ? &f->error : NULL;
}

RTL_API size_t rtl_rtde_framer_pending(const struct rtl_rtde_framer *f)
{
	return f->fill;
}

RTL_API const uint8_t *rtl_rtde_framer_partial(const struct rtl_rtde_framer *f, size_t *len)
{
	size_t n = f ? f->fill : 0;

	if (len)
		*len = n;
	return n ? f->buf : NULL;
}

RTL_API uint64_t rtl_rtde_framer_offset(const struct rtl_rtde_framer *f)
{
	return f->offset;
}
