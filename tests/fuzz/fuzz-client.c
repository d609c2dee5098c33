// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the RTDE client state machine (io/rtde/rtde_client.c)
 * fed what a controller, or anything at the other end of TCP 30004, sends.
 *
 * Input: byte 0 picks the client configuration (fuzz-common.h) and, in its
 * high bits, how time moves; byte 1 seeds the chunking; the rest is the
 * controller's byte stream. The harness drives the client as the RTDE
 * transport does: connected(), then per read: send (here: drop) what the
 * client queued, feed the piece, take every event. Time advances a little
 * per read, or, when byte 0 says so, past the reply timeout now and then,
 * so the deadline paths run too. A FAILED or CLOSED client is reconnected
 * at most twice; at the end the peer closes.
 *
 * Oracles: every event is well formed (a DATA event has exactly the output
 * recipe's wire size and decodes; a STATE change names valid states; an
 * ERROR has a negative code and a NUL-terminated message), one piece yields
 * a bounded number of events, and the counters agree with each other.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/log.h>
#include <rtloop/rtde_client.h>

#include "fuzz-common.h"
#include "fuzz-configs.h"

/* Formats every message (the format arguments are exercised) and drops it. */
static void quiet(void *user, enum rtl_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	FUZZ_CHECK(strlen(msg) < RTL_LOG_LINE);
}

static void check_event(struct rtl_rtde_client *c, const struct rtl_rtde_client_event *ev,
			unsigned char *frame_buf, size_t frame_cap)
{
	const struct rtl_rtde_recipe *out = rtl_rtde_client_output_recipe(c);
	struct rtl_rtde_frame f;

	switch (ev->type) {
	case RTL_RTDE_CLIENT_EV_DATA:
		FUZZ_CHECK(out && ev->u.data.len == out->wire_size);
		FUZZ_CHECK(out->host_size <= frame_cap);
		FUZZ_CHECK(rtl_rtde_frame_init(&f, frame_buf, frame_cap, out) == 0);
		FUZZ_CHECK(rtl_rtde_client_decode(c, &f, ev) == 0);
		break;
	case RTL_RTDE_CLIENT_EV_TEXT:
		FUZZ_CHECK(ev->u.text.message_len <= RTL_RTDE_MAX_PAYLOAD_SIZE);
		FUZZ_CHECK(ev->u.text.source_len <= RTL_RTDE_MAX_PAYLOAD_SIZE);
		break;
	case RTL_RTDE_CLIENT_EV_STATE:
		FUZZ_CHECK(ev->u.state.from < RTL_RTDE_CLIENT_STATE_COUNT);
		FUZZ_CHECK(ev->u.state.to < RTL_RTDE_CLIENT_STATE_COUNT);
		FUZZ_CHECK(ev->u.state.to == rtl_rtde_client_state(c) ||
			   ev->u.state.to != ev->u.state.from);
		break;
	case RTL_RTDE_CLIENT_EV_ERROR:
		FUZZ_CHECK(ev->u.error && ev->u.error->err.code < 0);
		FUZZ_CHECK(memchr(ev->u.error->err.msg, '\0', sizeof(ev->u.error->err.msg)));
		break;
	default:
		FUZZ_CHECK(0);
	}
}

/* Take every event at @now; at most @max of them. */
static void drain(struct rtl_rtde_client *c, int64_t now, unsigned max, unsigned char *frame_buf,
		  size_t frame_cap)
{
	struct rtl_rtde_client_event ev;
	unsigned n = 0;
	int r;

	while ((r = rtl_rtde_client_next(c, &ev, now)) == 1) {
		check_event(c, &ev, frame_buf, frame_cap);
		FUZZ_CHECK(++n <= max);
	}
	FUZZ_CHECK(r == 0);
}

/* What the client queued goes nowhere; in pieces, as a socket takes it. */
static void send_all(struct rtl_rtde_client *c)
{
	const uint8_t *tx;
	size_t n;

	while ((n = rtl_rtde_client_tx(c, &tx)) > 0) {
		FUZZ_CHECK(n <= RTL_RTDE_CLIENT_TX_SIZE && tx);
		rtl_rtde_client_tx_done(c, n > 7 ? n / 2 : n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t ms = 1000000;
	struct rtl_rtde_client_config cfg = { .size = sizeof(cfg) };
	struct rtl_rtde_client *c = NULL;
	struct rtl_rtde_client_counters st = { .size = sizeof(st) };
	struct fuzz_chunker ch;
	unsigned char *frame_buf;
	size_t frame_cap = 64 * 1024;
	uint32_t trng;
	unsigned reconnects = 0;
	uint8_t *piece;
	size_t n;
	int64_t now = 0;
	int k;

	if (size < 2)
		return 0;
	rtl_log_set_handler(quiet, NULL);
	k = data[0] % FUZZ_CLIENT_CONFIGS;
	cfg = fuzz_client_configs[k];
	cfg.data_timeout_ns = data[0] & 0x80 ? 100 * ms : 0;
	trng = data[0] & 0x40 ? 0x2545F491u * (data[1] + 1u) : 0;
	FUZZ_CHECK(rtl_rtde_client_create(&c, &cfg, NULL) == 0);
	frame_buf = malloc(frame_cap);
	FUZZ_CHECK(frame_buf);
	FUZZ_CHECK(rtl_rtde_client_connected(c, now) == 0);
	FUZZ_CHECK(rtl_rtde_client_state(c) == RTL_RTDE_CLIENT_PROTOCOL);

	fuzz_chunker_init(&ch, data[1], data + 2, size - 2);
	while ((piece = fuzz_chunk_next(&ch, &n)) != NULL) {
		enum rtl_rtde_client_state_id s;
		int r;

		send_all(c);
		now += trng && fuzz_rand(&trng) % 16 == 0 ? 3000 * ms : ms;
		r = rtl_rtde_client_feed(c, piece, n);
		FUZZ_CHECK(r == 0 || r == -ENOTCONN);
		/* At most a few events per package, and a package is >= 3 bytes;
		 * plus one deadline. */
		drain(c, now, (unsigned)(n / 3 + 2) * RTL_RTDE_CLIENT_EVENT_QUEUE, frame_buf,
		      frame_cap);
		free(piece);
		s = rtl_rtde_client_state(c);
		FUZZ_CHECK(s < RTL_RTDE_CLIENT_STATE_COUNT);
		if (s == RTL_RTDE_CLIENT_RUNNING && trng && fuzz_rand(&trng) % 8 == 0)
			FUZZ_CHECK(rtl_rtde_client_pause(c, now) == 0);
		else if (s == RTL_RTDE_CLIENT_READY && trng && fuzz_rand(&trng) % 2 == 0)
			FUZZ_CHECK(rtl_rtde_client_start(c, now) == 0 || !cfg.outputs);
		if ((s == RTL_RTDE_CLIENT_FAILED || s == RTL_RTDE_CLIENT_CLOSED) &&
		    reconnects < 2) {
			reconnects++;
			rtl_rtde_client_count_reconnect(c);
			FUZZ_CHECK(rtl_rtde_client_connected(c, now) == 0);
		}
		if (s == RTL_RTDE_CLIENT_RUNNING || s == RTL_RTDE_CLIENT_READY) {
			const struct rtl_rtde_handshake *info = rtl_rtde_client_info(c);
			uint8_t pkg[512];

			FUZZ_CHECK(info->divisor >= 1);
			FUZZ_CHECK(info->n_inputs <= RTL_RTDE_CLIENT_MAX_INPUTS);
			for (unsigned i = 0; rtl_rtde_client_input_recipe(c, i); i++) {
				const struct rtl_rtde_recipe *ir =
					rtl_rtde_client_input_recipe(c, i);
				struct rtl_rtde_frame f;
				int e;

				memset(frame_buf, 0, ir->host_size);
				FUZZ_CHECK(rtl_rtde_frame_init(&f, frame_buf, frame_cap, ir) == 0);
				e = rtl_rtde_client_encode_inputs(c, i, pkg, sizeof(pkg), &f);
				FUZZ_CHECK(e == -ENOTCONN ||
					   (e > 0 && (size_t)e == rtl_rtde_load_u16(pkg)));
			}
		}
	}
	send_all(c);
	FUZZ_CHECK(rtl_rtde_client_closed(c, now, 0) == 0);
	drain(c, now, RTL_RTDE_CLIENT_EVENT_QUEUE + 1, frame_buf, frame_cap);
	rtl_rtde_client_stats(c, &st);
	FUZZ_CHECK(st.data + st.wrong_recipe <= st.packages);
	FUZZ_CHECK(st.text <= st.packages);
	FUZZ_CHECK(st.reconnects == reconnects);
	free(frame_buf);
	rtl_rtde_client_destroy(c);
	return 0;
}
