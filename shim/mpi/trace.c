/* trace.c: event tracing under `popmon run --trace` (trace.h;
 * docs/trace-format.md). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "accounts.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/process.h"
#include "base/threads.h"
#include "base/warn.h"
#include "mpi/trace.h"
#include "ompt.h"
#include "regions.h"

int popmon_trace_on;

/* The file's layout (docs/trace-format.md). */
#define TRACE_MAGIC "POPMTRC1"
#define TRACE_VERSION 1
enum { CHUNK_RECORDS = 1, CHUNK_NAMES = 2, CHUNK_TRAILER = 3, CHUNK_REGIONS = 4, CHUNK_CONSTRUCTS = 5 };

struct file_header {
	char magic[8];
	uint32_t version, header_size, record_size;
	int32_t rank, size, pid, clock_tsc;
	uint32_t nfn;
	char pad[24];
};
_Static_assert(sizeof(struct file_header) == 64, "trace file header is 64 bytes");

struct chunk {
	uint32_t type, thread;
	uint64_t bytes; /* payload after this header */
};

struct trailer {
	uint64_t t0_tick, t0_ns;
	double ns_per_tick;
	uint64_t init_tick, fin_tick;
	uint64_t records, flushes, buffer_bytes;
	char hostname[64];
};

/* A thread's buffer. */
struct tbuf {
	struct popmon_trec *base, *cur, *end;
	size_t map_bytes;
	struct popmon_trec pend; /* the current call's details (pend.kind != 0: set) */
};

static int trace_fd = -1;
static size_t buffer_bytes = (size_t)64 << 20;
static uint64_t records_written, flushes;
static char trace_path[4096];

/* POPMON_TRACE_BUFFER: bytes, with an optional k/m/g suffix (KiB...), per
 * thread, its pages faulted in at once: at least 1 KiB (25 records), at most
 * a quarter of the node's memory shared by the ranks on the node (when the
 * launcher says how many) and 64 GiB; a bad value is the default 64m, with
 * one line (popmon_env_size). */
static size_t trace_buffer_size(void)
{
	unsigned long long hi = 64ull << 30, mem = popmon_physical_memory(), local = 1;
	static const char *const locals[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};
	for (size_t i = 0; i < sizeof locals / sizeof locals[0] && local == 1; i++) {
		const char *v = getenv(locals[i]);
		long n = v ? strtol(v, NULL, 10) : 0;
		if (n > 1 && n < 1 << 20)
			local = (unsigned long long)n;
	}
	char why[120] = "the largest popmon takes";
	if (mem && mem / 4 / local < hi) {
		hi = mem / 4 / local;
		if (hi < (2ull << 20))
			hi = 2ull << 20;
		snprintf(why, sizeof why, "a quarter of this node's %llu MiB of memory shared by its %llu rank%s",
			 mem >> 20, local, local == 1 ? "" : "s");
	}
	size_t dflt = buffer_bytes < hi ? buffer_bytes : (size_t)hi;
	return (size_t)popmon_env_size("POPMON_TRACE_BUFFER", dflt, 1024, hi, why);
}

static int write_all(int fd, const struct iovec *iov, int n)
{
	struct iovec v[4];
	if (n > 4)
		return -1;
	memcpy(v, iov, sizeof *iov * (size_t)n);
	int i = 0;
	while (i < n) {
		ssize_t w = writev(fd, v + i, n - i);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (i < n && (size_t)w >= v[i].iov_len) {
			w -= (ssize_t)v[i].iov_len;
			i++;
		}
		if (i < n) {
			v[i].iov_base = (char *)v[i].iov_base + w;
			v[i].iov_len -= (size_t)w;
		}
	}
	return 0;
}

static void trace_fail(const char *what)
{
	popmon_warn_once("tracefile", "cannot write the trace file %s (%s: %s): tracing stops here", trace_path,
			 what, strerror(errno));
	popmon_trace_on = 0;
}

static void write_chunk(uint32_t type, uint32_t thread, const void *data, size_t n)
{
	if (trace_fd < 0)
		return;
	struct chunk c = {.type = type, .thread = thread, .bytes = n};
	struct iovec iov[2] = {{&c, sizeof c}, {(void *)data, n}};
	if (write_all(trace_fd, iov, n ? 2 : 1) != 0)
		trace_fail("write");
}

static struct tbuf *tbuf_of(struct popmon_thread *t)
{
	struct tbuf *b = t->trace;
	if (b || !popmon_trace_on)
		return b;
	/* Once per thread, at its first record: the whole buffer, its pages
	 * faulted in now (MAP_POPULATE) rather than one by one on the hot
	 * path (a fault per 100 records cost ~20 ns per call). */
	size_t n = sizeof *b + buffer_bytes;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		popmon_warn_once("tracemem", "no memory for a %zu-byte trace buffer: a thread's events are not traced",
				 buffer_bytes);
		return NULL;
	}
	b = p;
	b->map_bytes = n;
	b->base = b->cur = (struct popmon_trec *)(b + 1);
	b->end = b->base + buffer_bytes / sizeof(struct popmon_trec);
	t->trace = b;
	return b;
}

/* Writes b's records to the file and empties it. */
static void flush_buf(struct popmon_thread *t, struct tbuf *b)
{
	size_t n = (size_t)(b->cur - b->base);
	if (n == 0)
		return;
	write_chunk(CHUNK_RECORDS, t->slot, b->base, n * sizeof *b->base);
	records_written += n; /* the finalize and the owning threads never flush at once */
	b->cur = b->base;
}

/* Room for one record; a full buffer is flushed (recorded, one warning).
 * Returns the tick the flush ended (0 without one). */
static uint64_t room(struct popmon_thread *t, struct tbuf *b)
{
	if (b->cur < b->end)
		return 0;
	uint64_t t0 = popmon_now();
	flush_buf(t, b);
	uint64_t t1 = popmon_now();
	__atomic_add_fetch(&flushes, 1, __ATOMIC_RELAXED);
	popmon_warn_once("traceflush", "the trace buffer (%zu bytes per thread) filled up during the run and was "
				       "written to the trace file then: the flushes show as intervals in the trace and "
				       "add to the MPI time of the calls that hit them; raise it with "
				       "popmon run --trace-buffer SIZE",
			 buffer_bytes);
	*b->cur++ = (struct popmon_trec){.enter = t0, .leave = t1, .kind = POPMON_TR_FLUSH,
					 .comm = POPMON_TR_NOCOMM, .peer = -1};
	return t1;
}

void popmon_trace_put(struct popmon_thread *t, const struct popmon_trec *r)
{
	struct tbuf *b = tbuf_of(t);
	if (!b)
		return;
	room(t, b);
	*b->cur++ = *r;
}

static uint32_t clamp_bytes(int64_t bytes, unsigned *flags)
{
	if (bytes < 0)
		return 0;
	if (bytes > 0xffffffffll) {
		*flags |= POPMON_TRF_TRUNC;
		return 0xffffffffu;
	}
	return (uint32_t)bytes;
}

void popmon_trace_pending(struct popmon_thread *t, unsigned flags, uint32_t comm, int32_t peer, int32_t tag,
			  uint32_t req, int64_t bytes)
{
	struct tbuf *b = tbuf_of(t);
	if (!b)
		return;
	uint32_t n = clamp_bytes(bytes, &flags);
	b->pend = (struct popmon_trec){.kind = POPMON_TR_CALL, .flags = (uint8_t)flags, .comm = comm,
				       .peer = peer, .tag = tag, .req = req, .bytes = n};
}

void popmon_trace_extra(struct popmon_thread *t, unsigned kind, unsigned flags, uint32_t comm, int32_t peer,
			int32_t tag, uint32_t req, int64_t bytes)
{
	struct tbuf *b = tbuf_of(t);
	if (!b)
		return;
	uint32_t n = clamp_bytes(bytes, &flags);
	room(t, b);
	/* Inside the call: its entry is the thread's last state change. */
	*b->cur++ = (struct popmon_trec){.enter = t->last, .kind = (uint8_t)kind, .flags = (uint8_t)flags,
					 .comm = comm, .peer = peer, .tag = tag, .req = req, .bytes = n};
}

uint64_t popmon_trace_call(struct popmon_thread *t, int fn, uint64_t enter, uint64_t leave)
{
	struct tbuf *b = tbuf_of(t);
	if (!b)
		return leave;
	uint64_t flushed = room(t, b);
	struct popmon_trec r = b->pend;
	if (r.kind == 0)
		r = (struct popmon_trec){.comm = POPMON_TR_NOCOMM, .peer = -1};
	r.kind = POPMON_TR_CALL;
	r.fn = (uint16_t)fn;
	r.enter = enter;
	r.leave = leave;
	*b->cur++ = r;
	b->pend.kind = 0;
	return flushed > leave ? flushed : leave;
}

/* ------------------------------------------------------------ file */

/* The node leaders (each node's lowest world rank) for the clock offsets,
 * made at MPI_Init's synchronisation and freed after MPI_Finalize's. */
static MPI_Comm leaders = MPI_COMM_NULL;

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Each node leader's CLOCK_MONOTONIC offset to rank 0's (Cristian's
 * method): rank 0 makes OFFSET_ROUNDS ping-pongs with every other node's
 * leader in turn; the one with the shortest round trip gives the offset
 * (rank 0's time at the round trip's middle minus the leader's time when
 * it answered: off by at most half that round trip), which rank 0 sends
 * to the leader for its OFFSET record (enter: the leader's time then,
 * leave: the offset, peer: phase). O(nodes) messages, on popmon's own
 * communicator. */
enum { OFFSET_ROUNDS = 8, OFFSET_TAG = 7031 };

static void clock_offsets(struct popmon_thread *t, int phase)
{
	if (phase == 0 && leaders == MPI_COMM_NULL) {
		MPI_Comm node = MPI_COMM_NULL;
		int local = 0;
		if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
			return;
		PMPI_Comm_rank(node, &local);
		PMPI_Comm_free(&node);
		if (PMPI_Comm_split(MPI_COMM_WORLD, local == 0 ? 0 : MPI_UNDEFINED, popmon_proc.rank, &leaders) !=
		    MPI_SUCCESS)
			leaders = MPI_COMM_NULL;
	}
	if (leaders == MPI_COMM_NULL)
		return;
	int me = 0, n = 0;
	PMPI_Comm_rank(leaders, &me);
	PMPI_Comm_size(leaders, &n);
	if (me == 0) {
		for (int j = 1; j < n; j++) {
			int64_t best = -1, off = 0, mine[2] = {0, 0};
			for (int k = 0; k < OFFSET_ROUNDS; k++) {
				int64_t theirs = 0;
				mine[0] = mono_ns();
				PMPI_Send(&k, 1, MPI_INT, j, OFFSET_TAG, leaders);
				PMPI_Recv(&theirs, 1, MPI_INT64_T, j, OFFSET_TAG, leaders, MPI_STATUS_IGNORE);
				mine[1] = mono_ns();
				if (best < 0 || mine[1] - mine[0] < best) {
					best = mine[1] - mine[0];
					off = mine[0] + best / 2 - theirs;
				}
			}
			int64_t res[2] = {off, best};
			PMPI_Send(res, 2, MPI_INT64_T, j, OFFSET_TAG, leaders);
		}
		return;
	}
	int64_t at[OFFSET_ROUNDS];
	for (int k = 0; k < OFFSET_ROUNDS; k++) {
		int got = 0;
		PMPI_Recv(&got, 1, MPI_INT, 0, OFFSET_TAG, leaders, MPI_STATUS_IGNORE);
		at[k] = mono_ns();
		PMPI_Send(&at[k], 1, MPI_INT64_T, 0, OFFSET_TAG, leaders);
	}
	int64_t res[2] = {0, 0};
	PMPI_Recv(res, 2, MPI_INT64_T, 0, OFFSET_TAG, leaders, MPI_STATUS_IGNORE);
	popmon_trace_put(t, &(struct popmon_trec){.enter = (uint64_t)mono_ns(), .leave = (uint64_t)res[0],
						  .kind = POPMON_TR_OFFSET, .comm = POPMON_TR_NOCOMM, .peer = phase,
						  .bytes = (uint32_t)(res[1] > 0xffffffffll ? 0xffffffffu : res[1])});
}

static void clock_sync(struct popmon_thread *t, int phase)
{
	PMPI_Barrier(MPI_COMM_WORLD);
	uint64_t now = popmon_now();
	popmon_trace_put(t, &(struct popmon_trec){.enter = now, .leave = now, .kind = POPMON_TR_CLOCK,
						  .comm = 0, .peer = phase});
	clock_offsets(t, phase);
	if (phase == 1 && leaders != MPI_COMM_NULL)
		PMPI_Comm_free(&leaders);
}

static void on_region_closed(int idx, uint64_t start, uint64_t stop);
static void on_parallel_closed(uint64_t begin, uint64_t end, uint32_t team, int construct);

void popmon_trace_init(uint64_t enter)
{
	if (!popmon_env_switch("POPMON_TRACE", 0, 0))
		return;
	struct popmon_thread *t = popmon_tls;
	const char *dir = getenv("POPMON_TRACE_DIR");
	if (!t || !dir || !*dir) {
		popmon_warn_once("tracedir", "POPMON_TRACE=1 without POPMON_TRACE_DIR: not tracing (popmon run --trace "
					     "sets both)");
		return;
	}
	buffer_bytes = trace_buffer_size();
	mkdir(dir, 0755); /* popmon run creates it; a node without the folder makes its own */
	snprintf(trace_path, sizeof trace_path, "%.4000s/rank-%06d.trace", dir, popmon_proc.rank);
	trace_fd = open(trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (trace_fd < 0) {
		popmon_warn_once("tracefile", "cannot create the trace file %s (%s): not tracing", trace_path,
				 strerror(errno));
		return;
	}
	struct file_header h = {.version = TRACE_VERSION, .header_size = sizeof h,
				.record_size = sizeof(struct popmon_trec), .rank = popmon_proc.rank,
				.size = popmon_proc.size, .pid = popmon_proc.pid, .clock_tsc = popmon_clock_tsc,
				.nfn = POPMON_FN_COUNT};
	memcpy(h.magic, TRACE_MAGIC, 8);
	struct iovec iov = {&h, sizeof h};
	if (write_all(trace_fd, &iov, 1) != 0) {
		trace_fail("header");
		close(trace_fd);
		trace_fd = -1;
		return;
	}
	/* The function names, by id. */
	size_t n = 0;
	for (int i = 0; i < POPMON_FN_COUNT; i++)
		n += strlen(popmon_fn_names[i]) + 1;
	char *names = malloc(n);
	if (names) {
		for (size_t i = 0, at = 0; i < POPMON_FN_COUNT; i++) {
			size_t k = strlen(popmon_fn_names[i]) + 1;
			memcpy(names + at, popmon_fn_names[i], k);
			at += k;
		}
		write_chunk(CHUNK_NAMES, 0, names, n);
		free(names);
	}
	popmon_trace_on = 1;
	popmon_regions_observe(on_region_closed);
	popmon_omp_observe(on_parallel_closed);
	clock_sync(t, 0);
	uint64_t now = popmon_now();
	popmon_trace_put(t, &(struct popmon_trec){.enter = enter ? enter : now, .leave = now,
						  .fn = POPMON_FN_MPI_Init, .kind = POPMON_TR_CALL,
						  .comm = POPMON_TR_NOCOMM, .peer = -1});
}

void popmon_trace_finalize(int sync)
{
	struct popmon_thread *t = popmon_tls;
	if (!popmon_trace_on || !t)
		return;
	uint64_t now = popmon_proc.fin_tick;
	popmon_trace_put(t, &(struct popmon_trec){.enter = now, .leave = now, .fn = POPMON_FN_MPI_Finalize,
						  .kind = POPMON_TR_CALL, .comm = POPMON_TR_NOCOMM, .peer = -1});
	if (sync)
		clock_sync(t, 1);
}

/* A region's whole-process visit closed (regions.c's observer). */
static void on_region_closed(int idx, uint64_t start, uint64_t stop)
{
	struct popmon_thread *t = popmon_tls;
	if (!POPMON_LOAD(popmon_trace_on) || !t)
		return;
	popmon_trace_put(t, &(struct popmon_trec){.enter = start, .leave = stop, .kind = POPMON_TR_REGION,
						  .comm = POPMON_TR_NOCOMM, .peer = idx});
}

/* The OpenMP constructs the trace's OMP records name (their slots). */
static uint8_t omp_seen[POPMON_OMP_CONSTRUCTS];

/* An outermost OpenMP parallel region of team threads closed (ompt.c's
 * observer); construct: its slot in the construct table, or -1. */
static void on_parallel_closed(uint64_t begin, uint64_t end, uint32_t team, int construct)
{
	struct popmon_thread *t = popmon_tls;
	if (!POPMON_LOAD(popmon_trace_on) || !t)
		return;
	if (construct >= 0 && construct < (int)sizeof omp_seen)
		POPMON_STORE(omp_seen[construct], 1);
	popmon_trace_put(t, &(struct popmon_trec){.enter = begin, .leave = end, .kind = POPMON_TR_OMP,
						  .comm = POPMON_TR_NOCOMM, .peer = construct, .tag = (int32_t)team});
}

/* "IDX module+0xaddress" lines of the constructs OMP records name. */
static void write_construct_names(void)
{
	char line[640], *buf = NULL;
	size_t len = 0;
	for (int i = 0; i < (int)sizeof omp_seen; i++) {
		char name[600];
		if (!POPMON_LOAD(omp_seen[i]) || !popmon_omp_construct_name(i, name, sizeof name))
			continue;
		int k = snprintf(line, sizeof line, "%d %s\n", i, name);
		char *nb = k > 0 ? realloc(buf, len + (size_t)k) : NULL;
		if (!nb)
			break;
		buf = nb;
		memcpy(buf + len, line, (size_t)k);
		len += (size_t)k;
	}
	if (buf)
		write_chunk(CHUNK_CONSTRUCTS, 0, buf, len);
	free(buf);
}

static const char *region_name(int i)
{
	const char *name = "";
	uint64_t visits, elapsed;
	struct popmon_accounts a;
	popmon_region_get(i, &name, &visits, &elapsed, &a);
	return name;
}

/* The region names by index, NUL-separated (REGION records' peer). */
static void write_region_names(void)
{
	int n = popmon_region_count();
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += strlen(region_name(i)) + 1;
	char *buf = malloc(len ? len : 1);
	if (!buf)
		return;
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		size_t k = strlen(region_name(i)) + 1;
		memcpy(buf + at, region_name(i), k);
		at += k;
	}
	write_chunk(CHUNK_REGIONS, 0, buf, at);
	free(buf);
}

void popmon_trace_close(void)
{
	if (trace_fd < 0)
		return;
	write_region_names();
	write_construct_names();
	int n = popmon_thread_count();
	for (int i = 0; i < n; i++) {
		struct popmon_thread *t = popmon_thread_slot(i);
		struct tbuf *b = t ? t->trace : NULL;
		if (b)
			flush_buf(t, b);
	}
	struct trailer tr = {.t0_tick = popmon_proc.t0_tick, .t0_ns = popmon_proc.t0_ns,
			     .ns_per_tick = popmon_ns_per_tick(), .init_tick = popmon_proc.init_tick,
			     .fin_tick = popmon_proc.fin_tick, .records = records_written,
			     .flushes = __atomic_load_n(&flushes, __ATOMIC_RELAXED), .buffer_bytes = buffer_bytes};
	gethostname(tr.hostname, sizeof tr.hostname - 1);
	write_chunk(CHUNK_TRAILER, 0, &tr, sizeof tr);
	if (close(trace_fd) != 0 && popmon_trace_on)
		trace_fail("close");
	trace_fd = -1;
	popmon_trace_on = 0;
}
