"""ctmpi: the few MPI calls the Python examples need, through ctypes.

For MPIs that have no mpi4py here: Debian's python3-mpi4py is built for
Open MPI only, and MPICH's has no package (docs/python.md, "Testing"). Works
with MPICH (and its ABI: handles are ints) and Open MPI (handles are the
addresses of its predefined objects). The calls go through the process's
global symbol scope, so that a preloaded measurement library (popmon's)
sees them as it sees a C program's, and mpi4py's.
"""
import atexit
import ctypes
import os

_lib = ctypes.CDLL(None)


def _load():
    """Loads the launcher's MPI library into the global scope (as mpi4py's
    extension does by linking it). The MPI_ names may be there already
    without an MPI behind them: a preloaded measurement library defines
    them, and popmon's built for MPICH does not itself load MPICH."""
    global _lib
    names = ["libmpi.so.40", "libmpich.so.12", "libmpi.so.12", "libmpi.so"]
    if os.getenv("PMI_RANK") is not None or os.getenv("HYDRA_CONTROL_FD") is not None:
        names = ["libmpich.so.12", "libmpi.so.12", "libmpi.so.40", "libmpi.so"]
    for n in names:
        try:
            ctypes.CDLL(n, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError:
            continue
    else:
        raise OSError("ctmpi: no MPI library found (tried %s)" % ", ".join(names))
    _lib = ctypes.CDLL(None)


_load()

if hasattr(_lib, "ompi_mpi_comm_world"):
    FAMILY = "openmpi"
    _handle = ctypes.c_void_p

    def _const(sym):
        return ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(_lib, sym)))

    COMM_WORLD = _const("ompi_mpi_comm_world")
    DOUBLE = _const("ompi_mpi_double")
    SUM = _const("ompi_mpi_op_sum")
    MAX = _const("ompi_mpi_op_max")
else:
    FAMILY = "mpich"  # the MPICH ABI (mpi.h): handles are ints
    _handle = ctypes.c_int
    COMM_WORLD = ctypes.c_int(0x44000000)
    DOUBLE = ctypes.c_int(0x4c00080b)
    SUM = ctypes.c_int(0x58000003)
    MAX = ctypes.c_int(0x58000001)

_lib.MPI_Init.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_lib.MPI_Comm_rank.argtypes = [_handle, ctypes.POINTER(ctypes.c_int)]
_lib.MPI_Comm_size.argtypes = [_handle, ctypes.POINTER(ctypes.c_int)]
_lib.MPI_Barrier.argtypes = [_handle]
_lib.MPI_Allreduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, _handle, _handle, _handle]
_lib.MPI_Initialized.argtypes = [ctypes.POINTER(ctypes.c_int)]
_lib.MPI_Finalized.argtypes = [ctypes.POINTER(ctypes.c_int)]


def _check(rc, what):
    if rc != 0:
        raise RuntimeError("ctmpi: %s returned %d" % (what, rc))


def init():
    """MPI_Init (once); MPI_Finalize runs at exit, as with mpi4py."""
    flag = ctypes.c_int(0)
    _lib.MPI_Initialized(ctypes.byref(flag))
    if not flag.value:
        _check(_lib.MPI_Init(None, None), "MPI_Init")
        atexit.register(finalize)


def finalize():
    flag = ctypes.c_int(0)
    _lib.MPI_Finalized(ctypes.byref(flag))
    if not flag.value:
        _check(_lib.MPI_Finalize(), "MPI_Finalize")


def rank():
    r = ctypes.c_int()
    _check(_lib.MPI_Comm_rank(COMM_WORLD, ctypes.byref(r)), "MPI_Comm_rank")
    return r.value


def size():
    s = ctypes.c_int()
    _check(_lib.MPI_Comm_size(COMM_WORLD, ctypes.byref(s)), "MPI_Comm_size")
    return s.value


def barrier():
    _check(_lib.MPI_Barrier(COMM_WORLD), "MPI_Barrier")


def allreduce(value, op=None):
    """MPI_Allreduce of one double (default MPI_SUM)."""
    i, o = ctypes.c_double(value), ctypes.c_double()
    _check(_lib.MPI_Allreduce(ctypes.byref(i), ctypes.byref(o), 1, DOUBLE, SUM if op is None else op,
                              COMM_WORLD), "MPI_Allreduce")
    return o.value
