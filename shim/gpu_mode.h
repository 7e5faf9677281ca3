/* gpu_mode.h: the modes of the GPU measurement (gpu_mode.c), read once
 * from the environment: POPMON_GPU (`popmon run --gpu`) and
 * POPMON_GPU_COUNTERS (`--gpu-counters`). A leaf: the accounting layer, its
 * backends, start-up and the output read them; it calls only base/. */
#ifndef POPMON_GPU_MODE_H
#define POPMON_GPU_MODE_H

/* The mode of POPMON_GPU: 0 off, 1 auto (default), 2 on (popmon_env_mode:
 * another value is auto, with one line). */
int popmon_gpu_mode(void);
/* The modes' names in the file ("off", "auto", "on"), by mode. */
extern const char *const popmon_gpu_mode_names[3];

/* The mode of POPMON_GPU_COUNTERS: 0 off, 1 auto (default), 2 on; off
 * whenever GPU measurement is off. */
int popmon_gpu_counters_mode(void);

#endif /* POPMON_GPU_MODE_H */
