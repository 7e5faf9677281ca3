/* fake_counters.c: the device-counter validation program (../devcounters.h)
 * on the fake CUDA stack: kernels with designed counters
 * (fakecuda_launch_counted), so every expected value follows from the
 * design below and the simulated device (FAKECUDA_SMS, FAKECUDA_SM_MHZ):
 *
 *   instr        20 ms, 4e9 warp instructions (x --inst-factor), all SMs,
 *                occupancy 0.5, no DRAM
 *   dram         10 ms, GPU_COUNTERS_BYTES read and as many written, all SMs,
 *                occupancy 0.5, 2e8 instructions
 *   occ_full     10 ms, occupancy 0.95, 1e9 instructions
 *   occ_quarter  10 ms, occupancy 0.25, 1e9 instructions
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "fakecuda.h"
#include "devcounters.h"

int cuDeviceGetCount(int *count); /* the fake driver's */

static const struct {
	const char *name;
	double ms;
	struct fakecuda_counters c;
} kernels[GC_KINDS] = {
	[GC_INSTR] = {"instr_kernel", 20, {4e9, 1, 0.5, 0, 0}},
	[GC_DRAM] = {"copy_kernel", 10, {2e8, 1, 0.5, GPU_COUNTERS_BYTES, GPU_COUNTERS_BYTES}},
	[GC_OCC_FULL] = {"occ_kernel", 10, {1e9, 1, 0.95, 0, 0}},
	[GC_OCC_QUARTER] = {"occ_kernel", 10, {1e9, 1, 0.25, 0, 0}},
};

static int setup(int rank)
{
	int n = 0;
	if (fakecuda_set_device(0) != 0 || cuDeviceGetCount(&n) != 0 || n <= 0)
		return 0;
	fakecuda_set_device(rank % n);
	return n;
}

static void warm_up(void)
{
	fakecuda_launch("warm_up", 1, 0);
	fakecuda_sync();
}

static void launch(int kind, double factor)
{
	struct fakecuda_counters c = kernels[kind].c;
	c.instructions *= factor;
	fakecuda_launch_counted(kernels[kind].name, kernels[kind].ms, 0, &c);
}

static void sync_device(void)
{
	fakecuda_sync();
}

static double designed(int kind, int what)
{
	switch (what) {
	case GC_WHAT_INSTRUCTIONS:
		return kernels[kind].c.instructions;
	case GC_WHAT_DRAM_BYTES:
		return kernels[kind].c.dram_read + kernels[kind].c.dram_write;
	case GC_WHAT_OCCUPANCY:
		return kernels[kind].c.occupancy;
	case GC_WHAT_SM_GHZ:
		return fakecuda_sm_mhz() / 1000;
	}
	return -1;
}

int main(int argc, char **argv)
{
	const struct gc_ops ops = {setup, warm_up, launch, sync_device, designed};
	return gc_main(argc, argv, &ops);
}
