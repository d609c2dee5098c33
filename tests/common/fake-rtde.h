/* SPDX-License-Identifier: MIT */
/*
 * A scripted RTDE controller for tests, on a thread of its own: it listens
 * on an ephemeral loopback port, answers the handshake with the codec (the
 * types of the registry, controller 5.12.0), streams a few data packages
 * after START, then closes, once per connection it is asked to serve.
 * Unlike rtde-sim it can be made to do what a real controller does only
 * sometimes: with @burst the START reply and the data packages leave in
 * one write, so a client reads them in one receive. Every wait is bounded.
 * The tests that use it assert with Criterion (the helper does too).
 */
#ifndef RTL_TEST_FAKE_RTDE_H
#define RTL_TEST_FAKE_RTDE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct fake {
	int lfd;
	uint16_t port;
	int conns;	  /* connections to serve, one after the other */
	int ndata;	  /* data packages per connection after START */
	bool silent;	  /* accept, then never answer */
	bool wait_inputs; /* after streaming, wait for one input package */
	bool burst;	  /* the START reply and the data in one write */
	bool hold;	  /* after streaming, keep the connection open, silent */
	bool wrong_size;  /* data packages 8 bytes short of the recipe */
	int jump_at;	  /* > 0: the timestamp of this data package jumps... */
	double jump_s;	  /* ...by this many seconds */
	atomic_int served;
	atomic_int input_value;
	atomic_int input_id;
	pthread_t th;
};

/* Listen and start serving (Criterion-asserts on failure). */
void fake_start(struct fake *fk);
/* Wait until it served its connections, and close the listener. */
void fake_stop(struct fake *fk);

#endif /* RTL_TEST_FAKE_RTDE_H */
