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
