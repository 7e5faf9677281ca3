/* gpu_pool.c: the pool of GPU activity buffers (gpu_pool.h).
 *
 * Buffers are anonymous mappings populated when they are made (no page
 * fault on the thread the vendor library writes from). One mutex guards the
 * lists; the requesting path only pops a pointer. The pool's own thread
 * processes completed buffers (under the caller's account lock), zeroes
 * them and keeps the reserve of free buffers; it runs with every signal
 * blocked and never calls into the program.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "base/env.h"
#include "base/threads.h"
#include "gpu_pool.h"

enum { B_FREE = 0, B_HELD, B_DONE, B_DIRTY };

struct gbuf {
	uint8_t *mem;
	size_t valid;
	int discard;
	int state;
	struct gbuf *next;
};

/* Discard buffers past the cap: one per thread that is refused at once. */
#define DISCARD_MAX 64

static struct gbuf bufs[POPMON_GPU_BUFFERS_MAX + DISCARD_MAX];
static int nbufs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct gbuf *free_list, *discard_free, *done_head, *done_tail, *dirty;
static uint64_t nfree, nheld, nalloc, cap;
static int grow_failed, started, have_worker;
static struct popmon_gpu_pool_stats st;
static popmon_gpu_process_fn process_fn;
static pthread_mutex_t *acct_lock;

static uint8_t *map_buffer(void)
{
	void *p = mmap(NULL, POPMON_GPU_BUFFER_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Under mu: a new entry for mem (NULL when the table is full). */
static struct gbuf *enter(uint8_t *mem, int discard, int state)
{
	if (nbufs >= (int)(sizeof bufs / sizeof bufs[0]))
		return NULL;
	struct gbuf *b = &bufs[nbufs];
	b->mem = mem;
	b->discard = discard;
	b->state = state;
	b->valid = 0;
	b->next = NULL;
	__atomic_store_n(&nbufs, nbufs + 1, __ATOMIC_RELEASE);
	return b;
}

/* Under mu: how many free buffers the worker keeps (as many as the threads
 * hold, at least 4), within the cap. */
static int wants_more(void)
{
	uint64_t reserve = nheld > 4 ? nheld : 4;
	return !grow_failed && nfree < reserve && nalloc < cap && nbufs < POPMON_GPU_BUFFERS_MAX;
}

static void held(struct gbuf *b)
{
	b->state = B_HELD;
	nheld++;
	if (nheld > st.peak_held)
		st.peak_held = nheld;
}

uint8_t *popmon_gpu_pool_get(int when_empty)
{
	pthread_mutex_lock(&mu);
	struct gbuf *b = free_list;
	if (b) {
		free_list = b->next;
		nfree--;
		held(b);
		if (wants_more())
			pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		return b->mem;
	}
	pthread_cond_signal(&cv);
	if (when_empty != POPMON_GPU_POOL_NONE && nalloc < cap && nbufs < POPMON_GPU_BUFFERS_MAX && !grow_failed) {
		nalloc++; /* taken before mapping, outside the lock */
		pthread_mutex_unlock(&mu);
		uint8_t *mem = map_buffer();
		pthread_mutex_lock(&mu);
		b = mem ? enter(mem, 0, B_HELD) : NULL;
		if (b) {
			held(b);
			st.allocated++;
			st.urgent++;
			pthread_mutex_unlock(&mu);
			return mem;
		}
		nalloc--;
		grow_failed = 1;
		if (mem)
			munmap(mem, POPMON_GPU_BUFFER_SIZE);
	}
	if (when_empty == POPMON_GPU_POOL_NEVER_NONE) {
		b = discard_free;
		if (b) {
			discard_free = b->next;
		} else {
			pthread_mutex_unlock(&mu);
			uint8_t *mem = map_buffer();
			pthread_mutex_lock(&mu);
			b = mem ? enter(mem, 1, B_HELD) : NULL;
			if (!b && mem)
				munmap(mem, POPMON_GPU_BUFFER_SIZE);
		}
		if (b) {
			b->state = B_HELD;
			st.discarded++;
			pthread_mutex_unlock(&mu);
			return b->mem;
		}
	}
	st.refused++;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int popmon_gpu_pool_done(uint8_t *buf, size_t valid)
{
	if (!buf)
		return -1;
	pthread_mutex_lock(&mu);
	struct gbuf *b = NULL;
	for (int i = 0; i < nbufs; i++)
		if (bufs[i].mem == buf) {
			b = &bufs[i];
			break;
		}
	if (!b || b->state != B_HELD) {
		pthread_mutex_unlock(&mu);
		return -1;
	}
	b->state = B_DONE;
	b->valid = valid < POPMON_GPU_BUFFER_SIZE ? valid : POPMON_GPU_BUFFER_SIZE;
	b->next = NULL;
	if (done_tail)
		done_tail->next = b;
	else
		done_head = b;
	done_tail = b;
	if (!b->discard)
		nheld--;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return 0;
}

static void recycle(void);

void popmon_gpu_pool_drain(void)
{
	pthread_mutex_lock(&mu);
	struct gbuf *list = done_head;
	done_head = done_tail = NULL;
	pthread_mutex_unlock(&mu);
	if (!list)
		return;
	struct gbuf *last = NULL;
	for (struct gbuf *b = list; b; b = b->next) {
		if (process_fn && b->valid)
			process_fn(b->mem, b->valid, b->discard);
		b->state = B_DIRTY;
		last = b;
	}
	pthread_mutex_lock(&mu);
	last->next = dirty;
	dirty = list;
	pthread_cond_signal(&cv);
	int inline_recycle = !have_worker;
	pthread_mutex_unlock(&mu);
	if (inline_recycle)
		recycle();
}

/* Zeroes what the vendor library may have written (the valid bytes and a
 * margin past them) and returns the buffers to their free lists. */
static void recycle(void)
{
	pthread_mutex_lock(&mu);
	struct gbuf *list = dirty;
	dirty = NULL;
	pthread_mutex_unlock(&mu);
	for (struct gbuf *b = list; b; b = b->next) {
		size_t n = b->valid + (64u << 10);
		memset(b->mem, 0, n < POPMON_GPU_BUFFER_SIZE ? n : POPMON_GPU_BUFFER_SIZE);
	}
	pthread_mutex_lock(&mu);
	for (struct gbuf *b = list, *next; b; b = next) {
		next = b->next;
		b->state = B_FREE;
		b->valid = 0;
		if (b->discard) {
			b->next = discard_free;
			discard_free = b;
		} else {
			b->next = free_list;
			free_list = b;
			nfree++;
		}
	}
	pthread_mutex_unlock(&mu);
}

/* Maps buffers until the reserve is met (outside the lock). */
static void grow(void)
{
	for (;;) {
		pthread_mutex_lock(&mu);
		int more = wants_more();
		if (more)
			nalloc++;
		pthread_mutex_unlock(&mu);
		if (!more)
			return;
		uint8_t *mem = map_buffer();
		pthread_mutex_lock(&mu);
		struct gbuf *b = mem ? enter(mem, 0, B_FREE) : NULL;
		if (!b) {
			nalloc--;
			grow_failed = 1;
			pthread_mutex_unlock(&mu);
			if (mem)
				munmap(mem, POPMON_GPU_BUFFER_SIZE);
			return;
		}
		b->next = free_list;
		free_list = b;
		nfree++;
		st.allocated++;
		pthread_mutex_unlock(&mu);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (!done_head && !dirty && !wants_more()) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&cv, &mu, &ts);
		}
		int work = done_head != NULL;
		pthread_mutex_unlock(&mu);
		if (work) {
			pthread_mutex_lock(acct_lock);
			popmon_gpu_pool_drain();
			pthread_mutex_unlock(acct_lock);
		}
		recycle();
		grow();
	}
	return NULL;
}

static uint64_t cap_buffers(void)
{
	/* 8 MB (two buffers) to what the pool can hold. */
	uint64_t mb = (uint64_t)popmon_env_int("POPMON_GPU_BUFFER_MB", POPMON_GPU_BUFFER_CAP_MB,
					       2 * POPMON_GPU_BUFFER_SIZE >> 20,
					       (uint64_t)POPMON_GPU_BUFFERS_MAX * POPMON_GPU_BUFFER_SIZE >> 20);
	uint64_t n = mb * (1u << 20) / POPMON_GPU_BUFFER_SIZE;
	if (n < 2)
		n = 2;
	if (n > POPMON_GPU_BUFFERS_MAX)
		n = POPMON_GPU_BUFFERS_MAX;
	return n;
}

int popmon_gpu_pool_start(popmon_gpu_process_fn process, pthread_mutex_t *lock)
{
	if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
		return 0;
	process_fn = process;
	acct_lock = lock;
	cap = cap_buffers();
	st.cap = cap;
	uint64_t want = cap < POPMON_GPU_BUFFERS_START ? cap : POPMON_GPU_BUFFERS_START;
	for (uint64_t i = 0; i < want; i++) {
		uint8_t *mem = map_buffer();
		pthread_mutex_lock(&mu);
		struct gbuf *b = mem ? enter(mem, 0, B_FREE) : NULL;
		if (b) {
			b->next = free_list;
			free_list = b;
			nfree++;
			nalloc++;
			st.allocated++;
		}
		pthread_mutex_unlock(&mu);
		if (!b)
			break;
	}
	int rc = popmon_helper_thread(worker);
	/* Without a worker, buffers are processed and zeroed by the flushes
	 * (on the flushing thread), and the pool grows only on request. */
	pthread_mutex_lock(&mu);
	have_worker = rc == 0;
	pthread_mutex_unlock(&mu);
	return nalloc > 0 ? 0 : -1;
}

void popmon_gpu_pool_stats(struct popmon_gpu_pool_stats *out)
{
	pthread_mutex_lock(&mu);
	*out = st;
	pthread_mutex_unlock(&mu);
}
