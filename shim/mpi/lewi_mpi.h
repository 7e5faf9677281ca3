/* lewi_mpi.h: LeWI's blocking MPI calls that wait without spinning
 * (lewi_mpi.c). While LeWI lends in a blocking call's kind
 * (--lewi-mpi-calls; lewi.h), the generated wrapper calls popmon_lewi_MPI_X
 * instead of PMPI_X: it starts the nonblocking form (or polls with the Test
 * form); a wait that does not end within its first polls lends the
 * process's CPUs and sleeps between polls, and reclaims them when it ends.
 * The results are the blocking call's. shim/gen writes the helpers of the
 * calls with a nonblocking form (the collectives, Recv, Send, Ssend, Rsend);
 * the ones here have none to start. */
#ifndef POPMON_LEWI_MPI_H
#define POPMON_LEWI_MPI_H

#include <mpi.h>

/* Completes request q (PMPI_Test in a loop): 16 polls at once; then it
 * lends the process's CPUs (popmon_lewi_into_blocking_call) and sleeps
 * after every 4 polls (popmon_lewi_lent_sleep: 10 µs doubling up to 200 µs,
 * or until a guest on its lent CPU gives it back, 1 ms at most), so the lent
 * CPU is free; reclaims them at the end. A wait that ends within the first
 * polls gives back the CPUs the process borrowed
 * (popmon_lewi_blocking_call_ended). Returns PMPI_Test's code. */
int popmon_lewi_mpi_wait(MPI_Request *q, MPI_Status *status);

int popmon_lewi_MPI_Wait(MPI_Request *request, MPI_Status *status);
int popmon_lewi_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int popmon_lewi_MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status);
int popmon_lewi_MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
			     MPI_Status array_of_statuses[]);
int popmon_lewi_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int popmon_lewi_MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
			     void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			     MPI_Comm comm, MPI_Status *status);

#endif /* POPMON_LEWI_MPI_H */
