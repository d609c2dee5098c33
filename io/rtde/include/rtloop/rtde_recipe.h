/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_recipe: RTDE recipes, checked before anything is sent, and the
 * offset tables that decode and encode data packages without allocation.
 *
 * Design
 * ------
 * A recipe is the ordered list of fields of one SETUP_OUTPUTS or
 * SETUP_INPUTS request. It is built once, at set-up time, from a list of
 * names, a text file (one name per line) or UR's XML format
 * (<rtde_config><recipe key=".."><field name=".." type=".."/>..), and every
 * name is checked against the field registry (rtde_fields.h) first, so the
 * mistakes users keep making are caught with a message that names the field
 * and the likely cause instead of a NOT_FOUND from the robot:
 *   unknown names (with the closest name: "did you mean 'actual_TCP_pose'?"),
 *   fields of the other direction, fields newer than the controller (fail,
 *   or drop them with a warning), duplicates, an XML type attribute that
 *   disagrees with the registry, too many fields, an empty recipe; and, as
 *   a warning, input registers in the range fieldbus adapters own.
 * All problems are collected (not only the first) into a struct
 * rtl_rtde_report; warnings also go to rtl_log() at warning level. When a
 * controller still rejects fields, rtl_rtde_recipe_check_reply() turns the
 * NOT_FOUND / IN_USE answer into the same kind of text.
 *
 * A built recipe is a fixed-size struct holding, per field, the byte offset
 * in the data package (after the recipe id) and the offset in a decoded
 * frame, where each value sits in host byte order at its natural alignment,
 * in exactly the host form of union rtl_rtde_value. Fields are reached
 * through handles looked up by name at set-up time: a handle holds the
 * frame offset and the type, so an accessor is one type check, one bounds
 * check and one copy.
 *
 * Decoding does not walk the fields: the cost of a per-field type dispatch
 * is what made a 406-field package 4-7x slower than copying and swapping
 * its bytes (docs/rtde-codec-bench.md). Instead the builder merges the
 * fields' elements into runs: elements of one kind (8-byte swap, 4-byte
 * swap, byte copy, BOOL) that follow each other both on the wire and in the
 * frame. Padding in the frame only appears where the element size grows, so
 * runs break only where the kind changes (4 runs for a typical 20-field
 * recipe, 30 for every output field). Decode is then one switch per run and
 * constant-stride loops of load, byte swap, store; encode is the reverse.
 *
 * Memory: a recipe is plain data (no pointers but into the constant field
 * registry): it may be copied, and frames are caller storage described by
 * struct rtl_rtde_frame. Nothing allocates, except expat while parsing XML.
 *
 * Thread and RT safety: builders and the report functions are set-up time
 * code (stdio for files, expat for XML, rtl_log for warnings); they are
 * reentrant. Decode, encode, handle lookup by index and the accessors are
 * RT-safe (no allocation, no locks, no system calls). A recipe is read-only
 * once built and may be shared between threads.
 */
#ifndef RTLOOP_RTDE_RECIPE_H
#define RTLOOP_RTDE_RECIPE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rtloop/compiler.h>
#include <rtloop/rtde.h>
#include <rtloop/rtde_fields.h>

RTL_BEGIN_DECLS

/* Most fields in one recipe: room for every field of the registry in one
 * direction (406 outputs, as UR's exhaustive test recipe, and 175
 * inputs). A recipe is then about 16 KiB: keep it off small stacks. */
#define RTL_RTDE_RECIPE_MAX_FIELDS 512
/* Bytes of the report's message text, NUL included. */
#define RTL_RTDE_REPORT_TEXT_MAX 4096
/* Bytes of the report's field name, NUL included (longer names truncate). */
#define RTL_RTDE_REPORT_FIELD_MAX 64
/* Longest line of a text recipe file, in bytes. */
#define RTL_RTDE_RECIPE_LINE_MAX 256

/* Who sends the recipe's data packages. */
enum rtl_rtde_recipe_dir {
	RTL_RTDE_RECIPE_OUTPUT = 0, /* controller to client: SETUP_OUTPUTS */
	RTL_RTDE_RECIPE_INPUT = 1,  /* client to controller: SETUP_INPUTS */
};

enum rtl_rtde_recipe_flag {
	/* Fields newer than the controller are dropped from the recipe with a
	 * warning (and counted in the report), instead of failing with
	 * -EPROTO. */
	RTL_RTDE_RECIPE_DROP_UNAVAILABLE = 1u << 0,
	/* No warning for input registers in the fieldbus range (for set-ups
	 * known to have no fieldbus adapter, as ur_rtde assumes by default). */
	RTL_RTDE_RECIPE_NO_FIELDBUS_WARNING = 1u << 1,
};

struct rtl_rtde_recipe_opts {
	size_t size; /* sizeof(struct rtl_rtde_recipe_opts) */
	enum rtl_rtde_recipe_dir dir;
	/* Packed controller version (rtl_rtde_version_pack() of the
	 * GET_URCONTROL_VERSION reply); 0 = not known: no version check. */
	uint64_t controller_version;
	unsigned flags; /* enum rtl_rtde_recipe_flag */
};

/*
 * What a builder or a reply check found. Every function taking one resets
 * it first; passing NULL is allowed (nothing is reported then, warnings
 * still go to rtl_log()).
 */
struct rtl_rtde_report {
	int error;	   /* first error as -errno, 0 when none */
	unsigned errors;   /* errors found (all are listed in @text) */
	unsigned warnings; /* warnings found */
	unsigned dropped;  /* fields dropped as too new for the controller */
	unsigned line;	   /* source line of the first error; 0 if none or no source */
	char field[RTL_RTDE_REPORT_FIELD_MAX]; /* name the first error is about, or "" */
	bool truncated;			       /* @text ran out of room; counts are still exact */
	size_t len;			       /* strlen(@text) */
	/* One message per line, each "error: ..." or "warning: ...", e.g.
	 * "error: line 3: unknown field 'actual_tcp_pose'; did you mean
	 * 'actual_TCP_pose'?". NUL-terminated. */
	char text[RTL_RTDE_REPORT_TEXT_MAX];
};

/* One field of a built recipe: where it is on the wire and in a frame. */
struct rtl_rtde_slot {
	uint32_t wire_offset; /* in the data package, after the recipe id */
	uint32_t host_offset; /* in a decoded frame's values */
	uint8_t type;	      /* enum rtl_rtde_type (a value type) */
	uint8_t size;	      /* rtl_rtde_type_size(type) */
};

/* What decode and encode do with each element of a run. */
enum rtl_rtde_run_kind {
	RTL_RTDE_RUN_SWAP64 = 0, /* 8 bytes swapped: UINT64, DOUBLE, VECTOR3D, VECTOR6D */
	RTL_RTDE_RUN_SWAP32 = 1, /* 4 bytes swapped: UINT32, INT32, VECTOR6(U)INT32 */
	RTL_RTDE_RUN_COPY8 = 2,	 /* 1 byte copied: UINT8 */
	RTL_RTDE_RUN_BOOL = 3,	 /* 1 byte, stored as 0 or 1: BOOL */
};

/* @count elements of one kind, contiguous both in the data package and in
 * the frame (one field or several neighbours). */
struct rtl_rtde_run {
	uint32_t wire_offset; /* of the first element, in the data package */
	uint32_t host_offset; /* of the first element, in a decoded frame */
	uint16_t count;	      /* elements (not bytes) */
	uint8_t kind;	      /* enum rtl_rtde_run_kind */
	uint8_t pad;
};

struct rtl_rtde_recipe {
	enum rtl_rtde_recipe_dir dir;
	uint32_t n;		     /* number of fields */
	uint32_t wire_size;	     /* bytes of the fields in a data package */
	uint32_t host_size;	     /* bytes of a decoded frame's values */
	uint64_t controller_version; /* as given in the options */
	uint32_t n_runs;	     /* runs in use (at most n: a field starts at most one) */
	struct rtl_rtde_slot slots[RTL_RTDE_RECIPE_MAX_FIELDS];
	const struct rtl_rtde_field *fields[RTL_RTDE_RECIPE_MAX_FIELDS];
	/* Built with the slots; what decode and encode walk. */
	struct rtl_rtde_run runs[RTL_RTDE_RECIPE_MAX_FIELDS];
};

/*
 * A field of a recipe, for the accessors. Obtain it at set-up time with
 * rtl_rtde_recipe_handle(); an invalid handle (type RTL_RTDE_TYPE_COUNT)
 * makes every accessor fail safely.
 */
struct rtl_rtde_handle {
	uint32_t offset; /* host offset in the frame */
	uint16_t index;	 /* position in the recipe */
	uint8_t type;	 /* enum rtl_rtde_type */
	uint8_t size;
};

/*
 * Decoded values of one data package, in caller storage (e.g. a ring slot
 * of recipe->host_size bytes). @values should be 8-byte aligned for speed;
 * accessors copy bytes, so any alignment is correct.
 */
struct rtl_rtde_frame {
	unsigned char *values;
	uint32_t size; /* bytes in use: the host_size of the recipe */
	uint32_t cap;  /* bytes of storage at @values */
};

/* ---- building ------------------------------------------------------------ */

/*
 * Common to the builders: build @r from the given names, checked against
 * the field registry under @opts, and report into @rep. On success @r is
 * ready and the function returns the number of fields (> 0). On failure
 * @r is empty (n == 0) and the function returns the first error; the
 * report lists every problem found:
 *   -ENOENT   an unknown name, or a field of the other direction (an
 *             output name in an input recipe or the reverse); for the XML
 *             builders also a @key no recipe of the file has; for the file
 *             builders also a missing file (from fopen).
 *   -EEXIST   a name appears twice.
 *   -E2BIG    @opts sets a field this library does not know (built
 *             against newer headers), or more than
 *             RTL_RTDE_RECIPE_MAX_FIELDS fields. Defensive: the
 *             registry has fewer fields of either direction (406 outputs,
 *             175 inputs), and every name past them would be a duplicate,
 *             reported as -EEXIST first.
 *   -EPROTO   a field newer than opts->controller_version (unless
 *             RTL_RTDE_RECIPE_DROP_UNAVAILABLE; with it, -EPROTO only if
 *             every field was dropped); an XML type attribute that is not
 *             the registry's type, or not a type name.
 *   -EBADMSG  malformed source: XML that is not well formed or not an
 *             rtde_config (wrong root, unexpected element, missing key or
 *             name attribute, two recipes with the selected key), a text
 *             line that is not one name, an empty item inside a list.
 *   -EINVAL   a NULL pointer, a NULL name, @opts with an unknown direction
 *             or a size member too small,
 *             an empty recipe, or (XML, @key NULL) a file of several
 *             recipes.
 *   -ENOMEM   (XML builders only) expat could not allocate its parser;
 *             nothing else in this module allocates.
 *   other     -errno of a failed open or read of the file (-EIO for a read
 *             error).
 * Warnings (no error): input registers in the fieldbus range (int/double
 * 0-23 and the packed bits 0-63: an enabled EtherNet/IP, PROFINET or MODBUS
 * adapter makes them IN_USE), dropped fields, and a names list longer than
 * the 2048 bytes UR's guide states, on a CB3 controller.
 * Not RT-safe (set-up time); reentrant.
 */

/* From @n NUL-terminated @names. Returns the number of fields, or a code
 * of the list above. */
RTL_API int rtl_rtde_recipe_from_names(struct rtl_rtde_recipe *r,
				       const struct rtl_rtde_recipe_opts *opts,
				       const char *const *names, size_t n,
				       struct rtl_rtde_report *rep);

/* From a comma-separated NUL-terminated @list ("timestamp, actual_q,");
 * blanks around names and one trailing comma are allowed. Returns the
 * number of fields, or a code of the list above. */
RTL_API int rtl_rtde_recipe_from_list(struct rtl_rtde_recipe *r,
				      const struct rtl_rtde_recipe_opts *opts, const char *list,
				      struct rtl_rtde_report *rep);

/* From the @len bytes of a text recipe at @text: one name per line, blanks
 * around it ignored, '#' starts a comment, blank lines are skipped.
 * Returns the number of fields, or a code of the list above. */
RTL_API int rtl_rtde_recipe_from_text(struct rtl_rtde_recipe *r,
				      const struct rtl_rtde_recipe_opts *opts, const char *text,
				      size_t len, struct rtl_rtde_report *rep);

/* As rtl_rtde_recipe_from_text(), reading the file at @path. Lines longer
 * than RTL_RTDE_RECIPE_LINE_MAX bytes are -EBADMSG. Returns the number of
 * fields, or a code of the list above. */
RTL_API int rtl_rtde_recipe_from_text_file(struct rtl_rtde_recipe *r,
					   const struct rtl_rtde_recipe_opts *opts,
					   const char *path, struct rtl_rtde_report *rep);

/*
 * From the recipe with key @key of the @len bytes of UR-format XML at @xml
 * (several recipes per file; only the selected one is checked). @key NULL
 * selects the only recipe of a one-recipe file. A field's type attribute is
 * optional; when present it must equal the registry's type. Returns the
 * number of fields, or a code of the list above.
 */
RTL_API int rtl_rtde_recipe_from_xml(struct rtl_rtde_recipe *r,
				     const struct rtl_rtde_recipe_opts *opts, const char *xml,
				     size_t len, const char *key, struct rtl_rtde_report *rep);

/* As rtl_rtde_recipe_from_xml(), reading the file at @path. Returns the
 * number of fields, or a code of the list above. */
RTL_API int rtl_rtde_recipe_from_xml_file(struct rtl_rtde_recipe *r,
					  const struct rtl_rtde_recipe_opts *opts, const char *path,
					  const char *key, struct rtl_rtde_report *rep);

/*
 * The recipe's names, comma-separated without blanks or trailing comma and
 * NUL-terminated, as a SETUP_OUTPUTS / SETUP_INPUTS request carries them.
 * Returns the length (without the NUL), or
 *   -ENOSPC  @cap is too small (@buf then holds "" if @cap > 0).
 *   -EINVAL  @r is NULL, or @buf is NULL with @cap > 0.
 * RT-safe.
 */
RTL_API int rtl_rtde_recipe_names(const struct rtl_rtde_recipe *r, char *buf, size_t cap);

/* ---- handles and frames ------------------------------------------------------ */

/*
 * The handle of field @name in @r. Returns 0, or
 *   -ENOENT  @name is not in the recipe (possibly dropped as too new);
 *            *@h is then the invalid handle.
 *   -EINVAL  a NULL pointer.
 * Not for the hot path (string compares); RT-safe.
 */
RTL_API int rtl_rtde_recipe_handle(const struct rtl_rtde_recipe *r, struct rtl_rtde_handle *h,
				   const char *name);

/* Returns the handle of field @i of @r, or the invalid handle when @r is
 * NULL or @i >= r->n. RT-safe. */
RTL_API struct rtl_rtde_handle rtl_rtde_recipe_handle_at(const struct rtl_rtde_recipe *r, size_t i);

/* Returns true when @h names a field, false for the invalid handle.
 * RT-safe. */
RTL_INLINE bool rtl_rtde_handle_valid(struct rtl_rtde_handle h)
{
	return rtl_rtde_type_is_value((enum rtl_rtde_type)h.type);
}

/*
 * Describe @cap bytes of caller @storage as a frame for recipe @r: size is
 * r->host_size and the values are zeroed. Returns 0, or
 *   -EINVAL  a NULL pointer, or @cap < r->host_size.
 * RT-safe.
 */
RTL_API int rtl_rtde_frame_init(struct rtl_rtde_frame *f, void *storage, size_t cap,
				const struct rtl_rtde_recipe *r);

/*
 * Decode the fields part of a data package of recipe @r (@len bytes at
 * @fields: struct rtl_rtde_data.fields) into frame @f. One pass over the
 * recipe's runs with byte swaps; BOOL values are stored as 0 or 1 whatever
 * non-zero byte the package holds. Returns 0, or
 *   -EBADMSG  @len is not r->wire_size (the frame is untouched).
 *   -EINVAL   a NULL pointer, or @f holds fewer than r->host_size bytes.
 * RT-safe.
 */
RTL_API int rtl_rtde_recipe_decode(const struct rtl_rtde_recipe *r, struct rtl_rtde_frame *f,
				   const uint8_t *fields, size_t len);

/*
 * Encode frame @f of recipe @r as the fields part of a data package into
 * @out (pass it to rtl_rtde_encode_data() with the recipe id), over the same
 * runs as decode; a BOOL byte that is not 0 is sent as 1. Returns the
 * number of bytes written (r->wire_size), or
 *   -ENOSPC  @cap < r->wire_size (nothing written).
 *   -EINVAL  a NULL pointer, or @f holds fewer than r->host_size bytes.
 * RT-safe.
 */
RTL_API int rtl_rtde_recipe_encode(const struct rtl_rtde_recipe *r, uint8_t *out, size_t cap,
				   const struct rtl_rtde_frame *f);

/* ---- accessors ---------------------------------------------------------------
 * Each checks the handle's type against the accessor and the handle's
 * extent against the frame's size. On a mismatch a getter returns 0 (NaN
 * for doubles; vector getters fill @out the same way and return false) and
 * a setter writes nothing and returns false. RT-safe.
 */

/* The handle's extent lies inside the frame's values. */
RTL_INLINE bool rtl_rtde__fits(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h)
{
	return (uint64_t)h.offset + h.size <= f->size;
}

RTL_INLINE bool rtl_rtde__ok(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
			     enum rtl_rtde_type t)
{
	return h.type == (uint8_t)t && rtl_rtde__fits(f, h);
}

/* Any value type, into the matching member of @out. Returns true, or false
 * (@out untouched) for an invalid handle or one outside the frame. */
RTL_INLINE bool rtl_rtde_frame_get(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
				   union rtl_rtde_value *out)
{
	if (!rtl_rtde_handle_valid(h) || !rtl_rtde__fits(f, h))
		return false;
	memcpy(out, f->values + h.offset, h.size);
	return true;
}

/* BOOL. Returns the value, or false on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_get_bool(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h)
{
	return rtl_rtde__ok(f, h, RTL_RTDE_TYPE_BOOL) && f->values[h.offset] != 0;
}

/* BOOL, UINT8, UINT32 or UINT64. Returns the value, zero-extended, or 0 on
 * a mismatch. */
RTL_INLINE uint64_t rtl_rtde_frame_get_uint(const struct rtl_rtde_frame *f,
					    struct rtl_rtde_handle h)
{
	uint32_t u32;
	uint64_t u64;

	if (!rtl_rtde__fits(f, h))
		return 0;
	switch (h.type) {
	case RTL_RTDE_TYPE_BOOL:
	case RTL_RTDE_TYPE_UINT8:
		return f->values[h.offset];
	case RTL_RTDE_TYPE_UINT32:
		memcpy(&u32, f->values + h.offset, 4);
		return u32;
	case RTL_RTDE_TYPE_UINT64:
		memcpy(&u64, f->values + h.offset, 8);
		return u64;
	default:
		return 0;
	}
}

/* INT32. Returns the value, or 0 on a mismatch. */
RTL_INLINE int32_t rtl_rtde_frame_get_int(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h)
{
	int32_t v = 0;

	if (rtl_rtde__ok(f, h, RTL_RTDE_TYPE_INT32))
		memcpy(&v, f->values + h.offset, 4);
	return v;
}

/* DOUBLE. Returns the value, or NaN on a mismatch. */
RTL_INLINE double rtl_rtde_frame_get_double(const struct rtl_rtde_frame *f,
					    struct rtl_rtde_handle h)
{
	double v = NAN;

	if (rtl_rtde__ok(f, h, RTL_RTDE_TYPE_DOUBLE))
		memcpy(&v, f->values + h.offset, 8);
	return v;
}

RTL_INLINE bool rtl_rtde__get_vec(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
				  enum rtl_rtde_type t, void *out, size_t n)
{
	if (!rtl_rtde__ok(f, h, t)) {
		if (t == RTL_RTDE_TYPE_VECTOR3D || t == RTL_RTDE_TYPE_VECTOR6D) {
			double *d = (double *)out;

			for (size_t i = 0; i < n / sizeof(double); i++)
				d[i] = NAN;
		} else {
			memset(out, 0, n);
		}
		return false;
	}
	memcpy(out, f->values + h.offset, n);
	return true;
}

/* VECTOR3D. Returns true, or false on a mismatch (@out then NaN). */
RTL_INLINE bool rtl_rtde_frame_get_vec3(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					double out[3])
{
	return rtl_rtde__get_vec(f, h, RTL_RTDE_TYPE_VECTOR3D, out, 3 * sizeof(double));
}

/* VECTOR6D. Returns true, or false on a mismatch (@out then NaN). */
RTL_INLINE bool rtl_rtde_frame_get_vec6(const struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					double out[6])
{
	return rtl_rtde__get_vec(f, h, RTL_RTDE_TYPE_VECTOR6D, out, 6 * sizeof(double));
}

/* VECTOR6INT32. Returns true, or false on a mismatch (@out then 0). */
RTL_INLINE bool rtl_rtde_frame_get_vec6_int(const struct rtl_rtde_frame *f,
					    struct rtl_rtde_handle h, int32_t out[6])
{
	return rtl_rtde__get_vec(f, h, RTL_RTDE_TYPE_VECTOR6INT32, out, 6 * sizeof(int32_t));
}

/* VECTOR6UINT32. Returns true, or false on a mismatch (@out then 0). */
RTL_INLINE bool rtl_rtde_frame_get_vec6_uint(const struct rtl_rtde_frame *f,
					     struct rtl_rtde_handle h, uint32_t out[6])
{
	return rtl_rtde__get_vec(f, h, RTL_RTDE_TYPE_VECTOR6UINT32, out, 6 * sizeof(uint32_t));
}

/* Any value type, from the matching member of @in (BOOL normalised).
 * Returns true, or false (nothing written) for an invalid handle or one
 * outside the frame. */
RTL_INLINE bool rtl_rtde_frame_set(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
				   const union rtl_rtde_value *in)
{
	if (!rtl_rtde_handle_valid(h) || !rtl_rtde__fits(f, h))
		return false;
	memcpy(f->values + h.offset, in, h.size);
	if (h.type == RTL_RTDE_TYPE_BOOL)
		f->values[h.offset] = f->values[h.offset] != 0;
	return true;
}

/* BOOL. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_bool(struct rtl_rtde_frame *f, struct rtl_rtde_handle h, bool v)
{
	if (!rtl_rtde__ok(f, h, RTL_RTDE_TYPE_BOOL))
		return false;
	f->values[h.offset] = v ? 1 : 0;
	return true;
}

/* BOOL, UINT8, UINT32 or UINT64. Returns true, or false (nothing written)
 * on a mismatch or when @v does not fit the field's type (e.g. 256 into a
 * UINT8 mask). */
RTL_INLINE bool rtl_rtde_frame_set_uint(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					uint64_t v)
{
	uint32_t u32 = (uint32_t)v;

	if (!rtl_rtde__fits(f, h))
		return false;
	switch (h.type) {
	case RTL_RTDE_TYPE_BOOL:
		if (v > 1)
			return false;
		f->values[h.offset] = (unsigned char)v;
		return true;
	case RTL_RTDE_TYPE_UINT8:
		if (v > UINT8_MAX)
			return false;
		f->values[h.offset] = (unsigned char)v;
		return true;
	case RTL_RTDE_TYPE_UINT32:
		if (v > UINT32_MAX)
			return false;
		memcpy(f->values + h.offset, &u32, 4);
		return true;
	case RTL_RTDE_TYPE_UINT64:
		memcpy(f->values + h.offset, &v, 8);
		return true;
	default:
		return false;
	}
}

/* INT32. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_int(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
				       int32_t v)
{
	if (!rtl_rtde__ok(f, h, RTL_RTDE_TYPE_INT32))
		return false;
	memcpy(f->values + h.offset, &v, 4);
	return true;
}

/* DOUBLE. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_double(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					  double v)
{
	if (!rtl_rtde__ok(f, h, RTL_RTDE_TYPE_DOUBLE))
		return false;
	memcpy(f->values + h.offset, &v, 8);
	return true;
}

RTL_INLINE bool rtl_rtde__set_vec(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
				  enum rtl_rtde_type t, const void *in, size_t n)
{
	if (!rtl_rtde__ok(f, h, t))
		return false;
	memcpy(f->values + h.offset, in, n);
	return true;
}

/* VECTOR3D. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_vec3(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					const double in[3])
{
	return rtl_rtde__set_vec(f, h, RTL_RTDE_TYPE_VECTOR3D, in, 3 * sizeof(double));
}

/* VECTOR6D. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_vec6(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					const double in[6])
{
	return rtl_rtde__set_vec(f, h, RTL_RTDE_TYPE_VECTOR6D, in, 6 * sizeof(double));
}

/* VECTOR6INT32. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_vec6_int(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					    const int32_t in[6])
{
	return rtl_rtde__set_vec(f, h, RTL_RTDE_TYPE_VECTOR6INT32, in, 6 * sizeof(int32_t));
}

/* VECTOR6UINT32. Returns true, or false (nothing written) on a mismatch. */
RTL_INLINE bool rtl_rtde_frame_set_vec6_uint(struct rtl_rtde_frame *f, struct rtl_rtde_handle h,
					     const uint32_t in[6])
{
	return rtl_rtde__set_vec(f, h, RTL_RTDE_TYPE_VECTOR6UINT32, in, 6 * sizeof(uint32_t));
}

/* ---- explaining the controller's answer ---------------------------------------- */

/*
 * Check the type list of the controller's setup reply (struct
 * rtl_rtde_setup_reply.types / types_len) against recipe @r, and explain
 * each rejected field in @rep:
 *   NOT_FOUND  the firmware does not have the field: the text says which
 *              version introduced it (if the registry knows) and what this
 *              controller is (r->controller_version, if known).
 *   IN_USE     another owner writes it: another RTDE client (or a stale
 *              connection of this program), a URCap, or for fieldbus-range
 *              registers and standard inputs an EtherNet/IP, PROFINET or
 *              MODBUS adapter; the text says which applies and what to use
 *              instead.
 * Returns 0 when every type matches, or the code of the first problem:
 *   -ENOENT   a field came back NOT_FOUND.
 *   -EBUSY    a field came back IN_USE.
 *   -EPROTO   a type is not the registry's type for that field.
 *   -EBADMSG  the list does not parse, or has another number of items
 *             than the recipe has fields.
 *   -EINVAL   @r is NULL, or @types is NULL with @len > 0.
 * Not RT-safe (formats text); reentrant.
 */
RTL_API int rtl_rtde_recipe_check_reply(const struct rtl_rtde_recipe *r, const char *types,
					size_t len, struct rtl_rtde_report *rep);

/*
 * As rtl_rtde_recipe_check_reply(), for a request that was not built as a
 * recipe: @names is the comma-separated list as sent (@names_len bytes),
 * @types the reply's list, @dir the request's direction and
 * @controller_version the packed version (0 if unknown). A NOT_FOUND name
 * the registry does not know is explained as a typo with the closest name;
 * one of the other direction is said to be so. A name the registry does not
 * know but the controller accepted is a warning, not an error.
 * Same return codes.
 */
RTL_API int rtl_rtde_explain_reply(enum rtl_rtde_recipe_dir dir, uint64_t controller_version,
				   const char *names, size_t names_len, const char *types,
				   size_t types_len, struct rtl_rtde_report *rep);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_RECIPE_H */
