/* hybrid_mpi_idle.c: MPI+OpenMP, OpenMP workers idle while their primary
 * thread waits inside MPI ("MPI worker idle", Mw): balanced everywhere, but
 * the ranks take turns, so the loss is MPI communication only.
 *
 * Usage: hybrid_mpi_idle [W_MS [REPS]]     defaults: W = 100 ms, N = 3
 *        P ranks, T = OMP_NUM_THREADS threads per rank (designed for any
 *        P >= 1, T >= 2; tested with P = 2, T = 2); MPI_THREAD_FUNNELED
 *        wall time N*(P+1)*W: 0.9 s for P = 2, 1.5 s for P = 4
 *        Measure with OMP_WAIT_POLICY=passive (needed with MPICH, which
 *        busy-waits; see examples/README.md, "Environment for the tests").
 *
 * Each of N repetitions:
 *  (a) every rank: a balanced `omp parallel` region, every thread works W;
 *  (b) P turns k = 0 .. P-1: rank k runs a balanced `omp parallel` region
 *      (every thread works W) while the other ranks' primary threads wait in
 *      MPI_Allreduce (called after each turn by every rank, outside parallel
 *      regions) and their T-1 workers idle: per rank M = (P-1)*W and
 *      Mw = (T-1)*(P-1)*W per repetition.
 *
 * Accounts per rank, in units of N*W (T CPUs per rank, C = P*T):
 *   R = elapsed = P+1, U = 2T, M = P-1, Mw = (T-1)(P-1)   (U+M+Mw = T*R)
 *   Iser = Ilb = Isch = 0 (up to fork/join latency and loop overhead)
 *
 * Expected, model talp (POP-METRICS.md §2: Mw is MPI time of the idle CPUs
 * in the MPI branch, serialization in the OpenMP branch):
 *   mpi_app = Σ(M+Mw)/C = P-1, mpi_proc_min = min (M_i+Mw_i)/T = P-1
 *   Parallel efficiency         = U/(U+M+Mw)   = 2/(P+1)
 *   MPI parallel efficiency     = (R-mpi_app)/R = 2/(P+1)
 *     Communication efficiency  = 2/(P+1)
 *     Load balance = In = Out   = 1
 *   OpenMP parallel efficiency = Serialization = (2T+P-1)/(T(P+1))  (5/6)
 *   OpenMP load balance = Scheduling = 1
 *   (Without Mw, i.e. if the workers' idle time were lost, MPI PE and CommE
 *   would read 1 - (P-1)/(T(P+1)): 5/6 = 0.833 for P = T = 2.)
 * Model pop-hybrid (every thread U = 2, NonMPI_r = R - M_r = 2):
 *   Hybrid PE = Hybrid CommE = 2/(P+1), Hybrid LB = 1
 *   MPI PE = MPI CommE = 2/(P+1), MPI LB = 1
 *   OpenMP PE = LB = CommE = 1
 * Model pop-additive (OMP_r = 2, SerialUseful = 0, Avg(OMPUseful) = 2):
 *   Parallel efficiency = Process efficiency = MPI CommE = 2/(P+1)
 *   MPI LB = Thread efficiency = OpenMP region eff. = Serial region eff. = 1
 * P = 2: 2/3 = 0.667;  P = 4: 2/5 = 0.4 (any T).
 *
 * Prints "ok <2*N*P*T>" on rank 0 (thread work items of all ranks) and exits
 * 0; 1 if MPI lacks FUNNELED or a team is smaller than T; 2 with a bad
 * argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "work.h"

/* A balanced `omp parallel` region: every thread works w ms. Returns the
 * team's work items (its size), or -1 when it is smaller than t. */
static long team_work(double w, int t)
{
	long items = 0;
	int bad_team = 0;
#pragma omp parallel reduction(+ : items, bad_team)
	{
		bad_team += omp_get_thread_num() == 0 && omp_get_num_threads() != t;
		work_ms(w);
		items++;
	}
	return bad_team ? -1 : items;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_FUNNELED) {
		if (rank == 0)
			fprintf(stderr, "hybrid_mpi_idle: MPI does not provide MPI_THREAD_FUNNELED\n");
		MPI_Finalize();
		return 1;
	}

	double arg[2] = { 100, 3 }; /* W in ms, repetitions */
	if (parse_args(argc, argv, rank, "[W_MS [REPS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double w = arg[0];
	const int n = (int)arg[1];
	const int t = omp_get_max_threads();

	long total = 0;
	int bad = 0;
	MPI_Barrier(MPI_COMM_WORLD); /* everyone starts together */
	for (int it = 0; it < n; it++) {
		long mine = team_work(w, t); /* (a) all ranks at once */
		bad |= mine < 0;
		for (int k = 0; k < size; k++) { /* (b) one rank at a time */
			if (rank == k) {
				long items = team_work(w, t);
				bad |= items < 0;
				mine += items;
			}
			long sum = 0;
			MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
			total += sum;
			mine = 0;
		}
	}

	if (bad)
		fprintf(stderr, "hybrid_mpi_idle: rank %d: parallel team smaller than omp_get_max_threads() = %d\n",
			rank, t);
	const long expect = 2L * n * size * t;
	if (rank == 0 && !bad)
		printf("ok %ld\n", total);
	MPI_Finalize();
	return !bad && total == expect ? 0 : 1;
}
