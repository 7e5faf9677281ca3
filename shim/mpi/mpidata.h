/* mpidata.h: byte accounting of the data-carrying MPI calls (mpidata.c).
 *
 * The generated wrappers of the calls marked data=ROLE in
 * shim/gen/mpi_calls.txt call popmon_d_ROLE(...) after the MPI call (and
 * popmon_dpre_ROLE(...) before it for the blocking completion calls, which
 * may free requests; the polling ones save handles instead, below). What each call sends and receives (count x PMPI_Type_size) is
 * credited to the call that starts the transfer, in the calling thread's
 * record (popmon_thread.d_bytes, d_hist):
 *   - a send at its start (MPI_Send, MPI_Isend, each MPI_Start of an
 *     MPI_Send_init request: credited to MPI_Send_init);
 *   - a receive at its completion, from the status (actual count; the
 *     wrapper substitutes a local status for MPI_STATUS_IGNORE), credited to
 *     the call that posted it (MPI_Irecv, MPI_Recv_init ...);
 *   - a collective at its start from its arguments (persistent ones at
 *     each MPI_Start).
 * Calls without data run no code of this file. Non-blocking receives and
 * persistent requests are remembered in a fixed-size per-thread table
 * (allocated once, at a thread's first such call): no lock, no allocation
 * and no system call afterwards; when the table is full the bytes of the
 * requests it cannot hold are not counted (one warning).
 * Only called from the generated wrappers (mpi_wrappers.c), which include
 * mpi.h first.
 */
#ifndef POPMON_MPIDATA_H
#define POPMON_MPIDATA_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "base/threads.h"

/* What a completion call's pre-hook found: the requests the thread's table
 * knows, by their index in the call's array (or one, for Wait/Test). */
struct popmon_dpre {
	int n;           /* hits (1 at most for a single request) */
	int count;       /* the array's length */
	int slot;        /* a single request's table slot */
	int ignored;     /* the caller passed MPI_STATUSES_IGNORE and no scratch array was used */
	MPI_Status *user; /* the caller's status array */
};

/* The polling calls (MPI_Test, MPI_Testany, MPI_Testall, MPI_Testsome)
 * cost what an intercepted call without data costs when nothing completes:
 * nothing is looked up before the call. MPI sets a completed request to
 * MPI_REQUEST_NULL, so the wrapper keeps the handles as they were (one
 * load for MPI_Test; for the arrays, a copy, and only while the calling
 * thread's table holds requests at all), and after the call looks up only
 * the requests that completed (flag true, the index or indices returned). */

/* The head of a thread's request table (mpidata.c): the requests it holds. */
struct popmon_dhead {
	int n;
};

/* Whether the table of t (the calling thread's record, or NULL) holds
 * requests (the table is empty when bytes are not counted). */
static inline int popmon_dtracked(const struct popmon_thread *t)
{
	const struct popmon_dhead *h = t ? (const struct popmon_dhead *)t->dreq : NULL;
	return h != NULL && h->n > 0;
}

/* An array polling call's handles as they were before the call. Arrays of
 * up to POPMON_DPOLL_LOCAL requests are copied into the wrapper's own
 * frame, longer ones into the thread's table (popmon_dpoll_save_slow); an
 * array longer than the table can copy has its known requests looked up
 * before the call instead (pre, keys NULL). */
enum { POPMON_DPOLL_LOCAL = 16 };
struct popmon_dpoll {
	int n;                   /* handles saved (or hits, keys NULL); 0: nothing to do after the call */
	int ignored;             /* the caller passed MPI_STATUSES_IGNORE and no scratch array was used */
	const MPI_Request *keys; /* the handles by array index */
	struct popmon_dpre pre;  /* keys NULL: the hits of the lookup */
	MPI_Request local[POPMON_DPOLL_LOCAL];
	MPI_Status sts[POPMON_DPOLL_LOCAL]; /* statuses for a caller's MPI_STATUSES_IGNORE */
};

MPI_Status *popmon_dpoll_save_slow(struct popmon_dpoll *p, int count, MPI_Request reqs[], MPI_Status *sts);

/* Before an array polling call: saves the handles when the thread (its
 * record t, from popmon_mpi_enter_t) holds requests, and returns the status array to pass to MPI (a scratch one
 * when the caller passed MPI_STATUSES_IGNORE and handles were saved: the
 * bytes of a completed receive come from its status). */
static inline MPI_Status *popmon_dpoll_save(struct popmon_dpoll *p, const struct popmon_thread *t, int count,
					    MPI_Request reqs[], MPI_Status *sts)
{
	p->n = 0;
	p->keys = NULL;
	if (__builtin_expect(!popmon_dtracked(t), 1) || count <= 0 || reqs == NULL)
		return sts;
	if (count > POPMON_DPOLL_LOCAL)
		return popmon_dpoll_save_slow(p, count, reqs, sts);
	for (int k = 0; k < count; k++) {
		p->local[k] = reqs[k];
		__asm__ volatile(""); /* a few moves, not a call to memcpy or rep movs */
	}
	p->keys = p->local;
	p->n = count;
	p->ignored = 0;
	return sts == MPI_STATUSES_IGNORE ? p->sts : sts;
}

/* 1 unless POPMON_BYTES=0 (benchmarks' comparison). */
extern int popmon_bytes_on;

/* Point-to-point starts. d is the call's enum popmon_dfn. */
void popmon_d_send(int d, int r, int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
void popmon_d_isend(int d, int r, int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
		    MPI_Request *req);
void popmon_d_send_init(int d, int r, int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
			MPI_Request *req);
void popmon_d_recv(int d, int r, int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
		   MPI_Status *st);
void popmon_d_irecv(int d, int r, int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
		    MPI_Request *req);
void popmon_d_recv_init(int d, int r, int64_t count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
			MPI_Request *req);
void popmon_d_sendrecv(int d, int r, int64_t scount, MPI_Datatype stype, int dest, int stag, int64_t rcount,
		       MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *st);
void popmon_d_sendrecv_replace(int d, int r, int64_t count, MPI_Datatype type, int dest, int stag, int source,
			       int rtag, MPI_Comm comm, MPI_Status *st);
void popmon_d_isendrecv(int d, int r, int64_t scount, MPI_Datatype stype, int dest, int stag, int64_t rcount,
			MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *req);
void popmon_d_isendrecv_replace(int d, int r, int64_t count, MPI_Datatype type, int dest, int stag, int source,
				int rtag, MPI_Comm comm, MPI_Request *req);
void popmon_d_mrecv(int d, int r, int64_t count, MPI_Datatype type, MPI_Status *st);
void popmon_d_imrecv(int d, int r, int64_t count, MPI_Datatype type, MPI_Request *req);

/* Persistent starts and completions. */
void popmon_d_start(int r, MPI_Request *req);
void popmon_d_startall(int r, int count, MPI_Request reqs[]);
void popmon_dpre_wait(struct popmon_dpre *p, MPI_Request *req);
void popmon_d_wait(int r, struct popmon_dpre *p, MPI_Status *st);
/* MPI_Test completed req (its handle before the call). */
void popmon_d_test(int r, MPI_Request req, MPI_Status *st);
void popmon_dpre_waitany(struct popmon_dpre *p, int count, MPI_Request reqs[]);
void popmon_d_waitany(int r, struct popmon_dpre *p, int *index, MPI_Status *st);
/* MPI_Testany completed the request at *index. */
void popmon_d_testany(int r, struct popmon_dpoll *p, int *index, MPI_Status *st);
MPI_Status *popmon_dpre_waitall(struct popmon_dpre *p, int count, MPI_Request reqs[], MPI_Status sts[]);
void popmon_d_waitall(int r, struct popmon_dpre *p, MPI_Status *sts);
/* MPI_Testall completed every request (flag true). */
void popmon_d_testall(int r, struct popmon_dpoll *p, MPI_Status *sts);
MPI_Status *popmon_dpre_waitsome(struct popmon_dpre *p, int count, MPI_Request reqs[], MPI_Status sts[]);
void popmon_d_waitsome(int r, struct popmon_dpre *p, int *outcount, int indices[], MPI_Status *sts);
/* MPI_Testsome completed the *outcount requests at indices[]. */
void popmon_d_testsome(int r, struct popmon_dpoll *p, int *outcount, int indices[], MPI_Status *sts);
void popmon_dpre_request_free(struct popmon_dpre *p, MPI_Request *req);
void popmon_d_request_free(int r, struct popmon_dpre *p);

/* Collectives: req is the call's request (NULL for a blocking one) and
 * persistent whether it is a persistent collective (MPI_X_init: its bytes
 * are credited at each MPI_Start). Arrays of counts
 * come with their element size (int or MPI_Count). */
void popmon_d_bcast(int d, int r, int64_t count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_reduce(int d, int r, int64_t count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_allreduce(int d, int r, int64_t count, MPI_Datatype type, MPI_Comm comm, MPI_Request *req,
			int persistent);
void popmon_d_gather(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, int64_t rcount,
		     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_gatherv(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, const void *rcounts,
		      size_t w, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_scatter(int d, int r, int64_t scount, MPI_Datatype stype, const void *rbuf, int64_t rcount,
		      MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_scatterv(int d, int r, const void *scounts, size_t w, MPI_Datatype stype, const void *rbuf,
		       int64_t rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_allgather(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, int64_t rcount,
			MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_allgatherv(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype,
			 const void *rcounts, size_t w, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_alltoall(int d, int r, const void *sbuf, int64_t scount, MPI_Datatype stype, int64_t rcount,
		       MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_alltoallv(int d, int r, const void *sbuf, const void *scounts, size_t sw, MPI_Datatype stype,
			const void *rcounts, size_t rw, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_alltoallw(int d, int r, const void *sbuf, const void *scounts, size_t sw,
			const MPI_Datatype stypes[], const void *rcounts, size_t rw, const MPI_Datatype rtypes[],
			MPI_Comm comm, MPI_Request *req, int persistent);
void popmon_d_reduce_scatter(int d, int r, const void *rcounts, size_t w, MPI_Datatype type, MPI_Comm comm,
			     MPI_Request *req, int persistent);
void popmon_d_reduce_scatter_block(int d, int r, int64_t rcount, MPI_Datatype type, MPI_Comm comm,
				   MPI_Request *req, int persistent);

/* MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init: no bytes; the trace's
 * communicator and request. */
void popmon_d_barrier(int r, MPI_Comm comm, MPI_Request *req, int persistent);

/* The bucket of a message of bytes (mpidata.c). */
int popmon_size_bin(uint64_t bytes);

/* Lookups in the calling thread's request table so far (0 without one):
 * exported for tests (internal/e2e/pollcost_test.go), which check that a
 * poll completing nothing looks nothing up. */
uint64_t popmon_dreq_lookups(void);


#endif /* POPMON_MPIDATA_H */
