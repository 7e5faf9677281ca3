/* gpu_cupti.h: the NVIDIA backend of the GPU measurement (gpu_cupti.c: CUPTI):
 * its entry points, the record decoder, the reasons and popmon doctor's
 * probe. */
#ifndef POPMON_GPU_CUPTI_H
#define POPMON_GPU_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

/* The backend in use (the real one, filled with dlsym; tests install their
 * own before InitializeInjection runs). */
extern const struct popmon_gpu_backend *popmon_gpu_backend;

/* The CUDA driver's injection entry point (CUDA_INJECTION64_PATH). */
int InitializeInjection(void);

/* Decodes one activity record through the stable prefixes: timestamps
 * outside [lo, hi] and devices >= ndev are rejected. */
void popmon_gpu_decode(const uint8_t *rec, uint64_t lo, uint64_t hi, uint32_t ndev, struct popmon_gpu_record *out);

/* Finish of a process the CUPTI backend did not measure: why (CUDA not
 * used, off, not injected, another tool injected, its error); gpu.c asks
 * it after the rocprofiler-sdk backend (gpu_rocm.h). */
void popmon_gpu_cupti_why(struct popmon_gpu_proc *out, int mode);

/* cuptiGetVersion's value (0 before CUPTI started). */
unsigned popmon_cupti_version_of(void);

/* Reason texts (one sentence with the fix), shared with popmon doctor. */
enum popmon_gpu_why {
	POPMON_GPU_WHY_NO_CUDA = 0, /* the program did not use CUDA */
	POPMON_GPU_WHY_OFF,         /* --gpu off */
	POPMON_GPU_WHY_NOT_INJECTED, /* CUDA used, CUDA_INJECTION64_PATH not set */
	POPMON_GPU_WHY_TAKEN,       /* another tool's CUDA_INJECTION64_PATH (detail) */
	POPMON_GPU_WHY_NO_CUPTI,    /* no libcupti found (detail: what was tried) */
	POPMON_GPU_WHY_CUPTI_ERROR, /* a CUPTI call failed with err (detail: the call) */
	POPMON_GPU_WHY_NO_DRIVER,   /* libcuda.so.1 not loaded */
	POPMON_GPU_WHY_NO_CLOCK,    /* neither the timestamp callback nor cuptiGetTimestamp */
	POPMON_GPU_WHY_OTHER_BACKEND, /* another backend already measures the devices */
};
void popmon_gpu_reason(char *buf, size_t n, int why, int err, const char *detail);

/* popmon doctor's probe (POPMON_GPU_PROBE=1 in the constructor): prints
 * what it finds on stdout as key=value lines. */
void popmon_gpu_probe(void);

#endif /* POPMON_GPU_CUPTI_H */
