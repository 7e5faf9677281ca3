/* accounts.c: the process's accounts at a moment (accounts.h). */
#include <stddef.h>
#include <string.h>

#include "accounts.h"
#include "base/clock.h"
#include "base/threads.h"
#include "counters.h"
#include "gpu.h"
#include "gpu_counters.h"
#include "live.h"

_Static_assert(POPMON_GPU_DEVICES == POPMON_LIVE_GPU_DEVICES, "the live file's GPU block holds every device");

void popmon_accounts_layout(struct popmon_live_header *h)
{
	h->detail_threads = POPMON_DETAIL_THREADS;
	h->ac_size = (uint32_t)sizeof(struct popmon_accounts);
	h->ac_t = offsetof(struct popmon_accounts, t);
	h->ac_mpi_calls = offsetof(struct popmon_accounts, mpi_calls);
	h->ac_omp_parallels = offsetof(struct popmon_accounts, omp_parallels);
	h->ac_omp_tasks = offsetof(struct popmon_accounts, omp_tasks);
	h->ac_gpu_calls = offsetof(struct popmon_accounts, gpu_calls);
	h->ac_x = offsetof(struct popmon_accounts, x);
	h->ac_prim_useful = offsetof(struct popmon_accounts, prim_useful);
	h->ac_prim_mpi = offsetof(struct popmon_accounts, prim_mpi);
	h->ac_thr_useful_max = offsetof(struct popmon_accounts, thr_useful_max);
	h->ac_ctr = offsetof(struct popmon_accounts, ctr);
	h->ac_gpu_k = offsetof(struct popmon_accounts, gpu_k);
	h->ac_gpu_a = offsetof(struct popmon_accounts, gpu_a);
}

void popmon_snapshot(uint64_t now, struct popmon_accounts *a, uint64_t *thr_useful)
{
	memset(a, 0, sizeof *a);
	if (thr_useful)
		memset(thr_useful, 0, sizeof(uint64_t) * POPMON_DETAIL_THREADS);
	/* The caller's own record first: exact at now. */
	struct popmon_thread *self = popmon_tls;
	if (self)
		popmon_switch(self, self->state, now);
	int n = popmon_thread_count();
	for (int i = 0; i < n; i++) {
		struct popmon_thread *t = popmon_thread_slot(i);
		if (!t)
			continue;
		a->mpi_calls += POPMON_LOAD(t->mpi_calls);
		a->gpu_calls += POPMON_LOAD(t->gpu_calls);
		a->omp_parallels += POPMON_LOAD(t->extra[POPMON_X_PARALLELS]);
		a->omp_tasks += POPMON_LOAD(t->extra[POPMON_X_TASKS]);
		if (!t->accounted)
			continue;
		uint64_t acc[POPMON_NSTATES];
		for (int s = 0; s < POPMON_NSTATES; s++)
			acc[s] = POPMON_LOAD(t->acc[s]);
		if (t != self) {
			/* The interval in progress in another thread. */
			uint32_t st = POPMON_LOAD(t->state);
			uint64_t d = popmon_delta(POPMON_LOAD(t->last), now);
			uint32_t rate = POPMON_LOAD(t->rate);
			if (st < POPMON_NSTATES) {
				acc[st] += d;
				if (rate)
					acc[popmon_charge_state(st)] += d * rate;
			}
		}
		for (int s = 0; s < POPMON_NSTATES; s++)
			a->t[s] += acc[s];
		for (int x = 0; x < POPMON_NEXTRA; x++)
			a->x[x] += POPMON_LOAD(t->extra[x]);
		for (int c = 0; c < POPMON_CTR_N; c++)
			a->ctr[c] += POPMON_LOAD(t->ctr.acc[c]);
		if (t->slot == 0) {
			a->prim_useful = acc[POPMON_ST_USEFUL];
			a->prim_mpi = acc[POPMON_ST_MPI];
		}
		if (thr_useful && t->slot < POPMON_DETAIL_THREADS)
			thr_useful[t->slot] = acc[POPMON_ST_USEFUL];
	}
	/* Device time (nothing without CUDA: one load). */
	if (__builtin_expect(__atomic_load_n(&popmon_gpu_active, __ATOMIC_RELAXED), 0)) {
		popmon_gpu_read((uint64_t)popmon_tick_monotonic_ns(now), a->gpu_k, a->gpu_a);
		popmon_gpu_counters_read((uint64_t)popmon_tick_monotonic_ns(now), a->gpu_c);
	}
}
