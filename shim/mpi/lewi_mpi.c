/* lewi_mpi.c: blocking MPI calls that wait without spinning while their CPUs
 * are lent (lewi_mpi.h). An MPI library's own blocking wait polls on the
 * CPU (MPICH always; Open MPI unless it yields), which would take the lent
 * CPU back from its guest: here the call polls with PMPI_Test (or the Test
 * form of the call) and sleeps between polls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <time.h>

#include "lewi.h"
#include "mpi/lewi_mpi.h"

/* Polls before the first sleep: a wait that ends at once neither lends nor
 * sleeps (a balanced program's calls). After that, BURST polls per
 * wake-up: a nonblocking collective's schedule advances a step per poll
 * (Open MPI's libnbc, MPICH's), so the poll that receives the last message
 * often does not complete the request yet and the next one does; one poll
 * per wake-up made every such wait a whole sleep longer (measured: Open
 * MPI's MPI_Allreduce under LeWI ended 250 µs after the other rank's).
 * Sleeps: 10 µs doubling up to 200 µs while the lent CPUs are idle; while
 * a guest runs on one, popmon_lewi_lent_sleep waits for it to give it back. */
enum { EAGER_POLLS = 16, BURST = 4, FIRST_NS = 10000, MAX_NS = 200000 };

/* One wait: its polls, the next sleep, and whether it lent the CPUs. */
struct backoff {
	unsigned int polls;
	long ns;
	int lent;
};

/* After a poll that did not complete: lends the CPUs and sleeps, once the
 * eager polls are spent, then after every BURST polls. */
static void pause_poll(struct backoff *b)
{
	if (b->polls++ < EAGER_POLLS || (b->polls - EAGER_POLLS) % BURST != 1)
		return;
	if (!b->lent) {
		popmon_lewi_into_blocking_call();
		b->lent = 1;
	}
	long ns = b->ns ? b->ns : FIRST_NS;
	/* After a sleep on a borrowed CPU, the next idle one is short again:
	 * the guest gave the CPU back, likely in the call this one waits for. */
	b->ns = popmon_lewi_lent_sleep(ns) ? 0 : ns * 2 > MAX_NS ? MAX_NS : ns * 2;
}

/* A wait begins: the CPUs the process borrowed go back (their owners may
 * wait for this very call). */
static struct backoff begin(void)
{
	popmon_lewi_blocking_call_begins();
	return (struct backoff){0, 0, 0};
}

/* The wait is over: reclaims what it lent. */
static void done(const struct backoff *b)
{
	if (b->lent)
		popmon_lewi_out_of_blocking_call();
	else
		popmon_lewi_blocking_call_ended();
}

int popmon_lewi_mpi_wait(MPI_Request *q, MPI_Status *status)
{
	struct backoff b = begin();
	int r, flag = 0;
	while ((r = PMPI_Test(q, &flag, status)) == MPI_SUCCESS && !flag)
		pause_poll(&b);
	done(&b);
	return r;
}

int popmon_lewi_MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	return popmon_lewi_mpi_wait(request, status);
}

int popmon_lewi_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	struct backoff b = begin();
	int r, flag = 0;
	while ((r = PMPI_Testall(count, array_of_requests, &flag, array_of_statuses)) == MPI_SUCCESS && !flag)
		pause_poll(&b);
	done(&b);
	return r;
}

int popmon_lewi_MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
	struct backoff b = begin();
	int r, flag = 0;
	while ((r = PMPI_Testany(count, array_of_requests, indx, &flag, status)) == MPI_SUCCESS && !flag)
		pause_poll(&b);
	done(&b);
	return r;
}

int popmon_lewi_MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
			     MPI_Status array_of_statuses[])
{
	struct backoff b = begin();
	int r;
	/* Testsome: 0 completed, keep polling; MPI_UNDEFINED (no active
	 * request) ends as Waitsome's. */
	while ((r = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses)) ==
		       MPI_SUCCESS &&
	       *outcount == 0)
		pause_poll(&b);
	done(&b);
	return r;
}

int popmon_lewi_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	struct backoff b = begin();
	int r, flag = 0;
	while ((r = PMPI_Iprobe(source, tag, comm, &flag, status)) == MPI_SUCCESS && !flag)
		pause_poll(&b);
	done(&b);
	return r;
}

int popmon_lewi_MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
			     void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			     MPI_Comm comm, MPI_Status *status)
{
	MPI_Request q[2];
	MPI_Status st[2];
	int r = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &q[1]);
	if (r == MPI_SUCCESS) {
		r = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &q[0]);
		if (r != MPI_SUCCESS) {
			PMPI_Cancel(&q[1]);
			PMPI_Request_free(&q[1]);
		} else {
			struct backoff b = {0, 0, 0};
			popmon_lewi_blocking_call_begins();
			int flag = 0;
			while ((r = PMPI_Testall(2, q, &flag, st)) == MPI_SUCCESS && !flag)
				pause_poll(&b);
			done(&b);
			if (r == MPI_ERR_IN_STATUS)
				r = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
			if (status != MPI_STATUS_IGNORE)
				*status = st[1];
		}
	}
	return r;
}
