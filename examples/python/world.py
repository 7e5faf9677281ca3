"""world: the MPI of an example, chosen on its command line.

    rank, size, allreduce, barrier = world.connect("mpi4py")

"none": one process, no MPI; "mpi4py": mpi4py (Debian's is built for Open
MPI); "ctypes": ctmpi.py, the MPI calls through ctypes (MPICH, or any).
allreduce(x) sums one number over the ranks.
"""
import sys


def connect(kind):
    if kind == "none":
        return 0, 1, (lambda x: x), (lambda: None)
    if kind == "mpi4py":
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        return comm.Get_rank(), comm.Get_size(), (lambda x: comm.allreduce(x)), comm.Barrier
    if kind == "ctypes":
        import ctmpi
        ctmpi.init()
        return ctmpi.rank(), ctmpi.size(), ctmpi.allreduce, ctmpi.barrier
    sys.exit("unknown MPI %r: want none, mpi4py or ctypes" % kind)


def args(argv, defaults):
    """argv[1] the MPI, then positive numbers replacing defaults in order."""
    if len(argv) < 2 or len(argv) - 2 > len(defaults):
        sys.exit("usage: %s none|mpi4py|ctypes %s" % (argv[0], " ".join("[%s]" % d for d in defaults)))
    vals = list(defaults.values())
    for i, a in enumerate(argv[2:]):
        vals[i] = float(a)
    return argv[1], vals
