// SPDX-License-Identifier: MIT
/*
 * rtde-codec-bench: what decoding and encoding one RTDE data package
 * costs, against a floor of copying and byte-swapping the same bytes.
 *
 * What the receive thread does with every package is rtl_rtde_recipe_decode():
 * one pass over the recipe's runs, each element byte-swapped from the
 * package into a frame; the send side does rtl_rtde_recipe_encode(), the
 * same walk the other way. No decode can do less than move those bytes and
 * swap each 8- and 4-byte element, so the floor is exactly that, written
 * the fastest straightforward way: runs of contiguous elements of one size,
 * precomputed in wire order (wire offset, host offset, count, size), and
 * one memcpy + __builtin_bswap per element in loops of constant stride. A
 * second floor, "floor-elem", does the same from one precomputed entry per
 * element (what a per-element table costs); "floor-encode" is the floor
 * in the encode direction. A self-check proves that the floors, the decode
 * and the encode write identical bytes.
 *
 * Recipes:
 *   typical            20 fields a motion or monitoring client reads
 *                      (timestamp, joint and TCP vectors, modes, bits).
 *   exhaustive         every output field of the registry (406, as UR's
 *                      exhaustive test recipe), one recipe.
 *   exhaustive-unpack  the same package through the codec's per-field
 *                      rtl_rtde_unpack_to() / rtl_rtde_pack_from() over a
 *                      types array and the recipe's host layout: what a
 *                      program without a recipe pays.
 *
 * How (docs/benchmarks.md): the five loops run interleaved (the first one
 * rotating each repetition) for --reps repetitions in one process; each
 * timing runs enough iterations for about 10 ms. The report gives ns per
 * package (median over reps) and the median of the per-rep ratios to each
 * floor with min and max. --callgrind runs one loop only, for counting
 * instructions with valgrind; see docs/rtde-codec-bench.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_fields.h>
#include <rtloop/rtde_recipe.h>
#include <rtloop/time.h>

#include "benchmark.h"
#include "cli.h"

#define PROG "rtde-codec-bench"
#define TARGET_NS 10000000.0 /* per timing */

/* ---- recipes ---------------------------------------------------------- */

static const char *const typical_names[] = {
	"timestamp",	   "target_q",	       "target_qd",
	"target_qdd",	   "target_current",   "target_moment",
	"actual_q",	   "actual_qd",	       "actual_current",
	"actual_TCP_pose", "actual_TCP_speed", "actual_TCP_force",
	"target_TCP_pose", "target_TCP_speed", "actual_digital_input_bits",
	"robot_mode",	   "joint_mode",       "safety_mode",
	"speed_scaling",   "runtime_state",
};

enum recipe_id { R_TYPICAL, R_EXHAUSTIVE, R_UNPACK, NRECIPE };
static const char *const recipe_name[NRECIPE] = { "typical", "exhaustive", "exhaustive-unpack" };

enum impl { I_DECODE, I_FLOOR, I_FLOOR_ELEM, I_ENCODE, I_FLOOR_ENC, NIMPL };
static const char *const impl_name[NIMPL] = { "decode", "floor", "floor-elem", "encode",
					      "floor-encode" };

/* One element of the per-element floor: where it is on the wire and in
 * the frame. */
struct elem {
	uint32_t wire;
	uint32_t host;
};

/* A run of @count elements of one size, contiguous on the wire and in the
 * frame (the doubles of a VECTOR6D, and consecutive fields when no
 * alignment padding separates them in the frame). */
struct run {
	uint32_t wire;
	uint32_t host;
	uint32_t count;
	uint32_t size; /* of one element: 8, 4 or 1 */
};

struct bench {
	enum recipe_id id;
	size_t fields;
	size_t wire_size;
	size_t host_size;
	uint8_t *wire; /* the fields part of one package */
	unsigned char *host_dec;
	unsigned char *host_floor;
	unsigned char *host_elem;
	unsigned char *host_src; /* the decoded package: what encode reads */
	uint8_t *wire_enc;
	uint8_t *wire_floor_enc;
	/* decode and encode */
	struct rtl_rtde_recipe *r;
	struct rtl_rtde_frame f;     /* over host_dec */
	struct rtl_rtde_frame f_src; /* over host_src */
	enum rtl_rtde_type *types;   /* the recipe's, for unpack_to / pack_from */
	uint32_t *wire_off;
	uint32_t *host_off;
	/* floor */
	struct elem *e8, *e4, *e1;
	size_t n8, n4, n1;
	struct run *runs;
	size_t nruns;
	/* results per rep */
	double ns[NIMPL][BENCH_OPT_MAX_REPS];
	double ratio[BENCH_OPT_MAX_REPS];      /* decode / floor */
	double ratio_elem[BENCH_OPT_MAX_REPS]; /* decode / floor-elem */
	double ratio_enc[BENCH_OPT_MAX_REPS];  /* encode / floor-encode */
	uint64_t iters;
};

/* ---- the implementations ------------------------------------------- */

/* One BITS-bit element from @s to @d, byte-swapped: a memcpy in, a bswap,
 * a memcpy out (any alignment). */
#define COPY_SWAPPED(bits, d, s)                \
	do {                                    \
		uint##bits##_t v_;              \
		memcpy(&v_, (s), (bits) / 8);   \
		v_ = __builtin_bswap##bits(v_); \
		memcpy((d), &v_, (bits) / 8);   \
	} while (0)

/*
 * Copy and byte-swap the runs, from the package into the frame (@to_wire
 * false) or back: one memcpy + bswap per element in loops of constant
 * stride, memory walked front to back. Always inlined, so that each floor
 * below is its own straight loop with the direction folded away.
 */
static inline __attribute__((always_inline)) void swap_runs(const struct run *runs, size_t nruns,
							    const unsigned char *from,
							    unsigned char *to, bool to_wire)
{
	for (size_t i = 0; i < nruns; i++) {
		const unsigned char *src = from + (to_wire ? runs[i].host : runs[i].wire);
		unsigned char *dst = to + (to_wire ? runs[i].wire : runs[i].host);
		size_t n = runs[i].count;

		switch (runs[i].size) {
		case 8:
			for (size_t j = 0; j < n; j++)
				COPY_SWAPPED(64, dst + 8 * j, src + 8 * j);
			break;
		case 4:
			for (size_t j = 0; j < n; j++)
				COPY_SWAPPED(32, dst + 4 * j, src + 4 * j);
			break;
		default:
			memcpy(dst, src, n);
			break;
		}
	}
}

/*
 * The floor: copy every element and swap the multi-byte ones, over runs of
 * contiguous elements of one size in wire order.
 */
static __attribute__((noinline)) void floor_once(const struct bench *b)
{
	/* Arguments, not b's members: the stores are through char pointers,
	 * which may alias *b, so the compiler would reload them per element. */
	swap_runs(b->runs, b->nruns, b->wire, b->host_floor, false);
}

/*
 * The per-element floor: the same work driven by one precomputed entry per
 * element (three branch-free loops, nothing to look up but two offsets).
 */
static __attribute__((noinline)) void floor_elem_once(const struct bench *b)
{
	const uint8_t *w = b->wire;
	unsigned char *h = b->host_elem;
	const struct elem *e8 = b->e8, *e4 = b->e4, *e1 = b->e1;
	size_t n8 = b->n8, n4 = b->n4, n1 = b->n1;

	for (size_t i = 0; i < n8; i++)
		COPY_SWAPPED(64, h + e8[i].host, w + e8[i].wire);
	for (size_t i = 0; i < n4; i++)
		COPY_SWAPPED(32, h + e4[i].host, w + e4[i].wire);
	for (size_t i = 0; i < n1; i++)
		h[e1[i].host] = w[e1[i].wire];
}

/*
 * The encode floor: the same runs in the other direction, from the decoded
 * frame to package bytes.
 */
static __attribute__((noinline)) void floor_enc_once(const struct bench *b)
{
	swap_runs(b->runs, b->nruns, b->host_src, b->wire_floor_enc, true);
}

/* What the receive thread does: the library's decode of one package. */
static __attribute__((noinline)) int decode_once(struct bench *b)
{
	if (b->id == R_UNPACK)
		return rtl_rtde_unpack_to(b->host_dec, b->wire, b->wire_size, b->types, b->fields,
					  b->host_off);
	return rtl_rtde_recipe_decode(b->r, &b->f, b->wire, b->wire_size);
}

/* What the send side does: the library's encode of one package. */
static __attribute__((noinline)) int encode_once(struct bench *b)
{
	int n;

	if (b->id == R_UNPACK)
		n = rtl_rtde_pack_from(b->wire_enc, b->wire_size, b->types, b->fields, b->host_off,
				       b->host_src);
	else
		n = rtl_rtde_recipe_encode(b->r, b->wire_enc, b->wire_size, &b->f_src);
	return n < 0 ? n : 0;
}

/* Keep the compiler from merging or dropping iterations of the loops:
 * every iteration's stores must happen. */
#define BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")

/* The timed and the callgrind loops (named for --toggle-collect): cg_loop_NAME
 * runs STEP @n times, each followed by a barrier on its output b->OUT. */
#define CG_LOOP(name, step, out)                                                         \
	static __attribute__((noinline)) int cg_loop_##name(struct bench *b, uint64_t n) \
	{                                                                                \
		int err = 0;                                                             \
		for (uint64_t i = 0; i < n; i++) {                                       \
			step;                                                            \
			BARRIER(b->out);                                                 \
		}                                                                        \
		return err;                                                              \
	}

CG_LOOP(decode, err |= decode_once(b), host_dec)
CG_LOOP(floor, floor_once(b), host_floor)
CG_LOOP(floor_elem, floor_elem_once(b), host_elem)
CG_LOOP(encode, err |= encode_once(b), wire_enc)
CG_LOOP(floor_encode, floor_enc_once(b), wire_floor_enc)

static int run_impl(struct bench *b, enum impl impl, uint64_t n)
{
	switch (impl) {
	case I_DECODE:
		return cg_loop_decode(b, n);
	case I_FLOOR:
		return cg_loop_floor(b, n);
	case I_FLOOR_ELEM:
		return cg_loop_floor_elem(b, n);
	case I_ENCODE:
		return cg_loop_encode(b, n);
	default:
		return cg_loop_floor_encode(b, n);
	}
}

/* ---- set-up ------------------------------------------------------------- */

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* splitmix64: a fixed-seed generator, the same package on every run. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Extend the last run of @runs by @e if it follows it on the wire and in
 * the frame, else start a new run. */
static void add_to_runs(struct run *runs, size_t *n, struct elem e, uint32_t size)
{
	struct run *last = *n ? &runs[*n - 1] : NULL;

	if (last && last->size == size && last->wire + last->count * size == e.wire &&
	    last->host + last->count * size == e.host) {
		last->count++;
		return;
	}
	runs[(*n)++] = (struct run){ e.wire, e.host, 1, size };
}

/*
 * From the per-field types, wire and host offsets of b: the floor's element
 * lists, the package bytes (random, BOOL fields 0 or 1) and the frames.
 */
static int finish_bench(struct bench *b)
{
	uint64_t seed = 42 + (uint64_t)b->id;
	size_t n_el = 0;

	for (size_t i = 0; i < b->fields; i++)
		n_el += rtl_rtde_type_elems(b->types[i]);
	b->e8 = calloc(n_el, sizeof(struct elem));
	b->e4 = calloc(n_el, sizeof(struct elem));
	b->e1 = calloc(n_el, sizeof(struct elem));
	b->wire = malloc(b->wire_size);
	b->host_dec = aligned_alloc(64, align_up(b->host_size, 64));
	b->host_floor = aligned_alloc(64, align_up(b->host_size, 64));
	b->host_elem = aligned_alloc(64, align_up(b->host_size, 64));
	b->host_src = aligned_alloc(64, align_up(b->host_size, 64));
	b->wire_enc = malloc(b->wire_size);
	b->wire_floor_enc = malloc(b->wire_size);
	b->runs = calloc(n_el, sizeof(struct run));
	if (!b->e8 || !b->e4 || !b->e1 || !b->wire || !b->host_dec || !b->host_floor ||
	    !b->host_elem || !b->host_src || !b->wire_enc || !b->wire_floor_enc || !b->runs)
		return -ENOMEM;
	memset(b->host_dec, 0, b->host_size);
	memset(b->host_floor, 0, b->host_size);
	memset(b->host_elem, 0, b->host_size);
	memset(b->host_src, 0, b->host_size);
	memset(b->wire_enc, 0, b->wire_size);
	memset(b->wire_floor_enc, 0, b->wire_size);

	for (size_t i = 0; i < b->wire_size; i++)
		b->wire[i] = (uint8_t)rng_next(&seed);
	for (size_t i = 0; i < b->fields; i++) {
		enum rtl_rtde_type t = b->types[i];
		unsigned ne = rtl_rtde_type_elems(t);
		size_t es = rtl_rtde_type_size(t) / ne;

		if (t == RTL_RTDE_TYPE_BOOL)
			b->wire[b->wire_off[i]] &= 1;
		for (unsigned j = 0; j < ne; j++) {
			struct elem e = { (uint32_t)(b->wire_off[i] + j * es),
					  (uint32_t)(b->host_off[i] + j * es) };

			if (es == 8)
				b->e8[b->n8++] = e;
			else if (es == 4)
				b->e4[b->n4++] = e;
			else
				b->e1[b->n1++] = e;
			add_to_runs(b->runs, &b->nruns, e, (uint32_t)es);
		}
	}
	if (rtl_rtde_frame_init(&b->f, b->host_dec, b->host_size, b->r) ||
	    rtl_rtde_frame_init(&b->f_src, b->host_src, b->host_size, b->r))
		return -EINVAL;
	return 0;
}

/* Recipe @r's layout as b's per-field arrays. */
static void add_recipe_layout(struct bench *b, const struct rtl_rtde_recipe *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		b->types[b->fields] = (enum rtl_rtde_type)r->slots[i].type;
		b->wire_off[b->fields] = r->slots[i].wire_offset;
		b->host_off[b->fields] = r->slots[i].host_offset;
		b->fields++;
	}
}

static int build_recipe(struct rtl_rtde_recipe **out, const char *const *names, size_t n)
{
	static const struct rtl_rtde_recipe_opts opts = { .size = sizeof(opts),
							  .dir = RTL_RTDE_RECIPE_OUTPUT };
	struct rtl_rtde_report *rep = malloc(sizeof(*rep));
	int err;

	*out = malloc(sizeof(**out));
	if (!*out || !rep) {
		free(rep);
		return -ENOMEM;
	}
	err = rtl_rtde_recipe_from_names(*out, &opts, names, n, rep);
	if (err < 0)
		fprintf(stderr, "rtde-codec-bench: recipe: %s", rep->text);
	free(rep);
	return err < 0 ? err : 0;
}

static int setup_bench(struct bench *b, enum recipe_id id)
{
	const char **names = NULL, *step = "decode";
	size_t n_out = 0, k = 0;
	int err;

	memset(b, 0, sizeof(*b));
	b->id = id;
	for (size_t i = 0; i < rtl_rtde_field_count(); i++)
		n_out += (rtl_rtde_field_at(i)->flags & RTL_RTDE_FIELD_OUTPUT) != 0;
	b->types = calloc(n_out, sizeof(*b->types));
	b->wire_off = calloc(n_out, sizeof(*b->wire_off));
	b->host_off = calloc(n_out, sizeof(*b->host_off));
	names = calloc(n_out, sizeof(*names));
	if (!b->types || !b->wire_off || !b->host_off || !names) {
		err = -ENOMEM;
		goto out;
	}

	if (id == R_TYPICAL) {
		err = build_recipe(&b->r, typical_names,
				   sizeof(typical_names) / sizeof(typical_names[0]));
	} else {
		/* Every output of the registry, one recipe (also the layout of
		 * the unpack_to row). */
		for (size_t i = 0; i < rtl_rtde_field_count(); i++)
			if (rtl_rtde_field_at(i)->flags & RTL_RTDE_FIELD_OUTPUT)
				names[k++] = rtl_rtde_field_at(i)->name;
		err = build_recipe(&b->r, names, k);
	}
	if (err)
		goto out;
	add_recipe_layout(b, b->r);
	b->wire_size = b->r->wire_size;
	b->host_size = b->r->host_size;
	err = finish_bench(b);
	if (err)
		goto out;

	/* Self-check: the floors do the decode's and the encode's work, no
	 * less. The package's BOOL bytes are 0 or 1, so encoding the decoded
	 * frame gives the package back. */
	err = decode_once(b);
	if (!err) {
		floor_once(b);
		floor_elem_once(b);
		memcpy(b->host_src, b->host_dec, b->host_size);
		step = "encode";
		err = encode_once(b);
	}
	if (err) {
		fprintf(stderr, "rtde-codec-bench: %s: %s failed: %s\n", recipe_name[id], step,
			strerror(-err));
		goto out;
	}
	floor_enc_once(b);
	if (memcmp(b->host_dec, b->host_floor, b->host_size) ||
	    memcmp(b->host_dec, b->host_elem, b->host_size) ||
	    memcmp(b->wire_enc, b->wire, b->wire_size) ||
	    memcmp(b->wire_floor_enc, b->wire, b->wire_size)) {
		fprintf(stderr, "rtde-codec-bench: %s: the floors and the library disagree\n",
			recipe_name[id]);
		err = -EPROTO;
	}
out:
	free(names);
	return err;
}

static void free_bench(struct bench *b)
{
	free(b->r);
	free(b->types);
	free(b->wire_off);
	free(b->host_off);
	free(b->e8);
	free(b->e4);
	free(b->e1);
	free(b->wire);
	free(b->host_dec);
	free(b->host_floor);
	free(b->host_elem);
	free(b->host_src);
	free(b->wire_enc);
	free(b->wire_floor_enc);
	free(b->runs);
}

/* ---- options ------------------------------------------------------------ */

struct opts {
	struct bench_opts bench; /* --reps, --json, --callgrind */
	uint64_t iters;		 /* 0: calibrate */
	int cpu;		 /* -1: do not pin */
	bool only[NRECIPE];	 /* --recipe given: run those only */
	bool any_only;
	enum impl cg_impl;
	enum recipe_id cg_recipe;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rtde-codec-bench [OPTIONS]\n"
		"ns per RTDE data-package decode and encode (rtl_rtde_recipe_decode/encode)\n"
		"against a floor of copying and byte-swapping the same bytes, interleaved in\n"
		"one run, for a typical 20-field recipe and the exhaustive output recipe (and\n"
		"the latter through the codec's rtl_rtde_unpack_to/pack_from).\n"
		"With --callgrind, --recipe picks the recipe (default typical).\n"
		"\n"
		"  -h, --help           this text\n"
		"  -V, --version        print the version and exit\n"
		"  -r, --reps N         repetitions (default 11, at least 7 recommended, max %d)\n"
		"  -n, --iters N        decodes per timing (default: about 10 ms worth)\n"
		"  -c, --cpu N          pin to CPU N (default: not pinned)\n"
		"  -R, --recipe NAME    typical, exhaustive or exhaustive-unpack; repeat to run\n"
		"                       several (default: all three)\n"
		"  -j, --json FILE      also write the figures as one JSON object ('-': stdout,\n"
		"                       the table then goes to stderr)\n"
		"  -g, --callgrind N    only run N iterations of one implementation and exit\n"
		"                       (loop functions cg_loop_decode, cg_loop_floor,\n"
		"                       cg_loop_floor_elem, cg_loop_encode,\n"
		"                       cg_loop_floor_encode); for valgrind --tool=callgrind,\n"
		"                       difference two N\n"
		"  -i, --impl NAME      with --callgrind: decode, floor, floor-elem, encode or\n"
		"                       floor-encode (default decode)\n"
		"\n"
		"Exit status: 0 ok, 1 run-time failure, 2 bad usage.\n",
		BENCH_OPT_MAX_REPS);
}

/* Returns CLI_RUN, or the exit status to stop with (--help, --version, a
 * usage error, printed). */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	const struct cli_opt opts[] = {
		CLI_HELP,
		BENCH_ROWS(&o->bench),
		CLI_UINT('n', "iters", &o->iters, 1, UINT64_C(1) << 40, "want a positive integer"),
		CLI_UINT('c', "cpu", &o->cpu, 0, CPU_SETSIZE - 1, "want a CPU number"),
		CLI_CASE_ARG('R', "recipe"),
		CLI_CHOICE('i', "impl", &o->cg_impl, impl_name, NIMPL,
			   "want decode, floor, floor-elem, encode or floor-encode"),
		CLI_VERSION,
		CLI_END,
	};
	struct cli_parser p = { .prog = PROG, .opts = opts, .usage = usage };
	int c, k;

	/* .cg_impl NIMPL: no --impl, the default is I_DECODE. */
	*o = (struct opts){ .bench.reps = 11, .cpu = -1, .cg_impl = NIMPL, .cg_recipe = R_TYPICAL };
	while ((c = cli_next(&p, argc, argv)) > 0) { /* 'R', --recipe */
		k = cli_lookup(optarg, recipe_name, NRECIPE);
		if (k < 0)
			return cli_bad_value(PROG, "--recipe", optarg,
					     "want typical, exhaustive or exhaustive-unpack");
		o->only[k] = true;
		o->any_only = true;
		o->cg_recipe = (enum recipe_id)k;
	}
	if (c < 0)
		return p.status;
	if (cli_extra_args(PROG, optind, argc, argv))
		return CLI_EXIT_USAGE;
	if (o->cg_impl == NIMPL)
		o->cg_impl = I_DECODE;
	else if (!o->bench.callgrind)
		return cli_bad_value(PROG, "--impl", impl_name[o->cg_impl],
				     "only with --callgrind");
	return CLI_RUN;
}

/* ---- statistics and report ------------------------------------------------- */

static void json_stat(FILE *f, const char *key, const double *v, unsigned n, bool comma)
{
	struct bench_stat3 s = bench_stat3(v, n);

	fprintf(f, "\"%s\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}%s", key, s.med, s.min,
		s.max, comma ? ", " : "");
}

static int report_json(const struct opts *o, struct bench *bs, const bool *run, const char *machine)
{
	FILE *f = bench_json_open(PROG, o->bench.json);
	bool first = true;

	if (!f)
		return -1;
	fprintf(f, "{\"bench\": \"rtde-codec-bench\", \"machine\": ");
	rtl_json_string(f, machine);
	fprintf(f, ", \"reps\": %u, ", o->bench.reps);
	fprintf(f, "\"recipes\": {");
	for (int i = 0; i < NRECIPE; i++) {
		const struct bench *b = &bs[i];

		if (!run[i])
			continue;
		fprintf(f, "%s\"%s\": {\"fields\": %zu, \"wire_bytes\": %zu, ", first ? "" : ", ",
			recipe_name[i], b->fields, b->wire_size);
		fprintf(f, "\"elements\": {\"8\": %zu, \"4\": %zu, \"1\": %zu}, ", b->n8, b->n4,
			b->n1);
		fprintf(f, "\"floor_runs\": %zu, \"recipe_runs\": %u, ", b->nruns, b->r->n_runs);
		fprintf(f, "\"iters\": %" PRIu64 ", ", b->iters);
		json_stat(f, "decode_ns", b->ns[I_DECODE], o->bench.reps, true);
		json_stat(f, "floor_ns", b->ns[I_FLOOR], o->bench.reps, true);
		json_stat(f, "floor_elem_ns", b->ns[I_FLOOR_ELEM], o->bench.reps, true);
		json_stat(f, "encode_ns", b->ns[I_ENCODE], o->bench.reps, true);
		json_stat(f, "floor_encode_ns", b->ns[I_FLOOR_ENC], o->bench.reps, true);
		json_stat(f, "ratio", b->ratio, o->bench.reps, true);
		json_stat(f, "ratio_elem", b->ratio_elem, o->bench.reps, true);
		json_stat(f, "ratio_encode", b->ratio_enc, o->bench.reps, false);
		fprintf(f, "}");
		first = false;
	}
	fprintf(f, "}}\n");
	bench_json_close(f);
	return 0;
}

/* ---- run ------------------------------------------------------------------- */

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static double time_ns_per(struct bench *b, enum impl impl, uint64_t n)
{
	int64_t t0 = rtl_time_now();

	run_impl(b, impl, n);
	return (double)(rtl_time_now() - t0) / (double)n;
}

/* Iterations for about TARGET_NS per timing, from a warm-up of both. */
static uint64_t calibrate(struct bench *b)
{
	double ns;

	time_ns_per(b, I_FLOOR, 1000);
	ns = time_ns_per(b, I_DECODE, 1000);
	ns = ns > 1.0 ? ns : 1.0;
	return (uint64_t)(TARGET_NS / ns) + 1000;
}

static int run_callgrind(const struct opts *o)
{
	struct bench *b = calloc(1, sizeof(*b));
	int err;

	if (!b) {
		fprintf(stderr, "rtde-codec-bench: out of memory\n");
		return 1;
	}
	err = setup_bench(b, o->cg_recipe);
	if (!err)
		err = run_impl(b, o->cg_impl, o->bench.callgrind);
	if (!err)
		printf("callgrind loop: %s %s, %" PRIu64 " iterations, %zu wire bytes\n",
		       impl_name[o->cg_impl], recipe_name[o->cg_recipe], o->bench.callgrind,
		       b->wire_size);
	else
		fprintf(stderr, "rtde-codec-bench: %s: %s\n", recipe_name[o->cg_recipe],
			strerror(-err));
	free_bench(b);
	free(b);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct bench *bs = NULL;
	bool run[NRECIPE];
	char machine[256];
	FILE *out;
	int ret = 1, err;

	/* 1. parse options and validate */
	err = parse_opts(argc, argv, &o);
	if (err != CLI_RUN)
		return err;
	for (int i = 0; i < NRECIPE; i++)
		run[i] = !o.any_only || o.only[i];
	out = o.bench.json && !strcmp(o.bench.json, "-") ? stderr : stdout;

	/* 2. pin */
	if (o.cpu >= 0 && (err = pin_self(o.cpu)) < 0) {
		char cpu[16];

		snprintf(cpu, sizeof(cpu), "%d", o.cpu);
		return cli_bad_value(PROG, "--cpu", cpu, strerror(-err));
	}
	if (o.bench.callgrind)
		return run_callgrind(&o);

	/* 3. allocate and check */
	bs = calloc(NRECIPE, sizeof(*bs));
	if (!bs) {
		fprintf(stderr, "rtde-codec-bench: out of memory\n");
		return 1;
	}
	for (int i = 0; i < NRECIPE; i++) {
		if (!run[i])
			continue;
		err = setup_bench(&bs[i], (enum recipe_id)i);
		if (err) {
			fprintf(stderr, "rtde-codec-bench: %s: set-up failed: %s\n", recipe_name[i],
				strerror(-err));
			goto out_free;
		}
		bs[i].iters = o.iters ? o.iters : calibrate(&bs[i]);
	}

	bench_machine(machine, sizeof(machine), false);
	fprintf(out, "rtde-codec-bench: %s; cpu %s; %u reps, library and floors interleaved\n",
		machine, o.cpu >= 0 ? "pinned" : "not pinned", o.bench.reps);

	/* 4. run: per rep, every recipe, A B or B A (alternating). */
	for (unsigned r = 0; r < o.bench.reps; r++) {
		for (int i = 0; i < NRECIPE; i++) {
			struct bench *b = &bs[i];

			if (!run[i])
				continue;
			for (int k = 0; k < NIMPL; k++) {
				enum impl impl = (enum impl)((k + (int)r) % NIMPL);

				b->ns[impl][r] = time_ns_per(b, impl, b->iters);
			}
			b->ratio[r] = b->ns[I_DECODE][r] / b->ns[I_FLOOR][r];
			b->ratio_elem[r] = b->ns[I_DECODE][r] / b->ns[I_FLOOR_ELEM][r];
			b->ratio_enc[r] = b->ns[I_ENCODE][r] / b->ns[I_FLOOR_ENC][r];
		}
	}

	/* 5. report */
	fprintf(out, "%-17s %6s %6s %11s %4s %9s %8s %8s  %-22s %-22s\n", "recipe", "fields",
		"bytes", "elements", "runs", "decode ns", "floor ns", "elem ns",
		"decode/floor [min,max]", "decode/elem [min,max]");
	for (int i = 0; i < NRECIPE; i++) {
		const struct bench *b = &bs[i];
		struct bench_stat3 d, fl, fe, q, qe;
		char el[32], rq[48], rqe[48];

		if (!run[i])
			continue;
		d = bench_stat3(b->ns[I_DECODE], o.bench.reps);
		fl = bench_stat3(b->ns[I_FLOOR], o.bench.reps);
		fe = bench_stat3(b->ns[I_FLOOR_ELEM], o.bench.reps);
		q = bench_stat3(b->ratio, o.bench.reps);
		qe = bench_stat3(b->ratio_elem, o.bench.reps);
		snprintf(el, sizeof(el), "%zu/%zu/%zu", b->n8, b->n4, b->n1);
		snprintf(rq, sizeof(rq), "%.2f [%.2f, %.2f]", q.med, q.min, q.max);
		snprintf(rqe, sizeof(rqe), "%.2f [%.2f, %.2f]", qe.med, qe.min, qe.max);
		fprintf(out, "%-17s %6zu %6zu %11s %4u %9.1f %8.1f %8.1f  %-22s %-22s\n",
			recipe_name[i], b->fields, b->wire_size, el, b->r->n_runs, d.med, fl.med,
			fe.med, rq, rqe);
	}
	fprintf(out, "%-17s %9s %8s  %-22s\n", "recipe", "encode ns", "floor ns",
		"encode/floor [min,max]");
	for (int i = 0; i < NRECIPE; i++) {
		const struct bench *b = &bs[i];
		struct bench_stat3 e, fl, q;

		if (!run[i])
			continue;
		e = bench_stat3(b->ns[I_ENCODE], o.bench.reps);
		fl = bench_stat3(b->ns[I_FLOOR_ENC], o.bench.reps);
		q = bench_stat3(b->ratio_enc, o.bench.reps);
		fprintf(out, "%-17s %9.1f %8.1f  %.2f [%.2f, %.2f]\n", recipe_name[i], e.med,
			fl.med, q.med, q.min, q.max);
	}
	fprintf(out, "(elements: 8-/4-/1-byte; runs: the recipe's; ns: median over reps; floor:\n"
		     " runs of contiguous elements; elem: one entry per element; target: decode\n"
		     " within 2x of the floor)\n");
	ret = 0;
	if (o.bench.json && report_json(&o, bs, run, machine))
		ret = 1;

out_free:
	for (int i = 0; i < NRECIPE; i++)
		free_bench(&bs[i]);
	free(bs);
	return ret;
}
