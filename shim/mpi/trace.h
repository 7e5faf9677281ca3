/* trace.h: event tracing under `popmon run --trace` (trace.c; the file
 * format is docs/trace-format.md).
 *
 * Each thread that calls MPI keeps a buffer of fixed-size 40-byte records,
 * allocated once (at its first record); an MPI call's record is written at
 * its exit from the two clock reads the accounts already take, with what
 * the byte accounting (mpidata.c) found out about the call (peer as a world
 * rank, tag, communicator, bytes, request). A full buffer is written to the
 * process's file (one warning; a flush record marks the interval); the rest
 * at MPI_Finalize, with a trailer (clock calibration, function names).
 */
#ifndef POPMON_TRACE_H
#define POPMON_TRACE_H

#include <stdint.h>

#include "base/threads.h"

/* Record kinds (docs/trace-format.md). */
enum {
	POPMON_TR_CALL = 1,    /* an outermost MPI call */
	POPMON_TR_PART = 2,    /* a further operation of the next CALL (Sendrecv's receive, a collective's receipt) */
	POPMON_TR_DONE = 3,    /* a request completed by the next CALL (Wait*, Test*) */
	POPMON_TR_START = 4,   /* a persistent request started by the next CALL (Start*) */
	POPMON_TR_COMM = 5,    /* a communicator, first seen */
	POPMON_TR_MEMBERS = 6, /* four of its members as world ranks */
	POPMON_TR_FLUSH = 7,   /* a full buffer was written to the file */
	POPMON_TR_CLOCK = 8,   /* clock synchronisation after a barrier (Init, Finalize) */
	POPMON_TR_REGION = 9,  /* a visit of a user region (popmon/DLB region API) */
	POPMON_TR_OMP = 10,    /* an outermost OpenMP parallel region */
	POPMON_TR_OFFSET = 11, /* a node leader's clock offset to rank 0 (ping-pong at Init, Finalize) */
};

/* Record flags. */
enum {
	POPMON_TRF_SEND = 1,
	POPMON_TRF_RECV = 2,
	POPMON_TRF_COLL = 4,
	POPMON_TRF_PERSISTENT = 8,
	POPMON_TRF_PROC_NULL = 16, /* peer is MPI_PROC_NULL */
	POPMON_TRF_ANY = 32,       /* peer or tag is a wildcard (posted receive) or unknown */
	POPMON_TRF_TRUNC = 64,     /* bytes were 2^32 or more (saturated) */
	POPMON_TRF_INTER = 128,    /* an intercommunicator (COMM: members are the remote group) */
};

struct popmon_trec {
	uint64_t enter, leave; /* ticks */
	uint16_t fn;           /* enum popmon_fn (CALL), 0 otherwise */
	uint8_t kind, flags;
	uint32_t comm;         /* communicator id; 0xffffffff none or unknown */
	int32_t peer, tag;
	uint32_t req, bytes;
};
_Static_assert(sizeof(struct popmon_trec) == 40, "trace record is 40 bytes");

#define POPMON_TR_NOCOMM 0xffffffffu

/* 1 while this process traces (POPMON_TRACE=1 and its file is open). */
extern int popmon_trace_on __attribute__((visibility("hidden")));

/* MPI_Init (after PMPI_Init): opens the file, synchronises the clock
 * (barrier), records MPI_Init from enter (the tick before PMPI_Init). */
void popmon_trace_init(uint64_t enter);
/* MPI_Finalize: records MPI_Finalize; sync: whether every rank takes part
 * in popmon's finalize (then a barrier synchronises the clock). */
void popmon_trace_finalize(int sync);
/* Writes every thread's records and the trailer, closes the file. */
void popmon_trace_close(void);

/* The calling thread's record of the MPI call fn (outermost; at its exit,
 * leave); returns the tick to account the call to (later than leave when
 * the buffer was flushed: the flush counts as the call's time). */
uint64_t popmon_trace_call(struct popmon_thread *t, int fn, uint64_t enter, uint64_t leave);
/* What the byte accounting knows of the current call (for its CALL record). */
void popmon_trace_pending(struct popmon_thread *t, unsigned flags, uint32_t comm, int32_t peer, int32_t tag,
			  uint32_t req, int64_t bytes);
/* A PART, DONE, START, COMM or MEMBERS record (enter: the current call's). */
void popmon_trace_extra(struct popmon_thread *t, unsigned kind, unsigned flags, uint32_t comm, int32_t peer,
			int32_t tag, uint32_t req, int64_t bytes);
/* A record as it is (COMM/MEMBERS with their own layout). */
void popmon_trace_put(struct popmon_thread *t, const struct popmon_trec *r);

#endif /* POPMON_TRACE_H */
