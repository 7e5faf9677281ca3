/* talp_api.c: the runtime query API from inside a program: a TALP program
 * that asks for its own POP metrics while it runs (DLB_TALP_CollectPOPMetrics),
 * and popmon's own popmon_metrics with the window since the previous call.
 * Built against examples/dlbstub (no DLB needed); under popmon the preloaded
 * libpopmon's DLB_* and popmon_* functions answer.
 *
 * Usage: talp_api [K_MS [ITERATIONS]]    defaults: K = 50 ms, N = 8
 *                                        (wall time about N*P*K + K: 1.65 s for P = 4)
 *
 * Every iteration rank r works (r+1)*K, then MPI_Allreduce (the imbalance
 * design, imbalance.c), then every rank calls
 *   DLB_TALP_CollectPOPMetrics(DLB_GLOBAL_REGION): Global so far, and
 *   popmon_metrics(NULL, POPMON_WINDOW_SINCE_LAST): Global in this iteration.
 * Both give LB = PE = (P+1)/(2P) (0.625 for P = 4, 0.75 for P = 2), CommE = 1,
 * LB in = LB, LB out = 1 on one node, num_mpi_ranks = P. The collective's own
 * time is MPI time, at most a few ms per iteration.
 *
 * Then a region registered on rank 0 only, "rank 0 only": rank 0 works K in
 * it. All ranks then ask for it: popmon_metrics("rank 0 only") (the others
 * never registered it: they take part with nothing) and
 * DLB_TALP_CollectPOPMetrics on a handle the others register only then
 * (never started). Expected on every rank, without hanging: one process
 * (num_mpi_ranks 1), elapsed K, PE = LB = 1.
 * Then DLB_TALP_CollectPOPNodeMetrics(DLB_GLOBAL_REGION): all ranks on one
 * node: processes_per_node = P, LB = PE = about (P+1)/(2P) (Global so far).
 * Last, Global once more: the values popmon's report of the file shows
 * (within the MPI_Finalize tail).
 *
 * Rank 0 prints
 *   "iter I rc RC lb LB pe PE ranks P last_lb LB2"   per iteration,
 *   "one-rank rc RC ranks 1 elapsed_ms E pe PE"       on every rank (prefixed "rank R"),
 *   "node rc RC ppn P lb LB pe PE",
 *   "final lb LB pe PE comm CE ranks P elapsed_ns T useful_ns U mpi_ns M nodes N in IN out OUT"
 * and "ok"; without popmon (the DLB stub) "ok (TALP not enabled)".
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "dlb_talp.h"
#include "popmon.h"
#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[2] = { 50, 8 }; /* K in ms, iterations */
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = (int)arg[1];
	int failures = 0;

	dlb_pop_metrics_t pm;
	for (int it = 1; it <= n; it++) {
		work_ms((rank + 1) * k);
		long mine = rank + 1, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		int rc = DLB_TALP_CollectPOPMetrics(DLB_GLOBAL_REGION, &pm);
		if (rc == DLB_ERR_NOTALP) {
			/* Not under popmon (or DLB without TALP): nothing to ask. */
			if (rank == 0)
				printf("ok (TALP not enabled)\n");
			MPI_Finalize();
			return 0;
		}
		struct popmon_metrics last = { .size = sizeof last };
		int rc2 = popmon_metrics(NULL, POPMON_WINDOW_SINCE_LAST, &last);
		if (rc != DLB_SUCCESS || rc2 != POPMON_SUCCESS)
			failures++;
		if (rank == 0)
			printf("iter %d rc %d lb %.4f pe %.4f ranks %d last_lb %.4f\n", it, rc,
			       pm.mpi_load_balance, pm.parallel_efficiency, pm.num_mpi_ranks,
			       last.mpi_load_balance);
	}

	/* A region of rank 0 only. */
	if (rank == 0) {
		dlb_monitor_t *only = DLB_MonitoringRegionRegister("rank 0 only");
		DLB_MonitoringRegionStart(only);
		work_ms(k);
		DLB_MonitoringRegionStop(only);
	}
	struct popmon_metrics one = { .size = sizeof one };
	int rc = popmon_metrics("rank 0 only", POPMON_WINDOW_RUN, &one);
	dlb_monitor_t *late = DLB_MonitoringRegionRegister("rank 0 only");
	int rc2 = DLB_TALP_CollectPOPMetrics(late, &pm);
	printf("rank %d one-rank rc %d ranks %d elapsed_ms %.1f pe %.4f dlb_rc %d dlb_ranks %d\n", rank, rc,
	       one.processes, one.elapsed_ns / 1e6, one.parallel_efficiency, rc2, pm.num_mpi_ranks);
	if (rc != POPMON_SUCCESS || rc2 != DLB_SUCCESS || one.processes != 1 || pm.num_mpi_ranks != 1)
		failures++;

	dlb_node_metrics_t nm;
	rc = DLB_TALP_CollectPOPNodeMetrics(DLB_GLOBAL_REGION, &nm);
	if (rc != DLB_SUCCESS)
		failures++;
	if (rank == 0)
		printf("node rc %d ppn %d lb %.4f pe %.4f\n", rc, nm.processes_per_node, nm.load_balance,
		       nm.parallel_efficiency);
	rc = DLB_TALP_CollectPOPMetrics(DLB_GLOBAL_REGION, &pm);
	if (rc != DLB_SUCCESS)
		failures++;
	if (rank == 0) {
		printf("final lb %.4f pe %.4f comm %.4f ranks %d elapsed_ns %lld useful_ns %lld mpi_ns %lld "
		       "nodes %d in %.4f out %.4f\n",
		       pm.mpi_load_balance, pm.parallel_efficiency, pm.mpi_communication_efficiency,
		       pm.num_mpi_ranks, (long long)pm.elapsed_time, (long long)pm.useful_time,
		       (long long)pm.mpi_time, pm.num_nodes, pm.mpi_load_balance_in, pm.mpi_load_balance_out);
		if (failures == 0)
			printf("ok\n");
	}
	fflush(stdout);
	MPI_Finalize();
	return failures == 0 ? 0 : 1;
}
