/* SPDX-License-Identifier: MIT */
/*
 * sim_driver: what the simulator's two socket drivers, the RTDE server
 * (server.c) and the UDP mode (udp.c), run on: one epoll set, a
 * CLOCK_MONOTONIC timerfd for the cycle deadlines (set with timer.h's
 * sim_timer_arm()), an eventfd whose write stops the loop, and the thread
 * the loop may run on. The loop itself, and what it watches besides the
 * timer and the stop, are the driver's own.
 *
 * Thread safety: sim_driver_stop() from any thread or a signal handler;
 * the rest from the thread that owns the driver.
 */
#ifndef RTLSIM_DRIVER_H
#define RTLSIM_DRIVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct sim_driver {
	int epoll_fd, timer_fd, stop_fd; /* -1: not open */
	pthread_t thread;
	bool thread_started;
	int (*run)(void *arg); /* the loop on the thread, and its result */
	void *arg;
	int result;
};

/* Mark @d as holding nothing open: sim_driver_close() is then safe. */
void sim_driver_init(struct sim_driver *d);

/*
 * Open the epoll set, the timer and the stop eventfd (non-blocking,
 * close-on-exec), the timer and the stop watched for EPOLLIN with
 * @timer_tag and @stop_tag. Returns 0 or -errno; on failure what was
 * opened stays for sim_driver_close().
 */
int sim_driver_open(struct sim_driver *d, uint64_t timer_tag, uint64_t stop_tag);

/* epoll_ctl(@op) of @fd for @events, reported with @tag. 0 or -errno. */
int sim_driver_watch(struct sim_driver *d, int op, int fd, uint32_t events, uint64_t tag);

/* Run @run(@arg) on a new thread. Returns 0 or -errno (pthread_create). */
int sim_driver_start(struct sim_driver *d, int (*run)(void *arg), void *arg);

/* Ask the loop to stop (a write to the eventfd). Async-signal-safe. */
void sim_driver_stop(struct sim_driver *d);

/* Wait for the thread of sim_driver_start(); returns run()'s result, or 0
 * when no thread runs. */
int sim_driver_join(struct sim_driver *d);

/* Close what sim_driver_open() opened (the thread has been joined). */
void sim_driver_close(struct sim_driver *d);

#endif /* RTLSIM_DRIVER_H */
