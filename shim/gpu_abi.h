/* gpu_abi.h: the few CUDA driver and CUPTI declarations libpopmon uses.
 *
 * Written from NVIDIA's public documentation (CUPTI API reference, CUDA
 * driver API reference) and checked against the layouts listed in
 * ../shared/research/gpu.md §3.3; no NVIDIA header is copied or needed, so
 * the library builds where no CUDA is installed and one build serves
 * CUDA 11.8 to 13.x: every function is resolved at run time with dlsym,
 * and activity records are read through the prefixes that have not moved
 * across record versions (byte offsets below), never through a versioned
 * struct.
 */
#ifndef POPMON_GPU_ABI_H
#define POPMON_GPU_ABI_H

#include <stddef.h>
#include <stdint.h>

/* CUptiResult values libpopmon names (0 is success). */
enum {
	POPMON_CUPTI_SUCCESS = 0,
	POPMON_CUPTI_ERROR_INVALID_OPERATION = 7,
	POPMON_CUPTI_ERROR_HARDWARE_BUSY = 26,
	POPMON_CUPTI_ERROR_OUT_OF_MEMORY = 8,
	POPMON_CUPTI_ERROR_NOT_COMPATIBLE = 14,
	POPMON_CUPTI_ERROR_NOT_INITIALIZED = 15,
	POPMON_CUPTI_ERROR_NOT_SUPPORTED = 27,
	POPMON_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35,
	POPMON_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS = 39,
	POPMON_CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED = 33,
	POPMON_CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES = 40,
	POPMON_CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED = 41,
	POPMON_CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED = 42,
	POPMON_CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED = 43,
	POPMON_CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED = 44,
	POPMON_CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED = 45,
	POPMON_CUPTI_ERROR_INVALID_CHIP_NAME = 46,
};

/* Callback domains and sites. */
enum {
	POPMON_CUPTI_CB_DOMAIN_DRIVER_API = 1,
	POPMON_CUPTI_CB_DOMAIN_RUNTIME_API = 2,
	POPMON_CUPTI_CB_DOMAIN_RESOURCE = 3,
	POPMON_CUPTI_API_ENTER = 0,
	POPMON_CUPTI_API_EXIT = 1,
	POPMON_CUPTI_CBID_RESOURCE_CONTEXT_CREATED = 1,
	POPMON_CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING = 2,
};

/* Activity kinds and memcpy kinds. */
enum {
	POPMON_CUPTI_ACTIVITY_MEMCPY = 1,
	POPMON_CUPTI_ACTIVITY_MEMSET = 2,
	POPMON_CUPTI_ACTIVITY_KERNEL = 3,
	POPMON_CUPTI_ACTIVITY_CONCURRENT_KERNEL = 10,
	POPMON_CUPTI_ACTIVITY_MEMCPY2 = 22,
	POPMON_CUPTI_MEMCPY_HTOD = 1,
	POPMON_CUPTI_MEMCPY_DTOH = 2,
	POPMON_CUPTI_MEMCPY_HTOA = 3,
	POPMON_CUPTI_MEMCPY_ATOH = 4,
	POPMON_CUPTI_MEMCPY_DTOD = 8,
	POPMON_CUPTI_MEMCPY_HTOH = 9,
	POPMON_CUPTI_MEMCPY_PTOP = 10,
};

/* cuptiActivityFlushAll's flag: hand back buffers with records still in
 * progress too (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED). */
enum { POPMON_CUPTI_FLUSH_FORCED = 1 };

/* CUpti_ActivityAttribute values libpopmon sets. */
enum {
	POPMON_CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER = 5, /* a uint8_t */
};

/* Byte offsets of the stable record prefixes (`kind`, a u32, at 0). */
enum {
	POPMON_REC_KIND = 0,
	/* Kernel (kinds 3, 10), versions 4 to 10 */
	POPMON_REC_KERNEL_START = 16,
	POPMON_REC_KERNEL_END = 24,
	POPMON_REC_KERNEL_DEVICE = 40,
	POPMON_REC_KERNEL_NAME = 104, /* const char * */
	POPMON_REC_KERNEL_SIZE = 112, /* the prefix read */
	/* Memcpy (1), versions 1 to 6; MemcpyPtoP (22) shares start/end/device */
	POPMON_REC_MEMCPY_COPYKIND = 4, /* u8 */
	POPMON_REC_MEMCPY_BYTES = 8,
	POPMON_REC_MEMCPY_START = 16,
	POPMON_REC_MEMCPY_END = 24,
	POPMON_REC_MEMCPY_DEVICE = 32,
	POPMON_REC_PTOP_SRCDEVICE = 44,
	POPMON_REC_MEMCPY_SIZE = 48,
	/* Memset (2), versions 1 to 4 */
	POPMON_REC_MEMSET_BYTES = 8,
	POPMON_REC_MEMSET_START = 16,
	POPMON_REC_MEMSET_END = 24,
	POPMON_REC_MEMSET_DEVICE = 32,
	POPMON_REC_MEMSET_SIZE = 40,
	/* CUpti_CallbackData (unversioned): callbackSite u32 at 0 */
	POPMON_CBDATA_SITE = 0,
	/* CUpti_ResourceData: context at 0 */
	POPMON_RESDATA_CONTEXT = 0,
};

/* ------------------------------------------------------------------ PM sampling
 *
 * CUPTI's profiler host API (cupti_profiler_host.h), its target API
 * (cupti_profiler_target.h, cupti_target.h) and PM sampling
 * (cupti_pmsampling.h), CUPTI >= 12.6: every call takes one parameter
 * struct whose first field is its size (the size up to its last field, so
 * an older CUPTI reads the prefix it knows) and whose second is a reserved
 * pointer (NULL). The layouts below are those of CUPTI 12.6 to 13.x. */
enum {
	POPMON_CUPTI_PROFILER_TYPE_PM_SAMPLING = 1,
	POPMON_CUPTI_PM_TRIGGER_SYSCLK = 0, /* interval in sys clock cycles (Turing, GA100) */
	POPMON_CUPTI_PM_TRIGGER_TIME = 1,   /* interval in ns (GA10x and later) */
	POPMON_CUPTI_PM_DECODE_STOP_FULL = 1,
	POPMON_CUPTI_PM_DECODE_STOP_END = 2,
	/* CUdevice_attribute values */
	POPMON_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	POPMON_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
};
struct popmon_cupti_plain_params { /* cuptiProfilerInitialize */
	size_t size;
	void *priv;
};
struct popmon_cupti_chip_params { /* cuptiDeviceGetChipName */
	size_t size;
	void *priv;
	size_t device;
	const char *chip;
};
struct popmon_pm_availability_params { /* cuptiPmSamplingGetCounterAvailability */
	size_t size;
	void *priv;
	size_t device;
	size_t image_size;
	uint8_t *image;
};
struct popmon_host_init_params { /* cuptiProfilerHostInitialize */
	size_t size;
	void *priv;
	int profiler_type;
	const char *chip;
	const uint8_t *availability;
	void *host; /* out */
};
struct popmon_host_obj_params { /* cuptiProfilerHostDeinitialize */
	size_t size;
	void *priv;
	void *host;
};
struct popmon_host_add_params { /* cuptiProfilerHostConfigAddMetrics */
	size_t size;
	void *priv;
	void *host;
	const char **names;
	size_t n;
};
struct popmon_host_image_params { /* cuptiProfilerHostGetConfigImageSize / GetConfigImage */
	size_t size;
	void *priv;
	void *host;
	size_t image_size;
	uint8_t *image; /* GetConfigImage only */
};
struct popmon_host_passes_params { /* cuptiProfilerHostGetNumOfPasses */
	size_t size;
	void *priv;
	size_t image_size;
	uint8_t *image;
	size_t passes; /* out */
};
struct popmon_host_eval_params { /* cuptiProfilerHostEvaluateToGpuValues */
	size_t size;
	void *priv;
	void *host;
	const uint8_t *data;
	size_t data_size;
	size_t index;
	const char **names;
	size_t n;
	double *values;
};
struct popmon_pm_enable_params { /* cuptiPmSamplingEnable */
	size_t size;
	void *priv;
	size_t device;
	void *obj; /* out */
};
struct popmon_pm_obj_params { /* cuptiPmSamplingDisable / Start / Stop */
	size_t size;
	void *priv;
	void *obj;
};
struct popmon_pm_config_params { /* cuptiPmSamplingSetConfig (size up to trigger) */
	size_t size;
	void *priv;
	void *obj;
	size_t config_size;
	const uint8_t *config;
	size_t hw_buffer_size;
	uint64_t interval;
	int trigger;
};
struct popmon_pm_decode_params { /* cuptiPmSamplingDecodeData */
	size_t size;
	void *priv;
	void *obj;
	uint8_t *data;
	size_t data_size;
	int stop_reason; /* out */
	uint8_t overflow; /* out */
};
struct popmon_pm_data_size_params { /* cuptiPmSamplingGetCounterDataSize */
	size_t size;
	void *priv;
	void *obj;
	const char **names;
	size_t n;
	uint32_t max_samples;
	size_t data_size; /* out */
};
struct popmon_pm_data_init_params { /* cuptiPmSamplingCounterDataImageInitialize */
	size_t size;
	void *priv;
	void *obj;
	size_t data_size;
	uint8_t *data;
};
struct popmon_pm_data_info_params { /* cuptiPmSamplingGetCounterDataInfo */
	size_t size;
	void *priv;
	const uint8_t *data;
	size_t data_size;
	size_t total, populated, completed; /* out */
};
struct popmon_pm_sample_params { /* cuptiPmSamplingCounterDataGetSampleInfo */
	size_t size;
	void *priv;
	void *obj;
	const uint8_t *data;
	size_t data_size;
	size_t index;
	uint64_t start, end; /* out: the GPU's timestamps, ns */
};
/* The size CUPTI expects: up to and including the last field. */
#define POPMON_CUPTI_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

/* The PM sampling entry points (all optional: a CUPTI older than 12.6
 * has none, and GPU counters are then not measured). */
struct popmon_pm_backend {
	int (*profiler_initialize)(struct popmon_cupti_plain_params *);      /* cuptiProfilerInitialize */
	int (*chip_name)(struct popmon_cupti_chip_params *);                 /* cuptiDeviceGetChipName */
	int (*availability)(struct popmon_pm_availability_params *);         /* cuptiPmSamplingGetCounterAvailability */
	int (*host_initialize)(struct popmon_host_init_params *);            /* cuptiProfilerHostInitialize */
	int (*host_deinitialize)(struct popmon_host_obj_params *);           /* cuptiProfilerHostDeinitialize */
	int (*host_add_metrics)(struct popmon_host_add_params *);            /* cuptiProfilerHostConfigAddMetrics */
	int (*host_image_size)(struct popmon_host_image_params *);           /* cuptiProfilerHostGetConfigImageSize */
	int (*host_image)(struct popmon_host_image_params *);                /* cuptiProfilerHostGetConfigImage */
	int (*host_passes)(struct popmon_host_passes_params *);              /* cuptiProfilerHostGetNumOfPasses */
	int (*host_evaluate)(struct popmon_host_eval_params *);              /* cuptiProfilerHostEvaluateToGpuValues */
	int (*enable)(struct popmon_pm_enable_params *);                     /* cuptiPmSamplingEnable */
	int (*disable)(struct popmon_pm_obj_params *);                       /* cuptiPmSamplingDisable */
	int (*set_config)(struct popmon_pm_config_params *);                 /* cuptiPmSamplingSetConfig */
	int (*start)(struct popmon_pm_obj_params *);                         /* cuptiPmSamplingStart */
	int (*stop)(struct popmon_pm_obj_params *);                          /* cuptiPmSamplingStop */
	int (*decode)(struct popmon_pm_decode_params *);                     /* cuptiPmSamplingDecodeData */
	int (*data_size)(struct popmon_pm_data_size_params *);               /* cuptiPmSamplingGetCounterDataSize */
	int (*data_init)(struct popmon_pm_data_init_params *);               /* cuptiPmSamplingCounterDataImageInitialize */
	int (*data_info)(struct popmon_pm_data_info_params *);               /* cuptiPmSamplingGetCounterDataInfo */
	int (*sample_info)(struct popmon_pm_sample_params *);                /* cuptiPmSamplingCounterDataGetSampleInfo */
	/* CUDA driver */
	int (*ctx_push)(void *ctx);                                          /* cuCtxPushCurrent(_v2) */
	int (*ctx_pop)(void **ctx);                                          /* cuCtxPopCurrent(_v2) */
	int (*ctx_device)(int *device);                                      /* cuCtxGetDevice */
	int (*device_attribute)(int *value, int attr, int device);           /* cuDeviceGetAttribute */
};

typedef void *popmon_cupti_subscriber;
typedef void (*popmon_cupti_callback)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef void (*popmon_cupti_buffer_requested)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*popmon_cupti_buffer_completed)(void *context, uint32_t stream, uint8_t *buffer, size_t size,
					      size_t valid_size);
typedef uint64_t (*popmon_cupti_timestamp_fn)(void);

/* The entry points libpopmon calls, by their CUPTI / driver names; one
 * backend is in use (popmon_gpu_backend): the real one is filled with dlsym,
 * tests install fakes. Every function returns the library's result code
 * (0 success). Optional entries may be NULL. */
struct popmon_gpu_backend {
	/* CUPTI */
	int (*get_version)(uint32_t *version);                                    /* cuptiGetVersion */
	int (*subscribe)(popmon_cupti_subscriber *s, popmon_cupti_callback cb, void *ud); /* cuptiSubscribe */
	int (*unsubscribe)(popmon_cupti_subscriber s);                            /* cuptiUnsubscribe */
	int (*enable_domain)(uint32_t enable, popmon_cupti_subscriber s, int domain); /* cuptiEnableDomain */
	int (*enable_callback)(uint32_t enable, popmon_cupti_subscriber s, int domain,
			       uint32_t cbid);                                    /* cuptiEnableCallback */
	int (*register_callbacks)(popmon_cupti_buffer_requested req,
				  popmon_cupti_buffer_completed done);            /* cuptiActivityRegisterCallbacks */
	int (*register_timestamp)(popmon_cupti_timestamp_fn fn);                  /* cuptiActivityRegisterTimestampCallback */
	int (*activity_enable)(int kind);                                         /* cuptiActivityEnable */
	int (*activity_disable)(int kind);                                        /* cuptiActivityDisable */
	int (*flush_all)(uint32_t flag);                                          /* cuptiActivityFlushAll */
	int (*get_next_record)(uint8_t *buffer, size_t valid, void **record);     /* cuptiActivityGetNextRecord */
	int (*dropped_records)(void *context, uint32_t stream, size_t *dropped);  /* cuptiActivityGetNumDroppedRecords */
	int (*result_string)(int result, const char **text);                     /* cuptiGetResultString (optional) */
	int (*finalize)(void);                                                    /* cuptiFinalize (optional) */
	int (*get_timestamp)(uint64_t *ts);                                       /* cuptiGetTimestamp (optional) */
	int (*flush_period)(uint32_t ms);                                         /* cuptiActivityFlushPeriod (optional) */
	int (*set_attribute)(int attr, size_t *size, void *value);                /* cuptiActivitySetAttribute (optional) */
	/* CUDA driver (CUresult, CUdevice is an int) */
	int (*driver_version)(int *version);                                      /* cuDriverGetVersion */
	int (*device_count)(int *count);                                          /* cuDeviceGetCount */
	int (*device_get)(int *device, int ordinal);                              /* cuDeviceGet */
	int (*device_uuid)(unsigned char uuid[16], int device);                   /* cuDeviceGetUuid(_v2) */
	int (*device_name)(char *name, int len, int device);                      /* cuDeviceGetName */
	/* PM sampling (device counters): the entry points, NULL when absent. */
	struct popmon_pm_backend pm;
	/* cuPointerGetAttribute (optional; ptr is a CUdeviceptr): a CUDA-aware
	 * MPI call's buffers (gpu.h, popmon_gpu_mpi_enter). */
	int (*pointer_attribute)(void *data, int attribute, unsigned long long ptr);
};
/* CUpointer_attribute values and the memory type libpopmon reads. */
enum {
	POPMON_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
	POPMON_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
	POPMON_CU_MEMORYTYPE_DEVICE = 2,
};

#endif /* POPMON_GPU_ABI_H */
