/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde: the Universal Robots RTDE wire format, as pure functions over
 * byte buffers, and an incremental framer that cuts a TCP byte stream into
 * packages.
 *
 * Design
 * ------
 * RTDE is small: a 3-byte header (big-endian uint16 total size, header
 * included, then a uint8 type letter) and eight package types whose layouts
 * differ a little between protocol versions 1 and 2 and, for text messages
 * in v1, between directions (docs/rtde-protocol.md, the wire reference).
 * This module is the one place that knows those bytes. It does no I/O, and
 * apart from the framer (allocated once, by rtl_rtde_framer_create()) it
 * keeps no state and never allocates, so the client state machine, the
 * simulator and the fuzzers all call the same code, and the receive thread
 * can call it on the hot path.
 *
 * - Decoders take exactly one package (what the framer yields): a buffer
 *   whose length equals the header's size. They fill a caller struct whose
 *   variable parts (text, name and type lists, data fields) point into the
 *   buffer as pointer + length: nothing is copied and nothing is
 *   NUL-terminated, so the results live as long as the buffer.
 * - Encoders write one whole package into a caller buffer of capacity @cap
 *   and return its size.
 * - Error codes mean the same thing everywhere, so a caller can act on the
 *   class without reading the message:
 *     -EMSGSIZE  the package boundary is wrong: fewer than 3 bytes, or the
 *                header's size differs from the buffer length (truncated or
 *                trailing bytes); for encoders, a package or a length field
 *                would exceed its protocol limit. From the framer it means
 *                the stream is out of sync: reconnect.
 *     -EPROTO    the type is not the expected one: a reply of the wrong
 *                type, an unknown package type, an unknown RTDE type name,
 *                or a pseudo-type (NOT_FOUND, IN_USE) where a value type is
 *                needed.
 *     -EBADMSG   the package is well framed but its payload does not parse:
 *                wrong fixed length, text lengths past the end, data that
 *                does not match the recipe, an empty list element. The
 *                stream is still in sync: drop the package.
 *     -ENOSPC    an encoder's buffer (or a caller array) is too small.
 *     -EINVAL    a caller bug: NULL pointer, protocol version other than 1
 *                or 2, a package type a function does not handle.
 * - Data values: each RTDE type has a host representation of exactly its
 *   wire size (bool, uint8_t, uint32_t, uint64_t, int32_t, double, and
 *   arrays of 3 or 6 of them), so a recipe can be decoded straight into a
 *   plain C struct, into an array of union rtl_rtde_value, or into doubles.
 *   The per-value load/store helpers are static inline: they are the hot
 *   path. Fields start at odd offsets, so every access is a byte copy.
 * - The framer copies only what straddles reads: a package that lies whole
 *   inside the bytes just fed is returned in place.
 *
 * Thread and RT safety: every function here is RT-safe (no allocation, no
 * locks, no system calls) and reentrant, except rtl_rtde_framer_create()
 * and rtl_rtde_framer_destroy() (set-up and tear-down); a framer is owned
 * by one thread.
 */
#ifndef RTLOOP_RTDE_H
#define RTLOOP_RTDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

#define RTL_RTDE_PORT 30004
/* Header: uint16 BE total size (header included), uint8 type. */
#define RTL_RTDE_HEADER_SIZE 3
#define RTL_RTDE_MAX_PACKAGE_SIZE 65535
#define RTL_RTDE_MAX_PAYLOAD_SIZE (RTL_RTDE_MAX_PACKAGE_SIZE - RTL_RTDE_HEADER_SIZE)
/* Text message and source lengths travel in one byte. */
#define RTL_RTDE_MAX_TEXT_LEN 255

enum rtl_rtde_protocol {
	RTL_RTDE_PROTOCOL_V1 = 1,
	RTL_RTDE_PROTOCOL_V2 = 2,
};

/* Who sends the package. Text messages in v1 and data packages in v1 have
 * different layouts in the two directions. */
enum rtl_rtde_dir {
	RTL_RTDE_FROM_CLIENT = 0,
	RTL_RTDE_FROM_CONTROLLER = 1,
};

/* Package types: the ASCII letter on the wire. */
enum rtl_rtde_pkg {
	RTL_RTDE_PKG_PROTOCOL_VERSION = 'V',  /* REQUEST_PROTOCOL_VERSION */
	RTL_RTDE_PKG_URCONTROL_VERSION = 'v', /* GET_URCONTROL_VERSION */
	RTL_RTDE_PKG_TEXT_MESSAGE = 'M',      /* TEXT_MESSAGE */
	RTL_RTDE_PKG_DATA = 'U',	      /* DATA_PACKAGE */
	RTL_RTDE_PKG_SETUP_OUTPUTS = 'O',     /* CONTROL_PACKAGE_SETUP_OUTPUTS */
	RTL_RTDE_PKG_SETUP_INPUTS = 'I',      /* CONTROL_PACKAGE_SETUP_INPUTS */
	RTL_RTDE_PKG_START = 'S',	      /* CONTROL_PACKAGE_START */
	RTL_RTDE_PKG_PAUSE = 'P',	      /* CONTROL_PACKAGE_PAUSE */
};

/* Text message levels. Decoders pass other values through unchanged. */
enum rtl_rtde_level {
	RTL_RTDE_LEVEL_EXCEPTION = 0,
	RTL_RTDE_LEVEL_ERROR = 1,
	RTL_RTDE_LEVEL_WARNING = 2,
	RTL_RTDE_LEVEL_INFO = 3,
};

/*
 * RTDE value types, plus the two pseudo-types a setup reply uses to reject a
 * field. STRING (listed by UR's guide, used by no field, no fixed size) is
 * not supported: its name parses as unknown (-EPROTO).
 */
enum rtl_rtde_type {
	RTL_RTDE_TYPE_BOOL = 0,
	RTL_RTDE_TYPE_UINT8,
	RTL_RTDE_TYPE_UINT32,
	RTL_RTDE_TYPE_UINT64,
	RTL_RTDE_TYPE_INT32,
	RTL_RTDE_TYPE_DOUBLE,
	RTL_RTDE_TYPE_VECTOR3D,
	RTL_RTDE_TYPE_VECTOR6D,
	RTL_RTDE_TYPE_VECTOR6INT32,
	RTL_RTDE_TYPE_VECTOR6UINT32,
	RTL_RTDE_TYPE_NOT_FOUND, /* pseudo: the name is unknown to the controller */
	RTL_RTDE_TYPE_IN_USE,	 /* pseudo: the input is owned by another client */
	RTL_RTDE_TYPE_COUNT,
};

#define RTL_RTDE_TYPE_LAST_VALUE RTL_RTDE_TYPE_VECTOR6UINT32
/* Longest type name ("VECTOR6UINT32"). */
#define RTL_RTDE_TYPE_NAME_MAX 13
/* Largest value (VECTOR6D). */
#define RTL_RTDE_VALUE_MAX_SIZE 48

/*
 * Host form of one value. Each member has exactly the wire size of its
 * type, so the bytes of a member are what rtl_rtde_load_value() writes.
 */
union rtl_rtde_value {
	bool b;		   /* BOOL */
	uint8_t u8;	   /* UINT8 */
	uint32_t u32;	   /* UINT32 */
	uint64_t u64;	   /* UINT64 */
	int32_t i32;	   /* INT32 */
	double d;	   /* DOUBLE */
	double v3d[3];	   /* VECTOR3D */
	double v6d[6];	   /* VECTOR6D */
	int32_t v6i32[6];  /* VECTOR6INT32 */
	uint32_t v6u32[6]; /* VECTOR6UINT32 */
};

RTL_STATIC_ASSERT(sizeof(bool) == 1, "BOOL values are stored as one-byte bool");
RTL_STATIC_ASSERT(sizeof(double) == 8, "DOUBLE values are IEEE-754 binary64");

/* ---- big-endian load/store (any alignment) --------------------------- */

/* Read a big-endian value at @p. Returns the uint16 at @p, in host order.
 * RT-safe. */
RTL_INLINE uint16_t rtl_rtde_load_u16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}

/* Returns the big-endian uint32 at @p, in host order. RT-safe. */
RTL_INLINE uint32_t rtl_rtde_load_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Returns the big-endian uint64 at @p, in host order. RT-safe. */
RTL_INLINE uint64_t rtl_rtde_load_u64(const uint8_t *p)
{
	return (uint64_t)rtl_rtde_load_u32(p) << 32 | rtl_rtde_load_u32(p + 4);
}

/* Returns the big-endian two's complement int32 at @p. RT-safe. */
RTL_INLINE int32_t rtl_rtde_load_i32(const uint8_t *p)
{
	uint32_t u = rtl_rtde_load_u32(p);
	int32_t i;

	/* Two's complement by copy: no implementation-defined conversion. */
	memcpy(&i, &u, sizeof(i));
	return i;
}

/* Returns the big-endian IEEE-754 double at @p. RT-safe. */
RTL_INLINE double rtl_rtde_load_f64(const uint8_t *p)
{
	uint64_t u = rtl_rtde_load_u64(p);
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Write @v big-endian at @p. RT-safe. */
RTL_INLINE void rtl_rtde_store_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

RTL_INLINE void rtl_rtde_store_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

RTL_INLINE void rtl_rtde_store_u64(uint8_t *p, uint64_t v)
{
	rtl_rtde_store_u32(p, (uint32_t)(v >> 32));
	rtl_rtde_store_u32(p + 4, (uint32_t)v);
}

RTL_INLINE void rtl_rtde_store_i32(uint8_t *p, int32_t v)
{
	uint32_t u;

	memcpy(&u, &v, sizeof(u));
	rtl_rtde_store_u32(p, u);
}

RTL_INLINE void rtl_rtde_store_f64(uint8_t *p, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	rtl_rtde_store_u64(p, u);
}

/* ---- value types ----------------------------------------------------- */

/* Returns true for the ten value types, false for pseudo-types and
 * out-of-range values. RT-safe. */
RTL_INLINE bool rtl_rtde_type_is_value(enum rtl_rtde_type t)
{
	return (unsigned)t <= (unsigned)RTL_RTDE_TYPE_LAST_VALUE;
}

/* Returns the wire (and host) size in bytes of a value of type @t; 0 for
 * pseudo-types and out-of-range values. RT-safe. */
RTL_INLINE size_t rtl_rtde_type_size(enum rtl_rtde_type t)
{
	switch (t) {
	case RTL_RTDE_TYPE_BOOL:
	case RTL_RTDE_TYPE_UINT8:
		return 1;
	case RTL_RTDE_TYPE_UINT32:
	case RTL_RTDE_TYPE_INT32:
		return 4;
	case RTL_RTDE_TYPE_UINT64:
	case RTL_RTDE_TYPE_DOUBLE:
		return 8;
	case RTL_RTDE_TYPE_VECTOR3D:
	case RTL_RTDE_TYPE_VECTOR6INT32:
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		return 24;
	case RTL_RTDE_TYPE_VECTOR6D:
		return 48;
	default:
		return 0;
	}
}

/* Returns the number of scalar elements of type @t (1, 3 or 6); 0 for
 * pseudo-types and out-of-range values. RT-safe. */
RTL_INLINE unsigned rtl_rtde_type_elems(enum rtl_rtde_type t)
{
	switch (t) {
	case RTL_RTDE_TYPE_VECTOR3D:
		return 3;
	case RTL_RTDE_TYPE_VECTOR6D:
	case RTL_RTDE_TYPE_VECTOR6INT32:
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		return 6;
	default:
		return rtl_rtde_type_is_value(t) ? 1 : 0;
	}
}

/*
 * Returns the exact wire name of @t ("BOOL" ... "VECTOR6UINT32", "NOT_FOUND",
 * "IN_USE"), or NULL when @t is out of range. RT-safe.
 */
RTL_API const char *rtl_rtde_type_name(enum rtl_rtde_type t);

/*
 * The type whose wire name is exactly the @len bytes at @name (case
 * sensitive, no NUL needed). Pseudo-types are recognised: "NOT_FOUND" gives
 * RTL_RTDE_TYPE_NOT_FOUND and "IN_USE" RTL_RTDE_TYPE_IN_USE.
 *
 * Returns the type (>= 0), or
 *   -EPROTO  not a name this codec knows (including "STRING" and "").
 *   -EINVAL  @name is NULL and @len > 0.
 * RT-safe.
 */
RTL_API int rtl_rtde_type_from_name(const char *name, size_t len);

/*
 * Wire to host and host to wire are the same byte permutation: a big-endian
 * load of the source bytes, stored in host order, reverses each element on
 * a little-endian host and copies it on a big-endian one, whichever side
 * is the wire. So one body serves rtl_rtde_load_value() and
 * rtl_rtde_store_value(). RT-safe.
 */
RTL_INLINE void rtl_rtde__convert_value(unsigned char *d, const unsigned char *s,
					enum rtl_rtde_type t)
{
	unsigned n = rtl_rtde_type_elems(t);

	switch (t) {
	case RTL_RTDE_TYPE_BOOL:
		d[0] = s[0] != 0;
		break;
	case RTL_RTDE_TYPE_UINT8:
		d[0] = s[0];
		break;
	case RTL_RTDE_TYPE_UINT32:
	case RTL_RTDE_TYPE_INT32:
	case RTL_RTDE_TYPE_VECTOR6INT32:
	case RTL_RTDE_TYPE_VECTOR6UINT32:
		for (unsigned i = 0; i < n; i++) {
			uint32_t v = rtl_rtde_load_u32(s + 4 * i);

			memcpy(d + 4 * i, &v, 4);
		}
		break;
	case RTL_RTDE_TYPE_UINT64:
	case RTL_RTDE_TYPE_DOUBLE:
	case RTL_RTDE_TYPE_VECTOR3D:
	case RTL_RTDE_TYPE_VECTOR6D:
		/* A double's bytes are swapped like a uint64_t's: IEEE-754
		 * hosts store both with the same byte order. */
		for (unsigned i = 0; i < n; i++) {
			uint64_t v = rtl_rtde_load_u64(s + 8 * i);

			memcpy(d + 8 * i, &v, 8);
		}
		break;
	default:
		break;
	}
}

/*
 * Decode one value of type @t from the wire bytes at @src into its host
 * form at @dst (rtl_rtde_type_size(t) bytes, any alignment; e.g. a member
 * of union rtl_rtde_value or of a user struct). BOOL is normalised to 0/1.
 * Does nothing for a pseudo-type. RT-safe.
 */
RTL_INLINE void rtl_rtde_load_value(void *dst, const uint8_t *src, enum rtl_rtde_type t)
{
	rtl_rtde__convert_value((unsigned char *)dst, src, t);
}

/*
 * Encode one value of type @t from its host form at @src into wire bytes at
 * @dst (rtl_rtde_type_size(t) bytes). A BOOL is written as 1 when its byte
 * is non-zero. Does nothing for a pseudo-type. RT-safe.
 */
RTL_INLINE void rtl_rtde_store_value(uint8_t *dst, const void *src, enum rtl_rtde_type t)
{
	rtl_rtde__convert_value(dst, (const unsigned char *)src, t);
}

/* ---- comma-separated lists (names in requests, types in replies) ----- */

struct rtl_rtde_list {
	const char *p;
	const char *end;
	bool done;
};

/* Start iterating the @len bytes at @s. RT-safe. */
RTL_INLINE void rtl_rtde_list_init(struct rtl_rtde_list *it, const char *s, size_t len)
{
	it->p = s;
	/* NULL + 0 is undefined: an empty list may come as NULL. */
	it->end = len ? s + len : s;
	it->done = len == 0;
}

/*
 * Next item of the list: sets *@item and *@len (possibly 0 for an empty
 * item such as the middle of "a,,b") and returns true, or returns false at
 * the end. An empty list has no items, and one trailing comma ends the list
 * without an empty item ("a,b," is a, b: clients such as ur_rtde send it).
 * RT-safe.
 */
RTL_API bool rtl_rtde_list_next(struct rtl_rtde_list *it, const char **item, size_t *len);

/*
 * Parse a setup reply's type list (@len bytes at @list, e.g.
 * "DOUBLE,NOT_FOUND,VECTOR6D") into @types (room for @max entries).
 * NOT_FOUND and IN_USE are stored as their pseudo-types, not errors: the
 * caller decides what a rejected field means. On failure, *@bad (if not
 * NULL) is the index of the offending item.
 *
 * Returns the number of types (0 for an empty list), or
 *   -EPROTO   an item is not a type name this codec knows.
 *   -EBADMSG  an item is empty ("A,,B", ",A").
 *   -ENOSPC   more than @max items.
 *   -EINVAL   @list is NULL with @len > 0, or @types is NULL with @max > 0.
 * RT-safe.
 */
RTL_API int rtl_rtde_parse_types(enum rtl_rtde_type *types, size_t max, size_t *bad,
				 const char *list, size_t len);

/*
 * Write the @n type names of @types as a comma-separated list (no trailing
 * comma, no NUL) into @buf of capacity @cap, as a controller's setup reply
 * carries them. Pseudo-types are allowed.
 *
 * Returns the number of bytes written, or
 *   -ENOSPC   @cap is too small.
 *   -EINVAL   a type is out of range, or a pointer is NULL where needed.
 * RT-safe.
 */
RTL_API int rtl_rtde_format_types(char *buf, size_t cap, const enum rtl_rtde_type *types, size_t n);

/* ---- data payloads ---------------------------------------------------- */

/*
 * Layout of a recipe of @n fields of @types: if @offsets is not NULL, store
 * the byte offset of each field within the fields part of a data package
 * (after the recipe id). Offsets are what rtl_rtde_load_value() needs to
 * pick one field out of a package.
 *
 * Returns the total size of the fields in bytes, or
 *   -EPROTO    a type is not a value type (pseudo-type or out of range).
 *   -EMSGSIZE  the fields would not fit one package with a recipe id.
 *   -EINVAL    @types is NULL with @n > 0.
 * RT-safe.
 */
RTL_API int rtl_rtde_layout(uint32_t *offsets, const enum rtl_rtde_type *types, size_t n);

/*
 * Decode the fields part of a data package (@len bytes at @fields, e.g.
 * struct rtl_rtde_data.fields) of a recipe of @n @types into @out[0..n).
 *
 * Returns 0, or
 *   -EBADMSG  @len is not the recipe's size (nothing is written then).
 *   -EPROTO   a type is not a value type.
 *   -EINVAL   a pointer is NULL where needed.
 * RT-safe.
 */
RTL_API int rtl_rtde_unpack(union rtl_rtde_value *out, const uint8_t *fields, size_t len,
			    const enum rtl_rtde_type *types, size_t n);

/*
 * As rtl_rtde_unpack(), but field i goes, in its host form, to
 * @dst + @host_offsets[i] (e.g. offsetof() members of a user struct; any
 * alignment). With @host_offsets NULL the fields are stored back to back,
 * at their wire offsets: the result is the payload in host byte order.
 * Same return codes. RT-safe.
 */
RTL_API int rtl_rtde_unpack_to(void *dst, const uint8_t *fields, size_t len,
			       const enum rtl_rtde_type *types, size_t n,
			       const uint32_t *host_offsets);

/*
 * As rtl_rtde_unpack(), with every scalar element converted to double, in
 * order (a VECTOR6D gives 6 doubles, a BOOL 0.0 or 1.0), into @out of room
 * for @max doubles. UINT64 values above 2^53 lose precision. For
 * recorders and plots, not for control.
 *
 * Returns the number of doubles written, or -EBADMSG, -EPROTO, -EINVAL as
 * rtl_rtde_unpack(), or -ENOSPC if the elements do not fit @max.
 * RT-safe.
 */
RTL_API int rtl_rtde_unpack_doubles(double *out, size_t max, const uint8_t *fields, size_t len,
				    const enum rtl_rtde_type *types, size_t n);

/*
 * Encode @n values @in of @types as the fields part of a data package into
 * @fields of capacity @cap (pass it to rtl_rtde_encode_data(), or encode in
 * place at the offset rtl_rtde_data_fields_offset() gives).
 *
 * Returns the number of bytes written, or
 *   -ENOSPC  @cap is smaller than the recipe's size (nothing is written).
 *   -EPROTO  a type is not a value type.
 *   -EINVAL  a pointer is NULL where needed.
 * RT-safe.
 */
RTL_API int rtl_rtde_pack(uint8_t *fields, size_t cap, const enum rtl_rtde_type *types, size_t n,
			  const union rtl_rtde_value *in);

/*
 * As rtl_rtde_pack(), reading field i in host form from
 * @src + @host_offsets[i] (back to back when @host_offsets is NULL).
 * Same return codes. RT-safe.
 */
RTL_API int rtl_rtde_pack_from(uint8_t *fields, size_t cap, const enum rtl_rtde_type *types,
			       size_t n, const uint32_t *host_offsets, const void *src);

/* ---- packages ----------------------------------------------------------- */

/* Payload of the GET_URCONTROL_VERSION reply. */
struct rtl_rtde_controller_version {
	uint32_t major; /* 3 = CB3, 5 = e-Series, 10 = PolyScope X */
	uint32_t minor;
	uint32_t bugfix;
	uint32_t build;
};

/*
 * TEXT_MESSAGE. Strings point into the package and are not NUL-terminated.
 * In the v1 controller-to-client layout there is no source (decoders set
 * source_len 0; encoders do not send it).
 */
struct rtl_rtde_text {
	uint8_t level; /* enum rtl_rtde_level */
	const char *message;
	size_t message_len;
	const char *source;
	size_t source_len;
};

/* SETUP_OUTPUTS / SETUP_INPUTS request. */
struct rtl_rtde_setup_request {
	double frequency;  /* SETUP_OUTPUTS in v2 only; 0 otherwise */
	const char *names; /* comma-separated variable names, as sent */
	size_t names_len;
};

/*
 * SETUP_OUTPUTS / SETUP_INPUTS reply. has_recipe_id is false only for a v1
 * SETUP_OUTPUTS reply, which carries no id (validity then shows only in the
 * types: any NOT_FOUND). Otherwise recipe_id 0 means the recipe was
 * refused. Parse @types with rtl_rtde_parse_types().
 */
struct rtl_rtde_setup_reply {
	bool has_recipe_id;
	uint8_t recipe_id;
	const char *types;
	size_t types_len;
};

/*
 * DATA_PACKAGE. has_recipe_id is false only for a v1 package from the
 * controller. @fields points into the package; decode with
 * rtl_rtde_unpack*() and the recipe's types.
 */
struct rtl_rtde_data {
	bool has_recipe_id;
	uint8_t recipe_id;
	const uint8_t *fields;
	size_t fields_len;
};

/* Any package, as rtl_rtde_decode() returns it and rtl_rtde_encode()
 * takes it. Which member is valid follows from @type and @dir. */
struct rtl_rtde_msg {
	enum rtl_rtde_pkg type;
	enum rtl_rtde_dir dir;
	union {
		uint16_t protocol_version;		    /* 'V' from client */
		bool accepted;				    /* 'V' 'S' 'P' from controller */
		struct rtl_rtde_controller_version version; /* 'v' from controller */
		struct rtl_rtde_text text;		    /* 'M' */
		struct rtl_rtde_setup_request setup;	    /* 'O' 'I' from client */
		struct rtl_rtde_setup_reply setup_reply;    /* 'O' 'I' from controller */
		struct rtl_rtde_data data;		    /* 'U' */
	} u;
	/* 'v' 'S' 'P' from client carry nothing. */
};

/*
 * Common to every decoder below: @buf holds exactly one package of @len
 * bytes (NULL is accepted when @len is 0); results point into @buf. Unless
 * a prototype says otherwise, a decoder returns 0, or
 *   -EMSGSIZE  @len < 3, or the header's size is not @len.
 *   -EPROTO    the package type is not the one the decoder handles.
 *   -EBADMSG   the payload does not have the layout of that package.
 *   -EINVAL    @buf is NULL with @len > 0, an output pointer is NULL, or
 *              @proto is not 1 or 2.
 * On failure the output struct is left unspecified.
 *
 * Common to every encoder: writes one package into @buf of capacity @cap and
 * returns its size in bytes, or
 *   -ENOSPC    the package does not fit @cap (nothing useful is written).
 *   -EMSGSIZE  the package would exceed 65535 bytes, or a text or source
 *              exceeds 255 bytes where a length byte carries it.
 *   -EINVAL    @buf is NULL, a required pointer is NULL (a string pointer
 *              may be NULL when its length is 0), or @proto is not 1 or 2.
 * All are RT-safe and reentrant.
 */

/*
 * The type byte of the package in @buf after checking its framing, so that
 * a caller can dispatch. Returns the type (0..255, possibly one this codec
 * does not know), or -EMSGSIZE / -EINVAL as the decoders.
 */
RTL_API int rtl_rtde_package_type(const uint8_t *buf, size_t len);

/* Returns the protocol name of package type @type ("REQUEST_PROTOCOL_VERSION",
 * "DATA_PACKAGE", ...), or NULL for a type this codec does not know. */
RTL_API const char *rtl_rtde_pkg_name(int type);

/* REQUEST_PROTOCOL_VERSION request ('V', client): the version asked for.
 * The encoder returns the package size (5), the decoder 0, or a code of the
 * lists above (the decoder's -EBADMSG: a payload other than 2 bytes). */
RTL_API int rtl_rtde_encode_protocol_version_request(uint8_t *buf, size_t cap, uint16_t version);
RTL_API int rtl_rtde_decode_protocol_version_request(uint16_t *version, const uint8_t *buf,
						     size_t len);

/* GET_URCONTROL_VERSION request ('v', client): no payload. The encoder
 * returns the package size (3), the decoder 0, or a code of the lists above
 * (the decoder's -EBADMSG: a payload that is not empty). */
RTL_API int rtl_rtde_encode_urcontrol_version_request(uint8_t *buf, size_t cap);
RTL_API int rtl_rtde_decode_urcontrol_version_request(const uint8_t *buf, size_t len);

/* GET_URCONTROL_VERSION reply ('v', controller): four uint32. The encoder
 * returns the package size (19), the decoder 0, or a code of the lists
 * above (the decoder's -EBADMSG: a payload other than 16 bytes). */
RTL_API int rtl_rtde_encode_urcontrol_version_reply(uint8_t *buf, size_t cap,
						    const struct rtl_rtde_controller_version *v);
RTL_API int rtl_rtde_decode_urcontrol_version_reply(struct rtl_rtde_controller_version *v,
						    const uint8_t *buf, size_t len);

/* CONTROL_PACKAGE_START / _PAUSE requests ('S', 'P', client): no payload.
 * The encoders return the package size (3), the decoders 0, or a code of
 * the lists above (a decoder's -EBADMSG: a payload that is not empty). */
RTL_API int rtl_rtde_encode_start(uint8_t *buf, size_t cap);
RTL_API int rtl_rtde_decode_start(const uint8_t *buf, size_t len);
RTL_API int rtl_rtde_encode_pause(uint8_t *buf, size_t cap);
RTL_API int rtl_rtde_decode_pause(const uint8_t *buf, size_t len);

/*
 * The one-byte "accepted" reply ('V', 'S' or 'P', controller), for the
 * package type @type. The decoder treats any non-zero byte as accepted.
 * The encoder returns the package size (4), the decoder 0, or a code of the
 * lists above (the decoder's -EBADMSG: a payload other than 1 byte). Both
 * also return -EINVAL when @type is not 'V', 'S' or 'P'; the decoder
 * returns -EPROTO for a reply of another type than @type.
 */
RTL_API int rtl_rtde_encode_accepted_reply(uint8_t *buf, size_t cap, enum rtl_rtde_pkg type,
					   bool accepted);
RTL_API int rtl_rtde_decode_accepted_reply(bool *accepted, const uint8_t *buf, size_t len,
					   enum rtl_rtde_pkg type);

/*
 * SETUP_OUTPUTS request ('O', client): v2 sends @frequency (Hz) before the
 * names, v1 sends the names only (@frequency is ignored, and decoded as 0).
 * @names is sent as is: the codec does not police the list. The encoder
 * returns the package size, the decoder 0, or a code of the lists above
 * (the v2 decoder's -EBADMSG: a payload shorter than the frequency).
 */
RTL_API int rtl_rtde_encode_setup_outputs(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
					  double frequency, const char *names, size_t names_len);
RTL_API int rtl_rtde_decode_setup_outputs(struct rtl_rtde_setup_request *req, const uint8_t *buf,
					  size_t len, enum rtl_rtde_protocol proto);

/* SETUP_INPUTS request ('I', client): the names, in both versions. The
 * encoder returns the package size, the decoder 0, or a code of the lists
 * above (any payload is a list of names: no -EBADMSG). */
RTL_API int rtl_rtde_encode_setup_inputs(uint8_t *buf, size_t cap, const char *names,
					 size_t names_len);
RTL_API int rtl_rtde_decode_setup_inputs(struct rtl_rtde_setup_request *req, const uint8_t *buf,
					 size_t len);

/*
 * SETUP_OUTPUTS reply ('O', controller): v2 carries the recipe id before
 * the type list, v1 only the list (@recipe_id is not sent). The encoder
 * returns the package size, the decoder 0, or a code of the lists above;
 * the v2 decoder returns -EBADMSG for an empty payload.
 */
RTL_API int rtl_rtde_encode_setup_outputs_reply(uint8_t *buf, size_t cap,
						enum rtl_rtde_protocol proto, uint8_t recipe_id,
						const char *types, size_t types_len);
RTL_API int rtl_rtde_decode_setup_outputs_reply(struct rtl_rtde_setup_reply *reply,
						const uint8_t *buf, size_t len,
						enum rtl_rtde_protocol proto);

/* SETUP_INPUTS reply ('I', controller): recipe id, then the type list, in
 * both versions. The encoder returns the package size, the decoder 0, or a
 * code of the lists above; the decoder returns -EBADMSG for an empty
 * payload. */
RTL_API int rtl_rtde_encode_setup_inputs_reply(uint8_t *buf, size_t cap, uint8_t recipe_id,
					       const char *types, size_t types_len);
RTL_API int rtl_rtde_decode_setup_inputs_reply(struct rtl_rtde_setup_reply *reply,
					       const uint8_t *buf, size_t len);

/*
 * TEXT_MESSAGE ('M', both directions). Layout by (@proto, @dir):
 *   v2 either way, v1 from client: uint8 len, message, uint8 len, source,
 *                                  uint8 level;
 *   v1 from controller:            uint8 level, message = rest of payload
 *                                  (source not sent; decoded as empty).
 * The encoder returns the package size, the decoder 0, or a code of the
 * lists above; the decoder returns -EBADMSG when a length runs past the end, when bytes
 * follow the level, or when the payload is empty.
 */
RTL_API int rtl_rtde_encode_text(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
				 enum rtl_rtde_dir dir, const struct rtl_rtde_text *text);
RTL_API int rtl_rtde_decode_text(struct rtl_rtde_text *text, const uint8_t *buf, size_t len,
				 enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir);

/* What rtl_rtde_text_sanitize() ends a cut result with. */
#define RTL_RTDE_TEXT_CUT_MARK "[...]"

/*
 * Make @n bytes of controller text (a TEXT_MESSAGE's message or source, or
 * any string a peer sent) safe to print on a terminal or write into a log
 * line, into @dst of @dst_size bytes: printable ASCII (0x20 to 0x7e) is
 * kept, except the backslash, written "\\"; tab, newline and carriage
 * return become "\t", "\n" and "\r"; every other byte (escape sequences,
 * BEL, NUL, anything from 0x80 up, so UTF-8 too) becomes "\xHH". So the
 * text stays on one line, moves no cursor, rings nothing, and cannot pass
 * for a line of the program (no fake "rtde-record: ..." line). @src may
 * hold NUL bytes; NULL counts as empty. The result is always
 * NUL-terminated (for @dst_size > 0) and never splits an escape; when it
 * does not fit, it ends with RTL_RTDE_TEXT_CUT_MARK. Four bytes per input
 * byte plus one always suffice.
 * Returns the length of the result (without the NUL), 0 when @dst is NULL
 * or @dst_size is 0. RT-safe: no allocation, no stdio.
 */
RTL_API size_t rtl_rtde_text_sanitize(char *dst, size_t dst_size, const char *src, size_t n);

/*
 * Offset of the fields within a DATA_PACKAGE: 3 (header only) for a v1
 * package from the controller, else 4 (header and recipe id). Returns
 * -EINVAL for a bad @proto. RT-safe.
 */
RTL_API int rtl_rtde_data_fields_offset(enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir);

/*
 * DATA_PACKAGE ('U'). The recipe id byte is written and expected except in
 * v1 from the controller (@recipe_id then not sent, has_recipe_id false).
 * The encoder copies the @fields_len bytes at @fields after the header with
 * memmove, so @fields may already sit in @buf at
 * rtl_rtde_data_fields_offset() (encode in place: no copy is made then).
 * The encoder returns the package size, the decoder 0, or a code of the
 * lists above; the decoder returns -EBADMSG when the recipe id is missing; it does not
 * check the fields against a recipe (rtl_rtde_unpack() does).
 */
RTL_API int rtl_rtde_encode_data(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
				 enum rtl_rtde_dir dir, uint8_t recipe_id, const uint8_t *fields,
				 size_t fields_len);
RTL_API int rtl_rtde_decode_data(struct rtl_rtde_data *data, const uint8_t *buf, size_t len,
				 enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir);

/*
 * Decode any package sent by @dir under @proto: dispatches on the type byte
 * to the decoder above that fits ('V' from the client is a request, from
 * the controller an accepted reply, and so on) and fills @msg. Returns 0, or
 * the decoder's error; -EPROTO for a type this codec does not know.
 */
RTL_API int rtl_rtde_decode(struct rtl_rtde_msg *msg, const uint8_t *buf, size_t len,
			    enum rtl_rtde_protocol proto, enum rtl_rtde_dir dir);

/*
 * Encode @msg (type, direction and the matching member) under @proto with
 * the encoder above that fits. Returns the package size or the encoder's
 * error; -EINVAL for an unknown type or direction.
 */
RTL_API int rtl_rtde_encode(uint8_t *buf, size_t cap, enum rtl_rtde_protocol proto,
			    const struct rtl_rtde_msg *msg);

/* ---- incremental framer ------------------------------------------------ */

/*
 * Cuts a byte stream, fed in any slicing, into whole packages.
 *
 * Usage: rtl_rtde_framer_create() once per connection owner (set-up time),
 * rtl_rtde_framer_feed() the bytes of one read, then call
 * rtl_rtde_framer_next() until it returns 0 (all fed bytes consumed; a
 * partial package is kept inside) or an error. A package that lies whole in
 * the fed bytes is returned in place (no copy); one that straddles feeds is
 * assembled in the framer's own storage (allocated, and touched, by
 * create). Either pointer stays valid until the next call of feed, next or
 * reset on this framer (and, for in-place packages, while the fed bytes
 * do).
 *
 * A declared size below 3 or above the configured maximum means the stream
 * is not RTDE or has lost sync: the framer records where (stream offset of
 * the package's first byte, counted from create or reset) and what, and
 * refuses all input until rtl_rtde_framer_reset(). Nothing after the bad
 * header is ever returned as a package.
 *
 * The framer is opaque: only create and destroy allocate or free; every
 * other function below is RT-safe.
 */
struct rtl_rtde_framer;

struct rtl_rtde_framer_error {
	/* err.code: -EMSGSIZE; err.msg e.g. "RTDE framer: package at stream
	 * offset 1234 declares size 2 (minimum 3); the stream is not RTDE or
	 * is out of sync: reconnect" */
	struct rtl_error err;
	uint64_t offset; /* stream offset of the offending package's first byte */
	uint32_t value;	 /* the size its header declares */
	uint32_t limit;	 /* the bound it breaks: 3, or the configured maximum */
};

/*
 * Allocate a framer that accepts packages of up to @max_size bytes, with
 * @max_size bytes of assembly storage in the same block, and store it in
 * *@out. Use RTL_RTDE_MAX_PACKAGE_SIZE to accept every package the protocol
 * allows. The storage is written once here, so that its pages are present
 * before the receive path first assembles a package.
 *
 * Returns 0, or
 *   -EINVAL  @out is NULL, or @max_size is outside
 *            [3, RTL_RTDE_MAX_PACKAGE_SIZE].
 *   -ENOMEM  out of memory.
 * On failure *@out (when @out is not NULL) is NULL and @err (may be NULL)
 * says why. Not RT-safe (allocates); call it at set-up time.
 */
RTL_API int rtl_rtde_framer_create(struct rtl_rtde_framer **out, size_t max_size,
				   struct rtl_error *err);

/*
 * Free @f and its storage; packages it returned from that storage are gone
 * with it. NULL is accepted. Not RT-safe.
 */
RTL_API void rtl_rtde_framer_destroy(struct rtl_rtde_framer *f);

/*
 * Forget buffered bytes, pending input and any error; the stream offset
 * restarts at 0 (for a new connection). RT-safe.
 */
RTL_API void rtl_rtde_framer_reset(struct rtl_rtde_framer *f);

/*
 * Hand @len bytes at @data to the framer (not copied: they must stay valid
 * until rtl_rtde_framer_next() has returned 0). @len 0 is a no-op.
 *
 * Returns 0, or
 *   -EBUSY     bytes of the previous feed are not consumed yet.
 *   -EMSGSIZE  the framer has failed (see rtl_rtde_framer_last_error()).
 *   -EINVAL    @f is NULL, or @data is NULL with @len > 0.
 * RT-safe.
 */
RTL_API int rtl_rtde_framer_feed(struct rtl_rtde_framer *f, const void *data, size_t len);

/*
 * Next whole package: sets *@pkg and *@len (>= 3, equal to its header's
 * size) and returns 1; returns 0 when the fed bytes are used up. Returns
 *   -EMSGSIZE  a header declares a size below 3 or above the maximum, now
 *              or earlier (details in rtl_rtde_framer_last_error()).
 *   -EINVAL    a pointer is NULL.
 * RT-safe.
 */
RTL_API int rtl_rtde_framer_next(struct rtl_rtde_framer *f, const uint8_t **pkg, size_t *len);

/* Returns the recorded error, or NULL while the framer is healthy. RT-safe. */
RTL_API const struct rtl_rtde_framer_error *
rtl_rtde_framer_last_error(const struct rtl_rtde_framer *f);

/* Returns the number of bytes of a partial package held (non-zero at EOF:
 * a truncated stream). RT-safe. */
RTL_API size_t rtl_rtde_framer_pending(const struct rtl_rtde_framer *f);

/*
 * The bytes of the partial package held, header first (so, once 3 are in,
 * its declared size and type can be read to describe a truncated stream):
 * returns them and sets *@len (may be NULL) to rtl_rtde_framer_pending().
 * Returns NULL, *@len 0, when nothing is held or @f is NULL. Valid until
 * the next feed, next, reset or destroy on @f. RT-safe.
 */
RTL_API const uint8_t *rtl_rtde_framer_partial(const struct rtl_rtde_framer *f, size_t *len);

/* Returns the number of stream bytes consumed since create or reset
 * (pending ones included). RT-safe. */
RTL_API uint64_t rtl_rtde_framer_offset(const struct rtl_rtde_framer *f);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_H */
