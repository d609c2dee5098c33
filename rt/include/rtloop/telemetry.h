/* SPDX-License-Identifier: MIT */
/*
 * rtl_telemetry: what a loop decides and measures, while it runs, for other
 * processes: a shared-memory object that the loop writes once per step and
 * any number of readers (rtloop-view, Python, a logger) map read-only.
 *
 * Design
 * ------
 * The producer creates a POSIX shared-memory object, /dev/shm/rtloop-NAME,
 * lays out its header at set-up time and writes, once per step, from the
 * step's thread:
 *   - a record into a ring of records: the time, the frame's number and
 *     controller time, and the signals the program chose (state fields,
 *     the step's commands, values the step sets by name), every value a
 *     double;
 *   - the counters it mirrors (the loop's, a transport's), each a u64;
 *   - one slice of the histograms it mirrors (the loop's latency
 *     histograms), so that a whole mirror takes RTL_TELEMETRY_HIST_SLICES
 *     steps and no step copies more than a bounded few kilobytes.
 * Every write is a relaxed atomic store of an aligned 8-byte word into
 * memory mapped and pre-faulted at set-up: no system call, no allocation,
 * no lock. The writer never waits for a reader: a slow or dead reader
 * costs the loop nothing and misses records, which it counts.
 *
 * Each record slot carries a sequence word, a seqlock of its own: odd
 * while the slot is written, 2k + 2 once record k is whole. A reader that
 * wants record k reads the word, the values, then the word again: the same
 * even 2k + 2 both times is record k whole; anything else is a record the
 * writer has overwritten meanwhile (or not yet written). The producer's
 * count of records (head) is published after each record, release. So a
 * reader sees every record, or knows exactly how many it missed.
 *
 * The layout is version 1 of the format docs/telemetry.md describes (byte
 * offsets, how to read it from C and from Python); the reader below and
 * Python's rtloop.Telemetry read it.
 *
 * Threads: create, the set-up calls (signals, counters, histograms,
 * captures), start and destroy on one set-up thread;
 * rtl_telemetry_set() and rtl_telemetry_publish() on the step's thread
 * only (a loop given the telemetry in its configuration publishes after
 * each step itself). Readers: any process, any thread, each reader object
 * on one thread.
 */
#ifndef RTLOOP_TELEMETRY_H
#define RTLOOP_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>
#include <rtloop/hist.h>
#include <rtloop/stat.h>

RTL_BEGIN_DECLS

#define RTL_TELEMETRY_MAGIC "RTLTELE"
#define RTL_TELEMETRY_VERSION 1
/* Longest object name (the part after "rtloop-"). */
#define RTL_TELEMETRY_NAME_MAX 48
/* A signal's or counter's name, with its NUL. */
#define RTL_TELEMETRY_SIGNAL_NAME 40
#define RTL_TELEMETRY_UNIT 16
#define RTL_TELEMETRY_COUNTER_NAME 48
#define RTL_TELEMETRY_HIST_NAME 32
#define RTL_TELEMETRY_LABEL 128
/* Limits of one object. */
#define RTL_TELEMETRY_MAX_VALUES 256
#define RTL_TELEMETRY_MAX_SIGNALS 64
#define RTL_TELEMETRY_MAX_COUNTERS 256
#define RTL_TELEMETRY_MAX_HISTS 8
#define RTL_TELEMETRY_MAX_SOURCES 8
#define RTL_TELEMETRY_MAX_CAPTURES 8
/* Steps one pass over the histogram mirrors takes. */
#define RTL_TELEMETRY_HIST_SLICES 64

/* The object's state (the header's state word). */
enum rtl_telemetry_state {
	RTL_TELEMETRY_SETUP = 0,   /* being laid out: no record yet */
	RTL_TELEMETRY_RUNNING = 1, /* records come */
	RTL_TELEMETRY_ENDED = 2,   /* the producer ended (destroy): final */
};

/* ---- the producer ------------------------------------------------------------------------ */

struct rtl_telemetry;
struct rtl_loop;
struct rtl_loop_frame;

/* Set .size = sizeof(struct rtl_telemetry_config); zero is the default for
 * every other field. */
struct rtl_telemetry_config {
	size_t size;
	/* The object is /dev/shm/rtloop-@name: 1..RTL_TELEMETRY_NAME_MAX of
	 * [A-Za-z0-9_.-]. Required. */
	const char *name;
	/* Records the ring holds, a power of two; 0: 4096 (4 s at 1 kHz). */
	uint32_t capacity;
	/* What a reader shows for it ("rtloop-admittance, RTDE
	 * 127.0.0.1:30004"); NULL: the name. */
	const char *label;
	/* The loop's control period, for the readers' rates; 0: unknown. */
	int64_t period_ns;
	/* An object of this name exists: replace it (default: -EEXIST,
	 * unless its producer has ended or is gone). */
	bool replace;
};

/*
 * Create the object (mode 0644: readable by other users of the machine;
 * docs/telemetry.md says what that exposes), laid out for set-up calls.
 * Not RT-safe. Returns 0 and sets *@out, or
 *   -EINVAL  a NULL pointer, .size not set, a bad name or capacity,
 *   -E2BIG   @cfg sets a field this library does not know,
 *   -EEXIST  a running producer has the name (and .replace is false),
 *   -ENOMEM, or the error of shm_open(), ftruncate() or mmap(),
 * with @err filled.
 */
RTL_API int rtl_telemetry_create(struct rtl_telemetry **out, const struct rtl_telemetry_config *cfg,
				 struct rtl_error *err);

/*
 * Mark the object ended (readers keep what they mapped: the last records,
 * counters and histograms), unlink its name and free. NULL is accepted.
 * No thread may publish any more. A telemetry given to a loop took the
 * final counters and histograms when the loop was destroyed, and reads
 * its sources no more: destroy it after the loop and the transport, in
 * any order. One that published by itself mirrors its sources a last time
 * here: destroy it before them. Not RT-safe.
 */
RTL_API void rtl_telemetry_destroy(struct rtl_telemetry *t);

/*
 * Add a signal of @count values (1: a scalar) named @name, in @unit (may
 * be NULL), to every record. Set-up only. Returns its handle (>= 0), or
 *   -EINVAL  NULL, an empty or too long name, @count 0,
 *   -EEXIST  the name is taken,
 *   -ENOSPC  more than RTL_TELEMETRY_MAX_SIGNALS signals or
 *            RTL_TELEMETRY_MAX_VALUES values,
 *   -EBUSY   rtl_telemetry_start() has run: the layout is fixed,
 * with @err filled (may be NULL).
 */
RTL_API int rtl_telemetry_signal(struct rtl_telemetry *t, const char *name, unsigned count,
				 const char *unit, struct rtl_error *err);

/* Returns the handle of signal @name, or -ENOENT. Any time. */
RTL_API int rtl_telemetry_find(const struct rtl_telemetry *t, const char *name);

/*
 * Set value @i (0 for a scalar) of signal @h in the record being made;
 * the next rtl_telemetry_publish() sends it, and it stays for the ones
 * after until set again. NaN is allowed (a value not known). Out-of-range
 * @h or @i is ignored. The step's thread. RT-safe: no allocation, no
 * locks, no system calls.
 */
RTL_API void rtl_telemetry_set(struct rtl_telemetry *t, int h, unsigned i, double v);

/* Set @n values of signal @h from @v (at most its count). As
 * rtl_telemetry_set(). */
RTL_API void rtl_telemetry_set_vec(struct rtl_telemetry *t, int h, const double *v, unsigned n);

/*
 * A source of counters mirrored in every publish: @stats(@src, snapshot)
 * fills a snapshot of @snap_size bytes (its first member a size_t the
 * telemetry sets, as every rtloop counter snapshot), whose counters
 * @fields (@n of them, <rtloop/stat.h>) are published as "@group.name".
 * @stats must be RT-safe (rtloop's are: relaxed loads). Set-up only.
 * Returns 0, or -EINVAL, -ENOSPC (RTL_TELEMETRY_MAX_SOURCES, or
 * RTL_TELEMETRY_MAX_COUNTERS counters), -EBUSY (after rtl_telemetry_start()).
 */
typedef int (*rtl_telemetry_stats_fn)(const void *src, void *snapshot);
RTL_API int rtl_telemetry_counters(struct rtl_telemetry *t, const char *group,
				   const struct rtl_stat_field *fields, size_t n,
				   rtl_telemetry_stats_fn stats, const void *src, size_t snap_size,
				   struct rtl_error *err);

/*
 * A histogram mirrored, a slice per publish, as @name. @h is read with
 * relaxed loads (its writer may be any thread). Set-up only. Returns 0,
 * or -EINVAL, -ENOSPC (RTL_TELEMETRY_MAX_HISTS), -EEXIST, -EBUSY.
 */
RTL_API int rtl_telemetry_hist(struct rtl_telemetry *t, const char *name, const struct rtl_hist *h,
			       struct rtl_error *err);

/*
 * A capture: called by rtl_telemetry_step() before each record with the
 * loop and the frame its step saw, to set signals from them (the state's
 * fields, the commands written). RT context: no allocation, no blocking.
 * @free_user (may be NULL) frees @user at destroy. Set-up only. Returns
 * 0, or -EINVAL, -ENOSPC (RTL_TELEMETRY_MAX_CAPTURES), -EBUSY.
 */
typedef void (*rtl_telemetry_capture_fn)(void *user, struct rtl_telemetry *t, struct rtl_loop *loop,
					 const struct rtl_loop_frame *f);
RTL_API int rtl_telemetry_capture(struct rtl_telemetry *t, rtl_telemetry_capture_fn fn, void *user,
				  void (*free_user)(void *user));

/*
 * Fix the layout: size the object for the signals, counters and histograms
 * added, map and pre-fault it, and make it readable (state RUNNING). A
 * loop given the telemetry calls it in rtl_loop_start(); a program that
 * publishes by itself calls it once before its first publish (a publish
 * before it is ignored). Not RT-safe: set-up time. Returns 0 (also when
 * started already), or -EINVAL, -ENOMEM, or the error of ftruncate() or
 * mmap(), with @err filled.
 */
RTL_API int rtl_telemetry_start(struct rtl_telemetry *t, struct rtl_error *err);

/*
 * Publish one record at @now_ns (CLOCK_MONOTONIC) for frame @seq with the
 * controller's time @ctrl_time (NaN: none), the counters, and the next
 * histogram slice; nothing before rtl_telemetry_start(). The step's thread. RT-safe: relaxed and
 * release stores into pre-faulted shared memory and the sources' snapshots; no allocation, no
 * locks, no system calls.
 */
RTL_API void rtl_telemetry_publish(struct rtl_telemetry *t, int64_t now_ns, uint64_t seq,
				   double ctrl_time);

/*
 * What a loop calls after each step's send (a loop with .telemetry in its
 * configuration does it itself): the captures with @loop and @f, then
 * rtl_telemetry_publish() for @f. RT-safe as the captures are.
 */
RTL_API void rtl_telemetry_step(struct rtl_telemetry *t, struct rtl_loop *loop,
				const struct rtl_loop_frame *f, int64_t now_ns);

/* Returns the records published so far. Any thread. RT-safe. */
RTL_API uint64_t rtl_telemetry_records(const struct rtl_telemetry *t);

/* ---- readers ------------------------------------------------------------------------------ */

struct rtl_telemetry_reader;

/* One signal of the layout. */
struct rtl_telemetry_signal_info {
	char name[RTL_TELEMETRY_SIGNAL_NAME];
	char unit[RTL_TELEMETRY_UNIT];
	uint32_t first; /* index of its first value in a record's values */
	uint32_t count; /* values */
};

/* What the header says. */
struct rtl_telemetry_info {
	char label[RTL_TELEMETRY_LABEL];
	enum rtl_telemetry_state state;
	int64_t period_ns;
	int64_t created_ns; /* CLOCK_MONOTONIC */
	int64_t last_ns;    /* the last publish, CLOCK_MONOTONIC; 0 before */
	int64_t pid;	    /* the producer */
	uint32_t capacity;  /* records in the ring */
	uint32_t n_values;  /* doubles per record */
	uint32_t n_signals, n_counters, n_hists;
	uint64_t records;     /* published so far (head) */
	uint64_t hist_rounds; /* complete passes over the histogram mirrors */
};

/* One record as a reader copies it. */
struct rtl_telemetry_record {
	uint64_t index;	  /* its number, from 0 */
	int64_t t_ns;	  /* CLOCK_MONOTONIC of the publish */
	uint64_t frame;	  /* the loop's frame number */
	double ctrl_time; /* the controller's time [s], NaN if none */
	double values[RTL_TELEMETRY_MAX_VALUES];
};

/*
 * Map /dev/shm/rtloop-@name read-only. Not RT-safe. Returns 0 and sets
 * *@out, or -EINVAL (NULL, a bad name), -ENOENT (no such object: no
 * producer has created it), -EPROTO (not a telemetry object, or another
 * version: the message names both), -EAGAIN (its producer is still laying
 * it out: open again shortly), -ENOMEM, or the error of shm_open() or
 * mmap(), with @err filled.
 */
RTL_API int rtl_telemetry_reader_create(struct rtl_telemetry_reader **out, const char *name,
					struct rtl_error *err);
/* Unmap and free @r. NULL is accepted. */
RTL_API void rtl_telemetry_reader_destroy(struct rtl_telemetry_reader *r);

/* The header now (state, records, last publish). Returns 0 or -EINVAL. */
RTL_API int rtl_telemetry_reader_info(const struct rtl_telemetry_reader *r,
				      struct rtl_telemetry_info *out);

/* Returns signal @i of the layout (0 .. n_signals - 1), or NULL when out
 * of range. */
RTL_API const struct rtl_telemetry_signal_info *
rtl_telemetry_reader_signal(const struct rtl_telemetry_reader *r, unsigned i);
/* Returns counter @i's name ("group.name"), or NULL when out of range. */
RTL_API const char *rtl_telemetry_reader_counter_name(const struct rtl_telemetry_reader *r,
						      unsigned i);
/* Returns histogram @i's name, or NULL when out of range. */
RTL_API const char *rtl_telemetry_reader_hist_name(const struct rtl_telemetry_reader *r,
						   unsigned i);

/*
 * Copy the records published since the last call (the first call: since
 * the oldest the ring still holds, or since where
 * rtl_telemetry_reader_seek() put the reader) into @out, at most @max of
 * them, oldest first. Records the writer overwrote before they could be
 * copied are skipped and counted (rtl_telemetry_reader_missed()). Returns
 * the number copied (0: none new), or -EINVAL.
 */
RTL_API int rtl_telemetry_reader_read(struct rtl_telemetry_reader *r,
				      struct rtl_telemetry_record *out, unsigned max);

/* Returns the records this reader has missed so far: overwritten before
 * it could copy them. */
RTL_API uint64_t rtl_telemetry_reader_missed(const struct rtl_telemetry_reader *r);

/* The next rtl_telemetry_reader_read() starts at record @index (0: the oldest
 * held; UINT64_MAX: only records published from now on). */
RTL_API void rtl_telemetry_reader_seek(struct rtl_telemetry_reader *r, uint64_t index);

/* The counters now, n_counters of them, into @out. Returns the count or
 * -EINVAL. */
RTL_API int rtl_telemetry_reader_counters(const struct rtl_telemetry_reader *r, uint64_t *out,
					  unsigned max);

/* Histogram @i's mirror into @out (its percentile and bucket queries of
 * <rtloop/hist.h> then work on it). Returns 0, or -EINVAL. */
RTL_API int rtl_telemetry_reader_hist(const struct rtl_telemetry_reader *r, unsigned i,
				      struct rtl_hist *out);

RTL_END_DECLS

#endif /* RTLOOP_TELEMETRY_H */
