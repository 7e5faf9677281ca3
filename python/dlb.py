"""dlb: popmon's answer to DLB/TALP's Python module (docs/python.md).

A script written for DLB 3.6/3.7's Python bindings (`import dlb`, the
`DLB_MonitoringRegion*` and `DLB_TALP_*` calls, the `dlb_monitor_t` /
`dlb_pop_metrics_t` structures, `DLBError`, `DLBWarning`) runs unchanged under
`popmon run` / `popmon exec`, which put this module on the job's PYTHONPATH:
its calls reach the DLB/TALP entry points of popmon's preloaded library
through ctypes, with DLB's names, argument conventions, return values,
structure fields and errors (negative codes raise DLBError, positive ones
warn with DLBWarning).

popmon implements TALP only. DLB_Init, DLB_Finalize, DLB_PreInit,
DLB_Enable, DLB_Disable and DLB_SetObserverRole succeed and do nothing (popmon
measures the whole run anyway); LeWI, DROM, barriers, masks and variables
raise DLBError (DLB_ERR_NOCOMP).

Without popmon's library measuring this process, the module still imports
(DLB's own fails without libdlb): region calls do nothing and hand back
handles whose fields stay 0, the metrics queries raise DLBError
(DLB_ERR_NOTALP, as DLB does when TALP is not enabled), and when the program
asked for TALP (`--talp` in DLB_Init's arguments or in $DLB_ARGS) one line
on stderr says that nothing measures it.
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
            ("DLB_TALP_QueryPOPNodeMetrics", c_int, [c_char_p, POINTER(dlb_node_metrics_t)])):
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
### DLB core API                                                              ###
#################################################################################

def DLB_Init(ncpus, mask, dlb_args):
    """Nothing to start: popmon measures the whole run (the arguments are
    accepted as DLB's; '--talp' says that measurement is wanted)."""
    _say_not_measured(dlb_args)


def DLB_Finalize():
    """Nothing to stop: popmon writes its measurement when the job ends."""


def DLB_PreInit(mask, next_environ):
    return next_environ[0] if next_environ else None


def DLB_Enable():
    pass


def DLB_Disable():
    pass


def DLB_SetObserverRole(thread_is_observer):
    pass


def DLB_GetVersion():
    """The DLB release whose interface popmon answers."""
    return 3, 6, 0


def _unsupported(fname):
    def call(*args, **kwargs):
        raise DLBError("%s: popmon answers DLB's TALP calls only (%s)" % (
            fname, DLB_Strerror(DLB_ERR_NOCOMP).decode()))
    call.__name__ = fname
    call.__doc__ = "Not provided by popmon (LeWI, DROM, barriers, masks and variables are DLB's alone): raises DLBError."
    return call


for _f in ("DLB_ParseMask", "DLB_ParseMaskToStr", "DLB_SetMaxParallelism", "DLB_UnsetMaxParallelism",
           "DLB_Lend", "DLB_LendCpu", "DLB_LendCpus", "DLB_LendCpuMask",
           "DLB_Reclaim", "DLB_ReclaimCpu", "DLB_ReclaimCpus", "DLB_ReclaimCpuMask",
           "DLB_AcquireCpu", "DLB_AcquireCpus", "DLB_AcquireCpuMask", "DLB_AcquireCpusInMask",
           "DLB_Borrow", "DLB_BorrowCpu", "DLB_BorrowCpus", "DLB_BorrowCpuMask", "DLB_BorrowCpusInMask",
           "DLB_Return", "DLB_ReturnCpu", "DLB_ReturnCpuMask", "DLB_PollDROM", "DLB_PollDROM_Update",
           "DLB_CheckCpuAvailability", "DLB_Barrier", "DLB_BarrierAttach", "DLB_BarrierDetach",
           "DLB_BarrierNamedRegister", "DLB_BarrierNamedGet", "DLB_BarrierNamed",
           "DLB_BarrierNamedAttach", "DLB_BarrierNamedDetach", "DLB_SetVariable", "DLB_GetVariable",
           "DLB_PrintVariables", "DLB_PrintShmem",
           "DLB_DROM_Attach", "DLB_DROM_Detach", "DLB_DROM_GetNumCpus", "DLB_DROM_GetPidList",
           "DLB_DROM_GetProcessMask", "DLB_DROM_SetProcessMask", "DLB_DROM_SetProcessMaskStr",
           "DLB_DROM_PreInit", "DLB_DROM_PostFinalize", "DLB_DROM_RecoverStolenCpus"):
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
