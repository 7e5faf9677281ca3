/* dlb_stub.c: a stand-in for libdlb.so where DLB is not installed, so that
 * programs instrumented for TALP (examples/talp_regions.c) link and run.
 *
 * It behaves like DLB started without --talp: no region handles (NULL) and
 * every call answers DLB_ERR_NOTALP, silently. Under `popmon run` the
 * preloaded libpopmon defines the same DLB_* symbols, which take precedence
 * over these, and the program is measured unchanged.
 *
 * Build: cc -O2 -std=c11 -fPIC -shared -Wl,-soname,libdlb.so -o libdlb.so dlb_stub.c
 */
#include "dlb_talp.h"

dlb_monitor_t *DLB_MonitoringRegionGetGlobal(void)
{
	return NULL;
}

dlb_monitor_t *DLB_MonitoringRegionRegister(const char *name)
{
	(void)name;
	return NULL;
}

int DLB_MonitoringRegionReset(dlb_monitor_t *handle)
{
	(void)handle;
	return DLB_ERR_NOTALP;
}

int DLB_MonitoringRegionStart(dlb_monitor_t *handle)
{
	(void)handle;
	return DLB_ERR_NOTALP;
}

int DLB_MonitoringRegionStop(dlb_monitor_t *handle)
{
	(void)handle;
	return DLB_ERR_NOTALP;
}

int DLB_MonitoringRegionReport(const dlb_monitor_t *handle)
{
	(void)handle;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_CollectPOPMetrics(dlb_monitor_t *monitor, dlb_pop_metrics_t *pop_metrics)
{
	(void)monitor;
	(void)pop_metrics;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_CollectPOPNodeMetrics(dlb_monitor_t *monitor, dlb_node_metrics_t *node_metrics)
{
	(void)monitor;
	(void)node_metrics;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_Attach(void)
{
	return DLB_ERR_NOTALP;
}

int DLB_TALP_Detach(void)
{
	return DLB_ERR_NOTALP;
}

int DLB_TALP_GetNumCPUs(int *ncpus)
{
	(void)ncpus;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_GetPidList(int *pidlist, int *nelems, int max_len)
{
	(void)pidlist;
	(void)max_len;
	if (nelems)
		*nelems = 0;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_GetTimes(int pid, double *mpi_time, double *useful_time)
{
	(void)pid;
	(void)mpi_time;
	(void)useful_time;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_GetNodeTimes(const char *name, dlb_node_times_t *node_times_list, int *nelems, int max_len)
{
	(void)name;
	(void)node_times_list;
	(void)max_len;
	if (nelems)
		*nelems = 0;
	return DLB_ERR_NOTALP;
}

int DLB_TALP_QueryPOPNodeMetrics(const char *name, dlb_node_metrics_t *node_metrics)
{
	(void)name;
	(void)node_metrics;
	return DLB_ERR_NOTALP;
}
