/* probe.h: reports return addresses as ELF virtual addresses of their
 * module, the way popmon records the addresses of OpenMP parallel
 * constructs. Each line of output is "what address module" (module is
 * empty for the executable). Included once per module; the symbols are
 * hidden so that the executable and the library keep their own copies. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN void report(const char *what, const void *ra) {
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1(ra, &info, (void **)&lm, RTLD_DL_LINKMAP) || lm == NULL) {
		printf("%s ? ?\n", what);
		return;
	}
	printf("%s %#lx %s\n", what, (unsigned long)((uintptr_t)ra - lm->l_addr), lm->l_name);
	fflush(stdout);
}

#ifdef WRAP_GOMP
/* GCC: link with -Wl,--wrap=GOMP_parallel; libgomp has no OMPT. */
void __real_GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags);
HIDDEN void __wrap_GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
	report("parallel", __builtin_return_address(0));
	__real_GOMP_parallel(fn, data, n, flags);
}
#endif

#ifdef USE_OMPT
/* Clang and libomp: an OMPT tool in the executable, like popmon's. */
#include <omp-tools.h>
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned int requested, int flags, const void *codeptr_ra) {
	(void)task; (void)frame; (void)parallel; (void)requested; (void)flags;
	report("parallel", codeptr_ra);
}
static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data) {
	(void)device; (void)data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
	return 1;
}
static void tool_fini(ompt_data_t *data) { (void)data; }
ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
	static ompt_start_tool_result_t r = {tool_init, tool_fini, {0}};
	(void)version; (void)runtime;
	return &r;
}
#endif
