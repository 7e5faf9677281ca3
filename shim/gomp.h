/* gomp.h: GNU libgomp measured in place (gomp.c). libgomp has no OMPT:
 * libpopmon interposes its entry points (GOMP_parallel*, the waits, the
 * tasks) and reports their events through ompt.h's runtime-neutral
 * functions. The GOMP_* wrappers themselves are the library's exports
 * (compatibility names); nothing else is exported. */
#ifndef POPMON_GOMP_H
#define POPMON_GOMP_H

/* Start-up (core.c): when the program is linked with GNU libgomp, decide
 * now to measure it (the runtime is there from the start, as on libomp
 * from its first use), or to pass through (LLVM's libomp, --openmp=off). */
void popmon_gomp_probe(void);

/* The team size of the next outermost parallel region a GOMP wrapper
 * starts: requested is the program's num_threads (0: the runtime's
 * default); the value returned is what libgomp is asked for. Today the
 * request itself: the one place where a later policy (DLB's LeWI lending
 * CPUs, issue 34) decides a region's threads. Off the hot path of
 * everything but region starts. */
unsigned int popmon_gomp_team_size(unsigned int requested);

#endif /* POPMON_GOMP_H */
