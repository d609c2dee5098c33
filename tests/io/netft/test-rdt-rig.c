// SPDX-License-Identifier: MIT
/*
 * The RDT transport in a rig against rtde-sim's simulated Net F/T (ft.h) in
 * this process, at 7 kHz with records skipped and reordered: the transport's
 * counts against the simulator's, the step's view of the sensor (fresh,
 * unseen, the wrench the feed holds), the stop at exit. Threaded (the
 * sensor's thread, the rig's loop and worker): also under ThreadSanitizer.
 */
#ifdef RTL_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtloop/rdt_transport.h>
#include <rtloop/rig.h>
#include <rtloop/time.h>

#include "ft.h"

/* The kernel's count of UDP datagrams dropped on a full receive buffer,
 * every socket of the machine (/proc/net/snmp): losses no fault injected. */
static long udp_buffer_drops(void)
{
	FILE *f = fopen("/proc/net/snmp", "r");
	char head[512], vals[512], *hs, *vs, *h, *v;
	long drops = 0;

	while (f && fgets(head, sizeof(head), f)) {
		if (strncmp(head, "Udp:", 4) || !fgets(vals, sizeof(vals), f))
			continue;
		for (h = strtok_r(head, " \n", &hs), v = strtok_r(vals, " \n", &vs); h && v;
		     h = strtok_r(NULL, " \n", &hs), v = strtok_r(NULL, " \n", &vs))
			if (!strcmp(h, "RcvbufErrors"))
				drops = atol(v);
		break;
	}
	if (f)
		fclose(f);
	return drops;
}

struct seen {
	_Atomic uint64_t steps, fresh, unseen;
	_Atomic int wrong_wrench;
};

static int step(struct rtl_rig *rig, const struct rtl_rig_input *in, unsigned n, void *user)
{
	struct seen *s = user;

	(void)rig;
	(void)n;
	if (in[0].frame && in[0].fresh) {
		const struct rtl_rdt_frame *f = rtl_rdt_loop_frame(in[0].frame);

		atomic_fetch_add(&s->fresh, 1);
		atomic_fetch_add(&s->unseen, in[0].unseen);
		if (fabs(f->wrench[2] + 2.5) > 1e-6 || fabs(f->wrench[3] - 0.25) > 1e-6)
			atomic_store(&s->wrong_wrench, 1);
	}
	atomic_fetch_add(&s->steps, 1);
	return 0;
}

Test(rdt_rig, a_7khz_sensor_with_losses_and_reordering_is_counted_exactly, .timeout = 60)
{
	static struct sim_ft_feed feed;
	const double w[6] = { 0, 0, -2.5, 0.25, 0, 0 };
	struct sim_ft_opts fo = {
		.rate_hz = 7000, .skip_every = 50, .skip_count = 1, .reorder_every = 37, .seed = 3
	};
	struct sim_ft *ft;
	struct rtl_rdt_transport *t;
	struct rtl_rdt_transport_config fc = { .size = sizeof(fc),
					       .host = "127.0.0.1",
					       .rate_hz = 7000 };
	struct rtl_rig_source src = { .name = "ft",
				      .sensor = true,
				      .stale_ns = 200 * RTL_NS_PER_MS };
	struct rtl_rig_config rc = { .size = sizeof(rc),
				     .sources = &src,
				     .n_sources = 1,
				     .clock = RTL_RIG_TIMER,
				     .period_ns = 2 * RTL_NS_PER_MS,
				     .step = step,
				     .rt_mode = RTL_LOOP_RT_OFF };
	struct rtl_rdt_transport_counters c = { .size = sizeof(c) };
	struct rtl_rig_source_counters sc = { .size = sizeof(sc) };
	struct sim_ft_stats st;
	struct seen s = { 0 };
	struct rtl_error err = { 0 };
	struct rtl_rig *rig;
	char why[160];
	int64_t end;
	long drops;

	sim_ft_feed_publish(&feed, w);
	cr_assert_eq(sim_ft_create(&ft, &fo, &feed, why, sizeof(why)), 0, "%s", why);
	drops = udp_buffer_drops();
	cr_assert_eq(sim_ft_start(ft), 0);
	fc.port = sim_ft_port(ft);
	cr_assert_eq(rtl_rdt_transport_create(&t, &fc, &err), 0, "%s", err.msg);
	src.transport = rtl_rdt_transport_base(t);
	rc.user = &s;
	cr_assert_eq(rtl_rig_create(&rig, &rc, &err), 0, "%s", err.msg);
	cr_assert_eq(rtl_rig_start(rig, &err), 0, "%s", err.msg);
	end = rtl_time_now() + 5 * RTL_NS_PER_SEC;
	while (atomic_load(&s.steps) < 400 && rtl_time_now() < end)
		rtl_time_sleep_until(rtl_time_now() + 10 * RTL_NS_PER_MS);
	rtl_rig_stop(rig);
	cr_expect_eq(rtl_rig_join(rig), 0);
	/* the stream is stopped (the transport's disconnect): the sensor's
	 * counts are final once its thread is */
	rtl_time_sleep_until(rtl_time_now() + 20 * RTL_NS_PER_MS);
	sim_ft_stop(ft);
	sim_ft_stats(ft, &st);
	drops = udp_buffer_drops() - drops;
	rtl_rdt_transport_stats(t, &c);
	rtl_rig_source_stats(rig, 0, &sc);
	cr_expect_geq(atomic_load(&s.steps), 400);
	cr_expect_eq(atomic_load(&s.wrong_wrench), 0, "the wrench the arm's feed holds");
	cr_expect_gt(st.skipped, 10);
	cr_expect_gt(st.reordered, 10);
	/* each reordered record arrives after the next: counted late; what
	 * never arrived is lost minus late (the last one or two may be in
	 * flight when the stream stops) */
	/* (a datagram the kernel dropped on a full buffer is lost too, and a
	 * late one dropped so is not late: the host's losses, counted apart) */
	cr_expect_leq(llabs((long long)c.late - (long long)st.reordered), 1 + drops,
		      "late %llu, reordered %llu, %ld dropped by the kernel",
		      (unsigned long long)c.late, (unsigned long long)st.reordered, drops);
	cr_expect_leq(llabs((long long)(c.lost - c.late) - (long long)st.skipped), 2 + 2 * drops,
		      "lost %llu - late %llu vs skipped %llu, %ld dropped by the kernel",
		      (unsigned long long)c.lost, (unsigned long long)c.late,
		      (unsigned long long)st.skipped, drops);
	cr_expect_eq(c.duplicate, 0);
	cr_expect_eq(c.malformed, 0);
	/* the step saw a record of most steps and counted the ones it did not */
	cr_expect_gt(atomic_load(&s.unseen), atomic_load(&s.fresh) * 5, "7 kHz against 500 Hz");
	cr_expect_eq(sc.taken, atomic_load(&s.fresh));
	cr_expect_eq(sc.caused, 0);
	rtl_rig_destroy(rig);
	rtl_rdt_transport_destroy(t);
	sim_ft_destroy(ft);
}
