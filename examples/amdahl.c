/* amdahl.c: strong scaling with a known serial fraction (Amdahl's law).
 *
 * Usage: amdahl [SERIAL_MS [PARALLEL_MS [ITERATIONS]]]
 *                                  defaults: S = 200 ms, W = 800 ms, N = 3
 *
 * Each iteration, rank 0 alone works S (the serial part: the other ranks
 * wait for it in MPI_Bcast), then the parallel part W is split evenly: every
 * rank works W/P, and an MPI_Allreduce closes the iteration. The work is
 * the same whatever P (strong scaling), so with P ranks
 *   T(P) = N·(S + W/P)           serial fraction s = S/(S + W) = 0.2
 *   T(1) = 3.0 s, T(2) = 1.8 s, T(4) = 1.2 s, T(8) = 0.9 s (defaults)
 * and `popmon model` fitting Amdahl's law T1·(s + (1−s)/P) to runs at 1, 2
 * and 4 ranks finds s = 0.2 and predicts T(8) = 0.9 s (MPI latency aside:
 * the few, long iterations keep its share of T small).
 * Sleeping needs no CPU, so 8 ranks on 2 cores keep the design.
 *
 * Prints "ok <checksum>" on rank 0, checksum = N·P.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[3] = { 200, 800, 3 }; /* S and W in ms, iterations */
	if (parse_args(argc, argv, rank, "[SERIAL_MS [PARALLEL_MS [ITERATIONS]]]", 3, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double serial = arg[0], parallel = arg[1];
	const int n = (int)arg[2];

	long checksum = 0;
	for (int it = 0; it < n; it++) {
		int token = 0;
		if (rank == 0) {
			work_ms(serial);
			token = 1;
		}
		MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
		work_ms(parallel / size);
		long mine = token, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		checksum += sum;
	}
	if (rank == 0)
		printf("ok %ld\n", checksum);

	MPI_Finalize();
	return checksum == (long)n * size ? 0 : 1;
}
