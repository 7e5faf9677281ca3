/* gpu_pool.h: the pool of GPU activity buffers (gpu_pool.c), shared by the
 * GPU backends.
 *
 * A vendor library (CUPTI) asks for buffers on the application's threads
 * (with CUDA >= 13, every launching thread holds a buffer of its own) and
 * hands them back full, from its own thread or from a flush. The pool:
 *
 *   - hands out zeroed buffers of POPMON_GPU_BUFFER_SIZE bytes from a free
 *     list: a pointer pop under a mutex taken once per buffer (about 20 000
 *     kernel records), never an allocation while one is free;
 *   - preallocates POPMON_GPU_BUFFERS_START buffers when it starts (before
 *     the program's first launch), and grows on its own thread, keeping at
 *     least as many free buffers as the threads hold (at least 4), up to a
 *     cap (POPMON_GPU_BUFFER_MB, default 256 MiB a process);
 *   - queues completed buffers and processes them on its own thread (the
 *     caller's process function, under the caller's account lock), zeroes
 *     them there (so the vendor library need not, on the application's
 *     thread) and returns them to the free list; a reader that needs every
 *     delivered record now (a region boundary) drains the queue itself.
 *
 * With no free buffer the request path can do three things, chosen by the
 * caller: give none (the vendor library drops and counts records), allocate
 * one at once while under the cap (counted: the reserve was too small), or,
 * at the cap, lend a discard buffer whose records are counted as lost and
 * never accounted (for a vendor library that crashes when given none).
 */
#ifndef POPMON_GPU_POOL_H
#define POPMON_GPU_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* CUPTI recommends 1 to 10 MB; Kineto uses 4 MB. */
#define POPMON_GPU_BUFFER_SIZE (4u << 20)
#define POPMON_GPU_BUFFERS_START 8
#define POPMON_GPU_BUFFER_CAP_MB 256
/* The most buffers the pool tracks (the cap's upper bound: 4 GiB). */
#define POPMON_GPU_BUFFERS_MAX 1024

/* Processes one completed buffer's valid bytes; discard: its records are
 * lost (count them, account nothing). Called with the account lock held. */
typedef void (*popmon_gpu_process_fn)(uint8_t *buf, size_t valid, int discard);

/* Starts the pool: cap from POPMON_GPU_BUFFER_MB (whole MiB, at least two
 * buffers), the preallocated buffers, the worker thread. lock: the account
 * lock process runs under. 0, or -1 when not even one buffer could be
 * allocated (the pool then gives none). */
int popmon_gpu_pool_start(popmon_gpu_process_fn process, pthread_mutex_t *lock);

/* What to do when no buffer is free. */
enum {
	POPMON_GPU_POOL_NONE = 0,   /* give none */
	POPMON_GPU_POOL_ALLOCATE,   /* allocate one now while under the cap, else none */
	POPMON_GPU_POOL_NEVER_NONE, /* allocate under the cap, else lend a discard buffer */
};

/* A zeroed buffer of POPMON_GPU_BUFFER_SIZE bytes, or NULL. */
uint8_t *popmon_gpu_pool_get(int when_empty);

/* Queues a buffer the vendor library handed back with valid bytes of
 * records; a pointer the pool did not hand out is ignored (returns -1). */
int popmon_gpu_pool_done(uint8_t *buf, size_t valid);

/* Processes every queued buffer now; call with the account lock held. */
void popmon_gpu_pool_drain(void);

struct popmon_gpu_pool_stats {
	uint64_t allocated;    /* buffers allocated (not counting discard ones) */
	uint64_t peak_held;    /* most buffers out at once */
	uint64_t cap;          /* the cap, in buffers */
	uint64_t urgent;       /* allocated on a requesting thread: the reserve ran out */
	uint64_t refused;      /* requests answered with no buffer */
	uint64_t discarded;    /* discard buffers lent */
};
void popmon_gpu_pool_stats(struct popmon_gpu_pool_stats *out);

#endif /* POPMON_GPU_POOL_H */
