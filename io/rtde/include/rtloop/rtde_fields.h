/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_field: the registry of every RTDE input and output field: name,
 * type, direction, meaning, and the controller versions that introduced it.
 *
 * Design
 * ------
 * One table, shared by the client (recipe checks, error texts) and the
 * simulator (which fields exist on which version profile, and their types),
 * so the two can never disagree. Its content is docs/rtde-protocol.md
 * section 5, restated exactly; a field the reference does not list is not
 * here.
 *
 * - The general-purpose register families (input/output_{bit,int,double}_
 *   register_N) are expanded into one entry per register at compile time,
 *   so iteration sees every name the controller knows and an entry pointer
 *   is stable for the life of the program. Bit registers 0-63 exist only
 *   as the packed words *_bit_registers0_to_31 and *_bit_registers32_to_63;
 *   single bits exist only for 64-127.
 * - Lookup: register names are parsed (family prefix + decimal index, no
 *   sign, no leading zero) and index their block directly; every other name
 *   is found by binary search in the alphabetically sorted head of the
 *   table. Both are exact and case-sensitive, as the controller is.
 * - Versions: each entry carries, per product line (CB3 = 3.x, e-Series =
 *   5.x, PolyScope X = 10.x), the version that introduced it as a packed
 *   number (RTL_RTDE_VERSION()), 0 when it has been there since RTDE came to
 *   that line, or RTL_RTDE_VERSION_ABSENT when the line does not have it.
 *   Where the reference records no version at all the entry says so
 *   (RTL_RTDE_FIELD_VERSION_UNKNOWN) and is assumed present everywhere: the
 *   controller's NOT_FOUND is then the only judge.
 * - Input registers (and the packed input bit words) can also be read back
 *   in an output recipe: their entries carry both direction flags.
 *
 * Thread and RT safety: the table is constant; every function is reentrant
 * and allocation-free. Lookups are RT-safe; rtl_rtde_field_suggest() is
 * not meant for the hot path (it scans the table with an edit distance).
 */
#ifndef RTLOOP_RTDE_FIELDS_H
#define RTLOOP_RTDE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/rtde.h>

RTL_BEGIN_DECLS

/*
 * A controller version packed into one ordered number: major (8 bits),
 * minor (8), bugfix (16), build (32), most significant first, so versions
 * compare with < and >. 5.23.0 is RTL_RTDE_VERSION(5, 23, 0, 0).
 */
#define RTL_RTDE_VERSION(major, minor, bugfix, build)                                         \
	(((uint64_t)(major) << 56) | ((uint64_t)(minor) << 48) | ((uint64_t)(bugfix) << 32) | \
	 (uint64_t)(build))
#define RTL_RTDE_VERSION_MAJOR(v) ((unsigned)((v) >> 56))
#define RTL_RTDE_VERSION_MINOR(v) ((unsigned)(((v) >> 48) & 0xff))
#define RTL_RTDE_VERSION_BUGFIX(v) ((unsigned)(((v) >> 32) & 0xffff))
#define RTL_RTDE_VERSION_BUILD(v) ((uint32_t)(v))
/* In a field's since[]: the line never had the field. */
#define RTL_RTDE_VERSION_ABSENT UINT64_MAX
/* Longest field name in the registry, without the NUL. */
#define RTL_RTDE_FIELD_NAME_MAX 39

/* Product lines, by the controller's major version. */
enum rtl_rtde_line {
	RTL_RTDE_LINE_CB3 = 0,	   /* PolyScope 3.x, 125 Hz */
	RTL_RTDE_LINE_E_SERIES,	   /* PolyScope 5.x, 500 Hz */
	RTL_RTDE_LINE_POLYSCOPE_X, /* PolyScope X 10.x, 500 Hz */
	RTL_RTDE_LINE_COUNT,
};

/* Flags of a field (struct rtl_rtde_field.flags). */
enum rtl_rtde_field_flag {
	/* May be written by the client in an input recipe (SETUP_INPUTS). */
	RTL_RTDE_FIELD_INPUT = 1u << 0,
	/* May be read by the client in an output recipe (SETUP_OUTPUTS). */
	RTL_RTDE_FIELD_OUTPUT = 1u << 1,
	/* A general-purpose register in the range fieldbus adapters own (bits
	 * 0-63, int and double 0-23); external clients have bits 64-127 and
	 * int/double 24-47. */
	RTL_RTDE_FIELD_FIELDBUS = 1u << 2,
	/* A standard input (speed slider, standard and configurable digital
	 * outputs, analog outputs) that an enabled EtherNet/IP (and, by
	 * report, PROFINET or MODBUS) adapter claims: it then answers IN_USE. */
	RTL_RTDE_FIELD_STANDARD_INPUT = 1u << 3,
	/* The reference records no version: assumed present on every line. */
	RTL_RTDE_FIELD_VERSION_UNKNOWN = 1u << 4,
	/* since[] is a version by which the field is known to exist; it may
	 * be older (tcp_offset). */
	RTL_RTDE_FIELD_VERSION_APPROX = 1u << 5,
	/* Not in UR's official table, but accepted by controllers and used by
	 * popular clients (tool_digital_output, tool_digital_output_mask). */
	RTL_RTDE_FIELD_UNOFFICIAL = 1u << 6,
};

/* Register family of a field (struct rtl_rtde_field.reg). */
enum rtl_rtde_reg {
	RTL_RTDE_REG_NONE = 0,
	RTL_RTDE_REG_BITS32, /* packed word of 32 bit registers from reg_index */
	RTL_RTDE_REG_BIT,    /* one bit register (64-127) */
	RTL_RTDE_REG_INT,    /* int register (0-47) */
	RTL_RTDE_REG_DOUBLE, /* double register (0-47) */
};

/* Register ranges, as the reference gives them. */
#define RTL_RTDE_REG_COUNT 48		 /* int and double registers 0..47 */
#define RTL_RTDE_REG_FIELDBUS_END 24	 /* int/double 0..23 are the fieldbus range */
#define RTL_RTDE_BIT_REG_COUNT 128	 /* bit registers 0..127 */
#define RTL_RTDE_BIT_REG_FIELDBUS_END 64 /* bits 0..63 are the fieldbus range */

struct rtl_rtde_field {
	const char *name;    /* exact, case-sensitive wire name */
	const char *meaning; /* short description with the unit */
	/* Version that introduced the field, per enum rtl_rtde_line: 0 = since
	 * RTDE came to that line, RTL_RTDE_VERSION_ABSENT = not on that line. */
	uint64_t since[RTL_RTDE_LINE_COUNT];
	enum rtl_rtde_type type;
	uint16_t flags;	   /* enum rtl_rtde_field_flag */
	uint8_t reg;	   /* enum rtl_rtde_reg */
	uint8_t reg_index; /* register number (first bit of a packed word) */
};

/*
 * Returns the field named exactly @name (NUL-terminated), or NULL (also for
 * @name NULL). RT-safe.
 */
RTL_API const struct rtl_rtde_field *rtl_rtde_field_find(const char *name);

/*
 * Returns the field named exactly by the @len bytes at @name (no NUL
 * needed, e.g. an item of a comma-separated request), or NULL (also for
 * @name NULL).
 * RT-safe.
 */
RTL_API const struct rtl_rtde_field *rtl_rtde_field_find_n(const char *name, size_t len);

/* Returns the number of entries in the registry. RT-safe. */
RTL_API size_t rtl_rtde_field_count(void);

/*
 * Returns entry @i of the registry, 0 <= @i < rtl_rtde_field_count(), or
 * NULL past the end. Iteration order is fixed: the named fields in byte order of
 * their names, then the register families. RT-safe.
 */
RTL_API const struct rtl_rtde_field *rtl_rtde_field_at(size_t i);

/* Returns the index of @f in the registry (for rtl_rtde_field_at()), or
 * -EINVAL if @f is not an entry of the registry. RT-safe. */
RTL_API int rtl_rtde_field_index(const struct rtl_rtde_field *f);

/*
 * Pack a controller version (as the GET_URCONTROL_VERSION reply gives it)
 * with RTL_RTDE_VERSION(); fields too large for their bits saturate.
 * Returns the packed version, 0 for a NULL @v. RT-safe.
 */
RTL_API uint64_t rtl_rtde_version_pack(const struct rtl_rtde_controller_version *v);

/*
 * Returns the product line of packed @version: major < 5 is CB3, 5..9
 * e-Series, 10 and later PolyScope X. RT-safe.
 */
RTL_API enum rtl_rtde_line rtl_rtde_version_line(uint64_t version);

/* Returns the name of @line: "CB3", "e-Series", "PolyScope X"; "?" out of
 * range. RT-safe. */
RTL_API const char *rtl_rtde_line_name(enum rtl_rtde_line line);

/*
 * Write @version as "major.minor.bugfix" (".build" appended when not 0)
 * into @buf of @cap bytes, NUL-terminated, truncated to fit.
 * Returns the length the full text has (as snprintf), or -EINVAL for
 * @buf NULL with @cap > 0. RT-safe (no allocation; uses snprintf).
 */
RTL_API int rtl_rtde_version_format(char *buf, size_t cap, uint64_t version);

/*
 * Returns the version of @f's introduction on the line of @version: 0
 * (since RTDE came to the line, or unknown), a packed version, or
 * RTL_RTDE_VERSION_ABSENT (also for a NULL @f).
 * RT-safe.
 */
RTL_API uint64_t rtl_rtde_field_since(const struct rtl_rtde_field *f, uint64_t version);

/*
 * Returns whether @f exists on a controller of packed @version (false for
 * a NULL @f). @version 0 means "not known" and gives true. Fields without
 * a recorded version are assumed present. RT-safe.
 */
RTL_API bool rtl_rtde_field_available(const struct rtl_rtde_field *f, uint64_t version);

/*
 * The registry entry whose name is closest to the @len bytes at @name,
 * among fields carrying any flag of @dir_mask (RTL_RTDE_FIELD_INPUT and/or
 * RTL_RTDE_FIELD_OUTPUT; 0 means any). Distance is Damerau-Levenshtein
 * (optimal string alignment) in which a change of letter case costs half an
 * edit, so "actual_tcp_pose" finds "actual_TCP_pose". Only a candidate
 * within max(2, len / 4) edits is returned; otherwise NULL. If @distance is
 * not NULL it receives the distance in half-edits. Never returns a field
 * named exactly @name. Not for the hot path (scans the table). Reentrant.
 */
RTL_API const struct rtl_rtde_field *rtl_rtde_field_suggest(unsigned *distance, const char *name,
							    size_t len, unsigned dir_mask);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_FIELDS_H */
