// SPDX-License-Identifier: MIT
/*
 * record: one LTTng session around one command.
 *
 * The steps are those of docs/tracing.md "Recording by hand", run through
 * the lttng command-line client (fork/exec with an argv, never a shell):
 *
 *   1. a session daemon: "lttng list" answers, or lttng-sessiond
 *      --daemonize --no-kernel is started and polled until it does. It is
 *      left running afterwards: another session may be using it by then.
 *   2. create a session with a unique name (rtloop-trace-<pid>-<ns>) and
 *      the output directory, a user-space channel sized by --subbuf-size
 *      and --num-subbuf, the vpid and vtid contexts (the report pairs
 *      events per process), enable rtloop:*, start.
 *   3. run the command, with LTTNG_UST_REGISTER_TIMEOUT set (3000 ms unless
 *      the caller set it) so that liblttng-ust registers with the daemon
 *      before main() and the first frames are recorded.
 *   4. stop (lttng prints a warning if events were discarded) and destroy.
 *
 * Step 4 runs whatever happened in 2 and 3. SIGINT, SIGTERM and SIGHUP are
 * caught: a signal sent to rtloop-trace alone (kill) is forwarded to the
 * command; a ^C typed at the terminal already reached the command (same
 * process group), so it is not sent twice, which many programs would read
 * as "force quit". The lttng helpers run in their own process group, so the
 * ^C does not kill "lttng destroy" halfway. The command keeps the terminal.
 *
 * Exit status: the command's (128 + signal if it was killed); 125 when
 * rtloop-trace could not set up the recording; 126 or 127 when the
 * command could not be run (as in timeout(1) and env(1)).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <rtloop/time.h>

#include "trace.h"

#define LTTNG_TIMEOUT_MS 30000
#define SESSIOND_WAIT_MS 10000

static volatile sig_atomic_t command_pid;
static volatile sig_atomic_t got_signal;

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	pid_t pid = (pid_t)command_pid;

	got_signal = sig;
	/* SI_KERNEL: sent by the tty driver to the whole foreground group,
	 * the command included. Anything else (kill, timeout) only to us. */
	if (pid > 0 && si->si_code != SI_KERNEL)
		kill(pid, sig);
}

/* Run "lttng ARGS...": stdout to /dev/null, stderr through; 0 on success. */
static int lttng(const char *const *args)
{
	char *argv[16];
	int n = 0, code = 0, err, devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct rtt_child c = { .stdout_fd = devnull,
			       .stderr_fd = -1,
			       .own_pgrp = true,
			       .timeout_ms = LTTNG_TIMEOUT_MS };

	argv[n++] = "lttng";
	for (; *args && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	err = rtt_run(argv, &c, &code);
	if (devnull >= 0)
		close(devnull);
	if (err == -ENOENT)
		fprintf(stderr, RTT_PROG ": lttng not found; install lttng-tools\n");
	else if (err == -ETIMEDOUT)
		fprintf(stderr, RTT_PROG ": 'lttng %s' timed out\n", argv[1]);
	else if (err)
		fprintf(stderr, RTT_PROG ": cannot run lttng: %s\n", strerror(-err));
	return err ? err : code;
}

static bool sessiond_answers(void)
{
	char *argv[] = { "lttng", "list", NULL };
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC), code = 1;
	struct rtt_child c = {
		.stdout_fd = devnull, .stderr_fd = devnull, .own_pgrp = true, .timeout_ms = 10000
	};
	int err = rtt_run(argv, &c, &code);

	if (devnull >= 0)
		close(devnull);
	return !err && code == 0;
}

static int ensure_sessiond(void)
{
	char *argv[] = { "lttng-sessiond", "--daemonize", "--no-kernel", NULL };
	struct rtt_child c = {
		.stdout_fd = -1, .stderr_fd = -1, .own_pgrp = true, .timeout_ms = LTTNG_TIMEOUT_MS
	};
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	int err, code = 0;

	if (sessiond_answers())
		return 0;
	/* A concurrent run may start one at the same time: poll either way. */
	err = rtt_run(argv, &c, &code);
	if (err == -ENOENT) {
		fprintf(stderr, RTT_PROG ": no LTTng session daemon runs and lttng-sessiond is "
					 "not installed (Debian: lttng-tools)\n");
		return err;
	}
	for (int waited = 0; waited < SESSIOND_WAIT_MS; waited += 100) {
		if (sessiond_answers())
			return 0;
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, RTT_PROG ": no LTTng session daemon answers and none could be started; try "
				 "'lttng-sessiond --daemonize --no-kernel' by hand\n");
	return -ECONNREFUSED;
}

/* @out made absolute; an existing @out must be an empty directory. */
static int output_dir(const char *out, char *abs, size_t len)
{
	char cwd[PATH_MAX];
	struct stat st;

	if (out[0] == '/') {
		snprintf(abs, len, "%s", out);
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		if ((size_t)snprintf(abs, len, "%s/%s", cwd, out) >= len)
			return -ENAMETOOLONG;
	}
	if (stat(abs, &st) == 0) {
		DIR *d;
		struct dirent *e;
		bool empty = true;

		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		d = opendir(abs);
		if (!d)
			return -errno;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = false;
		closedir(d);
		if (!empty)
			return -EEXIST;
	}
	return 0;
}

static int wait_command(pid_t pid)
{
	int status, err = rtt_wait(pid, 0, &status);

	if (err) {
		fprintf(stderr, RTT_PROG ": waiting for the command: %s\n", strerror(-err));
		return RTT_EXIT_RECORD_FAIL;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, RTT_PROG ": the command was killed by signal %d (%s)\n", WTERMSIG(status),
		strsignal(WTERMSIG(status)));
	return 128 + WTERMSIG(status);
}

int rtt_record(const struct rtt_record_opts *o)
{
	char dir[PATH_MAX], session[64], subbuf_arg[64], nsub_arg[32], out_arg[PATH_MAX + 16];
	const char *cmd = o->argv[0];
	struct sigaction sa = { 0 }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	bool session_up = false, ran = false;
	int err, status = RTT_EXIT_RECORD_FAIL;

	/* Validate the output directory before touching LTTng. */
	if (o->output) {
		err = output_dir(o->output, dir, sizeof(dir));
	} else {
		char name[64];
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(name, sizeof(name), "rtloop-trace-%Y%m%d-%H%M%S", &tm);
		err = output_dir(name, dir, sizeof(dir));
	}
	if (err) {
		fprintf(stderr, RTT_PROG ": --output %s: %s%s\n", o->output ? o->output : dir,
			err == -EEXIST ? "exists and is not empty" : strerror(-err),
			err == -EEXIST ? "; choose a new directory" : "");
		return RTT_EXIT_USAGE;
	}

	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waits see EINTR and go on */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);

	if (ensure_sessiond())
		goto out;
	snprintf(session, sizeof(session), "rtloop-trace-%d-%lld", (int)getpid(),
		 (long long)rtl_time_now());
	snprintf(out_arg, sizeof(out_arg), "--output=%s", dir);
	snprintf(subbuf_arg, sizeof(subbuf_arg), "--subbuf-size=%s", o->subbuf_size);
	snprintf(nsub_arg, sizeof(nsub_arg), "--num-subbuf=%u", o->num_subbuf);
	{
		const char *create[] = { "create", session, out_arg, NULL };
		const char *chan[] = { "enable-channel", "--userspace", "--session", session,
				       subbuf_arg,	 nsub_arg,	"rtl",	     NULL };
		const char *ctx[] = { "add-context", "--userspace", "--session", session,
				      "--channel",   "rtl",	    "--type",	 "vpid",
				      "--type",	     "vtid",	    NULL };
		const char *ev[] = { "enable-event", "--userspace", "--session", session,
				     "--channel",    "rtl",	    "rtloop:*",	 NULL };
		const char *start[] = { "start", session, NULL };

		if (lttng(create) != 0) {
			fprintf(stderr, RTT_PROG ": cannot create the LTTng session %s\n", session);
			goto out;
		}
		session_up = true;
		if (lttng(chan) || lttng(ctx) || lttng(ev) || lttng(start)) {
			fprintf(stderr, RTT_PROG ": cannot set up the LTTng session %s\n", session);
			goto out;
		}
	}
	if (got_signal) {
		status = 128 + got_signal;
		goto out;
	}

	/* Run the command: the environment it inherits is ours plus the
	 * registration timeout. */
	if (o->register_timeout)
		setenv("LTTNG_UST_REGISTER_TIMEOUT", o->register_timeout, 1);
	else
		setenv("LTTNG_UST_REGISTER_TIMEOUT", "3000", 0);
	fprintf(stderr, RTT_PROG ": session %s recording rtloop:* to %s\n", session, dir);
	{
		struct rtt_child c = { .stdout_fd = -1, .stderr_fd = -1 };
		int pid = rtt_spawn(o->argv, &c);

		if (pid < 0) {
			fprintf(stderr, RTT_PROG ": cannot run '%s': %s\n", cmd, strerror(-pid));
			status = pid == -ENOENT ? 127 : 126;
			goto out;
		}
		command_pid = pid;
		ran = true;
		fprintf(stderr, RTT_PROG ": command pid %d\n", pid);
		/* A signal that came between the spawn and the store above */
		if (got_signal)
			kill(pid, got_signal);
		status = wait_command(pid);
		command_pid = 0;
	}

out:
	if (session_up) {
		const char *stop[] = { "stop", session, NULL };
		const char *destroy[] = { "destroy", session, NULL };
		int s = lttng(stop), d = lttng(destroy);

		if (s || d)
			fprintf(stderr,
				RTT_PROG ": could not %s the LTTng session %s; see 'lttng list'\n",
				s ? "stop" : "destroy", session);
		else if (ran)
			fprintf(stderr,
				RTT_PROG ": trace in %s; read it with '" RTT_PROG " report %s'\n",
				dir, dir);
	}
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	return status;
}
