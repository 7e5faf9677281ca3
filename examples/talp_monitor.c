/* talp_monitor.c: a monitoring process on the node, as a TALP third-party
 * tool is written (DLB_TALP_Attach, GetPidList, GetTimes,
 * QueryPOPNodeMetrics): it watches the node's measured processes and
 * prints what it sees. It is not an MPI program. Built against
 * examples/dlbstub; it needs libpopmon loaded to see anything:
 *
 *   LD_PRELOAD=$(popmon build) POPMON_DISABLE=1 ./talp_monitor [SECONDS [INTERVAL_MS]]
 *
 * (POPMON_DISABLE=1: the library measures nothing in the monitor itself,
 * its third-party calls still answer.) Start it before or during a job run
 * under `popmon run` on the same node: it finds the job's live files in
 * /dev/shm/popmon-UID/run-* by itself (or in $POPMON_LIVE_DIR), looking
 * again at every call, so a job that starts later is seen.
 *
 * Defaults: SECONDS = 30 (the longest it waits), INTERVAL_MS = 250. Every
 * interval it prints
 *   "sample S pids N"
 *   "pid P mpi_s M useful_s U"                       per process (Global so far)
 *   "node_times N"                                   GetNodeTimes(Global): N processes
 *   "node ppn N lb LB pe PE comm CE"                 QueryPOPNodeMetrics(Global)
 * and stops once it has seen processes and then none (the job ended), or
 * after SECONDS; then "ok max_pids N". With the imbalance example on P
 * ranks of this node: N = P, times grow, LB -> (P+1)/(2P) (0.625 for 4).
 * Without popmon (the DLB stub): "ok (TALP not enabled)".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "dlb_talp.h"
#include "work.h"

enum { MAXPIDS = 1024 };

int main(int argc, char **argv)
{
	double arg[2] = { 30, 250 };
	if (parse_args(argc, argv, 0, "[SECONDS [INTERVAL_MS]]", 2, arg) != 0)
		return 2;
	if (DLB_TALP_Attach() != DLB_SUCCESS) {
		printf("ok (TALP not enabled)\n");
		return 0;
	}
	int ncpus = 0;
	DLB_TALP_GetNumCPUs(&ncpus);
	printf("cpus %d\n", ncpus);
	static int pids[MAXPIDS];
	int max_pids = 0;
	const int samples = (int)(arg[0] * 1000 / arg[1]);
	for (int s = 0; s < samples; s++) {
		int n = 0;
		if (DLB_TALP_GetPidList(pids, &n, MAXPIDS) != DLB_SUCCESS)
			n = 0;
		printf("sample %d pids %d\n", s, n);
		for (int i = 0; i < n; i++) {
			double mpi = 0, useful = 0;
			if (DLB_TALP_GetTimes(pids[i], &mpi, &useful) == DLB_SUCCESS)
				printf("pid %d mpi_s %.4f useful_s %.4f\n", pids[i], mpi, useful);
		}
		static dlb_node_times_t times[MAXPIDS];
		int nt = 0;
		if (n > 0 && DLB_TALP_GetNodeTimes(NULL, times, &nt, MAXPIDS) == DLB_SUCCESS)
			printf("node_times %d\n", nt);
		dlb_node_metrics_t nm;
		if (n > 0 && DLB_TALP_QueryPOPNodeMetrics(NULL, &nm) == DLB_SUCCESS)
			printf("node ppn %d lb %.4f pe %.4f comm %.4f\n", nm.processes_per_node, nm.load_balance,
			       nm.parallel_efficiency, nm.communication_efficiency);
		fflush(stdout);
		if (n > max_pids)
			max_pids = n;
		if (max_pids > 0 && n == 0)
			break; /* the job ended */
		work_ms(arg[1]);
	}
	DLB_TALP_Detach();
	printf("ok max_pids %d\n", max_pids);
	return 0;
}
