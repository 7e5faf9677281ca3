/* dlb_types.h: DLB 3.7's types and flags, written for popmon's DLB-compatible
 * prefix from DLB's documented interface (same names and values). */
#ifndef DLB_TYPES_H
#define DLB_TYPES_H

/* Opaque types */
typedef struct dlb_barrier_t dlb_barrier_t;
typedef void *dlb_handler_t;
typedef void *dlb_cpu_set_t;
typedef const void *const_dlb_cpu_set_t;

/* LeWI */
enum { DLB_DELETE_REQUESTS = 0 };
enum { DLB_MAX_CPUS = 0x7fff };

/* DROM flags */
typedef enum dlb_drom_flags_e {
	DLB_DROM_FLAGS_NONE = 0,
	DLB_STEAL_CPUS = 1 << 0,
	DLB_RETURN_STOLEN = 1 << 1,
	DLB_SYNC_QUERY = 1 << 2,
	DLB_SYNC_NOW = 1 << 3,
	DLB_NO_SYNC = 1 << 4,
	DLB_FREE_CPUS_SLURM = 1 << 5,
} dlb_drom_flags_t;

/* DLB_PrintShmem flags */
typedef enum dlb_printshmem_flags_e {
	DLB_COLOR_AUTO = 1,
	DLB_COLOR_ALWAYS = 2
} dlb_printshmem_flags_t;

/* Barrier flags */
typedef enum dlb_barrier_flags_e {
	DLB_BARRIER_LEWI_OFF = 0,
	DLB_BARRIER_LEWI_ON = 1 << 0,
	DLB_BARRIER_LEWI_RUNTIME = 1 << 1,
} dlb_barrier_flags_t;

/* Callbacks */
typedef void (*dlb_callback_t)(void);
typedef enum dlb_callbacks_e {
	dlb_callback_set_num_threads = 1,
	dlb_callback_set_active_mask = 2,
	dlb_callback_set_process_mask = 3,
	dlb_callback_add_active_mask = 4,
	dlb_callback_add_process_mask = 5,
	dlb_callback_enable_cpu = 6,
	dlb_callback_disable_cpu = 7,
	dlb_callback_enable_cpu_set = 8,
	dlb_callback_disable_cpu_set = 9,
} dlb_callbacks_t;
typedef void (*dlb_callback_set_num_threads_t)(int num_threads, void *arg);
typedef void (*dlb_callback_set_active_mask_t)(const_dlb_cpu_set_t mask, void *arg);
typedef void (*dlb_callback_set_process_mask_t)(const_dlb_cpu_set_t mask, void *arg);
typedef void (*dlb_callback_add_active_mask_t)(const_dlb_cpu_set_t mask, void *arg);
typedef void (*dlb_callback_add_process_mask_t)(const_dlb_cpu_set_t mask, void *arg);
typedef void (*dlb_callback_enable_cpu_t)(int cpuid, void *arg);
typedef void (*dlb_callback_disable_cpu_t)(int cpuid, void *arg);
typedef void (*dlb_callback_enable_cpu_set_t)(const_dlb_cpu_set_t mask, void *arg);
typedef void (*dlb_callback_disable_cpu_set_t)(const_dlb_cpu_set_t mask, void *arg);

#endif /* DLB_TYPES_H */
