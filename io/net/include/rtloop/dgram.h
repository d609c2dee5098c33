/* SPDX-License-Identifier: MIT */
/*
 * rtl_dgram: the UDP socket of a datagram transport (rtloop's UDP stream,
 * a Net F/T sensor's RDT stream): resolve once, connect(2) so that only the
 * peer's datagrams arrive and an ICMP "port unreachable" comes back as
 * ECONNREFUSED, and receive with the kernel's receive time moved to
 * CLOCK_MONOTONIC.
 *
 * The kernel's time (SO_TIMESTAMPNS) is CLOCK_REALTIME; it is moved with
 * the offset between the two clocks read right after the receive: mono =
 * kernel_rt - (rt_now - mono_now), mono_now being the midpoint of two
 * monotonic reads around the realtime read. The error is the time between
 * those reads (tens of ns) plus any clock step in between; a result later
 * than now or more than 1 s old is discarded (0).
 */
#ifndef RTLOOP_DGRAM_H
#define RTLOOP_DGRAM_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtloop/compiler.h>
#include <rtloop/error.h>

RTL_BEGIN_DECLS

/* @host:@port to an IPv4 address. @what names the peer in the error ("UDP",
 * "RDT"). Returns 0, or -EHOSTUNREACH with @err filled. Not RT-safe. */
RTL_API int rtl_dgram_resolve(struct sockaddr_in *out, const char *host, uint16_t port,
			      const char *what, struct rtl_error *err);

/* A UDP socket connected to @addr, with kernel receive times unless
 * @no_timestamps, and receives that wait at most @rx_slice_ns (0: block).
 * Returns the descriptor, or -errno with @err filled. */
RTL_API int rtl_dgram_open(const struct sockaddr_in *addr, bool no_timestamps, int64_t rx_slice_ns,
			   const char *what, struct rtl_error *err);

/* One datagram into @buf (@cap bytes) with recvmsg(2) and @flags (EINTR
 * retried). Returns its length (>= 0), -EAGAIN when none came within the
 * socket's time-out (or at once with MSG_DONTWAIT), or -errno. *@kernel_ns:
 * the kernel's receive time on CLOCK_MONOTONIC, 0 if unknown. RT-safe
 * (the system calls of a receive). */
RTL_API int rtl_dgram_recv(int fd, void *buf, size_t cap, int64_t *kernel_ns, int flags);

/* Returns the CLOCK_REALTIME time @krt on CLOCK_MONOTONIC, or 0 (see
 * above). */
RTL_API int64_t rtl_dgram_kernel_to_mono(int64_t krt);

RTL_END_DECLS

#endif /* RTLOOP_DGRAM_H */
