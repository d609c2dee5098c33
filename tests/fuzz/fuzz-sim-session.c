// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: rtde-sim's RTDE session (apps/rtde-sim/session.c), the
 * parser any client that connects to the simulator reaches.
 *
 * Input: byte 0 picks the controller's options (profile, highest protocol,
 * fieldbus, text_v2, a small send buffer so that the slow-reader close is
 * reached), byte 1 seeds the chunking, the rest is what the client sends.
 * The harness is the server without sockets: each piece goes to
 * sim_session_feed() as one read, then the controller runs a cycle (so
 * a recipe the input set up is streamed), and the client takes part of the
 * queued bytes. A session the server would close (out of sync, too slow)
 * is closed.
 *
 * Oracles: feed returns only its documented codes; the send queue stays
 * inside its buffer and always holds whole RTDE packages of known types
 * (re-framed here); recipes stay inside their wire size; ids and counters
 * stay within their bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/rtde.h>

#include "fuzz-common.h"
#include "session.h"
#include "sim.h"

static void check_recipe(const struct sim_recipe *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		FUZZ_CHECK(rtl_rtde_type_is_value(r->types[i]));
		FUZZ_CHECK(r->offsets[i] + rtl_rtde_type_size(r->types[i]) <= r->wire_size);
	}
	FUZZ_CHECK(r->wire_size <= RTL_RTDE_MAX_PAYLOAD_SIZE);
	FUZZ_CHECK(r->echo_slot < (int)r->n);
}

/* The queue holds whole packages, each of a type a controller sends. */
static void check_queue(const struct sim_session *s)
{
	const uint8_t *p;
	size_t len = sim_session_pending(s, &p), off = 0;

	FUZZ_CHECK(s->out.head + s->out.len <= s->out.cap);
	while (off < len) {
		size_t n;

		FUZZ_CHECK(len - off >= RTL_RTDE_HEADER_SIZE);
		n = rtl_rtde_load_u16(p + off);
		FUZZ_CHECK(n >= RTL_RTDE_HEADER_SIZE && n <= len - off);
		FUZZ_CHECK(strchr("VvOISPUM", p[off + 2]) && p[off + 2]);
		off += n;
	}
}

static void check_session(const struct sim *sim, const struct sim_session *s)
{
	FUZZ_CHECK(s->proto == RTL_RTDE_PROTOCOL_V1 || s->proto == RTL_RTDE_PROTOCOL_V2);
	FUZZ_CHECK(s->proto <= sim->opts.max_protocol);
	FUZZ_CHECK(s->n_inputs <= SIM_MAX_INPUT_RECIPES);
	FUZZ_CHECK(!s->out_valid || (s->has_outputs && s->outputs.n > 0 && s->divisor >= 1));
	FUZZ_CHECK(!s->started || s->out_valid);
	check_recipe(&s->outputs);
	for (unsigned i = 0; i < s->n_inputs; i++) {
		FUZZ_CHECK(s->inputs[i].n > 0);
		check_recipe(&s->inputs[i]);
	}
	FUZZ_CHECK(s->stats.inputs_applied <= s->stats.packages_in);
	FUZZ_CHECK(s->stats.texts_in <= s->stats.packages_in);
	check_queue(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum sim_profile_id profiles[] = { SIM_PROFILE_ESERIES, SIM_PROFILE_CB3,
							SIM_PROFILE_POLYSCOPE_X,
							SIM_PROFILE_ESERIES };
	struct sim_opts o;
	struct sim *sim;
	struct sim_session *s;
	struct fuzz_chunker ch;
	uint8_t *piece;
	uint32_t rng;
	size_t n;
	int64_t now = 0;
	int err = 0;

	if (size < 2)
		return 0;
	rtl_log_set_handler(NULL, NULL);
	sim_opts_default(&o);
	o.profile = profiles[data[0] & 3];
	o.max_protocol = data[0] & 4 ? 1 : 2;
	o.fieldbus = data[0] & 8;
	o.text_v2 = data[0] & 16;
	if (data[0] & 32)
		o.send_buffer = 4096; /* the smallest: a slow reader fills it soon */
	o.echo_register = data[0] & 64 ? 30 : -1;
	sim = sim_new(&o, 0, &err);
	FUZZ_CHECK(sim);
	s = sim_session_open(sim, 0);
	FUZZ_CHECK(s);
	rng = 0x2545F491u * (data[1] + 1u);

	fuzz_chunker_init(&ch, data[1], data + 2, size - 2);
	while ((piece = fuzz_chunk_next(&ch, &n)) != NULL) {
		const uint8_t *p;
		size_t pending;
		int r;

		now += sim_period_ns(sim);
		r = sim_session_feed(sim, s, piece, n, now);
		free(piece);
		FUZZ_CHECK(r >= 0 || r == -EMSGSIZE || r == -ENOBUFS);
		FUZZ_CHECK(r <= (int)(n / RTL_RTDE_HEADER_SIZE) + 1);
		if (r == -EMSGSIZE)
			FUZZ_CHECK(s->close == SIM_CLOSE_DESYNC);
		if (r == -ENOBUFS)
			FUZZ_CHECK(s->close == SIM_CLOSE_SLOW);
		sim_cycle(sim, now, true);
		check_session(sim, s);
		if (s->close != SIM_CLOSE_NONE)
			break; /* the server closes it */
		/* The client reads all of it, or only its first packages (a
		 * slow reader). */
		pending = sim_session_pending(s, &p);
		if (fuzz_rand(&rng) & 1) {
			size_t half = 0;

			while (half < pending / 2)
				half += rtl_rtde_load_u16(p + half);
			pending = half;
		}
		sim_session_consumed(s, pending);
	}
	sim_session_close(sim, s);
	for (size_t i = 0; i < sim->n_fields; i++)
		FUZZ_CHECK(sim->owner[i] == 0);
	sim_free(sim);
	return 0;
}
