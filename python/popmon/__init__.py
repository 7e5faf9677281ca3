"""popmon: regions and runtime POP metrics for Python programs (docs/python.md).

    import popmon

    with popmon.region("solve"):          # a region as a context manager
        ...

    @popmon.region("setup")               # ... or as a decorator
    def setup():
        ...

    m = popmon.metrics("solve")           # POP metrics so far, all ranks (a dict)

`popmon run` and `popmon exec` put this module on the measured program's
PYTHONPATH and preload the measurement library; the module reaches the
library through ctypes (no compilation, no installation). Without popmon the
module still imports: regions do nothing (a few hundred nanoseconds a call),
measured() is False and metrics() returns None. Nothing here raises because
popmon is absent.

Regions are per process, as in C (shim/popmon.h): a region is open while at
least one `with` block (or decorated call) of any thread of the process is
inside it, so re-entering it (recursion, several threads) extends the one
visit instead of misusing the C API. Exceptions propagate; the region is
stopped on the way out.
"""

import ctypes
import functools
import inspect
import os
import threading
import weakref

__all__ = [
    "region", "Region", "measured", "metrics", "metrics_local", "report",
    "WINDOW_RUN", "WINDOW_SINCE_LAST", "SUCCESS", "NOUPDT", "ERR_NOENT",
    "ERR_NOTMEASURED", "ERR_NOINIT", "ERR_TIMEOUT", "ERR_UNKNOWN",
]

#: window of metrics(): since the region was registered (or reset)
WINDOW_RUN = 0
#: window of metrics(): since this process's previous call for that region
WINDOW_SINCE_LAST = 1

# Return codes of the C API (shim/popmon.h).
SUCCESS = 0
NOUPDT = 2
ERR_NOENT = -11
ERR_NOTMEASURED = -16
ERR_NOINIT = -2
ERR_TIMEOUT = -9
ERR_UNKNOWN = -1


class _Metrics(ctypes.Structure):
    """struct popmon_metrics of shim/popmon.h (version 1)."""
    _fields_ = (
        [("size", ctypes.c_uint32), ("version", ctypes.c_uint32),
         ("region", ctypes.c_char * 128), ("window", ctypes.c_int32),
         ("processes", ctypes.c_int32), ("nodes", ctypes.c_int32),
         ("cpus", ctypes.c_int32), ("flags", ctypes.c_uint32),
         ("reserved", ctypes.c_int32)]
        + [(n, ctypes.c_int64) for n in (
            "visits", "elapsed_ns", "useful_ns", "mpi_ns", "mpi_worker_idle_ns",
            "omp_serialization_ns", "omp_load_imbalance_ns", "omp_scheduling_ns",
            "gpu_runtime_ns", "mpi_calls")]
        + [(n, ctypes.c_double) for n in (
            "parallel_efficiency", "mpi_parallel_efficiency",
            "mpi_communication_efficiency", "mpi_load_balance",
            "mpi_load_balance_in", "mpi_load_balance_out",
            "omp_parallel_efficiency", "omp_serialization_efficiency",
            "omp_load_balance", "omp_scheduling_efficiency",
            "device_offload_efficiency")]
    )


def _load():
    """The preloaded library's region API, or None when it is not loaded.

    Only symbols already in the process are used (ctypes.CDLL(None)): the
    library is never loaded from here, since a library that was not
    preloaded measures nothing."""
    try:
        lib = ctypes.CDLL(None)
        fns = {}
        for name, res, args in (
                ("popmon_api_region_register", ctypes.c_void_p, [ctypes.c_char_p]),
                ("popmon_api_region_start", ctypes.c_int, [ctypes.c_void_p]),
                ("popmon_api_region_stop", ctypes.c_int, [ctypes.c_void_p]),
                ("popmon_api_region_reset", ctypes.c_int, [ctypes.c_void_p]),
                ("popmon_api_region_report", ctypes.c_int, [ctypes.c_void_p]),
                ("popmon_api_measured", ctypes.c_int, []),
                ("popmon_api_metrics", ctypes.c_int,
                 [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_Metrics)]),
                ("popmon_api_metrics_local", ctypes.c_int,
                 [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_Metrics)])):
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
            fns[name] = f
        return fns
    except (OSError, AttributeError):
        return None


_api = _load()
_register = _api["popmon_api_region_register"] if _api else None
_start = _api["popmon_api_region_start"] if _api else None
_stop = _api["popmon_api_region_stop"] if _api else None


def measured():
    """True when this process is measured by popmon (run or exec)."""
    return bool(_api) and _api["popmon_api_measured"]() == 1


def _name_bytes(name):
    if name is None:
        return None
    if isinstance(name, bytes):
        return name
    return str(name).encode("utf-8", "surrogateescape")


# Every Region, named or anonymous (a fork resets their locks).
_every_region = weakref.WeakSet()


class Region(object):
    """A named region: a context manager, a decorator, or start()/stop().

    Get one with region(name); the same name gives the same object."""

    __slots__ = ("name", "_handle", "_depth", "_lock", "__weakref__")

    def __init__(self, name):
        self.name = name
        self._handle = None
        self._depth = 0
        self._lock = threading.Lock()
        _every_region.add(self)

    def __repr__(self):
        return "popmon.region(%r)" % (self.name,)

    def _h(self):
        # Registered at the first start (a module-level region costs
        # nothing at import; the C API returns the same handle per name).
        h = self._handle
        if h is None:
            h = _register(_name_bytes(self.name)) or 0
            self._handle = h
        return h

    def start(self):
        """Enters the region (the first entry opens a visit)."""
        if _start is None:
            return
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                h = self._h()
                if h:
                    _start(h)

    def stop(self):
        """Leaves the region (the last exit closes the visit)."""
        if _stop is None:
            return
        with self._lock:
            if self._depth == 0:
                return  # stopped more often than started: nothing open
            self._depth -= 1
            if self._depth == 0:
                h = self._h()
                if h:
                    _stop(h)

    def reset(self):
        """Discards what the region has accumulated (an open visit stays)."""
        if _api and self._h():
            _api["popmon_api_region_reset"](self._handle)

    def report(self):
        """Prints this process's accounts of the region to stderr."""
        if _api and self._h():
            _api["popmon_api_region_report"](self._handle)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False  # exceptions propagate

    def __call__(self, func):
        """Decorator: every call of func is inside the region."""
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def coroutine_in_region(*args, **kwargs):
                with self:
                    return await func(*args, **kwargs)
            return coroutine_in_region

        @functools.wraps(func)
        def in_region(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return in_region


_regions = {}
_regions_lock = threading.Lock()


def _after_fork_in_child():
    # A fork (os.fork, multiprocessing's fork start method) copies the
    # locks as they were: one that another thread of the parent held then
    # (inside a region's start or stop) would stay held in the child
    # forever. The child has only the forking thread, inside none of the
    # other threads' regions: every region starts afresh, unlocked. (The
    # library does not measure a forked child: its regions do nothing.)
    global _regions_lock
    _regions_lock = threading.Lock()
    for r in list(_every_region):
        r._lock = threading.Lock()
        r._depth = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def region(name):
    """The region called name (a str): `with popmon.region("solve"):` or
    `@popmon.region("setup")`. Used bare as a decorator
    (`@popmon.region`), the function's qualified name names it; None or ""
    gives a new anonymous region ("Anonymous Region N")."""
    if callable(name) and not isinstance(name, (str, bytes)):
        func = name
        return region(getattr(func, "__qualname__", func.__name__))(func)
    if name is None or name == "" or name == b"":
        return Region(None)  # anonymous: a new region, as in the C API
    r = _regions.get(name)
    if r is None:
        with _regions_lock:
            r = _regions.get(name)
            if r is None:
                r = _regions[name] = Region(name)
    return r


def _as_dict(m):
    out = {}
    for name, _ in _Metrics._fields_:
        if name in ("size", "reserved"):
            continue
        v = getattr(m, name)
        if name == "region":
            v = v.decode("utf-8", "replace")
        out[name] = v
    return out


def _query(fn, name, window):
    if not _api:
        return None
    if isinstance(name, Region):
        name = name.name
    m = _Metrics(size=ctypes.sizeof(_Metrics))
    rc = _api[fn](_name_bytes(name), int(window), ctypes.byref(m))
    if rc != SUCCESS:
        return None
    return _as_dict(m)


def metrics(name=None, window=WINDOW_RUN):
    """The POP metrics (model talp) of region name (None: Global) over all
    ranks, as a dict: region, processes, nodes, cpus, visits, elapsed_ns,
    useful_ns, mpi_ns, ..., parallel_efficiency, mpi_load_balance, ...

    Collective in an MPI program: every rank must call it, in the same
    order as its other collective queries (one that not every rank makes
    returns None after POPMON_QUERY_TIMEOUT seconds, default 5, with one
    line). A process without MPI gets its own. None when not measured, when
    no rank visited the region in the window, or outside
    MPI_Init..MPI_Finalize of an MPI program."""
    return _query("popmon_api_metrics", name, window)


def metrics_local(name=None, window=WINDOW_RUN):
    """The same for this process alone (not collective, no MPI call)."""
    return _query("popmon_api_metrics_local", name, window)


def report(name=None):
    """Prints this process's accounts of region name (None: Global) to
    stderr (popmon_region_report)."""
    if not _api:
        return
    if name is None:
        _api["popmon_api_region_report"](None)
    else:
        region(name).report()
