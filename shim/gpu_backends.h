/* gpu_backends.h: the table of GPU backends (gpu_backends.c), the one
 * place that names them.
 *
 * Each backend is one file (gpu_cupti.c, gpu_rocm.c) and one entry here:
 * its struct popmon_gpu_ops (gpu.h) says its name and vendor strings, its
 * probe (popmon doctor), why it did not measure, and what the accounting
 * layer asks of it once it measures. The vendor's runtime starts a backend
 * from outside (CUDA's InitializeInjection, rocprofiler-sdk's
 * rocprofiler_configure); the first to start hands its ops to the layer
 * (popmon_gpu_activate), which never names a backend. Start-up (core.c),
 * finish and the output (output.c) go through this table.
 *
 * A new backend: its file, its ops, one line in the table (and its vendor
 * number in gpu.h, POPMON_GPU_VENDOR_*, which the live file carries).
 */
#ifndef POPMON_GPU_BACKENDS_H
#define POPMON_GPU_BACKENDS_H

#include <stdint.h>

#include "gpu.h"

/* The backends, NULL-terminated. The first is the default: the record of a
 * process with no vendor (or one this library does not know) is written
 * with its strings, and when no backend measured it is asked why last and
 * always answers. */
extern const struct popmon_gpu_ops *const popmon_gpu_backends[];

/* The backend of vendor (POPMON_GPU_VENDOR_*), else the default. */
const struct popmon_gpu_ops *popmon_gpu_backend_of(int64_t vendor);

/* popmon doctor's probe (POPMON_GPU_PROBE): every backend's, in the table's
 * order. */
void popmon_gpu_backends_probe(void);

/* Finalize (before the warnings are gathered): flushes, stops the backend
 * that measures and fills out (popmon_gpu_finish_measured); when none
 * measured, the backends say why (the default last) and mode on warns once.
 * g0_ns, g1_ns: Global's span (CLOCK_MONOTONIC) for the idle gaps; rank:
 * for the test hook POPMON_GPU_TEST_DISTINCT_DEVICE_PER_RANK. Safe to call
 * more than once. */
void popmon_gpu_finish(struct popmon_gpu_proc *out, uint64_t g0_ns, uint64_t g1_ns, int rank);

#endif /* POPMON_GPU_BACKENDS_H */
