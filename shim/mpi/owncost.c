/* owncost.c: popmon's own cost per MPI call, calibrated at MPI_Init
 * (owncost.h). The accounts leave it out (reduce.c's popmon_owncost_apply,
 * at finalize): the hot path itself stays as it is, two clock readings per
 * call and no more. */
#include <stdint.h>
#include <string.h>

#include <mpi.h>

#include "base/clock.h"
#include "base/threads.h"
#include "counters.h"
#include "dispatch.h"
#include "mpi/owncost.h"
#include "mpi/trace.h"
#include "reduce.h"

enum { BATCHES = 15, CALLS = 200 };

/* The scratch record the calibration's calls account into. */
static struct popmon_thread calib;

/* The calibration's calls: MPI_Comm_rank (MPI is initialized here), the
 * cheapest wrapped function, through popmon's own tables, so that what is
 * timed is the generated wrapper itself, as the program's calls run it
 * (entry, the table's next function, exit), against the same call
 * without it: the MPI library's function that the wrapper calls. Only the
 * exported stub's jump (x86-64, AArch64) is left out of the difference. */
typedef int (*comm_rank_fn)(MPI_Comm, int *);

/* The call as the program makes it: the wrapper (popmon_entry). */
static __attribute__((noinline)) int calib_wrapped(void)
{
	int r;
	return ((comm_rank_fn)POPMON_LOAD(popmon_entry[POPMON_FN_MPI_Comm_rank]))(MPI_COMM_WORLD, &r);
}

/* The same call without popmon: what the wrapper calls next. */
static __attribute__((noinline)) int calib_bare(void)
{
	int r;
	return ((comm_rank_fn)popmon_next_fn(POPMON_FN_MPI_Comm_rank))(MPI_COMM_WORLD, &r);
}

int64_t popmon_owncost_fn_ns(uint64_t calls, int64_t ns)
{
	double in = (double)calls * (double)popmon_owncost_ticks[0] / 1024.0 * popmon_ns_per_tick();
	if (!(in > 0))
		return ns;
	return (double)ns > in ? ns - (int64_t)(in + 0.5) : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Median of n values (sorts v; n small). */
static uint64_t median(uint64_t *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && cmp_u64(&v[j - 1], &v[j]) > 0; j--) {
			uint64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

void popmon_owncost_calibrate(void)
{
	struct popmon_thread *self = popmon_tls;
	if (self == NULL)
		return;
	memset(&calib, 0, sizeof calib);
	calib.state = POPMON_ST_USEFUL;
	calib.slot = self->slot;
	calib.kind = self->kind;
	if (self->ctr.status == POPMON_CTR_OPEN) {
		/* The calling thread's own counters, read as its calls read
		 * them (rdpmc or read()): what they add up to here is thrown
		 * away with the scratch record. */
		calib.ctr = self->ctr;
		calib.ctr.counting = 0;
		calib.accounted = 1;
	} else {
		calib.ctr.status = POPMON_CTR_FAILED;
	}
	int trace = POPMON_LOAD(popmon_trace_on);
	POPMON_STORE(popmon_trace_on, 0);
	popmon_tls = &calib;
	uint64_t in[BATCHES], all[BATCHES];
	for (int b = -1; b < BATCHES; b++) { /* batch -1 warms the caches up */
		uint64_t t0 = popmon_now();
		for (int i = 0; i < CALLS; i++)
			calib_bare();
		uint64_t t1 = popmon_now();
		uint64_t mpi0 = calib.acc[POPMON_ST_MPI];
		for (int i = 0; i < CALLS; i++)
			calib_wrapped();
		uint64_t t2 = popmon_now();
		if (b < 0)
			continue;
		uint64_t bare = popmon_delta(t0, t1), wrapped = popmon_delta(t1, t2);
		uint64_t inside = calib.acc[POPMON_ST_MPI] - mpi0;
		/* Per call x 1024: the whole own cost (wrapped - bare), and the
		 * part inside the clock readings (the MPI interval less the
		 * bare call it contains), at most the whole. */
		uint64_t own = wrapped > bare ? (wrapped - bare) * 1024 / CALLS : 0;
		uint64_t ins = inside > bare ? (inside - bare) * 1024 / CALLS : 0;
		all[b] = own;
		in[b] = ins < own ? ins : own;
	}
	popmon_tls = self;
	POPMON_STORE(popmon_trace_on, trace);
	uint64_t i = median(in, BATCHES), a = median(all, BATCHES);
	popmon_owncost_ticks[0] = i;
	popmon_owncost_ticks[1] = a > i ? a - i : 0;
}
