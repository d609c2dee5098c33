/* SPDX-License-Identifier: MIT */
/*
 * The simulators' cycle timer: a CLOCK_MONOTONIC timerfd set to absolute
 * deadlines. Shared by the RTDE server (server.c) and the UDP mode (udp.c).
 */
#ifndef SIM_TIMER_H
#define SIM_TIMER_H

#include <stdint.h>
#include <sys/timerfd.h>

#include <rtloop/time.h>

/*
 * Set timer @fd to expire at @at (absolute ns) unless *@armed says it is
 * set to that already: a system call, and on a VM a timer reprogramming,
 * saved on every wake-up that is not the timer's. Setting the timer also
 * clears the expirations counted so far, so the fd needs no read(2) after
 * one. *@armed = -1 forces the next call to set it.
 */
static inline void sim_timer_arm(int fd, int64_t *armed, int64_t at)
{
	struct itimerspec its = { .it_value = rtl_time_to_timespec(at) };

	if (at == *armed)
		return;
	/* 0 would disarm: a deadline at the epoch is never real anyway. */
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
	*armed = at;
}

#endif /* SIM_TIMER_H */
