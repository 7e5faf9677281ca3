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
	POPMON_CUPTI_ERROR_NOT_COMPATIBLE = 14,
	POPMON_CUPTI_ERROR_NOT_INITIALIZED = 15,
	POPMON_CUPTI_ERROR_NOT_SUPPORTED = 27,
	POPMON_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35,
	POPMON_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS = 39,
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
};

#endif /* POPMON_GPU_ABI_H */
