/* owncost.h: popmon's own cost per MPI call, calibrated at MPI_Init
 * (owncost.c), the MPI path. */
#ifndef POPMON_OWNCOST_H
#define POPMON_OWNCOST_H

#include <stdint.h>

/* Times the library's own entry and exit of an MPI call (the generated
 * wrapper of MPI_Comm_rank, called through popmon_entry, on a scratch
 * thread record, hardware counters read as the calling thread reads them)
 * in 15 batches of 200 calls against the same calls without it (the
 * function the wrapper calls next), and keeps the medians per call in
 * popmon_owncost_ticks (reduce.h): the part inside the call's two clock
 * readings and the part outside them. About 6000 calls: ~0.2 ms. Called
 * once, on the thread that called MPI_Init, inside it. */
void popmon_owncost_calibrate(void);

/* The MPI time ns of calls calls of one function (the call profile) less
 * the calibrated own cost inside the calls' clock readings, as the region
 * records' MPI time (popmon_owncost_apply); never below 0. */
int64_t popmon_owncost_fn_ns(uint64_t calls, int64_t ns);

#endif /* POPMON_OWNCOST_H */
