// SPDX-License-Identifier: MIT
/* Structs that can grow (design in rtloop/sized.h). */
#include <errno.h>
#include <string.h>

#include <rtloop/sized.h>

int rtl__sized_in(void *dst, size_t dst_size, const void *src, const char *what,
		  struct rtl_error *err)
{
	size_t size;

	if (!src)
		return rtl_error_set(err, -EINVAL, "%s: NULL", what);
	size = rtl__size_of(src);
	if (size < sizeof(size_t))
		return rtl_error_set(err, -EINVAL,
				     "%s: .size is %zu: set .size = sizeof(%s) before passing it "
				     "(the library reads only that many bytes, so that a field "
				     "added later keeps this program working)",
				     what, size, what);
	if (size > dst_size) {
		const unsigned char *extra = (const unsigned char *)src + dst_size;

		for (size_t i = 0; i < size - dst_size; i++)
			if (extra[i])
				return rtl_error_set(
					err, -E2BIG,
					"%s: the program sets a field at byte %zu that this "
					"librtloop (%zu bytes of it) does not know: it was built "
					"against newer headers than the library it runs with; "
					"install the newer library",
					what, dst_size + i, dst_size);
		size = dst_size;
	}
	memset(dst, 0, dst_size);
	memcpy(dst, src, size);
	*(size_t *)dst = dst_size;
	return 0;
}

int rtl__sized_out(void *dst, const void *src, size_t src_size)
{
	size_t size;

	if (!dst || rtl__size_of(dst) < sizeof(size_t))
		return -EINVAL;
	size = rtl__size_of(dst);
	if (size > src_size) {
		memset((char *)dst + src_size, 0, size - src_size);
		size = src_size;
	}
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       size - sizeof(size_t));
	return 0;
}
