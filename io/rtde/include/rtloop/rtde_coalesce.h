/* SPDX-License-Identifier: MIT */
/*
 * rtl_rtde_coalesce: the input coalescer. Once per cycle it compares each
 * input recipe's values with what was last sent and encodes only the
 * recipes that changed, with the mask fields computed the way the
 * controller reads them.
 *
 * Design
 * ------
 * The controller keeps the last value of every input (docs/rtde-protocol.md
 * 6.5), so a client only needs to send what changed, and it must send whole
 * recipes (3.9). The caller writes input values at any rate into one
 * "pending" frame per recipe, with the recipe accessors
 * (rtl_rtde_frame_set_double() and friends on rtl_rtde_coalesce_frame()).
 * Once per cycle rtl_rtde_coalesce_encode() compares every pending frame
 * byte for byte with a copy of what was last sent and writes one whole
 * DATA_PACKAGE (header, recipe id, fields) for each recipe that differs.
 * Only rtl_rtde_coalesce_create() allocates: every frame lives inside the
 * coalescer, bounded by RTL_RTDE_COALESCE_MAX_BYTES per recipe, so setting
 * it up (again, after a reconnect) and using it allocate nothing.
 *
 * Masks. Digital outputs, the speed slider and the analog outputs are
 * applied by the controller only where a mask bit is set (5.1), and a mask
 * sent twice applies twice. So the coalescer owns the mask fields (what the
 * caller writes there is ignored) and finds the pairs by field name when it
 * is set up:
 *   standard_digital_output_mask     <- standard_digital_output
 *   configurable_digital_output_mask <- configurable_digital_output
 *   tool_digital_output_mask         <- tool_digital_output (bits 0-1 only)
 *   speed_slider_mask                <- speed_slider_fraction
 *   standard_analog_output_mask      <- standard_analog_output_0 (bit 0),
 *                                       standard_analog_output_1 (bit 1),
 *                                       standard_analog_output_type (bit i
 *                                       of the type goes with output i)
 * A digital mask is the bits in which the pending value differs from the
 * last sent one, which starts at 0: only outputs the caller turns on (and
 * later off) are ever touched. The doubles behind a mask (slider fraction,
 * analog outputs) start as NaN in the pending frame, meaning "not set": an
 * unset value is never applied (its mask bit stays 0 and 0.0 goes on the
 * wire in its place), and the first value the caller writes is always
 * applied, even 0.0, because the last sent value starts unknown. A mask is
 * cleared once its package is sent: the next package of the recipe carries
 * mask 0 unless the value changes again.
 *
 * Two phases, so that a send that would block loses nothing:
 * rtl_rtde_coalesce_encode() stages the values it encoded;
 * rtl_rtde_coalesce_commit(), called after the transport has sent every
 * byte, makes them the last sent values. Without a commit, the next encode
 * compares against the old values again and so re-sends the newest ones.
 * rtl_rtde_coalesce_force() (after a reconnect) re-sends every recipe once,
 * with the masks of every output the coalescer has ever set;
 * rtl_rtde_coalesce_resend() re-sends one recipe once, masks as usual (a
 * keep-alive).
 *
 * The heartbeat. A controller-side watchdog wants a value that changes in
 * every package (the command layout's RTL_RTDE_CMD_REG_SEQ). Written by
 * the caller it would make every package look changed and defeat the
 * coalescing; forgotten, it trips the watchdog. So, like the masks, the
 * heartbeat field is the coalescer's (rtl_rtde_coalesce_set_heartbeat()):
 * what the caller writes there is ignored, it never makes the recipe look
 * changed, and every package of its recipe carries the next value of a
 * counter (rtl_rtde_coalesce_next_beat()), so no two packages repeat it.
 *
 * Raw masks (rtl_rtde_coalesce_raw_masks()): the mask fields are sent as
 * the caller wrote them instead of being computed. For a package built
 * once and sent later whatever the controller holds then (a safe set that
 * turns an output off must say "mask 1, value 0").
 *
 * Counters (packages sent, recipes found unchanged) are relaxed atomics
 * with one writer, the thread that encodes and commits; any thread may read
 * them with rtl_rtde_coalesce_stats().
 *
 * Life cycle: rtl_rtde_coalesce_create() allocates an empty coalescer,
 * rtl_rtde_coalesce_setup() gives it its recipes (and may be called again
 * to start over with others), rtl_rtde_coalesce_destroy() frees it.
 *
 * Thread and RT safety: one thread owns a coalescer (sets it up, writes the
 * pending frames, encodes, commits, forces); only the stats readers may run
 * elsewhere. create and destroy allocate and free: set-up and tear-down
 * time only. setup allocates nothing, takes no lock and makes no system
 * call, but it scans field names, so it belongs to set-up time too.
 * Everything else is RT-safe (no allocation, no locks, no system calls).
 */
#ifndef RTLOOP_RTDE_COALESCE_H
#define RTLOOP_RTDE_COALESCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/stat.h>
#include <rtloop/rtde.h>
#include <rtloop/rtde_recipe.h>

RTL_BEGIN_DECLS

/* Input recipes one coalescer handles. */
#define RTL_RTDE_COALESCE_MAX_RECIPES 8
/* Host bytes of one recipe's frame: a recipe of every input field of the
 * registry takes 744, so every input recipe fits. */
#define RTL_RTDE_COALESCE_MAX_BYTES 768
/* Mask pairs one recipe can hold (the five listed above). */
#define RTL_RTDE_COALESCE_MAX_MASKS 5

/* The coalescer's counters, per recipe, declared once: X(name, what it
 * counts); the snapshot, the atomics and rtl_rtde_coalesce_counter_fields()
 * are made from it. */
#define RTL_RTDE_COALESCE_COUNTERS(X)         \
	X(sent, "packages committed as sent") \
	X(suppressed, "encodes that found the recipe unchanged")

/* Packages of one recipe (or of all, summed), as rtl_rtde_coalesce_stats()
 * reports them. Set .size = sizeof. */
struct rtl_rtde_coalesce_counters {
	size_t size;
	RTL_RTDE_COALESCE_COUNTERS(RTL_STAT_U64)
};

/*
 * The coalescer: an opaque handle (its fields are private to
 * rtde_coalesce.c). About 20 KiB: rtl_rtde_coalesce_create() allocates
 * it, at set-up time; rtl_rtde_coalesce_setup() then gives it its recipes.
 */
struct rtl_rtde_coalesce;

/*
 * Allocate an empty coalescer into *@out: no recipes yet (every call below
 * treats it as having none: rtl_rtde_coalesce_frame() returns NULL, encode
 * returns 0) until rtl_rtde_coalesce_setup() succeeds. Counters start at 0.
 *
 * Returns 0, or
 *   -EINVAL  @out is NULL.
 *   -ENOMEM  out of memory (*@out is then NULL),
 * with @err filled. Allocates: set-up time only, not RT-safe. Thread-safe
 * (it touches no shared state).
 */
RTL_API int rtl_rtde_coalesce_create(struct rtl_rtde_coalesce **out, struct rtl_error *err);

/*
 * Free @c (NULL is accepted and does nothing). The recipes given to setup
 * are the caller's and stay untouched. No other thread may use @c, not
 * even to read its stats. Not RT-safe (frees).
 */
RTL_API void rtl_rtde_coalesce_destroy(struct rtl_rtde_coalesce *c);

/*
 * (Re)configure @c (from rtl_rtde_coalesce_create()) for the @n input
 * recipes @recipes, whose recipe ids (from the controller's SETUP_INPUTS
 * replies) are @ids. Whatever @c held before (recipes, frames, heartbeat,
 * raw masks, counters) is dropped. The recipes are not copied: they must
 * stay valid and unchanged while @c is in use. Pending frames start
 * zeroed, except the doubles behind a mask, which start as NaN ("not
 * set"); last sent values start equal to them, so nothing is sent until the
 * caller writes something (or forces). Counters start at 0.
 *
 * Returns 0, or
 *   -EINVAL  @c, @recipes or @ids is NULL, @n is 0, a recipe is NULL, empty
 *            or an output recipe, an id is 0, or two ids are equal.
 *   -E2BIG   @n > RTL_RTDE_COALESCE_MAX_RECIPES, or a recipe's frame is
 *            larger than RTL_RTDE_COALESCE_MAX_BYTES.
 * On failure @c is left with no recipes, as after create, and a later
 * setup may still succeed. Allocates nothing (no lock, no system call),
 * but meant for set-up time: it scans field names. Owner thread only; not
 * thread-safe for one @c.
 */
RTL_API int rtl_rtde_coalesce_setup(struct rtl_rtde_coalesce *c,
				    const struct rtl_rtde_recipe *const *recipes,
				    const uint8_t *ids, size_t n);

/*
 * Returns the pending frame of recipe @i (in the order given to setup), for
 * the recipe accessors (rtl_rtde_frame_set_*() with handles of that recipe),
 * or NULL when @c is NULL or @i is out of range. Writes to mask fields are
 * ignored. Owner thread only. RT-safe.
 */
RTL_API struct rtl_rtde_frame *rtl_rtde_coalesce_frame(struct rtl_rtde_coalesce *c, size_t i);

/*
 * Change the recipe id of recipe @i (after a reconnect the controller may
 * assign others). Returns 0, or -EINVAL for a NULL @c, @i out of range, id
 * 0 or an id another recipe has. Owner thread only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_set_id(struct rtl_rtde_coalesce *c, size_t i, uint8_t id);

/*
 * Write into @out (capacity @cap) one whole DATA_PACKAGE (3-byte header,
 * recipe id, fields) for each recipe whose pending values differ from the
 * last sent ones, or that is forced, in recipe order, with the mask fields
 * computed as described above. The encoded values are staged for
 * rtl_rtde_coalesce_commit(); whatever an earlier encode staged is
 * dropped. Each recipe found unchanged counts as suppressed.
 *
 * Returns the number of bytes written (0: nothing changed), or
 *   -ENOSPC  the packages do not fit @cap: nothing is staged or counted
 *            (the bytes at @out are unspecified).
 *   -EINVAL  @c is NULL, or @out is NULL with @cap > 0.
 * Owner thread only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_encode(struct rtl_rtde_coalesce *c, uint8_t *out, size_t cap);

/*
 * Mark what the last encode staged as sent: call it once the transport has
 * sent every byte that encode returned. Staged values become the last sent
 * ones, the masks they carried are cleared (and remembered for force), a
 * forced recipe is no longer forced, and each package counts as sent. A
 * second commit without an encode in between commits nothing.
 *
 * Returns the number of packages committed, or -EINVAL for a NULL @c.
 * Owner thread only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_commit(struct rtl_rtde_coalesce *c);

/*
 * Have the next encode send every recipe, changed or not (e.g. after a
 * reconnect, or when another client may have changed the outputs), with
 * the mask bits of every output ever set by a committed package plus those
 * that changed; unset slider and analog values stay unapplied. The force
 * lasts until a commit. Returns 0, or -EINVAL for a NULL @c. Owner thread
 * only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_force(struct rtl_rtde_coalesce *c);

/*
 * Have the next encode send recipe @i even if unchanged (a keep-alive),
 * with the masks computed as usual (only what changed). Lasts until a
 * commit. Returns 0, or -EINVAL for a NULL @c or @i out of range. Owner
 * thread only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_resend(struct rtl_rtde_coalesce *c, size_t i);

/*
 * Make field @h (an INT32 or UINT32 of recipe @i) the heartbeat, as
 * described above; at most one per coalescer (a second call moves it).
 * Returns 0, or -EINVAL for a NULL @c, @i out of range or @h not a 4-byte
 * integer of that recipe. Set-up time; owner thread only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_set_heartbeat(struct rtl_rtde_coalesce *c, size_t i,
					    struct rtl_rtde_handle h);

/*
 * Advances the heartbeat counter and returns its new value (it starts at 0,
 * so the first package carries 1; it wraps); 0 for a NULL @c. For packages built elsewhere that
 * must not repeat a value this coalescer sent (a pre-encoded safe set). Owner thread only. RT-safe.
 */
RTL_API uint32_t rtl_rtde_coalesce_next_beat(struct rtl_rtde_coalesce *c);

/* Where the heartbeat sits in the package of its recipe: returns the offset
 * of its four bytes from the start of the package (header included), or -1
 * when @c has none (or is NULL). RT-safe. */
RTL_API int rtl_rtde_coalesce_beat_offset(const struct rtl_rtde_coalesce *c);

/* Returns the recipe index of the heartbeat, or -1 when @c has none (or is
 * NULL). RT-safe. */
RTL_API int rtl_rtde_coalesce_beat_recipe(const struct rtl_rtde_coalesce *c);

/*
 * Send the mask fields as the caller writes them (@raw true) instead of
 * computing them from what changed (false, the default). Unset doubles
 * behind a mask (NaN) still go out as 0.0. Returns 0 or -EINVAL (NULL).
 * Owner thread only. RT-safe.
 */
RTL_API int rtl_rtde_coalesce_raw_masks(struct rtl_rtde_coalesce *c, bool raw);

/*
 * Read the counters of recipe @i into @out (set out->size = sizeof(*out)
 * first: at most that many bytes are written). Returns 0, or -EINVAL for
 * a NULL pointer, out->size not set or @i out of range. Any thread
 * (relaxed loads: each value is exact, the pair is not a snapshot).
 * RT-safe.
 */
RTL_API int rtl_rtde_coalesce_stats(const struct rtl_rtde_coalesce *c, size_t i,
				    struct rtl_rtde_coalesce_counters *out);

/*
 * The counters summed over every recipe, into @out as above. Returns 0,
 * or -EINVAL. Any thread, as rtl_rtde_coalesce_stats(). RT-safe.
 */
RTL_API int rtl_rtde_coalesce_total(const struct rtl_rtde_coalesce *c,
				    struct rtl_rtde_coalesce_counters *out);

/* Returns the counters' table (names, what each counts, offsets in the
 * snapshot); sets *@n (may be NULL) to its length. RT-safe. */
RTL_API const struct rtl_stat_field *rtl_rtde_coalesce_counter_fields(size_t *n);

RTL_END_DECLS

#endif /* RTLOOP_RTDE_COALESCE_H */
