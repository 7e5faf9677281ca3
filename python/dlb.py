"""dlb: popmon's answer to DLB's Python module (docs/python.md).

A script written for DLB 3.6/3.7's Python bindings (`import dlb`, the
`DLB_MonitoringRegion*` and `DLB_TALP_*` calls, the LeWI calls (`DLB_Lend`,
`DLB_Reclaim`, `DLB_Borrow`, ...), the DROM calls (`DLB_DROM_*`,
`DLB_PollDROM`), `DLB_ParseMask`, the `dlb_monitor_t` / `dlb_pop_metrics_t`
structures, `DLBError`, `DLBWarning`) runs unchanged under `popmon run` /
`popmon exec`, which put this module on the job's PYTHONPATH: its calls
reach the DLB entry points of popmon's preloaded library through ctypes,
with DLB's names, argument conventions (mask strings, or lists of CPU ids),
return values (lists of pids, mask strings), structure fields and errors
(negative codes raise DLBError, positive ones warn with DLBWarning).

DLB_Init and DLB_Finalize are the library's (DROM's and LeWI's
registration, when `popmon run --drom` / `--lewi` or $DLB_ARGS turn them
on; popmon measures the whole run anyway). LeWI's calls answer
DLB_ERR_NOLEWI without LeWI, DLB_PollDROM DLB_ERR_NOCOMP without DROM, as
the C calls do. DLB_PreInit, DLB_Enable, DLB_Disable and
DLB_SetObserverRole succeed and do nothing; the barriers are the library's
node barrier; variables and DLB_PrintShmem raise DLBError (DLB_ERR_NOCOMP):
popmon has none.

Without popmon's library measuring this process, the module still imports
(DLB's own fails without libdlb): region calls do nothing and hand back
handles whose fields stay 0, the metrics queries raise DLBError
(DLB_ERR_NOTALP, as DLB does when TALP is not enabled), and when the program
asked for TALP (`--talp` in DLB_Init's arguments or in $DLB_ARGS) one line
on stderr says that nothing measures it. Without the library at all,
DLB_Init and DLB_Finalize do nothing and the LeWI and DROM calls raise
DLBError with the code the library gives when the module is off and the
reason (the library is not loaded); DLB_ParseMask and DLB_ParseMaskToStr
work anyway.
"""

import os
import sys
import warnings
from ctypes import (CDLL, POINTER, Structure, byref, c_char, c_char_p, c_double,
                    c_float, c_int, c_int64, c_void_p, cast, create_string_buffer,
                    addressof)

DLB_MPI = os.getenv("DLB_MPI", "0") == "1"
DLB_DEBUG = os.getenv("DLB_DEBUG", "0") == "1"

#################################################################################
### Types and constants (DLB 3.6/3.7 <dlb_talp.h>, <dlb_types.h>)             ###
#################################################################################

# Opaque types
dlb_barrier_t = c_void_p
dlb_handler_t = c_void_p
dlb_cpu_set_t = c_void_p
const_dlb_cpu_set_t = c_void_p

SIZEOF_CPU_SET_T = 128

# LeWI enums
DLB_DELETE_REQUESTS = 0
DLB_MAX_CPUS = 0x7fff

# DROM flags
dlb_drom_flags_t = c_int
DLB_DROM_FLAGS_NONE = 0
DLB_STEAL_CPUS = 1 << 0
DLB_RETURN_STOLEN = 1 << 1
DLB_SYNC_QUERY = 1 << 2
DLB_SYNC_NOW = 1 << 3
DLB_NO_SYNC = 1 << 4
DLB_FREE_CPUS_SLURM = 1 << 5

# PrintShmem flags
dlb_printshmem_flags_t = c_int
DLB_COLOR_AUTO = 1
DLB_COLOR_ALWAYS = 2

# Barrier flags
dlb_barrier_flags_t = c_int
DLB_BARRIER_LEWI_OFF = 0
DLB_BARRIER_LEWI_ON = 1 << 0
DLB_BARRIER_LEWI_RUNTIME = 1 << 1

# Return codes (dlb_errors.h)
DLB_NOUPDT = 2
DLB_NOTED = 1
DLB_SUCCESS = 0
DLB_ERR_UNKNOWN = -1
DLB_ERR_NOINIT = -2
DLB_ERR_INIT = -3
DLB_ERR_DISBLD = -4
DLB_ERR_NOSHMEM = -5
DLB_ERR_NOPROC = -6
DLB_ERR_PDIRTY = -7
DLB_ERR_PERM = -8
DLB_ERR_TIMEOUT = -9
DLB_ERR_NOCBK = -10
DLB_ERR_NOENT = -11
DLB_ERR_NOCOMP = -12
DLB_ERR_REQST = -13
DLB_ERR_NOMEM = -14
DLB_ERR_NOPOL = -15
DLB_ERR_NOTALP = -16
DLB_ERR_NOLEWI = -17

# TALP
DLB_GLOBAL_REGION_NAME = "Global"
DLB_GLOBAL_REGION = c_void_p(0)
DLB_LAST_OPEN_REGION = c_void_p(1)
DLB_MPI_REGION = None
DLB_MONITOR_NAME_MAX = 128


class dlb_monitor_t(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("num_cpus", c_int),
        ("avg_cpus", c_float),
        ("cycles", c_int64),
        ("instructions", c_int64),
        ("num_measurements", c_int),
        ("num_resets", c_int),
        ("num_mpi_calls", c_int64),
        ("num_omp_parallels", c_int64),
        ("num_omp_tasks", c_int64),
        ("num_gpu_runtime_calls", c_int64),
        ("start_time", c_int64),
        ("stop_time", c_int64),
        ("elapsed_time", c_int64),
        ("useful_time", c_int64),
        ("mpi_time", c_int64),
        ("omp_load_imbalance_time", c_int64),
        ("omp_scheduling_time", c_int64),
        ("omp_serialization_time", c_int64),
        ("gpu_runtime_time", c_int64),
        ("gpu_useful_time", c_int64),
        ("gpu_communication_time", c_int64),
        ("gpu_inactive_time", c_int64),
        ("_data", c_void_p),
    ]


class dlb_pop_metrics_t(Structure):
    _fields_ = [
        ("name", c_char * DLB_MONITOR_NAME_MAX),
        ("num_cpus", c_int),
        ("num_mpi_ranks", c_int),
        ("num_nodes", c_int),
        ("avg_cpus", c_float),
        ("num_gpus", c_int),
        ("cycles", c_double),
        ("instructions", c_double),
        ("num_measurements", c_int64),
        ("num_mpi_calls", c_int64),
        ("num_omp_parallels", c_int64),
        ("num_omp_tasks", c_int64),
        ("num_gpu_runtime_calls", c_int64),
        ("elapsed_time", c_int64),
        ("useful_time", c_int64),
        ("mpi_time", c_int64),
        ("omp_load_imbalance_time", c_int64),
        ("omp_scheduling_time", c_int64),
        ("omp_serialization_time", c_int64),
        ("gpu_runtime_time", c_int64),
        ("min_mpi_normd_proc", c_double),
        ("min_mpi_normd_node", c_double),
        ("gpu_useful_time", c_int64),
        ("gpu_communication_time", c_int64),
        ("gpu_inactive_time", c_int64),
        ("max_gpu_useful_time", c_int64),
        ("max_gpu_active_time", c_int64),
        ("parallel_efficiency", c_float),
        ("mpi_parallel_efficiency", c_float),
        ("mpi_communication_efficiency", c_float),
        ("mpi_load_balance", c_float),
        ("mpi_load_balance_in", c_float),
        ("mpi_load_balance_out", c_float),
        ("omp_parallel_efficiency", c_float),
        ("omp_load_balance", c_float),
        ("omp_scheduling_efficiency", c_float),
        ("omp_serialization_efficiency", c_float),
        ("device_offload_efficiency", c_float),
        ("gpu_parallel_efficiency", c_float),
        ("gpu_load_balance", c_float),
        ("gpu_communication_efficiency", c_float),
        ("gpu_orchestration_efficiency", c_float),
    ]


class dlb_node_metrics_t(Structure):
    _fields_ = [
        ("name", c_char * DLB_MONITOR_NAME_MAX),
        ("node_id", c_int),
        ("processes_per_node", c_int),
        ("total_useful_time", c_int64),
        ("total_mpi_time", c_int64),
        ("max_useful_time", c_int64),
        ("max_mpi_time", c_int64),
        ("parallel_efficiency", c_float),
        ("communication_efficiency", c_float),
        ("load_balance", c_float),
    ]


class dlb_node_times_t(Structure):
    _fields_ = [
        ("pid", c_int),
        ("mpi_time", c_int64),
        ("useful_time", c_int64),
    ]


#################################################################################
### Errors                                                                    ###
#################################################################################

class DLBError(Exception):
    pass


class DLBWarning(Warning):
    pass


_messages = {
    DLB_NOUPDT: "the operation needs no action",
    DLB_NOTED: "the operation cannot be done now but has been noted",
    DLB_SUCCESS: "success",
    DLB_ERR_UNKNOWN: "unknown error",
    DLB_ERR_NOINIT: "not initialized (MPI is not initialized, or is finalized)",
    DLB_ERR_INIT: "already initialized",
    DLB_ERR_DISBLD: "disabled",
    DLB_ERR_NOSHMEM: "no shared memory",
    DLB_ERR_NOPROC: "no such process",
    DLB_ERR_PDIRTY: "the target process has another operation pending",
    DLB_ERR_PERM: "the resource cannot be acquired",
    DLB_ERR_TIMEOUT: "timed out",
    DLB_ERR_NOCBK: "no callback defined",
    DLB_ERR_NOENT: "no such entry",
    DLB_ERR_NOCOMP: "not compatible with the current options",
    DLB_ERR_REQST: "no more requests can be taken for this resource",
    DLB_ERR_NOMEM: "out of memory",
    DLB_ERR_NOPOL: "not defined in the current policy",
    DLB_ERR_NOTALP: "TALP is not initialized",
    DLB_ERR_NOLEWI: "LeWI is not initialized",
}
_code_names = {
    DLB_NOUPDT: "DLB_NOUPDT", DLB_NOTED: "DLB_NOTED", DLB_SUCCESS: "DLB_SUCCESS",
    DLB_ERR_UNKNOWN: "DLB_ERR_UNKNOWN", DLB_ERR_NOINIT: "DLB_ERR_NOINIT", DLB_ERR_INIT: "DLB_ERR_INIT",
    DLB_ERR_DISBLD: "DLB_ERR_DISBLD", DLB_ERR_NOSHMEM: "DLB_ERR_NOSHMEM", DLB_ERR_NOPROC: "DLB_ERR_NOPROC",
    DLB_ERR_PDIRTY: "DLB_ERR_PDIRTY", DLB_ERR_PERM: "DLB_ERR_PERM", DLB_ERR_TIMEOUT: "DLB_ERR_TIMEOUT",
    DLB_ERR_NOCBK: "DLB_ERR_NOCBK", DLB_ERR_NOENT: "DLB_ERR_NOENT", DLB_ERR_NOCOMP: "DLB_ERR_NOCOMP",
    DLB_ERR_REQST: "DLB_ERR_REQST", DLB_ERR_NOMEM: "DLB_ERR_NOMEM", DLB_ERR_NOPOL: "DLB_ERR_NOPOL",
    DLB_ERR_NOTALP: "DLB_ERR_NOTALP", DLB_ERR_NOLEWI: "DLB_ERR_NOLEWI",
}


def DLB_Strerror(errnum):
    """The message of a DLB return code, as bytes (like DLB's)."""
    name = _code_names.get(errnum)
    if name is None:
        return b"unknown errnum"
    return ("%s (%d): %s" % (name, errnum, _messages[errnum])).encode()


def check_dlb_error(ret_code, allow_positive=False, _stacklevel=3):
    """DLB's convention: 0 is success, a positive code (and DLB_ERR_INIT)
    warns with DLBWarning, a negative one raises DLBError."""
    if ret_code == 0:
        return
    elif ret_code > 0:
        if not allow_positive:
            warnings.warn(DLB_Strerror(ret_code).decode(), DLBWarning, stacklevel=_stacklevel)
    elif ret_code == DLB_ERR_INIT:
        warnings.warn(DLB_Strerror(ret_code).decode(), DLBWarning, stacklevel=_stacklevel)
    else:
        raise DLBError(DLB_Strerror(ret_code).decode())


#################################################################################
### The library                                                               ###
#################################################################################

def _load_library():
    """popmon's preloaded library (its DLB entry points), or None.

    Only what is already in the process is used (CDLL(None)): a library
    that was not preloaded measures nothing, so none is loaded from here."""
    try:
        lib = CDLL(None)
        lib.popmon_api_measured  # popmon's, not another library's DLB_* names
        lib.DLB_MonitoringRegionRegister
    except (OSError, AttributeError):
        return None
    for name, res, args in (
            ("popmon_api_measured", c_int, []),
            ("DLB_MonitoringRegionGetGlobal", c_void_p, []),
            ("DLB_MonitoringRegionGetImplicit", c_void_p, []),
            ("DLB_MonitoringRegionGetMPIRegion", c_void_p, []),
            ("DLB_MonitoringRegionRegister", c_void_p, [c_char_p]),
            ("DLB_MonitoringRegionReset", c_int, [c_void_p]),
            ("DLB_MonitoringRegionStart", c_int, [c_void_p]),
            ("DLB_MonitoringRegionStop", c_int, [c_void_p]),
            ("DLB_MonitoringRegionReport", c_int, [c_void_p]),
            ("DLB_MonitoringRegionsUpdate", c_int, []),
            ("DLB_TALP_CollectPOPMetrics", c_int, [c_void_p, POINTER(dlb_pop_metrics_t)]),
            ("DLB_TALP_CollectPOPNodeMetrics", c_int, [c_void_p, POINTER(dlb_node_metrics_t)]),
            ("DLB_TALP_Attach", c_int, []),
            ("DLB_TALP_Detach", c_int, []),
            ("DLB_TALP_GetNumCPUs", c_int, [POINTER(c_int)]),
            ("DLB_TALP_GetPidList", c_int, [POINTER(c_int), POINTER(c_int), c_int]),
            ("DLB_TALP_GetTimes", c_int, [c_int, POINTER(c_double), POINTER(c_double)]),
            ("DLB_TALP_GetNodeTimes", c_int,
             [c_char_p, POINTER(dlb_node_times_t), POINTER(c_int), c_int]),
            ("DLB_TALP_QueryPOPNodeMetrics", c_int, [c_char_p, POINTER(dlb_node_metrics_t)]),
            ("DLB_Init", c_int, [c_int, c_void_p, c_char_p]),
            ("DLB_Finalize", c_int, []),
            ("DLB_PrintVariables", c_int, [c_int]),
            ("DLB_SetMaxParallelism", c_int, [c_int]),
            ("DLB_UnsetMaxParallelism", c_int, []),
            ("DLB_Lend", c_int, []), ("DLB_LendCpu", c_int, [c_int]), ("DLB_LendCpus", c_int, [c_int]),
            ("DLB_LendCpuMask", c_int, [c_void_p]),
            ("DLB_Reclaim", c_int, []), ("DLB_ReclaimCpu", c_int, [c_int]), ("DLB_ReclaimCpus", c_int, [c_int]),
            ("DLB_ReclaimCpuMask", c_int, [c_void_p]),
            ("DLB_AcquireCpu", c_int, [c_int]), ("DLB_AcquireCpus", c_int, [c_int]),
            ("DLB_AcquireCpuMask", c_int, [c_void_p]), ("DLB_AcquireCpusInMask", c_int, [c_int, c_void_p]),
            ("DLB_Borrow", c_int, []), ("DLB_BorrowCpu", c_int, [c_int]), ("DLB_BorrowCpus", c_int, [c_int]),
            ("DLB_BorrowCpuMask", c_int, [c_void_p]), ("DLB_BorrowCpusInMask", c_int, [c_int, c_void_p]),
            ("DLB_Return", c_int, []), ("DLB_ReturnCpu", c_int, [c_int]), ("DLB_ReturnCpuMask", c_int, [c_void_p]),
            ("DLB_CheckCpuAvailability", c_int, [c_int]),
            ("DLB_PollDROM", c_int, [POINTER(c_int), c_void_p]),
            ("DLB_PollDROM_Update", c_int, []),
            ("DLB_DROM_Attach", c_int, []),
            ("DLB_DROM_Detach", c_int, []),
            ("DLB_DROM_GetNumCpus", c_int, [POINTER(c_int)]),
            ("DLB_DROM_GetPidList", c_int, [POINTER(c_int), POINTER(c_int), c_int]),
            ("DLB_DROM_GetProcessMask", c_int, [c_int, c_void_p, c_int]),
            ("DLB_DROM_SetProcessMask", c_int, [c_int, c_void_p, c_int]),
            ("DLB_DROM_SetProcessMaskStr", c_int, [c_int, c_char_p, c_int]),
            ("DLB_DROM_PreInit", c_int, [c_int, c_void_p, c_int, POINTER(POINTER(c_char_p))]),
            ("DLB_DROM_PostFinalize", c_int, [c_int, c_int]),
            ("DLB_DROM_RecoverStolenCpus", c_int, [c_int])):
        f = getattr(lib, name, None)
        if f is not None:
            f.restype, f.argtypes = res, args
    return lib


dlb = _load_library()

# Handles handed out while nothing measures: monitors of this module's own,
# whose fields stay 0 (kept alive here; the handle points into them).
_idle_monitors = {}
_idle_names = {}
_said = []


def _measuring():
    return dlb is not None and dlb.popmon_api_measured() == 1


def _talp_requested(args=None):
    """Whether DLB_Init's arguments or $DLB_ARGS ask for TALP."""
    for a in (args, os.getenv("DLB_ARGS")):
        for w in (a or "").split():
            if w == "--talp" or (w.startswith("--talp=") and w[7:].lower() in ("1", "yes", "true")):
                return True
    return False


def _say_not_measured(args=None):
    """One line on stderr, once, when TALP was asked for and nothing
    measures this process."""
    if _said or _measuring() or not _talp_requested(args):
        return
    _said.append(True)
    if dlb is None:
        why = "popmon's measurement library is not loaded (run the program under `popmon run` or `popmon exec`)"
    else:
        why = "popmon's measurement library is loaded but does not measure this process (POPMON_DISABLE, or a launcher or utility process)"
    sys.stderr.write("popmon: dlb: TALP was asked for (--talp) but nothing measures this program: %s; "
                     "this dlb module is popmon's stand-in for DLB's, and its regions do nothing\n" % why)
    sys.stderr.flush()


def _address(handle):
    """The address a handle stands for (0 for DLB_GLOBAL_REGION / None)."""
    if handle is None:
        return 0
    if isinstance(handle, int):
        return handle
    if isinstance(handle, c_void_p):
        return handle.value or 0
    return cast(handle, c_void_p).value or 0


def _monitor(address):
    return cast(c_void_p(address), POINTER(dlb_monitor_t))


def _idle_monitor(name):
    """A handle of this module's own, for when nothing measures."""
    key = None if name is None else name
    if key is not None and key in _idle_names:
        return _monitor(_idle_names[key])
    m = dlb_monitor_t()
    label = create_string_buffer(("Anonymous Region" if name is None else name).encode("utf-8", "replace"))
    m.name = cast(label, c_char_p)
    a = addressof(m)
    _idle_monitors[a] = (m, label)
    if key is not None:
        _idle_names[key] = a
    return _monitor(a)


def _region_call(fname, handle):
    """A region call: to the library when it measures, nothing otherwise."""
    a = _address(handle)
    if a in _idle_monitors:
        return
    if not _measuring():
        _say_not_measured()
        return
    err = getattr(dlb, fname)(c_void_p(a) if a else None)
    if err == DLB_ERR_NOTALP:
        return  # the library stopped measuring (after MPI_Finalize, in a fork)
    check_dlb_error(err, _stacklevel=4)  # the warning names the caller's line


def _query_ok():
    if dlb is None:
        _say_not_measured()
        raise DLBError(DLB_Strerror(DLB_ERR_NOTALP).decode() +
                       " (popmon's measurement library is not loaded in this process)")


#################################################################################
### CPU masks (DLB's mask strings; a cpu_set_t of SIZEOF_CPU_SET_T bytes)     ###
#################################################################################

_MAX_CPU = SIZEOF_CPU_SET_T * 8


def _cpus_of(mask_str):
    """The CPUs of a mask string in DLB's forms ("0,5-7", "0xE1",
    "0b11100001", the old "11100001b" with CPU 0 first), as a set; None
    when the string is none of them (or names a CPU beyond the set)."""
    s = mask_str.strip()
    cpus = set()
    if s == "":
        return cpus
    low = s.lower()
    if low.startswith("0x") or low.startswith("0b"):
        digits = s[2:]
        try:
            value = int(digits, 16 if low[1] == "x" else 2)
        except ValueError:
            return None
        if not digits.isalnum() or value.bit_length() > _MAX_CPU:
            return None
        cpu = 0
        while value:
            if value & 1:
                cpus.add(cpu)
            value >>= 1
            cpu += 1
    elif len(s) > 2 and low.endswith("b") and set(s[:-1]) <= set("01"):
        cpus = set(i for i, c in enumerate(s[:-1]) if c == "1")
    else:
        for part in s.split(","):
            if part == "":
                continue
            lo, sep, hi = part.partition("-")
            if not lo.isdigit() or (sep and not hi.isdigit()):
                return None
            a, b = int(lo), int(hi) if sep else int(lo)
            if b < a or b >= _MAX_CPU:
                return None
            cpus.update(range(a, b + 1))
    if any(c >= _MAX_CPU for c in cpus):
        return None
    return cpus


def _mask_buffer(cpus):
    """A cpu_set_t (a ctypes buffer) with the CPUs of the iterable set."""
    buf = create_string_buffer(SIZEOF_CPU_SET_T)
    for c in cpus:
        buf[c // 8] = bytes([buf.raw[c // 8] | (1 << (c % 8))])
    return buf


def _buffer_cpus(buf):
    """The CPUs of a cpu_set_t held in a ctypes buffer."""
    raw = bytes(buf)[:SIZEOF_CPU_SET_T]
    return [i * 8 + b for i, byte in enumerate(bytearray(raw)) for b in range(8) if byte >> b & 1]


def _mask_str(cpus):
    """DLB's form of a CPU list: "[0-3,5,7,8]" (runs of three or more as a
    range, of two as a pair)."""
    out = []
    cpus = sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        if j == i:
            out.append("%d" % cpus[i])
        elif j == i + 1:
            out.append("%d,%d" % (cpus[i], cpus[j]))
        else:
            out.append("%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return "[" + ",".join(out) + "]"


def DLB_ParseMask(mask_str):
    """A cpu_set_t for a mask string in DLB's forms, as DLB's (a reference
    to a ctypes buffer: the mask argument of the calls that take one). A
    string in none of DLB's forms gives the empty mask, as DLB's."""
    if isinstance(mask_str, bytes):
        mask_str = mask_str.decode("ascii", "replace")
    cpus = _cpus_of(mask_str)
    return byref(_mask_buffer(cpus or ()))


def DLB_ParseMaskToStr(mask):
    """DLB's string of a cpu_set_t ("[2,4]", "[1-4]"): mask is the buffer
    DLB_PollDROM returns, or what DLB_ParseMask returns."""
    return _mask_str(_buffer_cpus(_mask_object(mask)))


def _mask_object(mask):
    """The ctypes buffer behind a mask DLB's calls hand out."""
    obj = getattr(mask, "_obj", None)  # byref(buffer)
    return obj if obj is not None else mask


def _mask_arg(fname, mask, empty_is_null=False):
    """The mask argument of a C call: a mask string, a list (tuple, set,
    range) of CPU ids, DLB_ParseMask's reference or a buffer; None is
    NULL. A string or list that is not a CPU list raises DLBError."""
    if mask is None:
        return None
    if isinstance(mask, bytes):
        mask = mask.decode("ascii", "replace")
    if isinstance(mask, str):
        cpus = _cpus_of(mask)
        if cpus is None:
            raise DLBError("%s: %r is not a CPU list (\"0,5-7\", \"0xE1\", \"0b11100001\") (%s)" % (
                fname, mask, DLB_Strerror(DLB_ERR_UNKNOWN).decode()))
    elif isinstance(mask, (list, tuple, set, frozenset, range)):
        cpus = set(mask)
        if not all(isinstance(c, int) and 0 <= c < _MAX_CPU for c in cpus):
            raise DLBError("%s: %r is not a list of CPU ids below %d (%s)" % (
                fname, mask, _MAX_CPU, DLB_Strerror(DLB_ERR_UNKNOWN).decode()))
    else:
        return mask
    if empty_is_null and not cpus:
        return None
    return byref(_mask_buffer(cpus))


#################################################################################
### DLB core API, LeWI and DROM: popmon's library's DLB entry points          ###
#################################################################################

# What a call raises when popmon's library is not in the process: the code
# the library gives when the module is off, and why.
_NOT_LOADED = ("popmon's library is not loaded in this process; run the program under "
               "`popmon run` or `popmon exec`, or with LD_PRELOAD=$(popmon build)")


def _call(fname, absent_code, *args):
    """The library's fname(*args), its code checked as DLB's bindings do
    (negative: DLBError; positive: DLBWarning); without the library,
    DLBError with absent_code and the reason."""
    f = getattr(dlb, fname, None) if dlb is not None else None
    if f is None:
        why = _NOT_LOADED if dlb is None else "this popmon library has no %s" % fname
        raise DLBError("%s: %s (%s)" % (fname, DLB_Strerror(absent_code).decode(), why))
    err = f(*args)
    check_dlb_error(err, _stacklevel=4)
    return err


def DLB_Init(ncpus, mask, dlb_args):
    """DLB_Init of popmon's library: DROM's registration and LeWI's (with
    the mask, or the process's affinity when it is empty) when they are on
    (popmon run --drom/--lewi, $DLB_ARGS); popmon measures the whole run
    anyway, '--talp' says that measurement is wanted. Without the library,
    nothing to start."""
    _say_not_measured(dlb_args)
    if dlb is None or getattr(dlb, "DLB_Init", None) is None:
        return
    m = _mask_arg("DLB_Init", mask, empty_is_null=True)
    err = dlb.DLB_Init(ncpus, m, dlb_args.encode() if dlb_args else None)
    check_dlb_error(err)


def DLB_Finalize():
    """DLB_Finalize of popmon's library (gives LeWI's CPUs up); popmon
    writes its measurement when the job ends. Without DLB_Init before,
    DLBWarning (DLB_NOUPDT), as DLB."""
    if dlb is None or getattr(dlb, "DLB_Finalize", None) is None:
        return
    err = dlb.DLB_Finalize()
    if err == DLB_ERR_NOINIT:
        err = DLB_NOUPDT  # DLB's answer to a DLB_Finalize without DLB_Init
    check_dlb_error(err)


def DLB_PreInit(mask, next_environ):
    return next_environ[0] if next_environ else None


def DLB_Enable():
    pass


def DLB_Disable():
    pass


def DLB_SetObserverRole(thread_is_observer):
    pass


def DLB_GetVersion():
    """The DLB release whose interface popmon answers (the C library's
    DLB_GetVersion: 3.7.0)."""
    return 3, 7, 0


def _lewi(fname, arity, mask_at=None):
    """DLB's LeWI call fname: forwarded to the library (DLB_ERR_NOLEWI
    when LeWI is off or the library is absent)."""
    def call(*args):
        if len(args) != arity:
            raise TypeError("%s() takes %d positional argument%s but %d were given" % (
                fname, arity, "" if arity == 1 else "s", len(args)))
        args = list(args)
        if mask_at is not None:
            args[mask_at] = _mask_arg(fname, args[mask_at])
        _call(fname, DLB_ERR_NOLEWI, *args)
    call.__name__ = fname
    call.__doc__ = ("DLB's %s, through popmon's library (docs/lewi.md): negative codes raise DLBError "
                    "(DLB_ERR_NOLEWI without LeWI), positive ones warn (DLBWarning)." % fname)
    return call


for _f, _n, _m in (
        ("DLB_SetMaxParallelism", 1, None), ("DLB_UnsetMaxParallelism", 0, None),
        ("DLB_Lend", 0, None), ("DLB_LendCpu", 1, None), ("DLB_LendCpus", 1, None), ("DLB_LendCpuMask", 1, 0),
        ("DLB_Reclaim", 0, None), ("DLB_ReclaimCpu", 1, None), ("DLB_ReclaimCpus", 1, None),
        ("DLB_ReclaimCpuMask", 1, 0),
        ("DLB_AcquireCpu", 1, None), ("DLB_AcquireCpus", 1, None), ("DLB_AcquireCpuMask", 1, 0),
        ("DLB_AcquireCpusInMask", 2, 1),
        ("DLB_Borrow", 0, None), ("DLB_BorrowCpu", 1, None), ("DLB_BorrowCpus", 1, None),
        ("DLB_BorrowCpuMask", 1, 0), ("DLB_BorrowCpusInMask", 2, 1),
        ("DLB_Return", 0, None), ("DLB_ReturnCpu", 1, None), ("DLB_ReturnCpuMask", 1, 0),
        ("DLB_CheckCpuAvailability", 1, None)):
    globals()[_f] = _lewi(_f, _n, _m)
del _f, _n, _m


# DROM, the process side (docs/drom.md).

def DLB_PollDROM():
    """(ncpus, mask): the new CPUs a tool gave this process, as DLB's (mask
    a cpu_set_t buffer: DLB_ParseMaskToStr(mask) reads it). Nothing new:
    (0, empty mask) with DLBWarning (DLB_NOUPDT). DROM off (no popmon run
    --drom, no DLB_ARGS=--drom): DLBError DLB_ERR_NOCOMP."""
    ncpus = c_int()
    mask = create_string_buffer(SIZEOF_CPU_SET_T)
    _call("DLB_PollDROM", DLB_ERR_NOCOMP, byref(ncpus), byref(mask))
    return ncpus.value, mask


def DLB_PollDROM_Update():
    """Adopts the new CPUs a tool gave this process (affinity, OpenMP
    threads), as DLB's."""
    _call("DLB_PollDROM_Update", DLB_ERR_NOCOMP)


# DROM, the administrator side.

def DLB_DROM_Attach():
    _call("DLB_DROM_Attach", DLB_ERR_NOSHMEM)


def DLB_DROM_Detach():
    _call("DLB_DROM_Detach", DLB_ERR_NOSHMEM)


def DLB_DROM_GetNumCpus():
    ncpus = c_int()
    _call("DLB_DROM_GetNumCpus", DLB_ERR_NOSHMEM, byref(ncpus))
    return ncpus.value


def DLB_DROM_GetPidList(max_len):
    """The pids of the processes in the node's DROM registry (at most
    max_len), as a list."""
    max_len = max(0, min(int(max_len), 4096))  # the registry holds fewer
    pidlist = (c_int * max(max_len, 1))()
    nelems = c_int()
    _call("DLB_DROM_GetPidList", DLB_ERR_NOSHMEM, pidlist, byref(nelems), max_len)
    return [pidlist[i] for i in range(min(nelems.value, max_len))]


def DLB_DROM_GetProcessMask(pid, flags):
    """The CPUs of process pid as DLB's string without brackets ("2,4",
    "1-4")."""
    mask = create_string_buffer(SIZEOF_CPU_SET_T)
    _call("DLB_DROM_GetProcessMask", DLB_ERR_NOSHMEM, pid, byref(mask), flags)
    return DLB_ParseMaskToStr(mask).strip("[]")


def DLB_DROM_SetProcessMask(pid, mask, flags):
    """Gives process pid the CPUs of mask (a mask string, a list of CPU
    ids, or DLB_ParseMask's)."""
    if mask is None:
        raise DLBError("DLB_DROM_SetProcessMask: no mask (%s)" % DLB_Strerror(DLB_ERR_UNKNOWN).decode())
    _call("DLB_DROM_SetProcessMask", DLB_ERR_NOSHMEM, pid, _mask_arg("DLB_DROM_SetProcessMask", mask), flags)


def DLB_DROM_SetProcessMaskStr(pid, mask_str, flags):
    if isinstance(mask_str, str):
        mask_str = mask_str.encode()
    _call("DLB_DROM_SetProcessMaskStr", DLB_ERR_NOSHMEM, pid, mask_str, flags)


def DLB_DROM_PreInit(pid, mask, flags, next_environ):
    """A registry slot for process pid to come, as DLB's; next_environ is
    DLB's POINTER(POINTER(c_char_p)) (None: this process's environment).
    Returns next_environ[0] (None without one)."""
    _call("DLB_DROM_PreInit", DLB_ERR_NOSHMEM, pid, _mask_arg("DLB_DROM_PreInit", mask), flags, next_environ)
    return next_environ[0] if next_environ else None


def DLB_DROM_PostFinalize(pid, flags):
    _call("DLB_DROM_PostFinalize", DLB_ERR_NOSHMEM, pid, flags)


def DLB_DROM_RecoverStolenCpus(pid):
    _call("DLB_DROM_RecoverStolenCpus", DLB_ERR_NOSHMEM, pid)


def DLB_PrintVariables(print_extended):
    """The DLB_ARGS options popmon reads and their values, on stderr."""
    _call("DLB_PrintVariables", DLB_ERR_NOCOMP, int(print_extended))


# The node barrier (docs/coming-from-dlb.md): DLB_Init (or MPI_Init where
# DLB's interface is in use) joins it, --barrier being DLB's default.

def _barrier_fn(fname):
    f = getattr(dlb, fname, None) if dlb is not None else None
    if f is None:
        why = _NOT_LOADED if dlb is None else "this popmon library has no %s" % fname
        raise DLBError("%s: %s (%s)" % (fname, DLB_Strerror(DLB_ERR_NOCOMP).decode(), why))
    return f


def _handle(barrier):
    return c_void_p(barrier.value if isinstance(barrier, c_void_p) else barrier)


def DLB_Barrier():
    """Waits until every process of the node in the barrier reached it."""
    check_dlb_error(_barrier_fn("DLB_Barrier")(), _stacklevel=3)


def DLB_BarrierAttach():
    """Joins the barrier again: the number of its members."""
    ret = _barrier_fn("DLB_BarrierAttach")()
    check_dlb_error(ret, allow_positive=True)
    return ret


def DLB_BarrierDetach():
    """Leaves the barrier: the number of members left."""
    ret = _barrier_fn("DLB_BarrierDetach")()
    check_dlb_error(ret, allow_positive=True)
    return ret


def DLB_BarrierNamedRegister(barrier_name, flags):
    """The handle of the named barrier (this process a member), or None."""
    f = _barrier_fn("DLB_BarrierNamedRegister")
    f.restype = c_void_p
    f.argtypes = [c_char_p, c_int]
    return f(barrier_name.encode(), int(flags))


def DLB_BarrierNamedGet(barrier_name, flags):
    return DLB_BarrierNamedRegister(barrier_name, flags)


def DLB_BarrierNamed(barrier):
    check_dlb_error(_barrier_fn("DLB_BarrierNamed")(_handle(barrier)), _stacklevel=3)


def DLB_BarrierNamedAttach(barrier):
    ret = _barrier_fn("DLB_BarrierNamedAttach")(_handle(barrier))
    check_dlb_error(ret, allow_positive=True)
    return ret


def DLB_BarrierNamedDetach(barrier):
    ret = _barrier_fn("DLB_BarrierNamedDetach")(_handle(barrier))
    check_dlb_error(ret, allow_positive=True)
    return ret


def _unsupported(fname):
    def call(*args, **kwargs):
        raise DLBError("%s: popmon does not implement DLB's %s (%s)" % (
            fname, "variables" if "Variable" in fname else "shared-memory dump",
            DLB_Strerror(DLB_ERR_NOCOMP).decode()))
    call.__name__ = fname
    call.__doc__ = "Not provided by popmon (DLB's variables and PrintShmem): raises DLBError (DLB_ERR_NOCOMP)."
    return call


for _f in ("DLB_SetVariable", "DLB_GetVariable", "DLB_PrintShmem"):
    globals()[_f] = _unsupported(_f)
del _f

#################################################################################
### TALP: monitoring regions                                                  ###
#################################################################################


def _global(fname):
    if _measuring():
        a = getattr(dlb, fname)()
        if a:
            return _monitor(a)
    return _idle_monitor(DLB_GLOBAL_REGION_NAME)


def DLB_MonitoringRegionGetGlobal():
    return _global("DLB_MonitoringRegionGetGlobal")


def DLB_MonitoringRegionGetImplicit():
    return _global("DLB_MonitoringRegionGetImplicit")


def DLB_MonitoringRegionGetMPIRegion():
    return _global("DLB_MonitoringRegionGetMPIRegion")


def DLB_MonitoringRegionRegister(name):
    if isinstance(name, bytes):
        name = name.decode("utf-8", "surrogateescape")
    if _measuring():
        a = dlb.DLB_MonitoringRegionRegister(name.encode("utf-8", "surrogateescape") if name else None)
        if a:
            return _monitor(a)
    _say_not_measured()
    if name and name.lower() == DLB_GLOBAL_REGION_NAME.lower():
        return _idle_monitor(DLB_GLOBAL_REGION_NAME)
    return _idle_monitor(name or None)


def DLB_MonitoringRegionReset(handle):
    _region_call("DLB_MonitoringRegionReset", handle)


def DLB_MonitoringRegionStart(handle):
    _region_call("DLB_MonitoringRegionStart", handle)


def DLB_MonitoringRegionStop(handle):
    _region_call("DLB_MonitoringRegionStop", handle)


def DLB_MonitoringRegionReport(handle):
    _region_call("DLB_MonitoringRegionReport", handle)


def DLB_MonitoringRegionsUpdate():
    if _measuring():
        check_dlb_error(dlb.DLB_MonitoringRegionsUpdate())


#################################################################################
### TALP: metrics (collective) and the third-party calls                     ###
#################################################################################

def _collect_handle(monitor):
    """The address to pass for monitor; an idle monitor of this module's
    has no metrics anywhere."""
    a = _address(monitor)
    if a in _idle_monitors:
        _say_not_measured()
        raise DLBError(DLB_Strerror(DLB_ERR_NOTALP).decode() +
                       " (the region was registered while nothing measured this process)")
    return c_void_p(a) if a else None


def DLB_TALP_CollectPOPMetrics(monitor):
    _query_ok()
    pop_metrics = dlb_pop_metrics_t()
    err = dlb.DLB_TALP_CollectPOPMetrics(_collect_handle(monitor), byref(pop_metrics))
    check_dlb_error(err)
    return pop_metrics


def DLB_TALP_CollectPOPNodeMetrics(monitor):
    _query_ok()
    node_metrics = dlb_node_metrics_t()
    err = dlb.DLB_TALP_CollectPOPNodeMetrics(_collect_handle(monitor), byref(node_metrics))
    check_dlb_error(err)
    return node_metrics


def DLB_TALP_CollectNodeMetrics(monitor):
    """DLB's older name of DLB_TALP_CollectPOPNodeMetrics."""
    return DLB_TALP_CollectPOPNodeMetrics(monitor)


def DLB_TALP_Attach():
    _query_ok()
    check_dlb_error(dlb.DLB_TALP_Attach())


def DLB_TALP_Detach():
    _query_ok()
    check_dlb_error(dlb.DLB_TALP_Detach())


def DLB_TALP_GetNumCPUs():
    _query_ok()
    ncpus = c_int()
    check_dlb_error(dlb.DLB_TALP_GetNumCPUs(byref(ncpus)))
    return ncpus.value


def DLB_TALP_GetPidList(max_len):
    _query_ok()
    pidlist = (c_int * max_len)()
    nelems = c_int()
    check_dlb_error(dlb.DLB_TALP_GetPidList(pidlist, byref(nelems), max_len))
    return [pidlist[i] for i in range(nelems.value)]


def DLB_TALP_GetTimes(pid):
    _query_ok()
    mpi_time = c_double()
    useful_time = c_double()
    check_dlb_error(dlb.DLB_TALP_GetTimes(pid, byref(mpi_time), byref(useful_time)))
    return mpi_time.value, useful_time.value


def DLB_TALP_GetNodeTimes(name, max_len):
    _query_ok()
    node_times_list = (dlb_node_times_t * max_len)()
    nelems = c_int()
    err = dlb.DLB_TALP_GetNodeTimes(name.encode() if name else None, node_times_list, byref(nelems), max_len)
    check_dlb_error(err)
    return [node_times_list[i] for i in range(nelems.value)]


def DLB_TALP_QueryPOPNodeMetrics(name):
    _query_ok()
    node_metrics = dlb_node_metrics_t()
    err = dlb.DLB_TALP_QueryPOPNodeMetrics(name.encode() if name else None, byref(node_metrics))
    check_dlb_error(err)
    return node_metrics
