/* gpu_cupti.h: the NVIDIA backend of the GPU measurement (gpu_cupti.c: CUPTI):
 * its entry points, the record decoder, the reasons and its ops (the
 * backend table's entry, gpu_backends.h). */
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

/* The backend (gpu_backends.h lists it): its why says why a process it did
 * not measure was not measured (CUDA not used, off, not injected, another
 * tool injected, its error) and always answers; its probe is popmon
 * doctor's (POPMON_GPU_PROBE=1 in the constructor): what it finds on stdout
 * as key=value lines. */
extern const struct popmon_gpu_ops popmon_gpu_cupti_ops;

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

#endif /* POPMON_GPU_CUPTI_H */
