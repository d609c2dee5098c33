/* SPDX-License-Identifier: MIT */
/*
 * sim_prog_ops: the programs of other client libraries that rtde-sim runs
 * besides rtloop's own: ur_rtde's control script (urrtde.c) and the UR
 * Client Library's External Control program (extctl.c).
 *
 * Design
 * ------
 * A real controller runs any URScript; rtde-sim runs the programs it has
 * a model of. Each model recognises its program by content (the text a
 * library uploads, after that library's own substitutions), takes what it
 * needs from the text when the program starts (register offsets, host and
 * ports, injected paths), and then runs once per control cycle, before the
 * robot steps, as the program's main loop runs once per sync(): it reads
 * the input registers, drives the robot through robot.h's calls and writes
 * the output registers in sim->values.
 *
 * The controller (controller.c) owns the dispatch: sim_ctrl_program()
 * asks each model in turn, starts the one that recognises the text under
 * the same conditions as rtloop's program (arm RUNNING, safety NORMAL,
 * remote control), calls tick() while the program plays, and stop() when
 * it ends for any reason (a protective stop, power off, the dashboard's
 * stop, a new program, or the model's own end or failure through
 * sim_ctrl_program_end()/sim_ctrl_program_fail()).
 *
 * State: each model has state_size bytes, allocated once at sim_ctrl_init()
 * and zeroed before each start, so nothing allocates per cycle.
 *
 * Thread safety: the server's thread only, as struct sim.
 */
#ifndef RTLSIM_PROGRAMS_H
#define RTLSIM_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim;

/* Why a recognised program could not start: the runtime exception. */
struct sim_prog_error {
	int32_t line; /* 1-based line of the text it names; 0: none */
	char text[200];
};

/* What a model did, for the report (struct sim_ctrl_stats.model[]). */
struct sim_prog_stats {
	uint64_t recognised;	  /* programs it knew for its own (each counted once) */
	uint64_t started;	  /* programs started */
	uint64_t refused;	  /* recognised, not started: the arm was not ready */
	uint64_t failed;	  /* ended by a runtime exception */
	uint64_t commands;	  /* commands the program took from its client */
	uint64_t unmodelled;	  /* of them, refused: rtde-sim has no model of them */
	char last_unmodelled[48]; /* the last one's name, or "" */
	uint64_t watchdog_stops;  /* the program's own watchdog stopped it */
	char last[64];		  /* describe() of the last one started ("ur_rtde 1.5.8, ...") */
};

struct sim_prog_ops {
	const char *name;  /* for messages and the report: "ur_rtde" */
	size_t state_size; /* bytes of the model's state */
	/* Is @text (@len bytes) this model's program? Pure. */
	bool (*recognise)(const char *text, size_t len);
	/* The program starts: read what the text says. Returns 0, or -EINVAL
	 * with @err filled (a line the model cannot run: the controller
	 * answers with a runtime exception and the program does not start).
	 * The robot is at rest (halted) when this is called. */
	int (*start)(struct sim *sim, void *state, const char *text, size_t len, int64_t now,
		     struct sim_prog_error *err);
	/* Once per control cycle while it plays, before the robot steps. */
	void (*tick)(struct sim *sim, void *state, int64_t now);
	/* An input package wrote the @n registry fields @fields at @now (the
	 * watchdog of ur_rtde's program watches one); may be NULL. */
	void (*inputs)(struct sim *sim, void *state, const uint16_t *fields, uint32_t n,
		       int64_t now);
	/* It ended (any reason); may be NULL. The arm is being halted. */
	void (*stop)(struct sim *sim, void *state);
	/* A name for the report of what it runs now ("ur_rtde 1.5.8"). */
	const char *(*describe)(const void *state);
};

/* The models, in the order sim_ctrl_program() asks them. */
extern const struct sim_prog_ops sim_prog_urrtde;
extern const struct sim_prog_ops sim_prog_extctl;

#define SIM_PROGS 2
extern const struct sim_prog_ops *const sim_progs[SIM_PROGS];

#endif /* RTLSIM_PROGRAMS_H */
