// SPDX-License-Identifier: MIT
/* A scripted RTDE controller for tests: see fake-rtde.h. */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rtloop/rtde.h>
#include <rtloop/rtde_fields.h>
#include <rtloop/tcp.h>
#include <rtloop/time.h>

#include "fake-rtde.h"

#define SEC RTL_NS_PER_SEC

static int send_pkg(int fd, const uint8_t *p, int n)
{
	cr_assert_gt(n, 0);
	return rtl_tcp_send_all(fd, p, (size_t)n, rtl_time_now() + 2 * SEC);
}

/* Types of a comma-separated names list, as a controller replies. */
static size_t reply_types(const char *names, size_t len, char *out, size_t cap,
			  enum rtl_rtde_type *types, size_t *n)
{
	struct rtl_rtde_list it;
	const char *item;
	size_t ilen, k = 0;

	*n = 0;
	rtl_rtde_list_init(&it, names, len);
	while (rtl_rtde_list_next(&it, &item, &ilen)) {
		const struct rtl_rtde_field *f = rtl_rtde_field_find_n(item, ilen);

		types[(*n)++] = f ? f->type : RTL_RTDE_TYPE_NOT_FOUND;
	}
	k = (size_t)rtl_rtde_format_types(out, cap, types, *n);
	return k;
}

/* Serve one connection until the client or the script ends it, cutting
 * what the client sends with @fr (reset here: one stream per connection). */
static void serve(struct fake *fk, int fd, struct rtl_rtde_framer *fr)
{
	static _Thread_local uint8_t in[65536], out[65536];
	static _Thread_local enum rtl_rtde_type otypes[256], itypes[256];
	struct rtl_rtde_controller_version v = { 5, 12, 0, 7 };
	enum rtl_rtde_protocol proto = RTL_RTDE_PROTOCOL_V1;
	size_t n_out = 0, n_in = 0;
	int next_input = 1, wire = 0;
	double ts = 42.0;
	char types[4096];

	rtl_rtde_framer_reset(fr);
	for (;;) {
		ssize_t got = rtl_tcp_recv(fd, in, sizeof(in), rtl_time_now() + 3 * SEC);
		const uint8_t *p;
		size_t len;

		if (got <= 0)
			return;
		if (fk->silent)
			continue;
		rtl_rtde_framer_feed(fr, in, (size_t)got);
		while (rtl_rtde_framer_next(fr, &p, &len) == 1) {
			struct rtl_rtde_msg m;
			size_t k;

			if (rtl_rtde_decode(&m, p, len, proto, RTL_RTDE_FROM_CLIENT))
				return;
			switch (m.type) {
			case RTL_RTDE_PKG_PROTOCOL_VERSION:
				send_pkg(fd, out,
					 rtl_rtde_encode_accepted_reply(out, sizeof(out), m.type,
									true));
				proto = (enum rtl_rtde_protocol)m.u.protocol_version;
				break;
			case RTL_RTDE_PKG_URCONTROL_VERSION:
				send_pkg(fd, out,
					 rtl_rtde_encode_urcontrol_version_reply(out, sizeof(out),
										 &v));
				break;
			case RTL_RTDE_PKG_SETUP_OUTPUTS:
				k = reply_types(m.u.setup.names, m.u.setup.names_len, types,
						sizeof(types), otypes, &n_out);
				wire = rtl_rtde_layout(NULL, otypes, n_out);
				send_pkg(fd, out,
					 rtl_rtde_encode_setup_outputs_reply(out, sizeof(out),
									     proto, 1, types, k));
				break;
			case RTL_RTDE_PKG_SETUP_INPUTS:
				k = reply_types(m.u.setup.names, m.u.setup.names_len, types,
						sizeof(types), itypes, &n_in);
				send_pkg(fd, out,
					 rtl_rtde_encode_setup_inputs_reply(out, sizeof(out),
									    (uint8_t)next_input++,
									    types, k));
				break;
			case RTL_RTDE_PKG_START: {
				/* Burst: everything below in one write. */
				size_t at = (size_t)rtl_rtde_encode_accepted_reply(out, sizeof(out),
										   m.type, true);

				if (!fk->burst) {
					send_pkg(fd, out, (int)at);
					at = 0;
				}
				for (int i = 0; i < fk->ndata; i++) {
					uint8_t f[4096] = { 0 };
					int n;

					/* The test's recipes put timestamp first. */
					if (fk->jump_at && i == fk->jump_at)
						ts += fk->jump_s;
					rtl_rtde_store_f64(f, ts);
					ts += 0.002;
					n = rtl_rtde_encode_data(out + at, sizeof(out) - at, proto,
								 RTL_RTDE_FROM_CONTROLLER, 1, f,
								 (size_t)(fk->wrong_size && wire > 8
										  ? wire - 8
										  : wire));
					if (!fk->burst)
						send_pkg(fd, out, n);
					else
						at += (size_t)n;
				}
				if (fk->burst)
					send_pkg(fd, out, (int)at);
				if (!fk->wait_inputs && !fk->hold)
					return; /* close after streaming */
				break;
			}
			case RTL_RTDE_PKG_PAUSE:
				send_pkg(fd, out,
					 rtl_rtde_encode_accepted_reply(out, sizeof(out), m.type,
									true));
				break;
			case RTL_RTDE_PKG_DATA:
				atomic_store(&fk->input_id, m.u.data.recipe_id);
				atomic_store(&fk->input_value, rtl_rtde_load_i32(m.u.data.fields));
				return;
			default:
				break;
			}
		}
	}
}

static void *fake_main(void *arg)
{
	struct fake *fk = arg;
	struct rtl_rtde_framer *fr;

	cr_assert_eq(rtl_rtde_framer_create(&fr, RTL_RTDE_MAX_PACKAGE_SIZE, NULL), 0);
	for (int i = 0; i < fk->conns; i++) {
		int fd = rtl_tcp_accept(fk->lfd, 4 * SEC, NULL);

		if (fd < 0)
			break;
		serve(fk, fd, fr);
		close(fd);
		atomic_fetch_add(&fk->served, 1);
	}
	rtl_rtde_framer_destroy(fr);
	return NULL;
}

void fake_start(struct fake *fk)
{
	struct rtl_error err;

	fk->lfd = rtl_tcp_listen(&fk->port, NULL, 0, &err);
	cr_assert_geq(fk->lfd, 0, "%s", err.msg);
	cr_assert_gt(fk->port, 0);
	cr_assert_eq(pthread_create(&fk->th, NULL, fake_main, fk), 0);
}

void fake_stop(struct fake *fk)
{
	pthread_join(fk->th, NULL);
	close(fk->lfd);
}
