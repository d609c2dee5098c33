// SPDX-License-Identifier: MIT
/*
 * The preflight doctor, on fake machines: each test builds a /proc, /sys and
 * /dev tree in a temporary directory (healthy by default, see good_tree()),
 * spoils one thing, and checks the verdict of the finding that looks at it.
 * The parsers are tested on their own first; one test runs on the real
 * system and checks only the shape of the answer.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "rtl-config.h"
#include <rtloop/doctor.h>

static char root[256];
static struct rtl_doctor_opts opts;
static struct rtl_doctor_finding fs[RTL_DOCTOR_MAX_FINDINGS];

static const char *const all_ids[] = {
	"preempt",  "rtprio",	"memlock",	   "cap_sys_nice", "cap_ipc_lock",
	"governor", "isolcpus", "nohz_full",	   "rcu_nocbs",	   "numa",
	"thp",	    "swap",	"cpu_dma_latency", "timer_slack",
};

/* ---- fake tree ------------------------------------------------------------- */

static void mkdirs(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(tmp, 0755);
		*p = '/';
	}
	mkdir(tmp, 0755);
}

/* Create <root>/@rel (and its parents) holding @text. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	*strrchr(path, '/') = '\0';
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	cr_assert_not_null(f, "cannot create %s", path);
	fputs(text, f);
	fclose(f);
}

static void put_dir(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rel(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#define CMDLINE_GOOD                                                                           \
	"BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro isolcpus=managed_irq,domain,2-3 nohz_full=2-3 " \
	"rcu_nocbs=2-3 quiet\n"

/* A machine with nothing to complain about. */
static void good_tree(void)
{
	put("proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1.90-1 (2024-05-03)\n");
	put("proc/cmdline", CMDLINE_GOOD);
	put("proc/self/status", "Name:\tdoctor\nCapInh:\t0000000000000000\n"
				"CapEff:\t0000000000804000\nCapBnd:\t000001ffffffffff\n");
	put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
	put("sys/devices/system/cpu/nohz_full", "2-3\n");
	for (int i = 0; i < 4; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
			 i);
		put(rel, "performance\n");
	}
	put("sys/devices/system/cpu/online", "0-3\n");
	put_dir("sys/devices/system/node/node0");
	put("sys/devices/system/node/online", "0\n");
	put("sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
	put("dev/cpu_dma_latency", "");
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/rtl-doctor-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	good_tree();
	memset(&opts, 0, sizeof(opts));
	opts.size = sizeof(opts);
	opts.root = root;
	opts.rtprio = (struct rtl_doctor_value){ true, 99 };
	opts.memlock = (struct rtl_doctor_value){ true, RTL_DOCTOR_UNLIMITED };
	opts.timer_slack_ns = (struct rtl_doctor_value){ true, 1 };
}

static void teardown(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(doctor, .init = setup, .fini = teardown);

/* Run the doctor on the fake tree and return the finding @id. */
static const struct rtl_doctor_finding *run(const char *id)
{
	int n = rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts);

	cr_assert_eq(n, RTL_DOCTOR_MAX_FINDINGS, "rtl_doctor_run returned %d", n);
	for (int i = 0; i < n; i++)
		if (strcmp(fs[i].id, id) == 0)
			return &fs[i];
	cr_assert_fail("no finding %s", id);
	return NULL;
}

/* A text that fills its buffer was cut short: the messages must fit. */
static void assert_not_truncated(const struct rtl_doctor_finding *f)
{
	cr_assert_lt(strlen(f->found), RTL_DOCTOR_TEXT_MAX - 1, "%s: found truncated: %s", f->id,
		     f->found);
	cr_assert_lt(strlen(f->fix), RTL_DOCTOR_TEXT_MAX - 1, "%s: fix truncated: %s", f->id,
		     f->fix);
}

#define expect(id, v, text)                                                                    \
	do {                                                                                   \
		const struct rtl_doctor_finding *f_ = run(id);                                 \
		cr_assert_eq(f_->verdict, v, "%s: verdict %s, want %s (found: %s)", id,        \
			     rtl_doctor_verdict_name(f_->verdict), rtl_doctor_verdict_name(v), \
			     f_->found);                                                       \
		cr_assert_not_null(strstr(f_->found, text), "%s: \"%s\" lacks \"%s\"", id,     \
				   f_->found, text);                                           \
		if (v != RTL_DOCTOR_OK)                                                        \
			cr_assert_neq(f_->fix[0], '\0', "%s: no fix given", id);               \
		assert_not_truncated(f_);                                                      \
	} while (0)

/* ---- names --------------------------------------------------------------- */

Test(doctor, ids_are_stable_and_complete)
{
	for (size_t i = 0; i < RTL_DOCTOR_MAX_FINDINGS; i++)
		cr_assert_str_eq(rtl_doctor_id(i), all_ids[i]);
	cr_assert_null(rtl_doctor_id(RTL_DOCTOR_MAX_FINDINGS));
	cr_assert_eq(sizeof(all_ids) / sizeof(all_ids[0]), RTL_DOCTOR_MAX_FINDINGS);
}

Test(doctor, verdict_names)
{
	cr_assert_str_eq(rtl_doctor_verdict_name(RTL_DOCTOR_OK), "ok");
	cr_assert_str_eq(rtl_doctor_verdict_name(RTL_DOCTOR_WARN), "warn");
	cr_assert_str_eq(rtl_doctor_verdict_name(RTL_DOCTOR_BAD), "bad");
	cr_assert_str_eq(rtl_doctor_verdict_name((enum rtl_doctor_verdict)7), "unknown");
}

Test(doctor, worst_is_the_maximum_verdict)
{
	struct rtl_doctor_finding f[3] = { { .verdict = RTL_DOCTOR_OK },
					   { .verdict = RTL_DOCTOR_WARN },
					   { .verdict = RTL_DOCTOR_OK } };

	cr_assert_eq(rtl_doctor_worst(f, 0), RTL_DOCTOR_OK);
	cr_assert_eq(rtl_doctor_worst(f, 1), RTL_DOCTOR_OK);
	cr_assert_eq(rtl_doctor_worst(f, 3), RTL_DOCTOR_WARN);
	f[2].verdict = RTL_DOCTOR_BAD;
	cr_assert_eq(rtl_doctor_worst(f, 3), RTL_DOCTOR_BAD);
}

/* ---- parse_selected ------------------------------------------------------ */

Test(doctor, selected_in_brackets)
{
	char out[16];

	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "always [madvise] never\n"), 7);
	cr_assert_str_eq(out, "madvise");
	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "[always] madvise never"), 6);
	cr_assert_str_eq(out, "always");
}

Test(doctor, selected_in_parentheses)
{
	char out[16];

	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "none voluntary (full) lazy"), 4);
	cr_assert_str_eq(out, "full");
	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "(none) voluntary full"), 4);
	cr_assert_str_eq(out, "none");
}

Test(doctor, selected_missing_is_enoent)
{
	char out[16];

	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "always madvise never"), -ENOENT);
	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "always [madvise never"), -ENOENT);
	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "a [] b"), -ENOENT);
	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), ""), -ENOENT);
}

Test(doctor, selected_too_long_is_enospc)
{
	char out[7];

	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "always [madvise] never"),
		     -ENOSPC);
	cr_assert_str_eq(out, "");
	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), "a [madvis] b"), 6);
}

Test(doctor, selected_bad_args_are_einval)
{
	char out[8];

	cr_assert_eq(rtl_doctor_parse_selected(out, sizeof(out), NULL), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_selected(NULL, 8, "[a]"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_selected(out, 0, "[a]"), -EINVAL);
}

/* ---- cmdline_get --------------------------------------------------------- */

Test(doctor, cmdline_value)
{
	char out[64];

	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), CMDLINE_GOOD, "isolcpus"), 22);
	cr_assert_str_eq(out, "managed_irq,domain,2-3");
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), CMDLINE_GOOD, "rcu_nocbs"), 3);
	cr_assert_str_eq(out, "2-3");
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), CMDLINE_GOOD, "BOOT_IMAGE"), 8);
	cr_assert_str_eq(out, "/vmlinuz");
}

Test(doctor, cmdline_last_occurrence_wins)
{
	char out[64];

	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "a=1 preempt=none b preempt=full",
					    "preempt"),
		     4);
	cr_assert_str_eq(out, "full");
}

Test(doctor, cmdline_bare_flag_and_empty_value)
{
	char out[64];

	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "ro quiet splash", "quiet"), 0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "ro rcu_nocbs= quiet", "rcu_nocbs"),
		     0);
}

Test(doctor, cmdline_absent_and_prefixes_are_enoent)
{
	char out[64];

	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "ro quiet", "isolcpus"), -ENOENT);
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "isolcpus_x=1 xisolcpus=2 isolcpu=3",
					    "isolcpus"),
		     -ENOENT);
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "", "isolcpus"), -ENOENT);
}

Test(doctor, cmdline_stops_at_double_dash)
{
	char out[64];

	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "ro -- isolcpus=2", "isolcpus"),
		     -ENOENT);
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "ro --x=1 isolcpus=2", "isolcpus"),
		     1);
}

Test(doctor, cmdline_quotes_and_dashes)
{
	char out[64];

	cr_assert_eq(
		rtl_doctor_cmdline_get(out, sizeof(out), "a dyndbg=\"file x.c +p\" b", "dyndbg"),
		11);
	cr_assert_str_eq(out, "file x.c +p");
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "\"isolcpus=4\"", "isolcpus"), 1);
	cr_assert_str_eq(out, "4");
	/* The kernel treats '-' and '_' in parameter names alike. */
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "nohz-full=5", "nohz_full"), 1);
	cr_assert_str_eq(out, "5");
}

Test(doctor, cmdline_errors)
{
	char out[4];

	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "isolcpus=2-3,5", "isolcpus"),
		     -ENOSPC);
	cr_assert_str_eq(out, "");
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), NULL, "a"), -EINVAL);
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "a", NULL), -EINVAL);
	cr_assert_eq(rtl_doctor_cmdline_get(out, sizeof(out), "a", ""), -EINVAL);
	cr_assert_eq(rtl_doctor_cmdline_get(NULL, 4, "a", "a"), -EINVAL);
	cr_assert_eq(rtl_doctor_cmdline_get(out, 0, "a", "a"), -EINVAL);
}

/* ---- parse_cpulist ------------------------------------------------------- */

Test(doctor, cpulist_ranges)
{
	uint64_t m[2] = { ~UINT64_C(0), ~UINT64_C(0) };

	cr_assert_eq(rtl_doctor_parse_cpulist(m, 2, "2-3,6"), 3);
	cr_assert_eq(m[0], UINT64_C(0x4c));
	cr_assert_eq(m[1], 0);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 2, "0"), 1);
	cr_assert_eq(m[0], 1);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 2, "63-64\n"), 2);
	cr_assert_eq(m[0], UINT64_C(1) << 63);
	cr_assert_eq(m[1], 1);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 2, "1,1,1"), 1);
}

Test(doctor, cpulist_stride)
{
	uint64_t m[1];

	/* 0-7:2/4 = 0,1,4,5 */
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "0-7:2/4"), 4);
	cr_assert_eq(m[0], UINT64_C(0x33));
}

Test(doctor, cpulist_invalid_is_einval)
{
	uint64_t m[1];

	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, ""), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "a"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "5-2"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "1,"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "1-"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "0-7:5/4"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "domain,2"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, NULL), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(NULL, 1, "1"), -EINVAL);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 0, "1"), -EINVAL);
}

Test(doctor, cpulist_out_of_range_is_erange)
{
	uint64_t m[1];

	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "64"), -ERANGE);
	cr_assert_eq(rtl_doctor_parse_cpulist(m, 1, "0-99999999999999"), -ERANGE);
}

/* ---- rtl_doctor_run arguments -------------------------------------------- */

Test(doctor, run_without_out_is_einval)
{
	cr_assert_eq(rtl_doctor_run(NULL, RTL_DOCTOR_MAX_FINDINGS, &opts), -EINVAL);
}

Test(doctor, run_with_empty_root_is_einval)
{
	opts.root = "";
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), -EINVAL);
}

Test(doctor, run_with_small_array_is_enospc_and_writes_nothing)
{
	struct rtl_doctor_finding small[RTL_DOCTOR_MAX_FINDINGS];

	memset(small, 0xa5, sizeof(small));
	cr_assert_eq(rtl_doctor_run(small, RTL_DOCTOR_MAX_FINDINGS - 1, &opts), -ENOSPC);
	cr_assert_eq(rtl_doctor_run(small, 0, &opts), -ENOSPC);
	for (size_t i = 0; i < sizeof(small); i++)
		cr_assert_eq(((unsigned char *)small)[i], 0xa5);
	cr_assert_eq(rtl_doctor_run(small, RTL_DOCTOR_MAX_FINDINGS + 3, &opts),
		     RTL_DOCTOR_MAX_FINDINGS);
}

Test(doctor, run_with_missing_root_is_enoent)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/nope", root);
	opts.root = path;
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), -ENOENT);
}

Test(doctor, run_with_file_root_is_enotdir)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/proc/cmdline", root);
	opts.root = path;
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), -ENOTDIR);
}

Test(doctor, run_with_trailing_slash_root)
{
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s//", root);
	opts.root = path;
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), RTL_DOCTOR_MAX_FINDINGS);
	cr_assert_eq(rtl_doctor_worst(fs, RTL_DOCTOR_MAX_FINDINGS), RTL_DOCTOR_OK);
}

/* ---- whole trees ------------------------------------------------------------- */

Test(doctor, healthy_tree_is_all_ok_in_id_order)
{
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), RTL_DOCTOR_MAX_FINDINGS);
	for (size_t i = 0; i < RTL_DOCTOR_MAX_FINDINGS; i++) {
		cr_assert_str_eq(fs[i].id, all_ids[i]);
		cr_assert_eq(fs[i].verdict, RTL_DOCTOR_OK, "%s: %s (%s)", fs[i].id,
			     rtl_doctor_verdict_name(fs[i].verdict), fs[i].found);
		cr_assert_neq(fs[i].found[0], '\0', "%s: nothing found", fs[i].id);
		cr_assert_str_eq(fs[i].fix, "", "%s: fix on an ok finding", fs[i].id);
	}
}

Test(doctor, empty_tree_yields_every_finding_as_unknown_not_a_crash)
{
	teardown();
	cr_assert_eq(mkdir(root, 0700), 0);
	memset(&opts, 0, sizeof(opts));
	opts.size = sizeof(opts);
	opts.root = root;
	opts.timer_slack_ns = (struct rtl_doctor_value){ true, 1 };
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), RTL_DOCTOR_MAX_FINDINGS);
	for (size_t i = 0; i < RTL_DOCTOR_MAX_FINDINGS; i++) {
		cr_assert_str_eq(fs[i].id, all_ids[i]);
		cr_assert_neq(fs[i].found[0], '\0', "%s: nothing found", fs[i].id);
		cr_assert(fs[i].verdict >= RTL_DOCTOR_OK && fs[i].verdict <= RTL_DOCTOR_BAD);
		assert_not_truncated(&fs[i]);
	}
	expect("preempt", RTL_DOCTOR_WARN, "unknown");
	expect("cap_sys_nice", RTL_DOCTOR_WARN, "unknown");
	expect("isolcpus", RTL_DOCTOR_WARN, "unknown");
	expect("nohz_full", RTL_DOCTOR_WARN, "unknown");
	expect("rcu_nocbs", RTL_DOCTOR_WARN, "unknown");
	expect("governor", RTL_DOCTOR_WARN, "unknown");
}

Test(doctor, real_system_gives_every_id)
{
	int n = rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, NULL);

	cr_assert_eq(n, RTL_DOCTOR_MAX_FINDINGS);
	for (int i = 0; i < n; i++) {
		cr_assert_str_eq(fs[i].id, all_ids[i]);
		cr_assert_neq(fs[i].found[0], '\0', "%s: nothing found", fs[i].id);
		cr_assert(fs[i].verdict >= RTL_DOCTOR_OK && fs[i].verdict <= RTL_DOCTOR_BAD);
		if (fs[i].verdict != RTL_DOCTOR_OK)
			cr_assert_neq(fs[i].fix[0], '\0', "%s: no fix", fs[i].id);
		assert_not_truncated(&fs[i]);
	}
	opts.root = "/";
	cr_assert_eq(rtl_doctor_run(fs, RTL_DOCTOR_MAX_FINDINGS, &opts), RTL_DOCTOR_MAX_FINDINGS);
}

/* ---- preempt --------------------------------------------------------------- */

Test(doctor, preempt_rt_from_version_file)
{
	expect("preempt", RTL_DOCTOR_OK, "PREEMPT_RT");
}

Test(doctor, preempt_rt_old_spelling)
{
	opts.kernel_version = "#1 SMP PREEMPT RT Tue Jan 1 2019";
	expect("preempt", RTL_DOCTOR_OK, "PREEMPT_RT");
}

Test(doctor, preempt_rt_from_sys_kernel_realtime)
{
	opts.kernel_version = "#1 SMP PREEMPT_DYNAMIC";
	put("sys/kernel/realtime", "1\n");
	expect("preempt", RTL_DOCTOR_OK, "PREEMPT_RT");
}

Test(doctor, preempt_option_overrides_version_file)
{
	opts.kernel_version = "#1 SMP";
	expect("preempt", RTL_DOCTOR_BAD, "none or voluntary");
}

Test(doctor, preempt_dynamic_full_is_warn)
{
	put("proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.12\n");
	put("sys/kernel/debug/sched/preempt", "none voluntary (full) lazy\n");
	expect("preempt", RTL_DOCTOR_WARN, "mode full");
}

Test(doctor, preempt_dynamic_lazy_is_warn)
{
	opts.kernel_version = "#1 SMP PREEMPT_DYNAMIC";
	put("sys/kernel/debug/sched/preempt", "none voluntary full (lazy)\n");
	expect("preempt", RTL_DOCTOR_WARN, "mode lazy");
}

Test(doctor, preempt_dynamic_voluntary_is_bad)
{
	opts.kernel_version = "#1 SMP PREEMPT_DYNAMIC";
	put("sys/kernel/debug/sched/preempt", "none (voluntary) full\n");
	expect("preempt", RTL_DOCTOR_BAD, "mode voluntary");
}

Test(doctor, preempt_dynamic_none_is_bad)
{
	opts.kernel_version = "#1 SMP PREEMPT_DYNAMIC";
	put("sys/kernel/debug/sched/preempt", "(none) voluntary full\n");
	expect("preempt", RTL_DOCTOR_BAD, "mode none");
}

Test(doctor, preempt_dynamic_mode_from_cmdline_without_debugfs)
{
	opts.kernel_version = "#1 SMP PREEMPT_DYNAMIC";
	put("proc/cmdline", "ro preempt=voluntary quiet\n");
	expect("preempt", RTL_DOCTOR_BAD, "mode voluntary (preempt= on the command line)");
	put("proc/cmdline", "ro preempt=full quiet\n");
	expect("preempt", RTL_DOCTOR_WARN, "mode full");
}

Test(doctor, preempt_dynamic_unknown_mode_is_warn)
{
	opts.kernel_version = "#1 SMP PREEMPT_DYNAMIC";
	expect("preempt", RTL_DOCTOR_WARN, "mode unknown");
}

Test(doctor, preempt_static_full_is_warn)
{
	opts.kernel_version = "#1 SMP PREEMPT Mon Jan 1";
	expect("preempt", RTL_DOCTOR_WARN, "PREEMPT (full preemption)");
}

Test(doctor, preempt_none_is_bad)
{
	put("proc/sys/kernel/version", "#1 SMP Debian 6.1.90-1\n");
	expect("preempt", RTL_DOCTOR_BAD, "without forced preemption");
}

Test(doctor, preempt_unknown_version_is_warn)
{
	rm_rel("proc/sys/kernel/version");
	expect("preempt", RTL_DOCTOR_WARN, "unknown");
}

/* ---- limits and capabilities ------------------------------------------------- */

#define STATUS_NO_CAPS "Name:\tdoctor\nCapEff:\t0000000000000000\n"
#define STATUS_SYS_NICE "Name:\tdoctor\nCapEff:\t0000000000800000\n"
#define STATUS_IPC_LOCK "CapEff:\t0000000000004000\nCapBnd:\t0\n"

Test(doctor, rtprio_zero_without_cap_is_bad)
{
	put("proc/self/status", STATUS_NO_CAPS);
	opts.rtprio.value = 0;
	expect("rtprio", RTL_DOCTOR_BAD, "RLIMIT_RTPRIO 0 and no CAP_SYS_NICE");
	expect("cap_sys_nice", RTL_DOCTOR_WARN, "CAP_SYS_NICE not held");
}

Test(doctor, rtprio_zero_with_cap_is_ok)
{
	put("proc/self/status", STATUS_SYS_NICE);
	opts.rtprio.value = 0;
	expect("rtprio", RTL_DOCTOR_OK, "CAP_SYS_NICE is held");
	expect("cap_sys_nice", RTL_DOCTOR_OK, "held");
}

Test(doctor, rtprio_low_without_cap_is_warn)
{
	put("proc/self/status", STATUS_NO_CAPS);
	opts.rtprio.value = 10;
	expect("rtprio", RTL_DOCTOR_WARN, "above 10 refused");
}

Test(doctor, rtprio_high_without_cap_is_ok)
{
	put("proc/self/status", STATUS_NO_CAPS);
	opts.rtprio.value = 98;
	expect("rtprio", RTL_DOCTOR_OK, "RLIMIT_RTPRIO 98");
	expect("cap_sys_nice", RTL_DOCTOR_OK, "not held; the rlimit allows");
}

Test(doctor, rtprio_zero_with_unknown_caps_is_warn)
{
	rm_rel("proc/self/status");
	opts.rtprio.value = 0;
	expect("rtprio", RTL_DOCTOR_WARN, "capabilities unknown");
	expect("cap_sys_nice", RTL_DOCTOR_WARN, "unknown");
	expect("cap_ipc_lock", RTL_DOCTOR_WARN, "unknown");
}

Test(doctor, status_without_capeff_is_unknown)
{
	put("proc/self/status", "Name:\tdoctor\n");
	expect("cap_ipc_lock", RTL_DOCTOR_WARN, "unknown");
}

Test(doctor, memlock_small_without_cap_is_bad)
{
	put("proc/self/status", STATUS_SYS_NICE);
	opts.memlock.value = UINT64_C(8) << 20;
	expect("memlock", RTL_DOCTOR_BAD, "RLIMIT_MEMLOCK 8 MiB, below 128 MiB");
	expect("cap_ipc_lock", RTL_DOCTOR_WARN, "CAP_IPC_LOCK not held");
}

Test(doctor, memlock_small_with_cap_is_ok)
{
	put("proc/self/status", STATUS_IPC_LOCK);
	opts.memlock.value = UINT64_C(64) << 10;
	expect("memlock", RTL_DOCTOR_OK, "CAP_IPC_LOCK is held");
	expect("cap_ipc_lock", RTL_DOCTOR_OK, "held");
}

Test(doctor, memlock_unlimited_without_cap_is_ok)
{
	put("proc/self/status", STATUS_NO_CAPS);
	expect("memlock", RTL_DOCTOR_OK, "unlimited");
	expect("cap_ipc_lock", RTL_DOCTOR_OK, "not held; the rlimit allows");
}

Test(doctor, memlock_need_is_configurable)
{
	put("proc/self/status", STATUS_NO_CAPS);
	opts.memlock.value = UINT64_C(64) << 20;
	expect("memlock", RTL_DOCTOR_BAD, "below 128 MiB");
	opts.memlock_need = UINT64_C(32) << 20;
	expect("memlock", RTL_DOCTOR_OK, "64 MiB");
}

/* ---- governor -------------------------------------------------------------- */

Test(doctor, governor_powersave_is_warn)
{
	put("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
	expect("governor", RTL_DOCTOR_WARN, "powersave on 1");
	cr_assert_not_null(strstr(run("governor")->found, "performance on 3"));
	cr_assert_not_null(strstr(run("governor")->fix, "cpupower frequency-set -g performance"));
}

Test(doctor, governor_without_cpufreq_is_ok)
{
	for (int i = 0; i < 4; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/cpufreq", i);
		rm_rel(rel);
	}
	expect("governor", RTL_DOCTOR_OK, "no cpufreq on any of 4 CPUs");
}

Test(doctor, governor_counts_only_cpu_directories)
{
	put_dir("sys/devices/system/cpu/cpufreq");
	put_dir("sys/devices/system/cpu/cpuidle");
	expect("governor", RTL_DOCTOR_OK, "performance on 4 of 4 CPUs");
}

/* ---- kernel command line ----------------------------------------------------- */

Test(doctor, isolation_present_is_ok)
{
	expect("isolcpus", RTL_DOCTOR_OK, "isolcpus=managed_irq,domain,2-3");
	expect("nohz_full", RTL_DOCTOR_OK, "nohz_full=2-3");
	expect("rcu_nocbs", RTL_DOCTOR_OK, "rcu_nocbs=2-3");
}

Test(doctor, isolcpus_absent_is_warn)
{
	put("proc/cmdline", "ro quiet\n");
	expect("isolcpus", RTL_DOCTOR_WARN, "no isolcpus=");
	cr_assert_not_null(strstr(run("isolcpus")->fix, "isolcpus="));
	expect("nohz_full", RTL_DOCTOR_WARN, "no nohz_full=");
	expect("rcu_nocbs", RTL_DOCTOR_WARN, "no rcu_nocbs=");
}

Test(doctor, isolcpus_unparsable_is_warn)
{
	put("proc/cmdline", "isolcpus=domain,two\n");
	expect("isolcpus", RTL_DOCTOR_WARN, "not understood");
}

Test(doctor, isolcpus_plain_list_is_ok)
{
	put("proc/cmdline", "isolcpus=3 nohz_full=3 quiet\n");
	expect("isolcpus", RTL_DOCTOR_OK, "isolcpus=3");
	expect("nohz_full", RTL_DOCTOR_OK, "nohz_full=3");
}

Test(doctor, nohz_full_not_covering_isolcpus_is_warn)
{
	put("proc/cmdline", "isolcpus=2-5 nohz_full=2-3 rcu_nocbs=2-5\n");
	expect("nohz_full", RTL_DOCTOR_WARN, "leaves isolated CPUs 4-5 ticking");
	cr_assert_not_null(strstr(run("nohz_full")->fix, "nohz_full=2-5"));
	expect("rcu_nocbs", RTL_DOCTOR_OK, "rcu_nocbs=2-5");
}

Test(doctor, nohz_full_without_kernel_support_is_warn)
{
	rm_rel("sys/devices/system/cpu/nohz_full");
	expect("nohz_full", RTL_DOCTOR_WARN, "no CONFIG_NO_HZ_FULL");
}

Test(doctor, rcu_nocbs_implied_by_nohz_full)
{
	put("proc/cmdline", "isolcpus=2-3 nohz_full=2-3\n");
	expect("rcu_nocbs", RTL_DOCTOR_OK, "implied by nohz_full=2-3");
}

Test(doctor, rcu_nocbs_not_covering_isolcpus_is_warn)
{
	put("proc/cmdline", "isolcpus=1-3 rcu_nocbs=1,2\n");
	expect("rcu_nocbs", RTL_DOCTOR_WARN, "isolated CPUs 3");
}

Test(doctor, cmdline_after_double_dash_is_ignored)
{
	put("proc/cmdline", "ro -- isolcpus=2-3\n");
	expect("isolcpus", RTL_DOCTOR_WARN, "no isolcpus=");
}

/* ---- numa, thp, swap, cpu_dma_latency, timer slack ---------------------------- */

Test(doctor, numa_single_node_is_ok)
{
	expect("numa", RTL_DOCTOR_OK, "1 NUMA node");
}

Test(doctor, numa_without_sysfs_node_is_ok)
{
	rm_rel("sys/devices/system/node");
	expect("numa", RTL_DOCTOR_OK, "no NUMA information");
}

Test(doctor, numa_two_nodes_depends_on_libnuma)
{
	put_dir("sys/devices/system/node/node1");
#if RTL_HAVE_NUMA
	expect("numa", RTL_DOCTOR_OK, "2 NUMA nodes");
#else
	expect("numa", RTL_DOCTOR_WARN, "2 NUMA nodes");
#endif
}

Test(doctor, thp_always_is_warn)
{
	put("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
	expect("thp", RTL_DOCTOR_WARN, "always");
	cr_assert_not_null(strstr(run("thp")->fix,
				  "echo never > /sys/kernel/mm/transparent_hugepage/enabled"));
}

Test(doctor, thp_madvise_is_ok)
{
	put("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	expect("thp", RTL_DOCTOR_OK, "madvise");
}

Test(doctor, thp_absent_is_ok)
{
	rm_rel("sys/kernel/mm/transparent_hugepage");
	expect("thp", RTL_DOCTOR_OK, "not available");
}

Test(doctor, thp_garbage_is_unknown)
{
	put("sys/kernel/mm/transparent_hugepage/enabled", "what\n");
	expect("thp", RTL_DOCTOR_WARN, "unknown");
}

Test(doctor, swap_active_is_warn)
{
	put("proc/swaps",
	    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	    "/dev/sda2                               partition\t2097148\t\t0\t\t-2\n");
	expect("swap", RTL_DOCTOR_WARN, "1 swap area active (2097148 KiB)");
	put("proc/swaps", "Filename Type Size Used Priority\n"
			  "/dev/sda2 partition 1048576 0 -2\n/swapfile file 1048576 0 -3\n");
	expect("swap", RTL_DOCTOR_WARN, "2 swap areas active (2 GiB)");
}

Test(doctor, swaps_missing_is_ok)
{
	rm_rel("proc/swaps");
	expect("swap", RTL_DOCTOR_OK, "kernel without swap");
}

Test(doctor, cpu_dma_latency_missing_is_warn)
{
	rm_rel("dev/cpu_dma_latency");
	expect("cpu_dma_latency", RTL_DOCTOR_WARN, "missing");
}

Test(doctor, cstates_limited_on_cmdline_is_ok)
{
	rm_rel("dev/cpu_dma_latency");
	put("proc/cmdline", "ro idle=poll\n");
	expect("cpu_dma_latency", RTL_DOCTOR_OK, "idle=poll");
	put("proc/cmdline", "ro idle=halt\n");
	expect("cpu_dma_latency", RTL_DOCTOR_WARN, "missing");
	put("proc/cmdline", "ro processor.max_cstate=1\n");
	expect("cpu_dma_latency", RTL_DOCTOR_OK, "processor.max_cstate=1");
}

Test(doctor, timer_slack)
{
	expect("timer_slack", RTL_DOCTOR_OK, "1 ns");
	opts.timer_slack_ns.value = 50000;
	expect("timer_slack", RTL_DOCTOR_WARN, "50000 ns");
	opts.timer_slack_ns.set = false;
	run("timer_slack");
}

/* ---- writers ------------------------------------------------------------------- */

/* Whether @s has balanced {} and [] outside strings, and well-formed
 * strings; the shape checks a JSON parser would make first. */
static bool json_balanced(const char *s)
{
	char stack[64];
	int depth = 0;
	bool in_str = false;

	for (; *s; s++) {
		if (in_str) {
			if ((unsigned char)*s < 0x20)
				return false;
			if (*s == '\\') {
				s++;
				if (!*s || !strchr("\"\\/bfnrtu", *s))
					return false;
			} else if (*s == '"') {
				in_str = false;
			}
			continue;
		}
		if (*s == '"')
			in_str = true;
		else if (*s == '{' || *s == '[')
			stack[depth++] = *s;
		else if (*s == '}' || *s == ']') {
			if (depth == 0 || stack[depth - 1] != (*s == '}' ? '{' : '['))
				return false;
			depth--;
		}
		if (depth >= (int)sizeof(stack))
			return false;
	}
	return depth == 0 && !in_str;
}

static char *capture(int (*writer)(FILE *, const struct rtl_doctor_finding *, size_t),
		     const struct rtl_doctor_finding *f, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	cr_assert_not_null(m);
	cr_assert_eq(writer(m, f, n), 0);
	fclose(m);
	return buf;
}

Test(doctor, json_is_balanced_and_names_every_id)
{
	char *js;

	put("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
	run("thp");
	js = capture(rtl_doctor_write_json, fs, RTL_DOCTOR_MAX_FINDINGS);
	cr_assert_eq(js[0], '{');
	cr_assert(json_balanced(js), "unbalanced: %s", js);
	for (size_t i = 0; i < RTL_DOCTOR_MAX_FINDINGS; i++) {
		char key[64];

		snprintf(key, sizeof(key), "{\"id\":\"%s\",\"verdict\":\"", all_ids[i]);
		cr_assert_not_null(strstr(js, key), "no %s in %s", key, js);
	}
	cr_assert_not_null(strstr(js, "\"worst\":\"warn\""));
	cr_assert_not_null(strstr(js, "\"counts\":{\"ok\":13,\"warn\":1,\"bad\":0}"));
	free(js);
}

Test(doctor, json_escapes_strings)
{
	struct rtl_doctor_finding f = { .id = "x", .verdict = RTL_DOCTOR_BAD };
	char *js;

	snprintf(f.found, sizeof(f.found), "a \"q\" \\ b\nc\td\x01");
	snprintf(f.fix, sizeof(f.fix), "KERNEL==\"x\"");
	js = capture(rtl_doctor_write_json, &f, 1);
	cr_assert(json_balanced(js), "unbalanced: %s", js);
	cr_assert_not_null(strstr(js, "\"found\":\"a \\\"q\\\" \\\\ b\\nc\\td\\u0001\""), "%s", js);
	cr_assert_not_null(strstr(js, "\"fix\":\"KERNEL==\\\"x\\\"\""), "%s", js);
	cr_assert_not_null(strstr(js, "\"worst\":\"bad\""));
	free(js);
}

Test(doctor, json_of_nothing_is_valid)
{
	char *js = capture(rtl_doctor_write_json, NULL, 0);

	cr_assert(json_balanced(js));
	cr_assert_not_null(strstr(js, "\"findings\":[]"), "%s", js);
	free(js);
}

Test(doctor, text_aligns_and_puts_fix_under_non_ok)
{
	char *txt, *line, *save = NULL;
	size_t col = 0, lines = 0;

	put("proc/cmdline", "ro quiet\n");
	run("isolcpus");
	txt = capture(rtl_doctor_write_text, fs, RTL_DOCTOR_MAX_FINDINGS);
	cr_assert_not_null(strstr(txt, "warn  isolcpus "), "%s", txt);
	cr_assert_not_null(strstr(txt, "ok    preempt "), "%s", txt);
	cr_assert_not_null(strstr(txt, "11 ok, 3 warn, 0 bad\n"), "%s", txt);
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *found;
		size_t c;

		lines++;
		if (strstr(line, "fix: ")) {
			/* The fix sits under the finding text, after the previous
			 * line, which must be a warning. */
			cr_assert_eq(strspn(line, " "), col, "fix not aligned: %s", line);
			continue;
		}
		if (strstr(line, " ok, "))
			continue;
		found = line + 4 + 2;
		found += strcspn(found, " ");
		found += strspn(found, " ");
		c = (size_t)(found - line);
		if (col == 0)
			col = c;
		cr_assert_eq(c, col, "misaligned: %s", line);
	}
	cr_assert_eq(lines, RTL_DOCTOR_MAX_FINDINGS + 3 + 1);
	free(txt);
}

Test(doctor, text_has_no_fix_when_all_ok)
{
	char *txt;

	run("preempt");
	txt = capture(rtl_doctor_write_text, fs, RTL_DOCTOR_MAX_FINDINGS);
	cr_assert_null(strstr(txt, "fix:"), "%s", txt);
	free(txt);
}

Test(doctor, writers_reject_bad_args)
{
	cr_assert_eq(rtl_doctor_write_text(NULL, fs, 1), -EINVAL);
	cr_assert_eq(rtl_doctor_write_json(NULL, fs, 1), -EINVAL);
	cr_assert_eq(rtl_doctor_write_text(stdout, NULL, 1), -EINVAL);
	cr_assert_eq(rtl_doctor_write_json(stdout, NULL, 1), -EINVAL);
}
