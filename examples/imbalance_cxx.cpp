// imbalance_cxx.cpp: the demo's designed load imbalance (imbalance.c), as a
// C++ program built with the MPI C++ wrapper (mpicxx).
//
// Usage: imbalance_cxx [K_MS [ITERATIONS]]    defaults: K = 50 ms, N = 5
//
// mpicxx links the MPI C++ bindings library even when the program never uses
// them (Open MPI 4: -lmpi_cxx; MPICH: -lmpichcxx). Open MPI's calls
// MPI_Initialized from a static constructor, before libpopmon's constructor
// has run; the program below also calls MPI from a static constructor of its
// own, which any library it links may do. Neither may change the accounts:
// rank r works (r+1)*K per iteration before an MPI_Allreduce, so with P ranks
// of one CPU each, load balance = parallel efficiency = (P+1)/(2P) (0.625 at
// P = 4) and the job has P CPUs.
//
// Prints "ok <checksum>" on rank 0, checksum = P(P+1)/2 * N(N+1)/2.
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <cstdio>

#include "work.h"

namespace {

// A static object whose constructor asks MPI whether it is initialised, as
// libraries do to decide whether to initialise MPI themselves.
struct early_probe {
	int initialized = -1;
	early_probe() { MPI_Initialized(&initialized); }
};
early_probe probe;

} // namespace

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	double arg[2] = {50, 5};
	if (parse_args(argc, argv, rank, "[K_MS [ITERATIONS]]", 2, arg) != 0) {
		MPI_Finalize();
		return 2;
	}
	const double k = arg[0];
	const int n = static_cast<int>(arg[1]);

	long checksum = 0;
	for (int it = 1; it <= n; it++) {
		work_ms((rank + 1) * k);
		long mine = static_cast<long>(rank + 1) * it, sum = 0;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		checksum += sum;
	}
	if (rank == 0)
		std::printf("ok %ld (early MPI_Initialized: %d)\n", checksum, probe.initialized);
	MPI_Finalize();
	return 0;
}
