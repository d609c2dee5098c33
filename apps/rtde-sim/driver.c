// SPDX-License-Identifier: MIT
/*
 * The descriptors and the thread of rtde-sim's socket drivers (see
 * driver.h).
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

void sim_driver_init(struct sim_driver *d)
{
	*d = (struct sim_driver){ .epoll_fd = -1, .timer_fd = -1, .stop_fd = -1 };
}

int sim_driver_open(struct sim_driver *d, uint64_t timer_tag, uint64_t stop_tag)
{
	int err;

	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->epoll_fd < 0 || d->timer_fd < 0 || d->stop_fd < 0)
		return -errno;
	if ((err = sim_driver_watch(d, EPOLL_CTL_ADD, d->timer_fd, EPOLLIN, timer_tag)))
		return err;
	return sim_driver_watch(d, EPOLL_CTL_ADD, d->stop_fd, EPOLLIN, stop_tag);
}

int sim_driver_watch(struct sim_driver *d, int op, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(d->epoll_fd, op, fd, &ev) ? -errno : 0;
}

static void *thread_main(void *arg)
{
	struct sim_driver *d = arg;

	d->result = d->run(d->arg);
	return NULL;
}

int sim_driver_start(struct sim_driver *d, int (*run)(void *arg), void *arg)
{
	int err;

	d->run = run;
	d->arg = arg;
	err = pthread_create(&d->thread, NULL, thread_main, d);
	if (err)
		return -err;
	d->thread_started = true;
	return 0;
}

void sim_driver_stop(struct sim_driver *d)
{
	uint64_t one = 1;
	ssize_t n = write(d->stop_fd, &one, sizeof(one));

	(void)n; /* an eventfd write fails only when the counter is full */
}

int sim_driver_join(struct sim_driver *d)
{
	if (!d->thread_started)
		return 0;
	pthread_join(d->thread, NULL);
	d->thread_started = false;
	return d->result;
}

void sim_driver_close(struct sim_driver *d)
{
	if (d->epoll_fd >= 0)
		close(d->epoll_fd);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	d->epoll_fd = d->timer_fd = d->stop_fd = -1;
}
