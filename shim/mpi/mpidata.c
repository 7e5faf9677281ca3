/* mpidata.c: byte accounting of the data-carrying MPI calls (see mpidata.h
 * and docs/library.md, "Bytes and message sizes"). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "base/env.h"
#include "base/process.h"
#include "base/clock.h"
#include "base/threads.h"
#include "base/warn.h"
#include "mpi/mpidata.h"
#include "mpi/trace.h"

int popmon_bytes_on = 1;

__attribute__((constructor)) static void popmon_bytes_env(void)
{
	/* Started up first, so that a launcher (inert) says nothing. */
	popmon_ensure_init();
	popmon_bytes_on = popmon_env_switch("POPMON_BYTES", 1, 1);
}

/* ------------------------------------------------------------ accounting */

int popmon_size_bin(uint64_t bytes)
{
	if (bytes == 0)
		return 0;
	int b = 64 - __builtin_clzll(bytes);
	return b < POPMON_SIZE_BINS ? b : POPMON_SIZE_BINS - 1;
}

/* The calling thread's record when bytes are counted, else NULL. */
static inline struct popmon_thread *dthread(int r)
{
	if (!popmon_bytes_on || r != MPI_SUCCESS)
		return NULL;
	return popmon_tls;
}

/* One message (or one collective call's buffer) of bytes in direction dir
 * (0 sent, 1 received) for slot d; hist: whether it adds to the histogram. */
static inline void credit(struct popmon_thread *t, int d, int dir, int64_t bytes, int hist)
{
	if (d < 0 || d >= POPMON_DFN_COUNT || bytes < 0)
		return;
	POPMON_ADD(t->d_bytes[d][dir], (uint64_t)bytes);
	if (hist)
		POPMON_ADD(t->d_hist[d][popmon_size_bin((uint64_t)bytes)], 1);
}

/* The sizes of predefined datatypes (combiner MPI_COMBINER_NAMED: never
 * freed, so a handle keeps its size until MPI_Finalize), per thread and
 * direct-mapped: a hit costs a multiply and a compare instead of
 * PMPI_Type_size. Derived datatypes are not cached (MPI_Type_free lets a
 * handle come back as another type). */
#define TSIZE_SLOTS 16
static __thread struct {
	uint64_t key;
	int64_t size;
} tsize_cache[TSIZE_SLOTS];

static int64_t tsize(MPI_Datatype type)
{
	if (type == MPI_DATATYPE_NULL)
		return 0;
	uint64_t k = 0;
	memcpy(&k, &type, sizeof type < sizeof k ? sizeof type : sizeof k);
	unsigned h = (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 60) & (TSIZE_SLOTS - 1);
	if (k != 0 && tsize_cache[h].key == k)
		return tsize_cache[h].size;
	int s = 0;
	if (PMPI_Type_size(type, &s) != MPI_SUCCESS || s < 0)
		return 0;
	int ni = 0, na = 0, nd = 0, comb = 0;
	if (k != 0 && PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
	    comb == MPI_COMBINER_NAMED) {
		tsize_cache[h].key = k;
		tsize_cache[h].size = s;
	}
	return s;
}

static int64_t bytes_of(int64_t count, MPI_Datatype type)
{
	return count > 0 ? count * tsize(type) : 0;
}

/* The bytes a completed receive's status reports (0 for MPI_PROC_NULL). */
static int64_t status_bytes(const MPI_Status *st)
{
	int n = 0;
	if (st->MPI_SOURCE == MPI_PROC_NULL)
		return 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return n;
}

/* ------------------------------------------------------------ request table */

/* Requests whose bytes are credited later: non-blocking receives (at their
 * completion) and persistent requests (at each start). Open addressing
 * with linear probing, keyed by the handle's bits. */
enum { DREQ_CAP = 1024, DREQ_MAX = 768, DSTATUS_CAP = 256 };
enum { E_RECV = 1, E_SEND = 2, E_COLL = 3 };

struct dreq {
	uint64_t key;       /* the request handle's bits; 0 = empty */
	int32_t dfn;        /* the slot credited */
	uint8_t kind;       /* E_* */
	uint8_t persistent; /* created by MPI_X_init */
	uint8_t active;     /* a started persistent request */
	uint8_t pad;
	int64_t sbytes;     /* a persistent send's or collective's bytes per start */
	int64_t rbytes;     /* the posted receive size (when the status is not available); a collective's received bytes */
	/* Tracing: the request's id in the trace, communicator id, peer
	 * (world rank, -1 for a wildcard) and tag as posted. */
	uint32_t id, comm;
	int32_t peer, tag;
};

struct dtable {
	struct popmon_dhead h; /* first: popmon_dtracked (mpidata.h) reads it */
	struct dreq e[DREQ_CAP];
	/* Completion calls over arrays: the table slots of the hits by array
	 * index, and a status array for callers passing MPI_STATUSES_IGNORE. */
	int hit_idx[DREQ_MAX];
	int hit_slot[DREQ_MAX];
	MPI_Status sts[DSTATUS_CAP];
	/* An array polling call's handles before the call (longer than its
	 * wrapper keeps itself). */
	MPI_Request keys[DREQ_CAP];
	/* Lookups so far (popmon_dreq_lookups: a test's seam). */
	uint64_t lookups;
};

/* ------------------------------------------------------------ tracing */

/* Communicators in the trace: id 0 is MPI_COMM_WORLD; the others get an
 * id at first sight (an attribute on the communicator keeps it, so a freed
 * communicator's reused handle gets a new one) and a COMM record with
 * their members as world ranks (the remote group of an
 * intercommunicator: what peers name). */
enum { MAX_COMMS = 4096 };
struct tcomm {
	int n;
	int32_t *members;
};
static struct tcomm *tcomms[MAX_COMMS];
static uint32_t ncomms = 1;
static int comm_keyval = MPI_KEYVAL_INVALID;
static uint32_t req_ids;

/* Bumped whenever a communicator carrying a trace id is freed (the
 * keyval's delete callback): the per-thread cache below then misses, so a
 * freed handle that MPI reuses for a new communicator never finds the old
 * id. */
static uint32_t comm_gen = 1;

static int comm_deleted(MPI_Comm c, int keyval, void *val, void *extra)
{
	(void)c;
	(void)keyval;
	(void)val;
	(void)extra;
	__atomic_fetch_add(&comm_gen, 1, __ATOMIC_ACQ_REL);
	return MPI_SUCCESS;
}

static uint32_t comm_id_slow(struct popmon_thread *t, MPI_Comm c);

/* The trace id of communicator c: 0 for MPI_COMM_WORLD; others from a
 * per-thread direct-mapped cache, or from their attribute (an id handed
 * out at first use, with the communicator's record in the trace). */
#define COMM_SLOTS 8
static __thread struct {
	uint64_t key;
	uint32_t gen, id;
} comm_cache[COMM_SLOTS];

static uint32_t comm_id(struct popmon_thread *t, MPI_Comm c)
{
	if (c == MPI_COMM_WORLD)
		return 0;
	if (c == MPI_COMM_NULL)
		return POPMON_TR_NOCOMM;
	uint64_t k = 0;
	memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
	unsigned h = (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 61) & (COMM_SLOTS - 1);
	uint32_t g = __atomic_load_n(&comm_gen, __ATOMIC_ACQUIRE);
	if (comm_cache[h].key == k && comm_cache[h].gen == g)
		return comm_cache[h].id;
	uint32_t id = comm_id_slow(t, c);
	if (id != POPMON_TR_NOCOMM) {
		comm_cache[h].key = k;
		comm_cache[h].gen = g;
		comm_cache[h].id = id;
	}
	return id;
}

static uint32_t comm_id_slow(struct popmon_thread *t, MPI_Comm c)
{
	if (comm_keyval == MPI_KEYVAL_INVALID) {
		int kv = MPI_KEYVAL_INVALID;
		if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_deleted, &kv, NULL) != MPI_SUCCESS)
			return POPMON_TR_NOCOMM;
		int expect = MPI_KEYVAL_INVALID;
		if (!__atomic_compare_exchange_n(&comm_keyval, &expect, kv, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			PMPI_Comm_free_keyval(&kv); /* another thread made one */
	}
	void *v = NULL;
	int flag = 0;
	if (PMPI_Comm_get_attr(c, comm_keyval, &v, &flag) == MPI_SUCCESS && flag)
		return (uint32_t)((uintptr_t)v - 1);
	uint32_t id = __atomic_fetch_add(&ncomms, 1, __ATOMIC_RELAXED);
	if (id >= MAX_COMMS) {
		popmon_warn_once("tracecomms", "more than %d communicators: the trace leaves the others' unknown",
				 MAX_COMMS);
		return POPMON_TR_NOCOMM;
	}
	int inter = 0, n = 0;
	MPI_Group g, wg;
	PMPI_Comm_test_inter(c, &inter);
	if ((inter ? PMPI_Comm_remote_group(c, &g) : PMPI_Comm_group(c, &g)) != MPI_SUCCESS)
		return POPMON_TR_NOCOMM;
	PMPI_Group_size(g, &n);
	struct tcomm *tc = malloc(sizeof *tc); /* once per communicator */
	int *in = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	int *out = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	if (tc && in && out && PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
		for (int i = 0; i < n; i++)
			in[i] = i;
		PMPI_Group_translate_ranks(g, n, in, wg, out);
		PMPI_Group_free(&wg);
		tc->n = n;
		tc->members = (int32_t *)out;
		for (int i = 0; i < n; i++)
			tc->members[i] = out[i] == MPI_UNDEFINED ? -1 : out[i];
		__atomic_store_n(&tcomms[id], tc, __ATOMIC_RELEASE);
		popmon_trace_put(t, &(struct popmon_trec){.enter = t->last, .kind = POPMON_TR_COMM,
							  .flags = inter ? POPMON_TRF_INTER : 0, .comm = id, .peer = n});
		for (int i = 0; i < n; i += 4) {
			int32_t m[4] = {-1, -1, -1, -1};
			for (int k = 0; k < 4 && i + k < n; k++)
				m[k] = tc->members[i + k];
			popmon_trace_put(t, &(struct popmon_trec){.enter = (uint64_t)i, .kind = POPMON_TR_MEMBERS,
								  .comm = id, .peer = m[0], .tag = m[1],
								  .req = (uint32_t)m[2], .bytes = (uint32_t)m[3]});
		}
		out = NULL;
	} else {
		free(tc);
	}
	free(in);
	free(out);
	PMPI_Group_free(&g);
	PMPI_Comm_set_attr(c, comm_keyval, (void *)(uintptr_t)(id + 1));
	return id;
}

/* The world rank of rank r of communicator id (-1: none or unknown). */
static int32_t world_of(uint32_t id, int r)
{
	if (r < 0)
		return -1;
	if (id == 0)
		return r;
	if (id >= MAX_COMMS)
		return -1;
	const struct tcomm *tc = __atomic_load_n(&tcomms[id], __ATOMIC_ACQUIRE);
	return tc && r < tc->n ? tc->members[r] : -1;
}

static inline int tracing(void)
{
	return __builtin_expect(POPMON_LOAD(popmon_trace_on), 0);
}

static uint32_t new_req_id(void)
{
	return __atomic_add_fetch(&req_ids, 1, __ATOMIC_RELAXED);
}

/* The flags of a peer: PROC_NULL, a wildcard. */
static unsigned peer_flags(int peer)
{
	return peer == MPI_PROC_NULL ? POPMON_TRF_PROC_NULL : peer == MPI_ANY_SOURCE ? POPMON_TRF_ANY : 0;
}

static uint64_t req_key(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
	return k;
}

static inline unsigned hash(uint64_t k)
{
	return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 54) & (DREQ_CAP - 1);
}

static struct dtable *table(struct popmon_thread *t, int create)
{
	struct dtable *tb = t->dreq;
	if (tb || !create)
		return tb;
	tb = calloc(1, sizeof *tb); /* once per thread that posts such requests */
	if (!tb) {
		popmon_warn_once("dreq", "out of memory for the request table: bytes of non-blocking "
					 "receives and persistent requests are not counted");
		return NULL;
	}
	t->dreq = tb;
	return tb;
}

uint64_t popmon_dreq_lookups(void)
{
	struct popmon_thread *t = popmon_tls;
	const struct dtable *tb = t ? t->dreq : NULL;
	return tb ? tb->lookups : 0;
}

static int lookup(struct dtable *tb, uint64_t k)
{
	if (tb)
		tb->lookups++;
	if (!tb || tb->h.n == 0 || k == 0)
		return -1;
	for (unsigned i = hash(k), n = 0; n < DREQ_CAP; i = (i + 1) & (DREQ_CAP - 1), n++) {
		if (tb->e[i].key == k)
			return (int)i;
		if (tb->e[i].key == 0)
			return -1;
	}
	return -1;
}

/* Removes slot i (backward-shift deletion: no tombstones). */
static void remove_slot(struct dtable *tb, int i)
{
	unsigned hole = (unsigned)i, j = (unsigned)i;
	for (;;) {
		j = (j + 1) & (DREQ_CAP - 1);
		if (tb->e[j].key == 0)
			break;
		unsigned home = hash(tb->e[j].key);
		/* Move e[j] into the hole when its home is not in (hole, j]. */
		if (((j - home) & (DREQ_CAP - 1)) >= ((j - hole) & (DREQ_CAP - 1))) {
			tb->e[hole] = tb->e[j];
			hole = j;
		}
	}
	memset(&tb->e[hole], 0, sizeof tb->e[hole]);
	tb->h.n--;
}

static void insert(struct popmon_thread *t, MPI_Request *req, struct dreq e)
{
	if (!req)
		return;
	e.key = req_key(*req);
	if (e.key == 0 || e.key == req_key(MPI_REQUEST_NULL))
		return;
	struct dtable *tb = table(t, 1);
	if (!tb)
		return;
	int i = lookup(tb, e.key);
	if (i >= 0) { /* a handle the MPI reused (its old entry went stale) */
		tb->e[i] = e;
		return;
	}
	if (tb->h.n >= DREQ_MAX) {
		popmon_warn_once("dreqfull", "more than %d pending non-blocking receives or persistent requests "
					     "in one thread: the bytes of the others are not counted", DREQ_MAX);
		return;
	}
	unsigned j = hash(e.key);
	while (tb->e[j].key != 0)
		j = (j + 1) & (DREQ_CAP - 1);
	tb->e[j] = e;
	tb->h.n++;
}

/* Request slot i completed with status st (NULL: not available). */
static void complete(struct popmon_thread *t, struct dtable *tb, int i, const MPI_Status *st)
{
	struct dreq *e = &tb->e[i];
	int64_t got = e->kind == E_RECV ? (st ? status_bytes(st) : e->rbytes) : e->sbytes;
	if (e->kind == E_RECV && (!e->persistent || e->active))
		credit(t, e->dfn, 1, got, 1);
	if (tracing()) {
		unsigned fl = e->kind == E_RECV ? POPMON_TRF_RECV : e->kind == E_SEND ? POPMON_TRF_SEND : POPMON_TRF_COLL;
		int32_t peer = e->peer, tag = e->tag;
		if (e->kind == E_RECV && st) { /* the actual source and tag */
			peer = st->MPI_SOURCE == MPI_PROC_NULL ? -1 : world_of(e->comm, st->MPI_SOURCE);
			tag = st->MPI_TAG;
		} else if (e->kind == E_RECV) {
			fl |= POPMON_TRF_ANY * (peer < 0 || tag == MPI_ANY_TAG);
		}
		if (e->persistent)
			fl |= POPMON_TRF_PERSISTENT;
		popmon_trace_extra(t, POPMON_TR_DONE, fl, e->comm, peer, tag, e->id, got);
	}
	if (e->persistent)
		e->active = 0;
	else
		remove_slot(tb, i);
}

/* ------------------------------------------------------------ point-to-point */

/* A send's bytes; for the trace, the call's record (or, part: a PART
 * record of it). */
static void send_one(struct popmon_thread *t, int d, int64_t count, MPI_Datatype type, int dest, int tag,
		     MPI_Comm comm, uint32_t req)
{
	int64_t b = dest != MPI_PROC_NULL ? bytes_of(count, type) : 0;
	if (dest != MPI_PROC_NULL)
		credit(t, d, 0, b, 1);
	if (tracing()) {
		uint32_t c = comm_id(t, comm);
		popmon_trace_pending(t, POPMON_TRF_SEND | peer_flags(dest), c, world_of(c, dest), tag, req, b);
	}
}

/* A completed receive's bytes, from its status. */
static void recv_one(struct popmon_thread *t, int d, int source, int tag, MPI_Comm comm, const MPI_Status *st,
		     int part)
{
	int64_t b = source != MPI_PROC_NULL ? status_bytes(st) : 0;
	if (source != MPI_PROC_NULL)
		credit(t, d, 1, b, 1);
	if (tracing()) {
		uint32_t c = comm_id(t, comm);
		int32_t peer = source == MPI_PROC_NULL || st->MPI_SOURCE == MPI_PROC_NULL ? -1 : world_of(c, st->MPI_SOURCE);
		unsigned fl = POPMON_TRF_RECV | (source == MPI_PROC_NULL ? POPMON_TRF_PROC_NULL : 0);
		int32_t atag = source == MPI_PROC_NULL ? tag : st->MPI_TAG;
		if (part)
			popmon_trace_extra(t, POPMON_TR_PART, fl, c, peer, atag, 0, b);
		else
			popmon_trace_pending(t, fl, c, peer, atag, 0, b);
	}
}

/* A request whose completion the trace (or the bytes) needs to see. */
static uint32_t post(struct popmon_thread *t, int d, int kind, int persistent, int64_t sbytes, int64_t rbytes,
		     int peer, int tag, MPI_Comm comm, MPI_Request *req, unsigned flags)
{
	uint32_t id = 0, c = POPMON_TR_NOCOMM;
	if (tracing()) {
		id = new_req_id();
		c = comm_id(t, comm);
		popmon_trace_pending(t, flags | peer_flags(peer) | (persistent ? POPMON_TRF_PERSISTENT : 0), c,
				     world_of(c, peer), tag, id, kind == E_RECV ? rbytes : sbytes);
	}
	insert(t, req, (struct dreq){.dfn = d, .kind = (uint8_t)kind, .persistent = (uint8_t)persistent,
				     .sbytes = sbytes, .rbytes = rbytes, .id = id, .comm = c,
				     .peer = world_of(c, peer), .tag = tag});
	return id;
}

void popmon_d_send(int d, int r, int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	struct popmon_thread *t = dthread(r);
	if (t)
		send_one(t, d, count, type, dest, tag, comm, 0);
}

void popmon_d_isend(int d, int r, int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
		    MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (!t)
		return;
	if (!tracing()) { /* the bytes alone need no completion */
		send_one(t, d, count, type, dest, tag, comm, 0);
		return;
	}
	int64_t b = dest != MPI_PROC_NULL ? bytes_of(count, type) : 0;
	if (dest != MPI_PROC_NULL)
		credit(t, d, 0, b, 1);
	post(t, d, E_SEND, 0, b, 0, dest, tag, comm, req, POPMON_TRF_SEND);
}

void popmon_d_send_init(int d, int r, int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
			MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (t)
		post(t, d, E_SEND, 1, dest == MPI_PROC_NULL ? -1 : bytes_of(count, type), 0, dest, tag, comm, req,
		     POPMON_TRF_SEND);
}

void popmon_d_recv(int d, int r, int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
		   MPI_Status *st)
{
	(void)count;
	(void)type;
	struct popmon_thread *t = dthread(r);
	if (t)
		recv_one(t, d, source, tag, comm, st, 0);
}

void popmon_d_irecv(int d, int r, int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
		    MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (t && source != MPI_PROC_NULL)
		post(t, d, E_RECV, 0, 0, bytes_of(count, type), source, tag, comm, req, POPMON_TRF_RECV);
}

void popmon_d_recv_init(int d, int r, int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
			MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (t && source != MPI_PROC_NULL)
		post(t, d, E_RECV, 1, 0, bytes_of(count, type), source, tag, comm, req, POPMON_TRF_RECV);
}

void popmon_d_sendrecv(int d, int r, int64_t scount, MPI_Datatype stype, int dest, int stag, int64_t rcount,
		       MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *st)
{
	(void)rcount;
	(void)rtype;
	struct popmon_thread *t = dthread(r);
	if (!t)
		return;
	recv_one(t, d, source, rtag, comm, st, 1);
	send_one(t, d, scount, stype, dest, stag, comm, 0);
}

void popmon_d_sendrecv_replace(int d, int r, int64_t count, MPI_Datatype type, int dest, int stag, int source,
			       int rtag, MPI_Comm comm, MPI_Status *st)
{
	popmon_d_sendrecv(d, r, count, type, dest, stag, count, type, source, rtag, comm, st);
}

void popmon_d_isendrecv(int d, int r, int64_t scount, MPI_Datatype stype, int dest, int stag, int64_t rcount,
			MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (!t)
		return;
	/* The request completes the receive (its send: counted now). */
	if (source != MPI_PROC_NULL)
		post(t, d, E_RECV, 0, 0, bytes_of(rcount, rtype), source, rtag, comm, req, POPMON_TRF_RECV);
	int64_t b = dest != MPI_PROC_NULL ? bytes_of(scount, stype) : 0;
	if (dest != MPI_PROC_NULL)
		credit(t, d, 0, b, 1);
	if (tracing()) {
		uint32_t c = comm_id(t, comm);
		popmon_trace_extra(t, POPMON_TR_PART, POPMON_TRF_SEND | peer_flags(dest), c, world_of(c, dest), stag,
				   0, b);
	}
}

void popmon_d_isendrecv_replace(int d, int r, int64_t count, MPI_Datatype type, int dest, int stag, int source,
				int rtag, MPI_Comm comm, MPI_Request *req)
{
	popmon_d_isendrecv(d, r, count, type, dest, stag, count, type, source, rtag, comm, req);
}

void popmon_d_mrecv(int d, int r, int64_t count, MPI_Datatype type, MPI_Status *st)
{
	(void)count;
	(void)type;
	struct popmon_thread *t = dthread(r);
	if (!t)
		return;
	int64_t b = st->MPI_SOURCE != MPI_PROC_NULL ? status_bytes(st) : 0;
	if (st->MPI_SOURCE != MPI_PROC_NULL)
		credit(t, d, 1, b, 1);
	/* The message's communicator is not known here: the peer is not. */
	if (tracing())
		popmon_trace_pending(t, POPMON_TRF_RECV | POPMON_TRF_ANY, POPMON_TR_NOCOMM, -1, st->MPI_TAG, 0, b);
}

void popmon_d_imrecv(int d, int r, int64_t count, MPI_Datatype type, MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (t)
		post(t, d, E_RECV, 0, 0, bytes_of(count, type), MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_NULL, req,
		     POPMON_TRF_RECV);
}

/* ------------------------------------------------------------ starts and completions */

/* A collective's bytes at its start: one histogram entry, of the larger
 * of its send and receive buffers. */
static void coll_now(struct popmon_thread *t, int d, int64_t sent, int64_t recvd)
{
	credit(t, d, 0, sent, 0);
	credit(t, d, 1, recvd, 0);
	if (d >= 0 && d < POPMON_DFN_COUNT)
		POPMON_ADD(t->d_hist[d][popmon_size_bin((uint64_t)(sent > recvd ? sent : recvd))], 1);
}

static void start_one(struct popmon_thread *t, struct dtable *tb, MPI_Request req)
{
	int i = lookup(tb, req_key(req));
	if (i < 0)
		return;
	struct dreq *e = &tb->e[i];
	e->active = 1;
	if (e->kind == E_SEND && e->sbytes >= 0)
		credit(t, e->dfn, 0, e->sbytes, 1);
	else if (e->kind == E_COLL)
		coll_now(t, e->dfn, e->sbytes, e->rbytes);
	if (tracing()) {
		unsigned fl = e->kind == E_RECV ? POPMON_TRF_RECV : e->kind == E_SEND ? POPMON_TRF_SEND : POPMON_TRF_COLL;
		popmon_trace_extra(t, POPMON_TR_START, fl | POPMON_TRF_PERSISTENT | (e->peer < 0 ? POPMON_TRF_ANY : 0),
				   e->comm, e->peer, e->tag, e->id, e->kind == E_RECV ? e->rbytes : e->sbytes);
	}
}

void popmon_d_start(int r, MPI_Request *req)
{
	struct popmon_thread *t = dthread(r);
	if (t && req)
		start_one(t, t->dreq, *req);
}

void popmon_d_startall(int r, int count, MPI_Request reqs[])
{
	struct popmon_thread *t = dthread(r);
	struct dtable *tb = t ? t->dreq : NULL;
	if (!tb || tb->h.n == 0 || !reqs)
		return;
	for (int k = 0; k < count; k++)
		start_one(t, tb, reqs[k]);
}

/* The table of the calling thread when it holds requests, else NULL. */
static struct dtable *pending(struct popmon_thread **tp)
{
	struct popmon_thread *t = popmon_bytes_on ? popmon_tls : NULL;
	struct dtable *tb = t ? t->dreq : NULL;
	*tp = t;
	return tb && tb->h.n > 0 ? tb : NULL;
}

void popmon_dpre_wait(struct popmon_dpre *p, MPI_Request *req)
{
	struct popmon_thread *t;
	struct dtable *tb = pending(&t);
	p->n = 0;
	p->slot = tb && req ? lookup(tb, req_key(*req)) : -1;
	if (p->slot >= 0)
		p->n = 1;
}

void popmon_d_wait(int r, struct popmon_dpre *p, MPI_Status *st)
{
	struct popmon_thread *t = dthread(r);
	if (!t || p->n == 0 || !t->dreq)
		return;
	complete(t, t->dreq, p->slot, st);
}

/* A polling call completed the request whose handle was key. */
static void complete_key(struct popmon_thread *t, MPI_Request key, const MPI_Status *st)
{
	struct dtable *tb = t->dreq;
	int i = lookup(tb, req_key(key));
	if (i >= 0)
		complete(t, tb, i, st);
}

void popmon_d_test(int r, MPI_Request req, MPI_Status *st)
{
	struct popmon_thread *t = dthread(r);
	if (t && t->dreq)
		complete_key(t, req, st);
}

/* Records the array indices of the requests the table holds; returns the
 * status array to pass to the MPI call. */
static MPI_Status *pre_array(struct popmon_dpre *p, int count, MPI_Request reqs[], MPI_Status *sts)
{
	struct popmon_thread *t;
	struct dtable *tb = pending(&t);
	p->n = 0;
	p->count = count;
	p->user = sts;
	p->ignored = 0;
	if (!tb || !reqs || count <= 0)
		return sts;
	for (int k = 0; k < count && p->n < DREQ_MAX; k++) {
		int i = lookup(tb, req_key(reqs[k]));
		if (i >= 0) {
			tb->hit_idx[p->n] = k;
			tb->hit_slot[p->n] = i;
			p->n++;
		}
	}
	if (p->n == 0 || sts != MPI_STATUSES_IGNORE)
		return sts;
	if (count <= DSTATUS_CAP)
		return tb->sts;
	p->ignored = 1; /* too many for the scratch array: posted sizes */
	return sts;
}

/* The keys of several hits: removing one may shift another into its slot,
 * so completing several goes through the keys. */
static void post_many(struct popmon_thread *t, struct popmon_dpre *p, MPI_Status *sts, const int *indices,
		      int nidx)
{
	struct dtable *tb = t->dreq;
	if (!tb || p->n == 0)
		return;
	uint64_t keys[64];
	for (int base = 0; base < p->n; base += 64) {
		int m = p->n - base < 64 ? p->n - base : 64;
		for (int h = 0; h < m; h++)
			keys[h] = tb->e[tb->hit_slot[base + h]].key;
		for (int h = 0; h < m; h++) {
			int idx = tb->hit_idx[base + h];
			if (indices) {
				int done = 0;
				for (int q = 0; q < nidx && !done; q++)
					done = indices[q] == idx;
				if (!done)
					continue;
			}
			int i = lookup(tb, keys[h]);
			if (i < 0)
				continue;
			const MPI_Status *st = p->ignored || sts == MPI_STATUSES_IGNORE ? NULL : &sts[idx];
			if (indices) { /* Waitsome/Testsome: statuses are by completion order */
				st = NULL;
				for (int q = 0; q < nidx && !p->ignored && sts != MPI_STATUSES_IGNORE; q++)
					if (indices[q] == idx)
						st = &sts[q];
			}
			complete(t, tb, i, st);
		}
	}
}

void popmon_dpre_waitany(struct popmon_dpre *p, int count, MPI_Request reqs[])
{
	pre_array(p, count, reqs, MPI_STATUSES_IGNORE);
}

void popmon_d_waitany(int r, struct popmon_dpre *p, int *index, MPI_Status *st)
{
	struct popmon_thread *t = dthread(r);
	if (!t || p->n == 0 || !index || *index == MPI_UNDEFINED || *index < 0)
		return;
	struct dtable *tb = t->dreq;
	for (int h = 0; tb && h < p->n; h++)
		if (tb->hit_idx[h] == *index) {
			complete(t, tb, tb->hit_slot[h], st);
			return;
		}
}

MPI_Status *popmon_dpoll_save_slow(struct popmon_dpoll *p, int count, MPI_Request reqs[], MPI_Status *sts)
{
	struct popmon_thread *t;
	struct dtable *tb = pending(&t);
	if (!tb)
		return sts;
	if (count > DREQ_CAP) { /* beyond the copy: look the known ones up now */
		MPI_Status *s = pre_array(&p->pre, count, reqs, sts);
		p->n = p->pre.n;
		return s;
	}
	memcpy(tb->keys, reqs, sizeof *reqs * (size_t)count);
	p->keys = tb->keys;
	p->n = count;
	p->ignored = 0;
	if (sts != MPI_STATUSES_IGNORE)
		return sts;
	if (count <= DSTATUS_CAP)
		return tb->sts;
	p->ignored = 1; /* too many for the scratch array: posted sizes */
	return sts;
}

void popmon_d_testany(int r, struct popmon_dpoll *p, int *index, MPI_Status *st)
{
	if (!p->keys) {
		popmon_d_waitany(r, &p->pre, index, st);
		return;
	}
	struct popmon_thread *t = dthread(r);
	if (t && t->dreq && index && *index >= 0 && *index < p->n)
		complete_key(t, p->keys[*index], st);
}

MPI_Status *popmon_dpre_waitall(struct popmon_dpre *p, int count, MPI_Request reqs[], MPI_Status sts[])
{
	return pre_array(p, count, reqs, sts);
}

void popmon_d_waitall(int r, struct popmon_dpre *p, MPI_Status *sts)
{
	struct popmon_thread *t = popmon_bytes_on ? popmon_tls : NULL;
	if (!t || p->n == 0)
		return;
	if (r != MPI_SUCCESS) { /* MPI_ERR_IN_STATUS: which completed is not known; forget them */
		post_many(t, p, MPI_STATUSES_IGNORE, NULL, 0);
		return;
	}
	post_many(t, p, sts, NULL, 0);
}

void popmon_d_testall(int r, struct popmon_dpoll *p, MPI_Status *sts)
{
	if (!p->keys) {
		popmon_d_waitall(r, &p->pre, sts);
		return;
	}
	struct popmon_thread *t = popmon_bytes_on ? popmon_tls : NULL;
	if (!t || !t->dreq)
		return;
	/* MPI_ERR_IN_STATUS: the statuses are not read (as MPI_Waitall's). */
	int known = r == MPI_SUCCESS && !p->ignored && sts != MPI_STATUSES_IGNORE;
	for (int k = 0; k < p->n; k++)
		complete_key(t, p->keys[k], known ? &sts[k] : NULL);
}

MPI_Status *popmon_dpre_waitsome(struct popmon_dpre *p, int count, MPI_Request reqs[], MPI_Status sts[])
{
	return pre_array(p, count, reqs, sts);
}

void popmon_d_waitsome(int r, struct popmon_dpre *p, int *outcount, int indices[], MPI_Status *sts)
{
	struct popmon_thread *t = dthread(r);
	if (!t || p->n == 0 || !outcount || *outcount == MPI_UNDEFINED || *outcount <= 0 || !indices)
		return;
	post_many(t, p, sts, indices, *outcount);
}

void popmon_d_testsome(int r, struct popmon_dpoll *p, int *outcount, int indices[], MPI_Status *sts)
{
	if (!p->keys) {
		popmon_d_waitsome(r, &p->pre, outcount, indices, sts);
		return;
	}
	struct popmon_thread *t = dthread(r);
	if (!t || !t->dreq || !outcount || *outcount <= 0 || !indices)
		return;
	int known = !p->ignored && sts != MPI_STATUSES_IGNORE;
	for (int q = 0; q < *outcount; q++) /* statuses are by completion order */
		if (indices[q] >= 0 && indices[q] < p->n)
			complete_key(t, p->keys[indices[q]], known ? &sts[q] : NULL);
}

void popmon_dpre_request_free(struct popmon_dpre *p, MPI_Request *req)
{
	popmon_dpre_wait(p, req);
}

void popmon_d_request_free(int r, struct popmon_dpre *p)
{
	struct popmon_thread *t = dthread(r);
	if (t && p->n == 1 && t->dreq)
		remove_slot(t->dreq, p->slot);
}

/* ------------------------------------------------------------ collectives */

struct cinfo {
	int rank, size; /* size: of the group data goes to or comes from (remote for an intercommunicator) */
	int inter;
};

static void comm_info(MPI_Comm comm, struct cinfo *c)
{
	c->rank = 0;
	c->size = 1;
	c->inter = 0;
	if (comm == MPI_COMM_NULL)
		return;
	PMPI_Comm_test_inter(comm, &c->inter);
	PMPI_Comm_rank(comm, &c->rank);
	if (c->inter)
		PMPI_Comm_remote_size(comm, &c->size);
	else
		PMPI_Comm_size(comm, &c->size);
}

/* Whether this process is the root, and whether it takes part as a
 * non-root (an intercommunicator's other local processes do neither). */
static int is_root(const struct cinfo *c, int root)
{
	return c->inter ? root == MPI_ROOT : root == c->rank;
}

static int is_leaf(const struct cinfo *c, int root)
{
	return c->inter ? root != MPI_ROOT && root != MPI_PROC_NULL : root != c->rank;
}

static int64_t count_at(const void *counts, size_t w, int i)
{
	if (!counts || i < 0)
		return 0;
	int64_t v;
	if (w == sizeof(int)) {
		int x;
		memcpy(&x, (const char *)counts + (size_t)i * w, sizeof x);
		v = x;
	} else {
		memcpy(&v, (const char *)counts + (size_t)i * w, sizeof v);
	}
	return v > 0 ? v : 0;
}

static int64_t count_sum(const void *counts, size_t w, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += count_at(counts, w, i);
	return s;
}

/* The calling thread's record when its bytes are counted (NULL: nothing
 * to do), and comm's facts in c. */
static struct popmon_thread *coll_thread(int r, MPI_Comm comm, struct cinfo *c)
{
	struct popmon_thread *t = dthread(r);
	if (t)
		comm_info(comm, c);
	return t;
}

/* The bytes of a rooted collective's one-process side (a gather's send, a
 * scatter's receive): count of type at a leaf and at an intracommunicator's
 * root; with MPI_IN_PLACE at that root, its own slot of the other side (the
 * root's count of the v variants' counts, whose type size is ts, else
 * in_place). */
static int64_t own_side(const struct cinfo *c, int root, const void *buf, int64_t count, MPI_Datatype type,
			int64_t in_place, const void *counts, size_t w, int64_t ts)
{
	int root_me = is_root(c, root);
	if (buf == MPI_IN_PLACE && root_me && !c->inter)
		return counts ? count_at(counts, w, c->rank) * ts : in_place;
	if (is_leaf(c, root) || (!c->inter && root_me))
		return bytes_of(count, type);
	return 0;
}

/* A collective call's bytes: now, or at each start of a persistent one. */
static void coll(struct popmon_thread *t, int d, int64_t sent, int64_t recvd, MPI_Request *req, int persistent,
		 MPI_Comm comm, int root)
{
	uint32_t id = 0, c = POPMON_TR_NOCOMM;
	int32_t wroot = -1;
	if (tracing()) {
		c = comm_id(t, comm);
		int inter = 0;
		if (root >= 0)
			PMPI_Comm_test_inter(comm, &inter);
		wroot = inter ? -1 : world_of(c, root);
		if (req)
			id = new_req_id();
		popmon_trace_extra(t, POPMON_TR_PART, POPMON_TRF_COLL | POPMON_TRF_RECV, c, wroot, 0, id, recvd);
		popmon_trace_pending(t, POPMON_TRF_COLL | POPMON_TRF_SEND | (persistent ? POPMON_TRF_PERSISTENT : 0), c,
				     wroot, 0, id, sent);
	}
	/* A persistent collective counts at each start; a non-blocking one's
	 * completion matters to the trace only. */
	if (req && (persistent || tracing()))
		insert(t, req, (struct dreq){.dfn = d, .kind = E_COLL, .persistent = (uint8_t)persistent,
					     .sbytes = sent, .rbytes = recvd, .id = id, .comm = c, .peer = wroot});
	if (!persistent)
		coll_now(t, d, sent, recvd);
}

void popmon_d_bcast(int d, int r, int64_t count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t b = is_root(&c, root) || is_leaf(&c, root) ? bytes_of(count, type) : 0;
	coll(t, d, is_root(&c, root) ? b : 0, is_leaf(&c, root) ? b : 0, req, persistent, comm, root);
}

void popmon_d_reduce(int d, int r, int64_t count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t b = bytes_of(count, type);
	int64_t sent = c.inter ? (is_leaf(&c, root) ? b : 0) : b;
	coll(t, d, sent, is_root(&c, root) ? b : 0, req, persistent, comm, root);
}

void popmon_d_allreduce(int d, int r, int64_t count, MPI_Datatype type, MPI_Comm comm, MPI_Request *req,
			int persistent)
{
	struct popmon_thread *t = dthread(r);
	if (!t)
		return;
	int64_t b = bytes_of(count, type);
	coll(t, d, b, b, req, persistent, comm, -1);
}

void popmon_d_gather(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, int64_t rcount,
		     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t rb = is_root(&c, root) ? bytes_of(rcount, rtype) : 0;
	coll(t, d, own_side(&c, root, sbuf, scount, stype, rb, NULL, 0, 0), rb * c.size, req, persistent, comm, root);
}

void popmon_d_gatherv(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, const void *rcounts,
		      size_t w, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int root_me = is_root(&c, root);
	int64_t ts = root_me ? tsize(rtype) : 0;
	int64_t recvd = root_me ? count_sum(rcounts, w, c.size) * ts : 0;
	coll(t, d, own_side(&c, root, sbuf, scount, stype, 0, rcounts, w, ts), recvd, req, persistent, comm, root);
}

void popmon_d_scatter(int d, int r, int64_t scount, MPI_Datatype stype, const void *rbuf, int64_t rcount,
		      MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t sb = is_root(&c, root) ? bytes_of(scount, stype) : 0;
	coll(t, d, sb * c.size, own_side(&c, root, rbuf, rcount, rtype, sb, NULL, 0, 0), req, persistent, comm, root);
}

void popmon_d_scatterv(int d, int r, const void *scounts, size_t w, MPI_Datatype stype, const void *rbuf,
		       int64_t rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int root_me = is_root(&c, root);
	int64_t ts = root_me ? tsize(stype) : 0;
	int64_t sent = root_me ? count_sum(scounts, w, c.size) * ts : 0;
	coll(t, d, sent, own_side(&c, root, rbuf, rcount, rtype, 0, scounts, w, ts), req, persistent, comm, root);
}

void popmon_d_allgather(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, int64_t rcount,
			MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t rb = bytes_of(rcount, rtype);
	coll(t, d, sbuf == MPI_IN_PLACE ? rb : bytes_of(scount, stype), rb * c.size, req, persistent, comm, -1);
}

void popmon_d_allgatherv(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype,
			 const void *rcounts, size_t w, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t ts = tsize(rtype);
	int64_t sent = sbuf == MPI_IN_PLACE ? count_at(rcounts, w, c.rank) * ts : bytes_of(scount, stype);
	coll(t, d, sent, count_sum(rcounts, w, c.size) * ts, req, persistent, comm, -1);
}

void popmon_d_alltoall(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, int64_t rcount,
		       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t rb = bytes_of(rcount, rtype) * c.size;
	coll(t, d, sbuf == MPI_IN_PLACE ? rb : bytes_of(scount, stype) * c.size, rb, req, persistent, comm, -1);
}

void popmon_d_alltoallv(int d, int r, const void *sbuf, const void *scounts, size_t sw, MPI_Datatype stype,
			const void *rcounts, size_t rw, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t rb = count_sum(rcounts, rw, c.size) * tsize(rtype);
	int64_t sb = sbuf == MPI_IN_PLACE ? rb : count_sum(scounts, sw, c.size) * tsize(stype);
	coll(t, d, sb, rb, req, persistent, comm, -1);
}

void popmon_d_alltoallw(int d, int r, const void *sbuf, const void *scounts, size_t sw,
			const MPI_Datatype stypes[], const void *rcounts, size_t rw, const MPI_Datatype rtypes[],
			MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t rb = 0, sb = 0;
	for (int i = 0; rtypes && i < c.size; i++)
		rb += count_at(rcounts, rw, i) * tsize(rtypes[i]);
	if (sbuf == MPI_IN_PLACE)
		sb = rb;
	else
		for (int i = 0; stypes && i < c.size; i++)
			sb += count_at(scounts, sw, i) * tsize(stypes[i]);
	coll(t, d, sb, rb, req, persistent, comm, -1);
}

void popmon_d_reduce_scatter(int d, int r, const void *rcounts, size_t w, MPI_Datatype type, MPI_Comm comm,
			     MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int64_t ts = tsize(type);
	int n = c.size;
	if (c.inter) /* recvcounts has one entry per local process */
		PMPI_Comm_size(comm, &n);
	coll(t, d, count_sum(rcounts, w, n) * ts, count_at(rcounts, w, c.rank) * ts, req, persistent, comm, -1);
}

void popmon_d_reduce_scatter_block(int d, int r, int64_t rcount, MPI_Datatype type, MPI_Comm comm,
				   MPI_Request *req, int persistent)
{
	struct cinfo c;
	struct popmon_thread *t = coll_thread(r, comm, &c);
	if (!t)
		return;
	int n = c.size;
	if (c.inter)
		PMPI_Comm_size(comm, &n);
	int64_t b = bytes_of(rcount, type);
	coll(t, d, b * n, b, req, persistent, comm, -1);
}

void popmon_d_barrier(int r, MPI_Comm comm, MPI_Request *req, int persistent)
{
	struct popmon_thread *t = dthread(r);
	if (t && (tracing() || persistent))
		coll(t, -1, 0, 0, req, persistent, comm, -1);
}
