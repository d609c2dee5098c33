// SPDX-License-Identifier: MIT
/*
 * rtl_telemetry: the loop's records, counters and histograms in shared
 * memory (<rtloop/telemetry.h> says why and how; docs/telemetry.md is the
 * format). This file holds the layout, the producer (set-up, start,
 * publish) and the reader, in that order.
 *
 * Every word of the object that a reader may read while the producer
 * writes is an aligned 8-byte word accessed as a C11 atomic: relaxed for
 * the values (each word whole, never torn), release/acquire for the
 * sequence words and the head that order them. The header's fixed fields
 * are written once, before the state word says RUNNING (release).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rtloop/loop.h>
#include <rtloop/sized.h>
#include <rtloop/telemetry.h>
#include <rtloop/time.h>

#include "loop_private.h"

/* ---- the layout (docs/telemetry.md) ------------------------------------------------------ */

typedef _Atomic uint64_t word;

/* The header's fields, at these byte offsets; the fixed ones are written
 * before the state says RUNNING, the live ones (head, last_ns, rounds) on
 * a cache line of their own. */
enum {
	H_MAGIC = 0,		  /* char[8] */
	H_VERSION = 8,		  /* u32 */
	H_HEADER_SIZE = 12,	  /* u32 */
	H_SIZE = 16,		  /* u64: the whole object */
	H_STATE = 24,		  /* u32, atomic */
	H_RECORD_SIZE = 28,	  /* u32 */
	H_CAPACITY = 32,	  /* u32 */
	H_N_SIGNALS = 36,	  /* u32 */
	H_N_VALUES = 40,	  /* u32 */
	H_N_COUNTERS = 44,	  /* u32 */
	H_N_HISTS = 48,		  /* u32 */
	H_HIST_WORDS = 52,	  /* u32: words of one histogram mirror */
	H_SIGNALS_OFF = 56,	  /* u64 */
	H_COUNTER_NAMES_OFF = 64, /* u64 */
	H_COUNTERS_OFF = 72,	  /* u64 */
	H_HISTS_OFF = 80,	  /* u64 */
	H_RECORDS_OFF = 88,	  /* u64 */
	H_PERIOD_NS = 96,	  /* i64 */
	H_CREATED_NS = 104,	  /* i64 */
	H_PID = 112,		  /* i64 */
	H_LABEL = 128,		  /* char[RTL_TELEMETRY_LABEL] */
	H_HEAD = 256,		  /* u64, atomic: records published */
	H_LAST_NS = 264,	  /* i64, atomic: the last publish */
	H_ROUNDS = 272,		  /* u64, atomic: complete histogram passes */
	HEADER_SIZE = 4096,
};

/* A signal's entry in the table; a counter's name; a histogram's entry
 * is its name, then its words (count, sum, min_inv, max, overflow,
 * underflow, buckets: struct rtl_hist's order). */
#define SIGNAL_ENTRY 64
#define HIST_WORDS ((size_t)(sizeof(struct rtl_hist) / sizeof(uint64_t)))
#define HIST_ENTRY (RTL_TELEMETRY_HIST_NAME + HIST_WORDS * sizeof(uint64_t))
/* A record: seq, t_ns, frame, ctrl_time, then the values. */
#define RECORD_FIXED 4

RTL_STATIC_ASSERT(sizeof(struct rtl_hist) % sizeof(uint64_t) == 0 &&
			  offsetof(struct rtl_hist, buckets) == 6 * sizeof(uint64_t),
		  "a histogram must be words only, in the order the format names");

static uint32_t get32(const unsigned char *m, size_t off)
{
	uint32_t v;

	memcpy(&v, m + off, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *m, size_t off)
{
	uint64_t v;

	memcpy(&v, m + off, sizeof(v));
	return v;
}

static void put32(unsigned char *m, size_t off, uint32_t v)
{
	memcpy(m + off, &v, sizeof(v));
}

static void put64(unsigned char *m, size_t off, uint64_t v)
{
	memcpy(m + off, &v, sizeof(v));
}

static word *word_at(const unsigned char *m, size_t off)
{
	return (word *)(uintptr_t)(m + off);
}

static _Atomic uint32_t *state_word(const unsigned char *m)
{
	return (_Atomic uint32_t *)(uintptr_t)(m + H_STATE);
}

static bool valid_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > RTL_TELEMETRY_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static void shm_path(char out[RTL_TELEMETRY_NAME_MAX + 16], const char *name)
{
	snprintf(out, RTL_TELEMETRY_NAME_MAX + 16, "/rtloop-%s", name);
}

/* ---- the producer ------------------------------------------------------------------------ */

struct source {
	char group[24];
	const struct rtl_stat_field *fields;
	size_t n;
	rtl_telemetry_stats_fn stats;
	const void *src;
	size_t snap_size;
	unsigned first; /* the index of its first counter */
};

struct capture {
	rtl_telemetry_capture_fn fn;
	void *user;
	void (*free_user)(void *user);
};

struct rtl_telemetry {
	char path[RTL_TELEMETRY_NAME_MAX + 16];
	char label[RTL_TELEMETRY_LABEL];
	uint32_t capacity;
	int64_t period_ns;
	int fd;
	unsigned char *map; /* the header page before start, the whole object after */
	size_t map_size;
	bool started;
	/* The layout, as added. */
	struct rtl_telemetry_signal_info sig[RTL_TELEMETRY_MAX_SIGNALS];
	unsigned n_signals, n_values;
	struct source src[RTL_TELEMETRY_MAX_SOURCES];
	unsigned n_sources, n_counters;
	unsigned char *scratch; /* the sources' snapshot, as large as the largest */
	size_t scratch_size;
	const struct rtl_hist *hist[RTL_TELEMETRY_MAX_HISTS];
	char hist_name[RTL_TELEMETRY_MAX_HISTS][RTL_TELEMETRY_HIST_NAME];
	unsigned n_hists;
	struct capture cap[RTL_TELEMETRY_MAX_CAPTURES];
	unsigned n_caps;
	/* The step's thread's. */
	double staging[RTL_TELEMETRY_MAX_VALUES];
	uint64_t head;
	unsigned slice;
	uint64_t rounds;
	/* Where things are once started. */
	size_t record_words, counters_off, hists_off, records_off;
	_Atomic uint64_t published; /* head, for rtl_telemetry_records() */
};

/* An object already there: may it be replaced? Its producer ended or is gone. */
static bool stale(const char *path)
{
	int fd = shm_open(path, O_RDONLY, 0);
	unsigned char hdr[HEADER_SIZE];
	bool ok = true;

	if (fd < 0)
		return true;
	if (pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
	    memcmp(hdr, RTL_TELEMETRY_MAGIC, 8) == 0) {
		int64_t pid = (int64_t)get64(hdr, H_PID);

		ok = get32(hdr, H_STATE) == RTL_TELEMETRY_ENDED ||
		     (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH);
	}
	close(fd);
	return ok;
}

RTL_API int rtl_telemetry_create(struct rtl_telemetry **out,
				 const struct rtl_telemetry_config *ucfg, struct rtl_error *err)
{
	struct rtl_telemetry_config cfg;
	struct rtl_telemetry *t;
	int ret;

	if (!out)
		return rtl_error_set(err, -EINVAL, "telemetry: out is NULL");
	*out = NULL;
	ret = rtl__sized_in(&cfg, sizeof(cfg), ucfg, "struct rtl_telemetry_config", err);
	if (ret < 0)
		return ret;
	if (!valid_name(cfg.name))
		return rtl_error_set(err, -EINVAL,
				     "telemetry: name '%s' must be 1..%d of [A-Za-z0-9_.-]",
				     cfg.name ? cfg.name : "(null)", RTL_TELEMETRY_NAME_MAX);
	if (cfg.capacity == 0)
		cfg.capacity = 4096;
	if (cfg.capacity & (cfg.capacity - 1) || cfg.capacity > (1u << 24))
		return rtl_error_set(err, -EINVAL,
				     "telemetry: capacity %u must be a power of two up to 2^24",
				     cfg.capacity);
	t = calloc(1, sizeof(*t));
	if (!t)
		return rtl_error_set(err, -ENOMEM, "telemetry: out of memory");
	shm_path(t->path, cfg.name);
	snprintf(t->label, sizeof(t->label), "%s", cfg.label ? cfg.label : cfg.name);
	t->capacity = cfg.capacity;
	t->period_ns = cfg.period_ns;
	t->fd = shm_open(t->path, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (t->fd < 0 && errno == EEXIST && (cfg.replace || stale(t->path))) {
		shm_unlink(t->path);
		t->fd = shm_open(t->path, O_RDWR | O_CREAT | O_EXCL, 0644);
	}
	if (t->fd < 0) {
		char path[sizeof(t->path)];

		ret = -errno;
		memcpy(path, t->path, sizeof(path));
		free(t);
		if (ret == -EEXIST)
			return rtl_error_set(err, ret,
					     "telemetry: /dev/shm%s belongs to a running producer; "
					     "fix: another name, or .replace to take it over",
					     path);
		return rtl_error_set(err, ret, "telemetry: shm_open %s: %s", path, strerror(-ret));
	}
	/* The header page alone, state SETUP, until start: a reader that
	 * comes meanwhile learns to come back (-EAGAIN). */
	if (ftruncate(t->fd, HEADER_SIZE) < 0 ||
	    (t->map = mmap(NULL, HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0)) ==
		    MAP_FAILED) {
		ret = -errno;
		t->map = NULL;
		rtl_telemetry_destroy(t);
		return rtl_error_set(err, ret, "telemetry: sizing %s: %s", t->path, strerror(-ret));
	}
	t->map_size = HEADER_SIZE;
	memcpy(t->map + H_MAGIC, RTL_TELEMETRY_MAGIC, 8);
	put32(t->map, H_VERSION, RTL_TELEMETRY_VERSION);
	put32(t->map, H_HEADER_SIZE, HEADER_SIZE);
	put64(t->map, H_PID, (uint64_t)getpid());
	put64(t->map, H_CREATED_NS, (uint64_t)rtl_time_now());
	*out = t;
	return 0;
}

static int busy(const struct rtl_telemetry *t, struct rtl_error *err)
{
	return rtl_error_set(err, -EBUSY,
			     "telemetry %s: started: the layout is fixed; add everything before "
			     "rtl_telemetry_start() (the loop's start)",
			     t->path);
}

RTL_API int rtl_telemetry_signal(struct rtl_telemetry *t, const char *name, unsigned count,
				 const char *unit, struct rtl_error *err)
{
	struct rtl_telemetry_signal_info *s;

	if (!t || !name || !name[0] || strlen(name) >= RTL_TELEMETRY_SIGNAL_NAME || count == 0)
		return rtl_error_set(err, -EINVAL,
				     "telemetry: a signal needs a name of 1..%d characters and at "
				     "least one value",
				     RTL_TELEMETRY_SIGNAL_NAME - 1);
	if (t->started)
		return busy(t, err);
	if (rtl_telemetry_find(t, name) >= 0)
		return rtl_error_set(err, -EEXIST, "telemetry: signal '%s' twice", name);
	if (t->n_signals == RTL_TELEMETRY_MAX_SIGNALS ||
	    t->n_values + count > RTL_TELEMETRY_MAX_VALUES)
		return rtl_error_set(err, -ENOSPC,
				     "telemetry: '%s' is one too many: at most %d signals of %d "
				     "values in all",
				     name, RTL_TELEMETRY_MAX_SIGNALS, RTL_TELEMETRY_MAX_VALUES);
	s = &t->sig[t->n_signals];
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->unit, sizeof(s->unit), "%s", unit ? unit : "");
	s->first = t->n_values;
	s->count = count;
	for (unsigned i = 0; i < count; i++)
		t->staging[t->n_values + i] = NAN;
	t->n_values += count;
	return (int)t->n_signals++;
}

RTL_API int rtl_telemetry_find(const struct rtl_telemetry *t, const char *name)
{
	for (unsigned i = 0; t && name && i < t->n_signals; i++)
		if (strcmp(t->sig[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

RTL_API void rtl_telemetry_set(struct rtl_telemetry *t, int h, unsigned i, double v)
{
	if (t && h >= 0 && (unsigned)h < t->n_signals && i < t->sig[h].count)
		t->staging[t->sig[h].first + i] = v;
}

RTL_API void rtl_telemetry_set_vec(struct rtl_telemetry *t, int h, const double *v, unsigned n)
{
	if (!t || !v || h < 0 || (unsigned)h >= t->n_signals)
		return;
	if (n > t->sig[h].count)
		n = t->sig[h].count;
	memcpy(&t->staging[t->sig[h].first], v, n * sizeof(double));
}

RTL_API int rtl_telemetry_counters(struct rtl_telemetry *t, const char *group,
				   const struct rtl_stat_field *fields, size_t n,
				   rtl_telemetry_stats_fn stats, const void *src, size_t snap_size,
				   struct rtl_error *err)
{
	struct source *s;

	if (!t || !group || !group[0] || strlen(group) >= sizeof(s->group) || !fields || !stats ||
	    snap_size < sizeof(size_t))
		return rtl_error_set(err, -EINVAL,
				     "telemetry: a counter source needs a group "
				     "name, fields, a stats call and a snapshot size");
	if (t->started)
		return busy(t, err);
	if (t->n_sources == RTL_TELEMETRY_MAX_SOURCES ||
	    t->n_counters + n > RTL_TELEMETRY_MAX_COUNTERS)
		return rtl_error_set(err, -ENOSPC,
				     "telemetry: counters '%s': at most %d sources of %d counters",
				     group, RTL_TELEMETRY_MAX_SOURCES, RTL_TELEMETRY_MAX_COUNTERS);
	if (snap_size > t->scratch_size) {
		unsigned char *p = realloc(t->scratch, snap_size);

		if (!p)
			return rtl_error_set(err, -ENOMEM, "telemetry: out of memory");
		t->scratch = p;
		t->scratch_size = snap_size;
	}
	s = &t->src[t->n_sources++];
	snprintf(s->group, sizeof(s->group), "%s", group);
	s->fields = fields;
	s->n = n;
	s->stats = stats;
	s->src = src;
	s->snap_size = snap_size;
	s->first = t->n_counters;
	t->n_counters += (unsigned)n;
	return 0;
}

RTL_API int rtl_telemetry_hist(struct rtl_telemetry *t, const char *name, const struct rtl_hist *h,
			       struct rtl_error *err)
{
	if (!t || !name || !name[0] || strlen(name) >= RTL_TELEMETRY_HIST_NAME || !h)
		return rtl_error_set(err, -EINVAL,
				     "telemetry: a histogram needs a name of 1..%d "
				     "characters",
				     RTL_TELEMETRY_HIST_NAME - 1);
	if (t->started)
		return busy(t, err);
	for (unsigned i = 0; i < t->n_hists; i++)
		if (strcmp(t->hist_name[i], name) == 0)
			return rtl_error_set(err, -EEXIST, "telemetry: histogram '%s' twice", name);
	if (t->n_hists == RTL_TELEMETRY_MAX_HISTS)
		return rtl_error_set(err, -ENOSPC, "telemetry: at most %d histograms",
				     RTL_TELEMETRY_MAX_HISTS);
	snprintf(t->hist_name[t->n_hists], RTL_TELEMETRY_HIST_NAME, "%s", name);
	t->hist[t->n_hists++] = h;
	return 0;
}

RTL_API int rtl_telemetry_capture(struct rtl_telemetry *t, rtl_telemetry_capture_fn fn, void *user,
				  void (*free_user)(void *user))
{
	if (!t || !fn)
		return -EINVAL;
	if (t->started)
		return -EBUSY;
	if (t->n_caps == RTL_TELEMETRY_MAX_CAPTURES)
		return -ENOSPC;
	t->cap[t->n_caps++] = (struct capture){ fn, user, free_user };
	return 0;
}

void rtl__telemetry_period(struct rtl_telemetry *t, int64_t period_ns)
{
	if (t && !t->started && t->period_ns <= 0)
		t->period_ns = period_ns;
}

RTL_API int rtl_telemetry_start(struct rtl_telemetry *t, struct rtl_error *err)
{
	size_t record_bytes, signals_off, names_off, size;
	unsigned char *m;
	int ret;

	if (!t)
		return rtl_error_set(err, -EINVAL, "telemetry: NULL");
	if (t->started)
		return 0;
	t->record_words = RECORD_FIXED + t->n_values;
	record_bytes = t->record_words * sizeof(uint64_t);
	signals_off = HEADER_SIZE;
	names_off = signals_off + (size_t)t->n_signals * SIGNAL_ENTRY;
	t->counters_off =
		(names_off + (size_t)t->n_counters * RTL_TELEMETRY_COUNTER_NAME + 63) & ~(size_t)63;
	t->hists_off =
		(t->counters_off + (size_t)t->n_counters * sizeof(uint64_t) + 63) & ~(size_t)63;
	t->records_off = (t->hists_off + (size_t)t->n_hists * HIST_ENTRY + 4095) & ~(size_t)4095;
	size = t->records_off + (size_t)t->capacity * record_bytes;
	if (ftruncate(t->fd, (off_t)size) < 0) {
		ret = -errno;
		return rtl_error_set(err, ret, "telemetry: sizing %s to %zu bytes: %s", t->path,
				     size, strerror(-ret));
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		return rtl_error_set(err, ret, "telemetry: mapping %s: %s", t->path,
				     strerror(-ret));
	}
	munmap(t->map, t->map_size);
	t->map = m;
	t->map_size = size;
	/* Pre-fault: every page written once, here, not on the step. */
	memset(m + HEADER_SIZE, 0, size - HEADER_SIZE);
	put64(m, H_SIZE, size);
	put32(m, H_RECORD_SIZE, (uint32_t)record_bytes);
	put32(m, H_CAPACITY, t->capacity);
	put32(m, H_N_SIGNALS, t->n_signals);
	put32(m, H_N_VALUES, t->n_values);
	put32(m, H_N_COUNTERS, t->n_counters);
	put32(m, H_N_HISTS, t->n_hists);
	put32(m, H_HIST_WORDS, (uint32_t)HIST_WORDS);
	put64(m, H_SIGNALS_OFF, signals_off);
	put64(m, H_COUNTER_NAMES_OFF, names_off);
	put64(m, H_COUNTERS_OFF, t->counters_off);
	put64(m, H_HISTS_OFF, t->hists_off);
	put64(m, H_RECORDS_OFF, t->records_off);
	put64(m, H_PERIOD_NS, (uint64_t)t->period_ns);
	snprintf((char *)m + H_LABEL, RTL_TELEMETRY_LABEL, "%s", t->label);
	for (unsigned i = 0; i < t->n_signals; i++) {
		unsigned char *e = m + signals_off + (size_t)i * SIGNAL_ENTRY;

		memcpy(e, t->sig[i].name, RTL_TELEMETRY_SIGNAL_NAME);
		memcpy(e + 40, t->sig[i].unit, RTL_TELEMETRY_UNIT);
		put32(e, 56, t->sig[i].first);
		put32(e, 60, t->sig[i].count);
	}
	for (unsigned s = 0; s < t->n_sources; s++)
		for (size_t i = 0; i < t->src[s].n; i++)
			snprintf((char *)m + names_off +
					 (t->src[s].first + i) * RTL_TELEMETRY_COUNTER_NAME,
				 RTL_TELEMETRY_COUNTER_NAME, "%s.%s", t->src[s].group,
				 t->src[s].fields[i].name);
	for (unsigned i = 0; i < t->n_hists; i++)
		memcpy(m + t->hists_off + i * HIST_ENTRY, t->hist_name[i], RTL_TELEMETRY_HIST_NAME);
	t->started = true;
	/* release: a reader that sees RUNNING sees the layout above. */
	atomic_store_explicit(state_word(m), RTL_TELEMETRY_RUNNING, memory_order_release);
	return 0;
}

/* Release: a reader whose acquire load sees this word also sees the
 * slot's odd sequence stored before it (the seqlock without fences,
 * which ThreadSanitizer cannot model). Plain moves on x86. */
static void put_word(unsigned char *m, size_t off, uint64_t v)
{
	atomic_store_explicit(word_at(m, off), v, memory_order_release);
}

static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* The counters: each source's snapshot (relaxed loads), mirrored. */
static void mirror_counters(struct rtl_telemetry *t)
{
	for (unsigned s = 0; s < t->n_sources; s++) {
		struct source *src = &t->src[s];

		if (!src->stats) /* detached: its last values stay */
			continue;
		*(size_t *)(void *)t->scratch = src->snap_size;
		if (src->stats(src->src, t->scratch) < 0)
			continue;
		for (size_t i = 0; i < src->n; i++)
			put_word(t->map, t->counters_off + (src->first + i) * sizeof(uint64_t),
				 rtl_stat_value(t->scratch, &src->fields[i]));
	}
}

/* The next slice of the histogram mirrors: a bounded copy per publish. */
static void mirror_hist_slice(struct rtl_telemetry *t)
{
	size_t total = t->n_hists * HIST_WORDS;
	size_t per = (total + RTL_TELEMETRY_HIST_SLICES - 1) / RTL_TELEMETRY_HIST_SLICES;
	size_t from = t->slice * per, to = from + per < total ? from + per : total;

	for (size_t w = from; w < to; w++) {
		size_t h = w / HIST_WORDS, k = w % HIST_WORDS;
		const word *src = (const word *)(const void *)t->hist[h];

		if (!src) /* detached: its last mirror stays */
			continue;
		put_word(t->map,
			 t->hists_off + h * HIST_ENTRY + RTL_TELEMETRY_HIST_NAME +
				 k * sizeof(uint64_t),
			 atomic_load_explicit(&src[k], memory_order_relaxed));
	}
	if (++t->slice == RTL_TELEMETRY_HIST_SLICES) {
		t->slice = 0;
		atomic_store_explicit(word_at(t->map, H_ROUNDS), ++t->rounds, memory_order_release);
	}
}

RTL_API void rtl_telemetry_publish(struct rtl_telemetry *t, int64_t now_ns, uint64_t seq,
				   double ctrl_time)
{
	size_t off;
	uint64_t k;

	if (!t || !t->started)
		return;
	k = t->head;
	off = t->records_off + (size_t)(k & (t->capacity - 1)) * t->record_words * sizeof(uint64_t);
	/* The slot's seqlock: odd while written; the words after it are
	 * release stores, so a reader that sees one of them sees odd. */
	atomic_store_explicit(word_at(t->map, off), 2 * k + 1, memory_order_relaxed);
	put_word(t->map, off + 8, (uint64_t)now_ns);
	put_word(t->map, off + 16, seq);
	put_word(t->map, off + 24, bits(ctrl_time));
	for (unsigned i = 0; i < t->n_values; i++)
		put_word(t->map, off + (RECORD_FIXED + i) * sizeof(uint64_t), bits(t->staging[i]));
	atomic_store_explicit(word_at(t->map, off), 2 * k + 2, memory_order_release);
	t->head = k + 1;
	atomic_store_explicit(word_at(t->map, H_HEAD), t->head, memory_order_release);
	atomic_store_explicit(word_at(t->map, H_LAST_NS), (uint64_t)now_ns, memory_order_relaxed);
	atomic_store_explicit(&t->published, t->head, memory_order_relaxed);
	mirror_counters(t);
	if (t->n_hists)
		mirror_hist_slice(t);
}

RTL_API void rtl_telemetry_step(struct rtl_telemetry *t, struct rtl_loop *loop,
				const struct rtl_loop_frame *f, int64_t now_ns)
{
	if (!t || !t->started || !f)
		return;
	for (unsigned i = 0; i < t->n_caps; i++)
		t->cap[i].fn(t->cap[i].user, t, loop, f);
	rtl_telemetry_publish(t, now_ns, f->seq, f->ctrl_time);
}

RTL_API uint64_t rtl_telemetry_records(const struct rtl_telemetry *t)
{
	return t ? atomic_load_explicit(&t->published, memory_order_relaxed) : 0;
}

/* The counters and every histogram slice once more, for the final state
 * readers keep (the stop at exit moves counters after the last step). */
static void final_mirror(struct rtl_telemetry *t)
{
	mirror_counters(t);
	for (unsigned i = 0; t->n_hists && i < RTL_TELEMETRY_HIST_SLICES; i++)
		mirror_hist_slice(t);
}

void rtl__telemetry_detach(struct rtl_telemetry *t)
{
	if (!t)
		return;
	if (t->started) /* what readers keep: the final figures */
		final_mirror(t);
	/* Nothing publishes after the loop: the sources may go first. */
	for (unsigned s = 0; s < t->n_sources; s++)
		t->src[s].stats = NULL;
	for (unsigned i = 0; i < t->n_hists; i++)
		t->hist[i] = NULL;
}

RTL_API void rtl_telemetry_destroy(struct rtl_telemetry *t)
{
	if (!t)
		return;
	if (t->map) {
		/* Readers keep their mapping: the final state is theirs. */
		if (t->started)
			final_mirror(t);
		atomic_store_explicit(state_word(t->map), RTL_TELEMETRY_ENDED,
				      memory_order_release);
		munmap(t->map, t->map_size);
	}
	if (t->fd >= 0) {
		close(t->fd);
		shm_unlink(t->path);
	}
	for (unsigned i = 0; i < t->n_caps; i++)
		if (t->cap[i].free_user)
			t->cap[i].free_user(t->cap[i].user);
	free(t->scratch);
	free(t);
}

/* ---- readers ------------------------------------------------------------------------------ */

struct rtl_telemetry_reader {
	unsigned char *map;
	size_t size;
	uint32_t capacity, record_words, n_values, n_signals, n_counters, n_hists;
	size_t names_off, counters_off, hists_off, records_off;
	uint64_t next;	 /* the next record to read */
	uint64_t missed; /* overwritten before they were read */
	bool positioned;
	struct rtl_telemetry_signal_info sig[RTL_TELEMETRY_MAX_SIGNALS];
};

RTL_API int rtl_telemetry_reader_create(struct rtl_telemetry_reader **out, const char *name,
					struct rtl_error *err)
{
	char path[RTL_TELEMETRY_NAME_MAX + 16];
	struct rtl_telemetry_reader *r;
	unsigned char *hdr;
	struct stat st;
	size_t signals_off;
	int fd, ret;

	if (!out || !valid_name(name))
		return rtl_error_set(err, -EINVAL,
				     "telemetry: name '%s' must be 1..%d of [A-Za-z0-9_.-]",
				     name ? name : "(null)", RTL_TELEMETRY_NAME_MAX);
	*out = NULL;
	shm_path(path, name);
	fd = shm_open(path, O_RDONLY, 0);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			return rtl_error_set(
				err, ret,
				"telemetry: no /dev/shm%s: no loop publishes '%s' (start "
				"it with telemetry on, e.g. --telemetry %s)",
				path, name, name);
		return rtl_error_set(err, ret, "telemetry: shm_open %s: %s", path, strerror(-ret));
	}
	if (fstat(fd, &st) < 0 || st.st_size < HEADER_SIZE) {
		close(fd);
		return rtl_error_set(err, -EAGAIN, "telemetry: %s is being created: open again",
				     path);
	}
	hdr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (hdr == MAP_FAILED)
		return rtl_error_set(err, -errno, "telemetry: mapping %s: %s", path,
				     strerror(errno));
	if (memcmp(hdr, RTL_TELEMETRY_MAGIC, 8) != 0 ||
	    get32(hdr, H_VERSION) != RTL_TELEMETRY_VERSION) {
		ret = rtl_error_set(err, -EPROTO,
				    "telemetry: %s is not rtloop telemetry of version %d (magic "
				    "'%.7s', version %u)",
				    path, RTL_TELEMETRY_VERSION, (const char *)hdr,
				    get32(hdr, H_VERSION));
		munmap(hdr, (size_t)st.st_size);
		return ret;
	}
	/* acquire: RUNNING means the layout below is there. */
	if (atomic_load_explicit(state_word(hdr), memory_order_acquire) == RTL_TELEMETRY_SETUP ||
	    get64(hdr, H_SIZE) > (uint64_t)st.st_size) {
		munmap(hdr, (size_t)st.st_size);
		return rtl_error_set(err, -EAGAIN,
				     "telemetry: %s is being laid out (its loop has not started): "
				     "open again",
				     path);
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		munmap(hdr, (size_t)st.st_size);
		return rtl_error_set(err, -ENOMEM, "telemetry: out of memory");
	}
	r->map = hdr;
	r->size = (size_t)st.st_size;
	r->capacity = get32(hdr, H_CAPACITY);
	r->record_words = get32(hdr, H_RECORD_SIZE) / sizeof(uint64_t);
	r->n_values = get32(hdr, H_N_VALUES);
	r->n_signals = get32(hdr, H_N_SIGNALS);
	r->n_counters = get32(hdr, H_N_COUNTERS);
	r->n_hists = get32(hdr, H_N_HISTS);
	signals_off = get64(hdr, H_SIGNALS_OFF);
	r->names_off = get64(hdr, H_COUNTER_NAMES_OFF);
	r->counters_off = get64(hdr, H_COUNTERS_OFF);
	r->hists_off = get64(hdr, H_HISTS_OFF);
	r->records_off = get64(hdr, H_RECORDS_OFF);
	if (r->n_signals > RTL_TELEMETRY_MAX_SIGNALS || r->n_values > RTL_TELEMETRY_MAX_VALUES ||
	    r->n_hists > RTL_TELEMETRY_MAX_HISTS || get32(hdr, H_HIST_WORDS) != HIST_WORDS ||
	    r->record_words != RECORD_FIXED + r->n_values || r->capacity == 0 ||
	    (r->capacity & (r->capacity - 1)) ||
	    r->records_off + (size_t)r->capacity * r->record_words * 8 > r->size) {
		rtl_telemetry_reader_destroy(r);
		return rtl_error_set(err, -EPROTO, "telemetry: %s: a layout this reader cannot use",
				     path);
	}
	for (unsigned i = 0; i < r->n_signals; i++) {
		const unsigned char *e = hdr + signals_off + (size_t)i * SIGNAL_ENTRY;

		memcpy(r->sig[i].name, e, RTL_TELEMETRY_SIGNAL_NAME);
		r->sig[i].name[RTL_TELEMETRY_SIGNAL_NAME - 1] = '\0';
		memcpy(r->sig[i].unit, e + 40, RTL_TELEMETRY_UNIT);
		r->sig[i].unit[RTL_TELEMETRY_UNIT - 1] = '\0';
		r->sig[i].first = get32(e, 56);
		r->sig[i].count = get32(e, 60);
	}
	*out = r;
	return 0;
}

RTL_API void rtl_telemetry_reader_destroy(struct rtl_telemetry_reader *r)
{
	if (!r)
		return;
	munmap(r->map, r->size);
	free(r);
}

RTL_API int rtl_telemetry_reader_info(const struct rtl_telemetry_reader *r,
				      struct rtl_telemetry_info *out)
{
	if (!r || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	snprintf(out->label, sizeof(out->label), "%.*s", RTL_TELEMETRY_LABEL - 1,
		 (const char *)r->map + H_LABEL);
	out->state = (enum rtl_telemetry_state)atomic_load_explicit(state_word(r->map),
								    memory_order_acquire);
	out->period_ns = (int64_t)get64(r->map, H_PERIOD_NS);
	out->created_ns = (int64_t)get64(r->map, H_CREATED_NS);
	out->pid = (int64_t)get64(r->map, H_PID);
	out->last_ns =
		(int64_t)atomic_load_explicit(word_at(r->map, H_LAST_NS), memory_order_relaxed);
	out->capacity = r->capacity;
	out->n_values = r->n_values;
	out->n_signals = r->n_signals;
	out->n_counters = r->n_counters;
	out->n_hists = r->n_hists;
	out->records = atomic_load_explicit(word_at(r->map, H_HEAD), memory_order_acquire);
	out->hist_rounds = atomic_load_explicit(word_at(r->map, H_ROUNDS), memory_order_acquire);
	return 0;
}

RTL_API const struct rtl_telemetry_signal_info *
rtl_telemetry_reader_signal(const struct rtl_telemetry_reader *r, unsigned i)
{
	return r && i < r->n_signals ? &r->sig[i] : NULL;
}

RTL_API const char *rtl_telemetry_reader_counter_name(const struct rtl_telemetry_reader *r,
						      unsigned i)
{
	return r && i < r->n_counters ? (const char *)r->map + r->names_off +
						(size_t)i * RTL_TELEMETRY_COUNTER_NAME
				      : NULL;
}

RTL_API const char *rtl_telemetry_reader_hist_name(const struct rtl_telemetry_reader *r, unsigned i)
{
	return r && i < r->n_hists ? (const char *)r->map + r->hists_off + (size_t)i * HIST_ENTRY
				   : NULL;
}

RTL_API void rtl_telemetry_reader_seek(struct rtl_telemetry_reader *r, uint64_t index)
{
	if (!r)
		return;
	if (index == UINT64_MAX)
		index = atomic_load_explicit(word_at(r->map, H_HEAD), memory_order_acquire);
	r->next = index;
	r->positioned = true;
}

static double dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

RTL_API int rtl_telemetry_reader_read(struct rtl_telemetry_reader *r,
				      struct rtl_telemetry_record *out, unsigned max)
{
	uint64_t head, lost = 0;
	unsigned n = 0;

	if (!r || (!out && max))
		return -EINVAL;
	/* acquire: every record below head is whole (or since overwritten). */
	head = atomic_load_explicit(word_at(r->map, H_HEAD), memory_order_acquire);
	if (!r->positioned) {
		r->next = head > r->capacity ? head - r->capacity : 0;
		r->positioned = true;
	}
	if (r->next + r->capacity < head) {
		/* Fallen behind by more than the ring: those are gone. */
		lost += head - r->capacity - r->next;
		r->next = head - r->capacity;
	}
	while (r->next < head && n < max) {
		uint64_t k = r->next++;
		size_t off = r->records_off +
			     (size_t)(k & (r->capacity - 1)) * r->record_words * sizeof(uint64_t);
		uint64_t s1 = atomic_load_explicit(word_at(r->map, off), memory_order_acquire), s2;
		struct rtl_telemetry_record *rec = &out[n];

		if (s1 != 2 * k + 2) {
			lost++; /* overwritten by a later record already */
			continue;
		}
		rec->index = k;
		rec->t_ns = (int64_t)atomic_load_explicit(word_at(r->map, off + 8),
							  memory_order_acquire);
		rec->frame = atomic_load_explicit(word_at(r->map, off + 16), memory_order_acquire);
		rec->ctrl_time =
			dbl(atomic_load_explicit(word_at(r->map, off + 24), memory_order_acquire));
		for (unsigned i = 0; i < r->n_values; i++)
			rec->values[i] = dbl(atomic_load_explicit(
				word_at(r->map, off + (RECORD_FIXED + i) * sizeof(uint64_t)),
				memory_order_acquire));
		/* acquire loads: the check below is read after the words */
		s2 = atomic_load_explicit(word_at(r->map, off), memory_order_relaxed);
		if (s2 != s1) {
			lost++; /* overwritten while it was copied */
			continue;
		}
		n++;
	}
	r->missed += lost;
	return (int)n;
}

RTL_API uint64_t rtl_telemetry_reader_missed(const struct rtl_telemetry_reader *r)
{
	return r ? r->missed : 0;
}

RTL_API int rtl_telemetry_reader_counters(const struct rtl_telemetry_reader *r, uint64_t *out,
					  unsigned max)
{
	unsigned n;

	if (!r || (!out && max))
		return -EINVAL;
	n = r->n_counters < max ? r->n_counters : max;
	for (unsigned i = 0; i < n; i++)
		out[i] = atomic_load_explicit(
			word_at(r->map, r->counters_off + i * sizeof(uint64_t)),
			memory_order_relaxed);
	return (int)n;
}

RTL_API int rtl_telemetry_reader_hist(const struct rtl_telemetry_reader *r, unsigned i,
				      struct rtl_hist *out)
{
	word *dst;
	size_t off;

	if (!r || !out || i >= r->n_hists)
		return -EINVAL;
	dst = (word *)(void *)out;
	off = r->hists_off + (size_t)i * HIST_ENTRY + RTL_TELEMETRY_HIST_NAME;
	for (size_t k = 0; k < HIST_WORDS; k++)
		atomic_store_explicit(
			&dst[k],
			atomic_load_explicit(word_at(r->map, off + k * sizeof(uint64_t)),
					     memory_order_relaxed),
			memory_order_relaxed);
	return 0;
}
