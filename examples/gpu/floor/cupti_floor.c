/* cupti_floor.c: the floor of CUPTI-based GPU measurement (issue 22): a CUDA
 * injection library that does the least any CUPTI-based tool must do to see
 * every kernel, and nothing else, so that scripts/gpu-validate.sh can put
 * popmon's overhead next to it.
 *
 *   cc -O2 -std=c11 -Wall -Wextra -Werror -fPIC -shared \
 *      -o cupti_floor.so cupti_floor.c -ldl
 *   CUDA_INJECTION64_PATH=$PWD/cupti_floor.so ./app
 *   -> on stderr at exit:
 *   cupti-floor: records=200002 dropped=0 buffers=6 cupti=/usr/local/cuda/lib64/libcupti.so
 *
 * The CUDA driver loads it (CUDA_INJECTION64_PATH) and calls its
 * InitializeInjection at cuInit. It enables CUPTI's CONCURRENT_KERNEL
 * activity records only, with 8 MB buffers allocated when CUPTI asks (never
 * refused, never short), subscribes to no callback and registers no
 * timestamp function; a completed buffer's records are counted and the
 * buffer freed. At exit it flushes every record (forced flush) and prints
 * one line on stderr: records counted, records CUPTI says it dropped,
 * buffers handed out, and the CUPTI library used.
 *
 * No NVIDIA header: the few CUPTI functions are declared here from the
 * public CUPTI documentation (as shim/gpu_abi.h does for libpopmon) and
 * resolved with dlopen/dlsym. The CUPTI library is the first that loads of:
 * $CUPTI_FLOOR_LIBRARY, else $POPMON_CUPTI_LIBRARY (alone when set, as for
 * libpopmon), else libcupti.so, libcupti.so.13, .12, .11.8 on the loader
 * path, then $CUDA_HOME and /usr/local/cuda's extras/CUPTI/lib64 and lib64.
 * Works against the fake stack of ../fake too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUPTI: CUptiResult 0 is success; activity kind CONCURRENT_KERNEL is 10;
 * cuptiActivityFlushAll's flag 1 is CUPTI_ACTIVITY_FLAG_FLUSH_FORCED. */
enum { FLOOR_SUCCESS = 0, FLOOR_CONCURRENT_KERNEL = 10, FLOOR_FLUSH_FORCED = 1 };
#define FLOOR_BUFFER_SIZE (8u << 20)

typedef void (*requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*completed_fn)(void *context, uint32_t stream, uint8_t *buffer, size_t size,
			     size_t valid_size);

static struct {
	int (*register_callbacks)(requested_fn, completed_fn); /* cuptiActivityRegisterCallbacks */
	int (*enable)(int kind);                                /* cuptiActivityEnable */
	int (*flush_all)(uint32_t flag);                        /* cuptiActivityFlushAll */
	int (*next_record)(uint8_t *buffer, size_t valid, void **record); /* cuptiActivityGetNextRecord */
	int (*dropped)(void *context, uint32_t stream, size_t *n); /* cuptiActivityGetNumDroppedRecords */
} cupti;

static char cupti_path[PATH_MAX];
static atomic_ullong records, dropped, buffers;
static atomic_int started;

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte alignment; malloc gives 16. */
	*buffer = malloc(FLOOR_BUFFER_SIZE);
	*size = *buffer ? FLOOR_BUFFER_SIZE : 0;
	*max_records = 0;
	if (*buffer)
		atomic_fetch_add(&buffers, 1);
}

static void buffer_completed(void *context, uint32_t stream, uint8_t *buffer, size_t size,
			     size_t valid_size)
{
	(void)size;
	unsigned long long n = 0;
	void *rec = NULL;
	while (buffer && cupti.next_record(buffer, valid_size, &rec) == FLOOR_SUCCESS)
		n++;
	atomic_fetch_add(&records, n);
	size_t d = 0;
	if (cupti.dropped(context, stream, &d) == FLOOR_SUCCESS)
		atomic_fetch_add(&dropped, d);
	free(buffer);
}

static void at_exit(void)
{
	cupti.flush_all(FLOOR_FLUSH_FORCED);
	size_t d = 0;
	if (cupti.dropped(NULL, 0, &d) == FLOOR_SUCCESS)
		atomic_fetch_add(&dropped, d);
	fprintf(stderr, "cupti-floor: records=%llu dropped=%llu buffers=%llu cupti=%s\n",
		atomic_load(&records), atomic_load(&dropped), atomic_load(&buffers), cupti_path);
}

#define RESOLVE(h, field, name)                      \
	do {                                         \
		void *p_ = dlsym((h), (name));       \
		memcpy(&cupti.field, &p_, sizeof p_); \
	} while (0)

static int load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	RESOLVE(h, register_callbacks, "cuptiActivityRegisterCallbacks");
	RESOLVE(h, enable, "cuptiActivityEnable");
	RESOLVE(h, flush_all, "cuptiActivityFlushAll");
	RESOLVE(h, next_record, "cuptiActivityGetNextRecord");
	RESOLVE(h, dropped, "cuptiActivityGetNumDroppedRecords");
	if (!cupti.register_callbacks || !cupti.enable || !cupti.flush_all || !cupti.next_record ||
	    !cupti.dropped) {
		dlclose(h);
		return -1;
	}
	/* The file the loader took (a bare name is found on its path). */
	Dl_info info;
	void *sym;
	memcpy(&sym, &cupti.enable, sizeof sym);
	snprintf(cupti_path, sizeof cupti_path, "%s",
		 dladdr(sym, &info) && info.dli_fname ? info.dli_fname : path);
	return 0;
}

static int load_any(void)
{
	const char *only = getenv("CUPTI_FLOOR_LIBRARY");
	if (!only || !*only)
		only = getenv("POPMON_CUPTI_LIBRARY");
	if (only && *only)
		return load(only);
	static const char *const names[] = { "libcupti.so", "libcupti.so.13", "libcupti.so.12",
					     "libcupti.so.11.8" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (load(names[i]) == 0)
			return 0;
	const char *home = getenv("CUDA_HOME");
	const char *prefixes[] = { home && *home ? home : NULL, "/usr/local/cuda" };
	for (size_t p = 0; p < 2; p++) {
		char path[PATH_MAX];
		if (!prefixes[p])
			continue;
		snprintf(path, sizeof path, "%.3000s/extras/CUPTI/lib64/libcupti.so", prefixes[p]);
		if (load(path) == 0)
			return 0;
		snprintf(path, sizeof path, "%.3000s/lib64/libcupti.so", prefixes[p]);
		if (load(path) == 0)
			return 0;
	}
	return -1;
}

/* Called by the CUDA driver at cuInit (CUDA_INJECTION64_PATH); 1: done. */
int InitializeInjection(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&started, &expected, 1))
		return 1;
	if (load_any() != 0) {
		fprintf(stderr, "cupti-floor: not measuring: no usable libcupti (set CUPTI_FLOOR_LIBRARY)\n");
		return 1;
	}
	int rc = cupti.register_callbacks(buffer_requested, buffer_completed);
	if (rc == FLOOR_SUCCESS)
		rc = cupti.enable(FLOOR_CONCURRENT_KERNEL);
	if (rc != FLOOR_SUCCESS) {
		fprintf(stderr, "cupti-floor: not measuring: CUPTI error %d (%s)\n", rc, cupti_path);
		return 1;
	}
	atexit(at_exit);
	return 1;
}
