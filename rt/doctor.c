// SPDX-License-Identifier: MIT
/*
 * The preflight doctor: read what the kernel exposes under /proc, /sys and
 * /dev (below a root prefix, so tests can fake it), plus the rlimits and the
 * timer slack of the calling process, and turn each into a finding with a
 * verdict and a fix. See <rtloop/doctor.h> for the verdicts and why.
 *
 * Shape: rtl_doctor_run() gathers what several checks share (the kernel
 * command line, the effective capabilities, the rlimits, the isolated CPUs)
 * into a context once, then calls one small function per finding, in the
 * order of the id table. Each check writes exactly its own finding; none
 * can fail as a whole, since "could not read" is itself a finding.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rtl-config.h"
#include <rtloop/sized.h>
#include <rtloop/doctor.h>
#include <rtloop/json.h>

/* Bits of CapEff (linux/capability.h). */
#define CAP_BIT_IPC_LOCK 14
#define CAP_BIT_SYS_NICE 23

/* CPUs the CPU-list checks can represent: 64 words of 64 bits. */
#define CPU_WORDS 64

/* Timer slack (ns) at or below which sleeps are considered precise. */
#define SLACK_OK_NS 1000

enum {
	F_PREEMPT,
	F_RTPRIO,
	F_MEMLOCK,
	F_CAP_SYS_NICE,
	F_CAP_IPC_LOCK,
	F_GOVERNOR,
	F_ISOLCPUS,
	F_NOHZ_FULL,
	F_RCU_NOCBS,
	F_NUMA,
	F_THP,
	F_SWAP,
	F_CPU_DMA_LATENCY,
	F_TIMER_SLACK,
	F_COUNT
};

static const char *const ids[F_COUNT] = {
	[F_PREEMPT] = "preempt",
	[F_RTPRIO] = "rtprio",
	[F_MEMLOCK] = "memlock",
	[F_CAP_SYS_NICE] = "cap_sys_nice",
	[F_CAP_IPC_LOCK] = "cap_ipc_lock",
	[F_GOVERNOR] = "governor",
	[F_ISOLCPUS] = "isolcpus",
	[F_NOHZ_FULL] = "nohz_full",
	[F_RCU_NOCBS] = "rcu_nocbs",
	[F_NUMA] = "numa",
	[F_THP] = "thp",
	[F_SWAP] = "swap",
	[F_CPU_DMA_LATENCY] = "cpu_dma_latency",
	[F_TIMER_SLACK] = "timer_slack",
};

_Static_assert(F_COUNT == RTL_DOCTOR_MAX_FINDINGS, "id table and RTL_DOCTOR_MAX_FINDINGS differ");

#define FIX_RT_KERNEL                                                                             \
	"boot a PREEMPT_RT kernel (Debian: apt install linux-image-rt-amd64; Ubuntu: pro enable " \
	"realtime-kernel)"
#define FIX_RTPRIO                                                                            \
	"add `@realtime - rtprio 98` to /etc/security/limits.conf and put the user in group " \
	"realtime (systemd: LimitRTPRIO=98), or run as root"
#define FIX_MEMLOCK                                                                   \
	"add `@realtime - memlock unlimited` to /etc/security/limits.conf (systemd: " \
	"LimitMEMLOCK=infinity), or run as root"
#define FIX_GRUB "to GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub and reboot"

struct ctx {
	const struct rtl_doctor_opts *opts;
	/* Path prefix without a trailing slash: "" for the real system. */
	char root[PATH_MAX - 256];
	bool real;

	char cmdline[8192];
	int cmdline_err; /* 0, or the -errno of reading /proc/cmdline */

	uint64_t capeff;
	int caps_err; /* 0 when capeff is known */

	uint64_t rtprio, rtprio_hard;
	uint64_t memlock, memlock_hard;
	uint64_t memlock_need;

	/* isolcpus= CPUs, when given and understood. */
	uint64_t isol[CPU_WORDS];
	bool isol_known;
	char isol_list[128];
};

/* ---- small helpers ---------------------------------------------------------- */

/* A short, thread-safe description of an errno value (strerror is not
 * guaranteed thread-safe). */
static const char *err_text(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT:
		return "no such file";
	case EACCES:
		return "permission denied";
	case EPERM:
		return "operation not permitted";
	case ENOTDIR:
		return "not a directory";
	case ENAMETOOLONG:
		return "path too long";
	case ENOSPC:
		return "too long to read";
	case EINVAL:
		return "not understood";
	default:
		return "read error";
	}
}

__attribute__((format(printf, 3, 4))) static void
say(struct rtl_doctor_finding *f, enum rtl_doctor_verdict v, const char *fmt, ...)
{
	va_list ap;

	f->verdict = v;
	va_start(ap, fmt);
	vsnprintf(f->found, sizeof(f->found), fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void fix(struct rtl_doctor_finding *f, const char *fmt,
						      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->fix, sizeof(f->fix), fmt, ap);
	va_end(ap);
}

/* Strip trailing white space in place. */
static char *chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

static int make_path(const struct ctx *c, const char *rel, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s", c->root, rel);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Read up to @size - 1 bytes of <root>/@rel into @buf, NUL-terminated.
 * Returns the length, or -errno. */
static int read_file(const struct ctx *c, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t n = 0;
	int fd, err;

	err = make_path(c, rel, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			close(fd);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

static DIR *open_dir(const struct ctx *c, const char *rel, int *err)
{
	char path[PATH_MAX];
	DIR *d;

	*err = make_path(c, rel, path, sizeof(path));
	if (*err)
		return NULL;
	d = opendir(path);
	if (!d)
		*err = -errno;
	return d;
}

/* Whether @name is @prefix followed by one or more digits only. */
static bool is_numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) != 0 || name[n] == '\0')
		return false;
	for (name += n; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

/* Whether @phrase occurs in @s delimited by white space or the ends. */
static bool has_word(const char *s, const char *phrase)
{
	size_t n = strlen(phrase);

	for (const char *p = strstr(s, phrase); p; p = strstr(p + 1, phrase)) {
		bool start = p == s || p[-1] == ' ' || p[-1] == '\t';
		bool end = p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n';

		if (start && end)
			return true;
	}
	return false;
}

static void fmt_count(uint64_t v, char *buf, size_t len)
{
	if (v == RTL_DOCTOR_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void fmt_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	if (v == RTL_DOCTOR_UNLIMITED) {
		snprintf(buf, len, "unlimited");
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && v >= 1024 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)v, units[u]);
}

static bool test_cpu(const uint64_t *mask, unsigned cpu)
{
	return (mask[cpu / 64] >> (cpu % 64)) & 1;
}

/* Write @mask as a CPU list ("2-3,6") to @buf. */
static void fmt_cpulist(const uint64_t *mask, char *buf, size_t len)
{
	size_t used = 0;
	unsigned cpu = 0;

	buf[0] = '\0';
	while (cpu < CPU_WORDS * 64) {
		unsigned first = cpu;
		int n;

		if (!test_cpu(mask, cpu)) {
			cpu++;
			continue;
		}
		while (cpu + 1 < CPU_WORDS * 64 && test_cpu(mask, cpu + 1))
			cpu++;
		if (first == cpu)
			n = snprintf(buf + used, len - used, "%s%u", used ? "," : "", first);
		else
			n = snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "", first,
				     cpu);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
		cpu++;
	}
}

/* ---- exported parsers ---------------------------------------------------- */

RTL_API int rtl_doctor_parse_selected(char *out, size_t len, const char *s)
{
	const char *open, *close;
	size_t n;

	if (!s || !out || len == 0)
		return -EINVAL;
	out[0] = '\0';
	open = strpbrk(s, "[(");
	if (!open)
		return -ENOENT;
	close = strchr(open + 1, *open == '[' ? ']' : ')');
	if (!close || close == open + 1)
		return -ENOENT;
	n = (size_t)(close - open - 1);
	if (n + 1 > len)
		return -ENOSPC;
	memcpy(out, open + 1, n);
	out[n] = '\0';
	return (int)n;
}

/* Kernel parameter names treat '-' and '_' alike (parameq()). */
static bool param_eq(const char *a, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] == '-' ? '_' : a[i];
		char y = key[i] == '-' ? '_' : key[i];

		if (y == '\0' || x != y)
			return false;
	}
	return key[n] == '\0';
}

RTL_API int rtl_doctor_cmdline_get(char *out, size_t len, const char *cmdline, const char *key)
{
	const char *p = cmdline, *val = NULL;
	size_t vlen = 0;
	bool found = false;

	if (!cmdline || !key || !*key || !out || len == 0)
		return -EINVAL;
	out[0] = '\0';
	for (;;) {
		const char *tok, *end, *k, *eq, *kend;
		bool quoted = false;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		tok = p;
		/* A token ends at white space outside double quotes, as in the
		 * kernel's next_arg(). */
		while (*p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (*p == '"')
				quoted = !quoted;
			p++;
		}
		end = p;
		if (end - tok == 2 && tok[0] == '-' && tok[1] == '-')
			break;
		k = tok;
		if (*k == '"')
			k++;
		eq = memchr(k, '=', (size_t)(end - k));
		kend = eq ? eq : end;
		if (!eq && kend > k && kend[-1] == '"')
			kend--;
		if (kend < k || !param_eq(k, (size_t)(kend - k), key))
			continue;
		found = true;
		val = eq ? eq + 1 : end;
		vlen = (size_t)(end - val);
		if (vlen > 0 && val[0] == '"') {
			val++;
			vlen--;
		}
		if (vlen > 0 && val[vlen - 1] == '"')
			vlen--;
	}
	if (!found)
		return -ENOENT;
	if (vlen + 1 > len)
		return -ENOSPC;
	memcpy(out, val, vlen);
	out[vlen] = '\0';
	return (int)vlen;
}

/* Parse a decimal number at *@p, advancing it. Returns false if there is
 * none; saturates at UINT_MAX. */
static bool parse_uint(const char **p, unsigned *v)
{
	const char *s = *p;
	unsigned long long acc = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++)
		if (acc <= UINT_MAX)
			acc = acc * 10 + (unsigned)(*s - '0');
	*v = acc > UINT_MAX ? UINT_MAX : (unsigned)acc;
	*p = s;
	return true;
}

RTL_API int rtl_doctor_parse_cpulist(uint64_t *mask, size_t words, const char *s)
{
	const char *p = s;
	int count = 0;

	if (!s || !mask || words == 0)
		return -EINVAL;
	memset(mask, 0, words * sizeof(*mask));
	for (;;) {
		unsigned a, b, used = 1, group = 1;

		if (!parse_uint(&p, &a))
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			if (!parse_uint(&p, &b) || b < a)
				return -EINVAL;
			/* Strided form a-b:used/group, as in cpulist_parse(). */
			if (*p == ':') {
				p++;
				if (!parse_uint(&p, &used) || *p != '/')
					return -EINVAL;
				p++;
				if (!parse_uint(&p, &group) || used == 0 || used > group)
					return -EINVAL;
			}
		}
		if ((uint64_t)b >= (uint64_t)words * 64)
			return -ERANGE;
		for (unsigned c = a; c <= b; c++) {
			if ((c - a) % group < used)
				mask[c / 64] |= UINT64_C(1) << (c % 64);
			if (c == UINT_MAX)
				break;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\0' || *p == '\n')
			break;
		return -EINVAL;
	}
	for (size_t w = 0; w < words; w++)
		count += __builtin_popcountll(mask[w]);
	return count;
}

/* ---- the checks ------------------------------------------------------------ */

static void check_preempt(const struct ctx *c, struct rtl_doctor_finding *f)
{
	char ver[512], rt[16], sel[32], mode[64];
	struct utsname u;
	const char *v = c->opts->kernel_version;
	const char *from = "";
	bool realtime;

	if (!v && read_file(c, "proc/sys/kernel/version", ver, sizeof(ver)) > 0)
		v = chomp(ver);
	if (!v && c->real && uname(&u) == 0)
		v = u.version;
	realtime = read_file(c, "sys/kernel/realtime", rt, sizeof(rt)) > 0 && rt[0] == '1';

	if (realtime || (v && (has_word(v, "PREEMPT_RT") || has_word(v, "PREEMPT RT")))) {
		say(f, RTL_DOCTOR_OK, "PREEMPT_RT kernel");
		return;
	}
	if (!v) {
		say(f, RTL_DOCTOR_WARN,
		    "unknown: cannot read the kernel version (proc/sys/kernel/version)");
		fix(f, "check that `uname -v` shows PREEMPT_RT; if not, %s", FIX_RT_KERNEL);
		return;
	}
	if (has_word(v, "PREEMPT_DYNAMIC")) {
		mode[0] = '\0';
		if (read_file(c, "sys/kernel/debug/sched/preempt", sel, sizeof(sel)) > 0 &&
		    rtl_doctor_parse_selected(mode, sizeof(mode), sel) > 0) {
			from = "";
		} else if (c->cmdline_err == 0 &&
			   rtl_doctor_cmdline_get(mode, sizeof(mode), c->cmdline, "preempt") > 0) {
			from = " (preempt= on the command line)";
		} else {
			say(f, RTL_DOCTOR_WARN,
			    "PREEMPT_DYNAMIC kernel, current mode unknown (no "
			    "/sys/kernel/debug/sched/preempt; needs debugfs and root)");
			fix(f,
			    "boot with preempt=full (kernel command line); for hard deadlines %s",
			    FIX_RT_KERNEL);
			return;
		}
		if (strcmp(mode, "full") == 0 || strcmp(mode, "lazy") == 0) {
			say(f, RTL_DOCTOR_WARN,
			    "PREEMPT_DYNAMIC kernel in mode %s%s: preemptible, but not PREEMPT_RT",
			    mode, from);
			fix(f, "%s", FIX_RT_KERNEL);
		} else {
			say(f, RTL_DOCTOR_BAD,
			    "PREEMPT_DYNAMIC kernel in mode %s%s: kernel code can delay the loop "
			    "by milliseconds",
			    mode, from);
			fix(f,
			    "echo full > /sys/kernel/debug/sched/preempt, add preempt=full to the "
			    "kernel command line; for hard deadlines %s",
			    FIX_RT_KERNEL);
		}
		return;
	}
	if (has_word(v, "PREEMPT") || has_word(v, "PREEMPT_LAZY")) {
		say(f, RTL_DOCTOR_WARN, "%s kernel: preemptible, but not PREEMPT_RT",
		    has_word(v, "PREEMPT") ? "PREEMPT (full preemption)" : "PREEMPT_LAZY");
		fix(f, "%s", FIX_RT_KERNEL);
		return;
	}
	say(f, RTL_DOCTOR_BAD,
	    "kernel without forced preemption (none or voluntary): kernel code can delay the "
	    "loop by milliseconds");
	fix(f, "%s", FIX_RT_KERNEL);
}

static bool has_cap(const struct ctx *c, int bit)
{
	return c->caps_err == 0 && ((c->capeff >> bit) & 1);
}

static void check_rtprio(const struct ctx *c, struct rtl_doctor_finding *f)
{
	char lim[32], hard[32];

	fmt_count(c->rtprio, lim, sizeof(lim));
	fmt_count(c->rtprio_hard, hard, sizeof(hard));
	if (has_cap(c, CAP_BIT_SYS_NICE)) {
		say(f, RTL_DOCTOR_OK, "RLIMIT_RTPRIO %s, but CAP_SYS_NICE is held: any priority",
		    lim);
		return;
	}
	if (c->rtprio >= RTL_DOCTOR_RTPRIO_WANT) {
		say(f, RTL_DOCTOR_OK, "RLIMIT_RTPRIO %s: SCHED_FIFO priorities up to it allowed",
		    lim);
		return;
	}
	if (c->rtprio > 0)
		say(f, RTL_DOCTOR_WARN,
		    "RLIMIT_RTPRIO %s, no CAP_SYS_NICE: SCHED_FIFO priorities above %s refused",
		    lim, lim);
	else if (c->caps_err)
		say(f, RTL_DOCTOR_WARN,
		    "RLIMIT_RTPRIO 0, capabilities unknown (%s): SCHED_FIFO probably refused",
		    err_text(c->caps_err));
	else
		say(f, RTL_DOCTOR_BAD, "RLIMIT_RTPRIO 0 and no CAP_SYS_NICE: SCHED_FIFO refused");
	if (c->rtprio_hard > c->rtprio)
		fix(f, "raise the soft limit to the hard one (`ulimit -r %s`), or %s", hard,
		    FIX_RTPRIO);
	else
		fix(f, "%s", FIX_RTPRIO);
}

static void check_memlock(const struct ctx *c, struct rtl_doctor_finding *f)
{
	char lim[32], need[32], hard[32];

	fmt_bytes(c->memlock, lim, sizeof(lim));
	fmt_bytes(c->memlock_need, need, sizeof(need));
	if (has_cap(c, CAP_BIT_IPC_LOCK)) {
		say(f, RTL_DOCTOR_OK, "RLIMIT_MEMLOCK %s, but CAP_IPC_LOCK is held: no limit", lim);
		return;
	}
	if (c->memlock >= c->memlock_need) {
		say(f, RTL_DOCTOR_OK, "RLIMIT_MEMLOCK %s (at least %s needed)", lim, need);
		return;
	}
	if (c->caps_err)
		say(f, RTL_DOCTOR_WARN,
		    "RLIMIT_MEMLOCK %s, below %s, capabilities unknown (%s): mlockall may fail",
		    lim, need, err_text(c->caps_err));
	else
		say(f, RTL_DOCTOR_BAD,
		    "RLIMIT_MEMLOCK %s, below %s, and no CAP_IPC_LOCK: mlockall fails", lim, need);
	if (c->memlock_hard > c->memlock) {
		/* ulimit -l counts KiB */
		fmt_count(c->memlock_hard == RTL_DOCTOR_UNLIMITED ? RTL_DOCTOR_UNLIMITED
								  : c->memlock_hard / 1024,
			  hard, sizeof(hard));
		fix(f, "raise the soft limit to the hard one (`ulimit -l %s`), or %s", hard,
		    FIX_MEMLOCK);
	} else {
		fix(f, "%s", FIX_MEMLOCK);
	}
}

static void check_cap(const struct ctx *c, struct rtl_doctor_finding *f, int bit, const char *name,
		      bool limit_covers, const char *what)
{
	if (c->caps_err) {
		say(f, RTL_DOCTOR_WARN, "unknown: cannot read CapEff from proc/self/status (%s)",
		    err_text(c->caps_err));
		fix(f, "check with `grep CapEff /proc/self/status` (bit %d is %s)", bit, name);
		return;
	}
	if (has_cap(c, bit)) {
		say(f, RTL_DOCTOR_OK, "%s held", name);
		return;
	}
	if (limit_covers) {
		say(f, RTL_DOCTOR_OK, "%s not held; the rlimit allows %s", name, what);
		return;
	}
	say(f, RTL_DOCTOR_WARN, "%s not held, and the rlimit does not allow %s", name, what);
	fix(f, "run as root, or setcap %s+ep <program>",
	    bit == CAP_BIT_SYS_NICE ? "cap_sys_nice" : "cap_ipc_lock");
}

static void check_governor(const struct ctx *c, struct rtl_doctor_finding *f)
{
	struct {
		char name[32];
		unsigned n;
	} gov[4];
	unsigned ngov = 0, ncpu = 0, nfreq = 0, nother = 0, nerr = 0, nslow = 0;
	char text[RTL_DOCTOR_TEXT_MAX];
	size_t used = 0;
	struct dirent *e;
	int err = 0;
	DIR *d = open_dir(c, "sys/devices/system/cpu", &err);

	if (!d) {
		say(f, RTL_DOCTOR_WARN, "unknown: cannot list /sys/devices/system/cpu (%s)",
		    err_text(err));
		fix(f, "check with `cpupower frequency-info`");
		return;
	}
	while ((e = readdir(d))) {
		char rel[320], buf[64];
		unsigned i;
		int r;

		if (!is_numbered(e->d_name, "cpu"))
			continue;
		ncpu++;
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/%s/cpufreq/scaling_governor",
			 e->d_name);
		r = read_file(c, rel, buf, sizeof(buf));
		if (r == -ENOENT)
			continue;
		if (r < 0) {
			nerr++;
			continue;
		}
		chomp(buf);
		nfreq++;
		if (strcmp(buf, "performance") != 0)
			nslow++;
		for (i = 0; i < ngov; i++)
			if (strcmp(gov[i].name, buf) == 0)
				break;
		if (i == ngov) {
			if (ngov == sizeof(gov) / sizeof(gov[0])) {
				nother++;
				continue;
			}
			/* Governor names are short; a longer one is cut. */
			snprintf(gov[i].name, sizeof(gov[i].name), "%.*s",
				 (int)sizeof(gov[i].name) - 1, buf);
			gov[i].n = 0;
			ngov++;
		}
		gov[i].n++;
	}
	closedir(d);

	if (nfreq == 0 && nerr > 0) {
		say(f, RTL_DOCTOR_WARN, "unknown: cannot read scaling_governor of %u CPUs (%s)",
		    nerr, "permission denied or read error");
		fix(f, "check with `cpupower frequency-info`");
		return;
	}
	if (nfreq == 0) {
		say(f, RTL_DOCTOR_OK,
		    "no cpufreq on any of %u CPUs (fixed frequency, or a virtual machine)", ncpu);
		return;
	}
	text[0] = '\0';
	for (unsigned i = 0; i < ngov; i++) {
		int n = snprintf(text + used, sizeof(text) - used, "%s%s on %u", i ? ", " : "",
				 gov[i].name, gov[i].n);

		if (n < 0 || (size_t)n >= sizeof(text) - used)
			break;
		used += (size_t)n;
	}
	if (nslow == 0) {
		say(f, RTL_DOCTOR_OK, "%s of %u CPUs", text, ncpu);
		return;
	}
	say(f, RTL_DOCTOR_WARN, "%s%s of %u CPUs: frequency ramps add latency", text,
	    nother ? ", others" : "", ncpu);
	fix(f, "cpupower frequency-set -g performance (package linux-cpupower), or echo "
	       "performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor");
}

/* The CPU list of isolcpus= without its leading flags ("domain,managed_irq,"). */
static const char *isolcpus_list(const char *v)
{
	const char *p = v;

	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
		const char *comma = strchr(p, ',');

		if (!comma)
			return p + strlen(p);
		p = comma + 1;
	}
	return p;
}

static void cmdline_unknown(const struct ctx *c, struct rtl_doctor_finding *f, const char *key)
{
	say(f, RTL_DOCTOR_WARN, "unknown: cannot read /proc/cmdline (%s)",
	    err_text(c->cmdline_err));
	fix(f, "check `cat /proc/cmdline` for %s=", key);
}

static void check_isolcpus(struct ctx *c, struct rtl_doctor_finding *f)
{
	char val[256];
	int r;

	if (c->cmdline_err) {
		cmdline_unknown(c, f, "isolcpus");
		return;
	}
	r = rtl_doctor_cmdline_get(val, sizeof(val), c->cmdline, "isolcpus");
	if (r == -ENOENT) {
		say(f, RTL_DOCTOR_WARN,
		    "no isolcpus= on the kernel command line: other tasks share the loop's CPUs");
		fix(f,
		    "add isolcpus=managed_irq,domain,<cpus> (e.g. 2-3) %s; pin the loop threads "
		    "there",
		    FIX_GRUB);
		return;
	}
	if (r < 0 || rtl_doctor_parse_cpulist(c->isol, CPU_WORDS, isolcpus_list(val)) <= 0) {
		say(f, RTL_DOCTOR_WARN, "isolcpus=%.200s: CPU list not understood",
		    r < 0 ? "?" : val);
		fix(f, "use isolcpus=[nohz,domain,managed_irq,]<cpu-list>, e.g. "
		       "isolcpus=managed_irq,domain,2-3");
		return;
	}
	c->isol_known = true;
	fmt_cpulist(c->isol, c->isol_list, sizeof(c->isol_list));
	say(f, RTL_DOCTOR_OK, "isolcpus=%.200s", val);
}

/* Shared by nohz_full and rcu_nocbs: are the isolated CPUs in @mask? */
static bool covers_isolated(const struct ctx *c, const uint64_t *mask, char *missing, size_t len)
{
	uint64_t rest[CPU_WORDS];
	bool all = true;

	for (size_t w = 0; w < CPU_WORDS; w++) {
		rest[w] = c->isol[w] & ~mask[w];
		if (rest[w])
			all = false;
	}
	fmt_cpulist(rest, missing, len);
	return all;
}

static void check_nohz_full(const struct ctx *c, struct rtl_doctor_finding *f)
{
	const char *example = c->isol_known ? c->isol_list : "<isolated cpus>";
	uint64_t mask[CPU_WORDS];
	char val[256], missing[128], sys[64];
	int r;

	if (c->cmdline_err) {
		cmdline_unknown(c, f, "nohz_full");
		return;
	}
	r = rtl_doctor_cmdline_get(val, sizeof(val), c->cmdline, "nohz_full");
	if (r == -ENOENT) {
		say(f, RTL_DOCTOR_WARN,
		    "no nohz_full= on the kernel command line: the tick interrupts the loop's "
		    "CPUs");
		fix(f, "add nohz_full=%s %s (needs CONFIG_NO_HZ_FULL)", example, FIX_GRUB);
		return;
	}
	if (r <= 0 || rtl_doctor_parse_cpulist(mask, CPU_WORDS, val) <= 0) {
		say(f, RTL_DOCTOR_WARN, "nohz_full=%.200s: CPU list not understood",
		    r < 0 ? "?" : val);
		fix(f, "use nohz_full=<cpu-list>, e.g. nohz_full=%s", example);
		return;
	}
	if (read_file(c, "sys/devices/system/cpu/nohz_full", sys, sizeof(sys)) == -ENOENT) {
		say(f, RTL_DOCTOR_WARN,
		    "nohz_full=%.160s given, but the kernel has no CONFIG_NO_HZ_FULL: ignored",
		    val);
		fix(f, "boot a kernel built with CONFIG_NO_HZ_FULL=y (Debian's rt and generic "
		       "kernels are)");
		return;
	}
	if (c->isol_known && !covers_isolated(c, mask, missing, sizeof(missing))) {
		say(f, RTL_DOCTOR_WARN, "nohz_full=%.100s leaves isolated CPUs %.100s ticking", val,
		    missing);
		fix(f, "set nohz_full=%s to match isolcpus %s", c->isol_list, FIX_GRUB);
		return;
	}
	say(f, RTL_DOCTOR_OK, "nohz_full=%.200s", val);
}

static void check_rcu_nocbs(const struct ctx *c, struct rtl_doctor_finding *f)
{
	const char *example = c->isol_known ? c->isol_list : "<isolated cpus>";
	uint64_t mask[CPU_WORDS], nohz[CPU_WORDS];
	char val[256], nval[256], missing[128];
	bool have = false, have_nohz = false;
	int r;

	if (c->cmdline_err) {
		cmdline_unknown(c, f, "rcu_nocbs");
		return;
	}
	memset(mask, 0, sizeof(mask));
	r = rtl_doctor_cmdline_get(val, sizeof(val), c->cmdline, "rcu_nocbs");
	if (r > 0) {
		if (rtl_doctor_parse_cpulist(mask, CPU_WORDS, val) < 0) {
			say(f, RTL_DOCTOR_WARN, "rcu_nocbs=%.200s: CPU list not understood", val);
			fix(f, "use rcu_nocbs=<cpu-list>, e.g. rcu_nocbs=%s", example);
			return;
		}
		have = true;
	}
	/* nohz_full CPUs are no-callback CPUs too (see kernel-parameters). */
	if (rtl_doctor_cmdline_get(nval, sizeof(nval), c->cmdline, "nohz_full") > 0 &&
	    rtl_doctor_parse_cpulist(nohz, CPU_WORDS, nval) > 0) {
		have_nohz = true;
		for (size_t w = 0; w < CPU_WORDS; w++)
			mask[w] |= nohz[w];
	}
	if (!have && !have_nohz) {
		say(f, RTL_DOCTOR_WARN,
		    "no rcu_nocbs= (nor nohz_full=) on the kernel command line: RCU callbacks run "
		    "on the loop's CPUs");
		fix(f, "add rcu_nocbs=%s %s", example, FIX_GRUB);
		return;
	}
	if (c->isol_known && !covers_isolated(c, mask, missing, sizeof(missing))) {
		say(f, RTL_DOCTOR_WARN, "RCU callbacks still run on isolated CPUs %.100s", missing);
		fix(f, "set rcu_nocbs=%s to match isolcpus %s", c->isol_list, FIX_GRUB);
		return;
	}
	if (have)
		say(f, RTL_DOCTOR_OK, "rcu_nocbs=%.200s", val);
	else
		say(f, RTL_DOCTOR_OK, "implied by nohz_full=%.200s", nval);
}

static void check_numa(const struct ctx *c, struct rtl_doctor_finding *f)
{
	struct dirent *e;
	unsigned n = 0;
	int err = 0;
	DIR *d = open_dir(c, "sys/devices/system/node", &err);

	if (!d && err == -ENOENT) {
		say(f, RTL_DOCTOR_OK, "no NUMA information (kernel without CONFIG_NUMA): one node");
		return;
	}
	if (!d) {
		say(f, RTL_DOCTOR_WARN, "unknown: cannot list /sys/devices/system/node (%s)",
		    err_text(err));
		fix(f, "check with `lscpu` or `numactl --hardware`");
		return;
	}
	while ((e = readdir(d)))
		if (is_numbered(e->d_name, "node"))
			n++;
	closedir(d);
	if (n <= 1) {
		say(f, RTL_DOCTOR_OK, "%u NUMA node: nothing to place", n ? n : 1);
		return;
	}
#if RTL_HAVE_NUMA
	say(f, RTL_DOCTOR_OK,
	    "%u NUMA nodes; rtloop (with libnuma) places the ring on the worker's node", n);
#else
	say(f, RTL_DOCTOR_WARN,
	    "%u NUMA nodes, but rtloop was built without libnuma: memory may sit on a far node", n);
	fix(f, "install libnuma-dev and rebuild with meson configure -Dnuma=enabled; keep the "
	       "loop's CPUs on one node");
#endif
}

static void check_thp(const struct ctx *c, struct rtl_doctor_finding *f)
{
	char buf[128], mode[32];
	int r = read_file(c, "sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf));

	if (r == -ENOENT) {
		say(f, RTL_DOCTOR_OK, "not available (kernel without transparent huge pages)");
		return;
	}
	if (r < 0 || rtl_doctor_parse_selected(mode, sizeof(mode), buf) <= 0) {
		say(f, RTL_DOCTOR_WARN, "unknown: transparent_hugepage/enabled %s",
		    r < 0 ? err_text(r) : "not understood");
		fix(f, "check with `cat /sys/kernel/mm/transparent_hugepage/enabled`");
		return;
	}
	if (strcmp(mode, "always") == 0) {
		say(f, RTL_DOCTOR_WARN,
		    "always: khugepaged and fault-time compaction can stall the loop");
		fix(f, "echo never > /sys/kernel/mm/transparent_hugepage/enabled (at boot: "
		       "transparent_hugepage=never)");
		return;
	}
	say(f, RTL_DOCTOR_OK, "%s", mode);
}

static void check_swap(const struct ctx *c, struct rtl_doctor_finding *f)
{
	char buf[4096], total[32];
	unsigned long long kib = 0;
	unsigned n = 0;
	int r = read_file(c, "proc/swaps", buf, sizeof(buf));
	char *line, *save = NULL;

	if (r == -ENOENT) {
		say(f, RTL_DOCTOR_OK, "no /proc/swaps (kernel without swap support)");
		return;
	}
	if (r < 0) {
		say(f, RTL_DOCTOR_WARN, "unknown: cannot read /proc/swaps (%s)", err_text(r));
		fix(f, "check with `swapon --show`");
		return;
	}
	/* The first line is the header: "Filename Type Size Used Priority". */
	line = strtok_r(buf, "\n", &save);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char name[256], type[32];
		unsigned long long size;

		if (sscanf(line, "%255s %31s %llu", name, type, &size) != 3)
			continue;
		n++;
		kib += size;
	}
	if (n == 0) {
		say(f, RTL_DOCTOR_OK, "no swap active");
		return;
	}
	fmt_bytes(kib * 1024, total, sizeof(total));
	say(f, RTL_DOCTOR_WARN, "%u swap area%s active (%s): unlocked pages can fault on disk", n,
	    n == 1 ? "" : "s", total);
	fix(f, "swapoff -a and remove swap from /etc/fstab, or make sure the loop locks its "
	       "memory (mlockall)");
}

static void check_cpu_dma_latency(const struct ctx *c, struct rtl_doctor_finding *f)
{
	static const char *const keys[] = { "idle", "processor.max_cstate",
					    "intel_idle.max_cstate" };
	char path[PATH_MAX], val[64];
	int err;

	if (c->cmdline_err == 0) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (rtl_doctor_cmdline_get(val, sizeof(val), c->cmdline, keys[i]) <= 0)
				continue;
			if (i == 0 && strcmp(val, "poll") != 0)
				continue;
			say(f, RTL_DOCTOR_OK, "C-states limited on the command line (%s=%s)",
			    keys[i], val);
			return;
		}
	}
	err = make_path(c, "dev/cpu_dma_latency", path, sizeof(path));
	if (!err && access(path, W_OK) != 0)
		err = errno;
	if (!err) {
		say(f, RTL_DOCTOR_OK,
		    "present and writable: holding it open with 0 keeps CPUs out of deep C-states");
		return;
	}
	if (err == ENOENT) {
		say(f, RTL_DOCTOR_WARN,
		    "missing: no CPU latency QoS, CPUs may sleep in deep C-states (slow wake-up)");
		fix(f, "boot with processor.max_cstate=1 intel_idle.max_cstate=0 (or idle=poll)");
		return;
	}
	if (err == EACCES || err == EPERM || err == EROFS) {
		say(f, RTL_DOCTOR_WARN, "present but not writable by this user");
		fix(f, "run as root, or a udev rule: KERNEL==\"cpu_dma_latency\", "
		       "GROUP=\"realtime\", MODE=\"0660\"");
		return;
	}
	say(f, RTL_DOCTOR_WARN, "unknown: cannot check /dev/cpu_dma_latency (%s)", err_text(err));
	fix(f, "check with `ls -l /dev/cpu_dma_latency`");
}

static void check_timer_slack(const struct ctx *c, struct rtl_doctor_finding *f)
{
	uint64_t ns;

	if (c->opts->timer_slack_ns.set) {
		ns = c->opts->timer_slack_ns.value;
	} else {
		int r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

		if (r < 0) {
			say(f, RTL_DOCTOR_WARN, "unknown: prctl(PR_GET_TIMERSLACK) failed");
			fix(f, "check with `grep . /proc/self/timerslack_ns`");
			return;
		}
		ns = (uint64_t)r;
	}
	if (ns <= SLACK_OK_NS) {
		say(f, RTL_DOCTOR_OK, "%llu ns", (unsigned long long)ns);
		return;
	}
	say(f, RTL_DOCTOR_WARN,
	    "%llu ns: sleeps of SCHED_OTHER threads end up to that late (SCHED_FIFO ignores it)",
	    (unsigned long long)ns);
	fix(f, "call prctl(PR_SET_TIMERSLACK, 1) at start-up, before creating threads");
}

/* ---- run ------------------------------------------------------------------- */

static void read_limit(int resource, const struct rtl_doctor_value *ov, uint64_t *soft,
		       uint64_t *hard)
{
	struct rlimit rl;

	if (ov->set) {
		*soft = *hard = ov->value;
		return;
	}
	if (getrlimit(resource, &rl) != 0) {
		*soft = *hard = 0;
		return;
	}
	*soft = rl.rlim_cur == RLIM_INFINITY ? RTL_DOCTOR_UNLIMITED : (uint64_t)rl.rlim_cur;
	*hard = rl.rlim_max == RLIM_INFINITY ? RTL_DOCTOR_UNLIMITED : (uint64_t)rl.rlim_max;
}

static void read_caps(struct ctx *c)
{
	unsigned long long caps;
	char buf[4096];
	const char *p;
	int r = read_file(c, "proc/self/status", buf, sizeof(buf));

	c->caps_err = r < 0 ? r : -EINVAL;
	if (r < 0)
		return;
	p = strncmp(buf, "CapEff:", 7) == 0 ? buf : strstr(buf, "\nCapEff:");
	if (!p)
		return;
	p = strchr(p, ':') + 1;
	if (sscanf(p, "%llx", &caps) == 1) {
		c->capeff = caps;
		c->caps_err = 0;
	}
}

static int ctx_init(struct ctx *c, const struct rtl_doctor_opts *opts)
{
	static const struct rtl_doctor_opts defaults;
	const char *root;
	struct stat st;
	size_t n;
	int r;

	memset(c, 0, sizeof(*c));
	c->opts = opts ? opts : &defaults;
	root = c->opts->root;
	c->real = !root || strcmp(root, "/") == 0;
	if (!c->real) {
		n = strlen(root);
		while (n > 1 && root[n - 1] == '/')
			n--;
		if (n >= sizeof(c->root))
			return -ENAMETOOLONG;
		memcpy(c->root, root, n);
		c->root[n] = '\0';
		if (stat(c->root, &st) != 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}

	r = read_file(c, "proc/cmdline", c->cmdline, sizeof(c->cmdline));
	c->cmdline_err = r < 0 ? r : 0;
	if (r >= 0)
		chomp(c->cmdline);
	read_caps(c);
	read_limit(RLIMIT_RTPRIO, &c->opts->rtprio, &c->rtprio, &c->rtprio_hard);
	read_limit(RLIMIT_MEMLOCK, &c->opts->memlock, &c->memlock, &c->memlock_hard);
	c->memlock_need = c->opts->memlock_need ? c->opts->memlock_need : RTL_DOCTOR_MEMLOCK_NEED;
	return 0;
}

RTL_API int rtl_doctor_run(struct rtl_doctor_finding *out, size_t max,
			   const struct rtl_doctor_opts *opts)
{
	struct rtl_doctor_opts copy;
	struct ctx c;
	int err;

	if (!out)
		return -EINVAL;
	if (opts) {
		err = rtl__sized_in(&copy, sizeof(copy), opts, "struct rtl_doctor_opts", NULL);
		if (err < 0)
			return err;
		opts = &copy;
	}
	if (opts && opts->root && !*opts->root)
		return -EINVAL;
	if (max < F_COUNT)
		return -ENOSPC;
	err = ctx_init(&c, opts);
	if (err)
		return err;

	for (size_t i = 0; i < F_COUNT; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = ids[i];
	}
	check_preempt(&c, &out[F_PREEMPT]);
	check_rtprio(&c, &out[F_RTPRIO]);
	check_memlock(&c, &out[F_MEMLOCK]);
	check_cap(&c, &out[F_CAP_SYS_NICE], CAP_BIT_SYS_NICE, "CAP_SYS_NICE",
		  c.rtprio >= RTL_DOCTOR_RTPRIO_WANT, "the SCHED_FIFO priorities needed");
	check_cap(&c, &out[F_CAP_IPC_LOCK], CAP_BIT_IPC_LOCK, "CAP_IPC_LOCK",
		  c.memlock >= c.memlock_need, "the memory the loop locks");
	check_governor(&c, &out[F_GOVERNOR]);
	check_isolcpus(&c, &out[F_ISOLCPUS]);
	check_nohz_full(&c, &out[F_NOHZ_FULL]);
	check_rcu_nocbs(&c, &out[F_RCU_NOCBS]);
	check_numa(&c, &out[F_NUMA]);
	check_thp(&c, &out[F_THP]);
	check_swap(&c, &out[F_SWAP]);
	check_cpu_dma_latency(&c, &out[F_CPU_DMA_LATENCY]);
	check_timer_slack(&c, &out[F_TIMER_SLACK]);
	return F_COUNT;
}

/* ---- names and writers ------------------------------------------------------ */

RTL_API const char *rtl_doctor_id(size_t i)
{
	return i < F_COUNT ? ids[i] : NULL;
}

static const char *const verdict_names[] = {
	[RTL_DOCTOR_OK] = "ok", [RTL_DOCTOR_WARN] = "warn", [RTL_DOCTOR_BAD] = "bad"
};

RTL_API const char *rtl_doctor_verdict_name(enum rtl_doctor_verdict v)
{
	return RTL__NAME_OF(verdict_names, v, "unknown");
}

RTL_API enum rtl_doctor_verdict rtl_doctor_worst(const struct rtl_doctor_finding *f, size_t n)
{
	enum rtl_doctor_verdict worst = RTL_DOCTOR_OK;

	for (size_t i = 0; f && i < n; i++)
		if (f[i].verdict > worst)
			worst = f[i].verdict;
	return worst;
}

static void count_verdicts(const struct rtl_doctor_finding *fi, size_t n, size_t counts[3])
{
	counts[0] = counts[1] = counts[2] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned)fi[i].verdict <= RTL_DOCTOR_BAD)
			counts[fi[i].verdict]++;
}

RTL_API int rtl_doctor_write_text(FILE *f, const struct rtl_doctor_finding *fi, size_t n)
{
	size_t counts[3];
	int idw = 0;

	if (!f || (!fi && n > 0))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int len = fi[i].id ? (int)strlen(fi[i].id) : 1;

		if (len > idw)
			idw = len;
	}
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%-4s  %-*s  %s\n", rtl_doctor_verdict_name(fi[i].verdict), idw,
			fi[i].id ? fi[i].id : "?", fi[i].found);
		if (fi[i].verdict != RTL_DOCTOR_OK && fi[i].fix[0])
			fprintf(f, "%*s  fix: %s\n", 4 + 2 + idw, "", fi[i].fix);
	}
	count_verdicts(fi, n, counts);
	fprintf(f, "%zu ok, %zu warn, %zu bad\n", counts[0], counts[1], counts[2]);
	return ferror(f) ? -EIO : 0;
}

RTL_API int rtl_doctor_write_json(FILE *f, const struct rtl_doctor_finding *fi, size_t n)
{
	size_t counts[3];

	if (!f || (!fi && n > 0))
		return -EINVAL;
	count_verdicts(fi, n, counts);
	fprintf(f, "{\"worst\":\"%s\",\"counts\":{\"ok\":%zu,\"warn\":%zu,\"bad\":%zu},",
		rtl_doctor_verdict_name(rtl_doctor_worst(fi, n)), counts[0], counts[1], counts[2]);
	fputs("\"findings\":[", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n{\"id\":" : "\n{\"id\":", f);
		rtl_json_string(f, fi[i].id);
		fprintf(f,
			",\"verdict\":\"%s\",\"found\":", rtl_doctor_verdict_name(fi[i].verdict));
		rtl_json_string(f, fi[i].found);
		fputs(",\"fix\":", f);
		rtl_json_string(f, fi[i].fix);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}
