/* both.c: one MPI process that uses CUDA and HIP (a HIP program on an
 * NVIDIA machine: HIP over CUDA; or a code with both back ends), on the fake
 * stacks (examples/gpu/fake and fake_rocm). CUDA starts first: a 100 ms
 * kernel and a synchronisation; then HIP: a 50 ms kernel and a
 * synchronisation, all in region "work". Used by internal/e2e's
 * TestGPUBothVendors: one backend measures (the first to start), the other
 * says so in one line and counts nothing twice.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "fakecuda.h"
#include "fakehip.h"
#include "popmon.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	fakecuda_set_device(0);
	fakecuda_launch("cuda_warm_up", 0, 0);
	fakecuda_sync();
	fakehip_set_device(0);
	fakehip_launch("hip_warm_up", 0, 0);
	fakehip_sync();
	popmon_region_t work = popmon_region_register("work");
	popmon_region_start(work);
	fakecuda_launch("cuda_kernel", 100, 0);
	fakecuda_sync();
	fakehip_launch("hip_kernel", 50, 0);
	fakehip_sync();
	popmon_region_stop(work);
	printf("ok both\n");
	MPI_Finalize();
	return 0;
}
