// SPDX-License-Identifier: MIT
/*
 * proc: run lttng, gnuplot and the traced command without a shell.
 *
 * Every child is started by fork + execvp on an argv the caller built, so
 * no user input is ever parsed by a shell. Whether the exec itself worked is
 * learned from a close-on-exec pipe: the child writes its errno there if
 * execvp fails, and the parent's read returns 0 bytes when the exec closed
 * the pipe. That tells "lttng is not installed" (ENOENT) from "lttng ran
 * and exited 127", which an exit status alone cannot.
 *
 * Helper commands (lttng, gnuplot) may run in their own process group, so
 * that a ^C typed while the session is being torn down reaches only
 * rtloop-trace, which finishes the teardown, and not "lttng destroy".
 * Waiting with a time limit polls waitpid(WNOHANG) every 5 ms: simple, and
 * these waits are rare and short.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

/* In the child: set up, exec, or report errno through @errfd and exit. */
static _Noreturn void child_exec(char *const argv[], const struct rtt_child *c, int errfd)
{
	sigset_t none;
	int e;

	if (c && c->own_pgrp)
		setpgid(0, 0);
	if (c && c->stdout_fd >= 0 && dup2(c->stdout_fd, STDOUT_FILENO) < 0)
		goto fail;
	if (c && c->stderr_fd >= 0 && dup2(c->stderr_fd, STDERR_FILENO) < 0)
		goto fail;
	/* Handlers do not survive exec, but a blocked mask would. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int rtt_spawn(char *const argv[], const struct rtt_child *c)
{
	int pfd[2], child_err = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0)
		child_exec(argv, c, pfd[1]);
	close(pfd[1]);
	do
		n = read(pfd[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof(child_err)) {
		int status;

		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return -child_err;
	}
	return pid;
}

int rtt_wait(int pid, int timeout_ms, int *status)
{
	const struct timespec tick = { 0, 5 * 1000 * 1000 };
	long waited_ms = 0;

	for (;;) {
		pid_t r = waitpid(pid, status, timeout_ms > 0 ? WNOHANG : 0);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0) {
			if (waited_ms >= timeout_ms) {
				kill(pid, SIGKILL);
				while (waitpid(pid, status, 0) < 0 && errno == EINTR)
					;
				return -ETIMEDOUT;
			}
			nanosleep(&tick, NULL);
			waited_ms += 5;
		}
	}
}

int rtt_run(char *const argv[], const struct rtt_child *c, int *code)
{
	int pid = rtt_spawn(argv, c), status, err;

	if (pid < 0)
		return pid;
	err = rtt_wait(pid, c ? c->timeout_ms : 0, &status);
	if (err)
		return err;
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}
