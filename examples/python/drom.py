#!/usr/bin/env python3
"""drom.py: DLB's DROM and LeWI calls from Python, written for DLB's bindings.

Usage: python3 drom.py self|poll|lewi

Nothing here knows popmon: `import dlb`, DLB_Init(..., "--drom"), the
DLB_DROM_* calls on its own pid, DLB_PollDROM, the LeWI calls, exactly as
with DLB 3.7's Python module. Run it under `popmon run --drom` (DROM) or
`popmon run --lewi` (LeWI). Every call's outcome is printed as
"ok", "warn CODE" (DLBWarning) or "error CODE" (DLBError), so the script
runs to its end also where a call is refused (without popmon, without
--drom):

  self   (on a process with 2 CPUs or more) its own CPUs through the
         administrator calls:
           "numcpus R N"                        DLB_DROM_GetNumCpus
           "attach R"                           DLB_DROM_Attach
           "pidlist R listed L"                 DLB_DROM_GetPidList (L 1: its pid is in it)
           "mask R M affinity A"                DLB_DROM_GetProcessMask, before any change
           "set R M affinity A"                 SetProcessMask(pid, its last CPU), read back
           "setlist R M affinity A"             SetProcessMask(pid, [CPUs...]) back to all
           "setstr R M affinity A"              SetProcessMaskStr(pid, first CPU as "0xN")
           "poll R"                             DLB_PollDROM (its own change is adopted already)
           "detach R"                           DLB_DROM_Detach
  poll   waits for a tool (popmon taskset -p PID -c LIST) to change its CPUs:
           "ready PID"                          registered; then DLB_PollDROM until it answers
           "polled R ncpus N mask M affinity A" the new mask (not applied: A unchanged)
           "updated R affinity A"               DLB_PollDROM_Update after the next change
  lewi   LeWI's calls on its own CPUs (DLB_Init registers them with --lewi):
           "lend R", "reclaim R", "lendcpus R", "reclaim_again R", "lendcpu R",
           "acquirecpu R", "borrow R", "return R", "maxpar R", "unsetmaxpar R",
           "lendmask R", "reclaimmask R", "barrier R"

M and A are DLB's mask strings ("0,1", "1", "0-3"). Then "ok".
DLB_Init's options are "--drom" ("--drom --lewi" in lewi mode), or
$DROM_PY_INIT_ARGS.
"""
import os
import re
import sys
import time
import warnings

import dlb


def outcome(f, *args):
    """(R, value): R is "ok", "warn CODE" or "error CODE"."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = f(*args)
        except dlb.DLBError as e:
            return "error " + code(str(e)), None
    w = [c for c in caught if issubclass(c.category, dlb.DLBWarning)]
    if w:
        return "warn " + code(str(w[0].message)), value
    return "ok", value


def code(message):
    m = re.search(r"(DLB_[A-Z_]+) \(-?\d+\)", message)
    return m.group(1) if m else "unknown"


def affinity():
    return dlb.DLB_ParseMaskToStr(dlb.DLB_ParseMask(",".join(str(c) for c in sorted(os.sched_getaffinity(0))))).strip("[]")


def self_mode(pid):
    r, n = outcome(dlb.DLB_DROM_GetNumCpus)
    print("numcpus %s %s" % (r, n))
    print("attach %s" % outcome(dlb.DLB_DROM_Attach)[0])
    r, pids = outcome(dlb.DLB_DROM_GetPidList, 64)
    print("pidlist %s listed %d" % (r, int(pid in (pids or []))))
    r, m = outcome(dlb.DLB_DROM_GetProcessMask, pid, 0)
    print("mask %s %s affinity %s" % (r, m, affinity()))
    cpus = sorted(os.sched_getaffinity(0))
    for what, f, arg in (("set", dlb.DLB_DROM_SetProcessMask, str(cpus[-1])),
                         ("setlist", dlb.DLB_DROM_SetProcessMask, cpus),
                         ("setstr", dlb.DLB_DROM_SetProcessMaskStr, "0x%x" % (1 << cpus[0]))):
        r = outcome(f, pid, arg, 0)[0]
        m = outcome(dlb.DLB_DROM_GetProcessMask, pid, 0)[1]
        print("%s %s %s affinity %s" % (what, r, m, affinity()))
    outcome(dlb.DLB_DROM_SetProcessMask, pid, cpus, 0)
    print("poll %s" % outcome(dlb.DLB_PollDROM)[0])
    print("detach %s" % outcome(dlb.DLB_DROM_Detach)[0])


def wait_for(f, deadline):
    """f's outcome once it is "ok" (DLB_NOUPDT: nothing new yet)."""
    while True:
        r, v = outcome(f)
        if r != "warn DLB_NOUPDT" or time.time() > deadline:
            return r, v
        time.sleep(0.01)


def poll_mode(pid):
    print("ready %d" % pid)
    sys.stdout.flush()
    deadline = time.time() + 60
    r, v = wait_for(dlb.DLB_PollDROM, deadline)
    ncpus, mask = v if v else (0, None)
    print("polled %s ncpus %d mask %s affinity %s" % (
        r, ncpus, dlb.DLB_ParseMaskToStr(mask).strip("[]") if mask is not None else "-", affinity()))
    sys.stdout.flush()
    r, _ = wait_for(dlb.DLB_PollDROM_Update, deadline)
    print("updated %s affinity %s" % (r, affinity()))


def lewi_mode():
    cpus = sorted(os.sched_getaffinity(0))
    for what, f, args in (
            ("lend", dlb.DLB_Lend, ()), ("reclaim", dlb.DLB_Reclaim, ()),
            ("lendcpus", dlb.DLB_LendCpus, (1,)), ("reclaim_again", dlb.DLB_Reclaim, ()),
            ("lendcpu", dlb.DLB_LendCpu, (cpus[-1],)), ("acquirecpu", dlb.DLB_AcquireCpu, (cpus[-1],)),
            ("borrow", dlb.DLB_Borrow, ()), ("return", dlb.DLB_Return, ()),
            ("maxpar", dlb.DLB_SetMaxParallelism, (1,)), ("unsetmaxpar", dlb.DLB_UnsetMaxParallelism, ()),
            ("lendmask", dlb.DLB_LendCpuMask, (str(cpus[-1]),)),
            ("reclaimmask", dlb.DLB_ReclaimCpuMask, (dlb.DLB_ParseMask(str(cpus[-1])),)),
            ("barrier", dlb.DLB_Barrier, ())):
        print("%s %s" % (what, outcome(f, *args)[0]))


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "self"
    pid = os.getpid()
    args = os.environ.get("DROM_PY_INIT_ARGS", "--drom --lewi" if mode == "lewi" else "--drom")
    print("init %s" % outcome(dlb.DLB_Init, 0, "", args)[0])
    {"self": lambda: self_mode(pid), "poll": lambda: poll_mode(pid), "lewi": lewi_mode}[mode]()
    print("finalize %s" % outcome(dlb.DLB_Finalize)[0])
    print("ok")
