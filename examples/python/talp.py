#!/usr/bin/env python3
"""talp.py: a TALP user's script, written for DLB's Python bindings.

Usage: python3 talp.py mpi4py|ctypes|none [K_MS [ITERATIONS]]
       defaults K = 100 ms, N = 3

Nothing here knows popmon: `import dlb`, DLB_Init(..., "--talp"), monitoring
regions by handle, DLB_TALP_CollectPOPMetrics, the monitor's fields, exactly
as with DLB 3.6. Every iteration rank r of P works (r+1)*K in region "solve",
then all ranks sum a number. Designed: "solve" has N visits per rank, load
balance (P+1)/(2P), communication efficiency 1, elapsed N*P*K (1 process:
N*K, load balance 1). Rank 0 prints
  "collect name solve ranks P lb LB pe PE comm CE elapsed_ns E useful_ns U mpi_ns M measurements V"
  "node ppn PPN lb LB"                     (DLB_TALP_CollectPOPNodeMetrics)
  "monitor name solve num_measurements V elapsed_ns E"   (the handle's dlb_monitor_t)
  "global ranks P"                         (DLB_GLOBAL_REGION)
  "warned W"                               (1: starting the open Global warns, DLBWarning)
  "ok"
"""
import sys
import time
import warnings

import dlb
import world

kind, (k_ms, n) = world.args(sys.argv, {"K_MS": 100, "ITERATIONS": 3})
rank, size, allreduce, barrier = world.connect(kind)
K = k_ms / 1000.0

dlb.DLB_Init(0, "", "--talp")
solve = dlb.DLB_MonitoringRegionRegister("solve")
barrier()
for _ in range(int(n)):
    dlb.DLB_MonitoringRegionStart(solve)
    time.sleep((rank + 1) * K)
    allreduce(1)
    dlb.DLB_MonitoringRegionStop(solve)

pm = dlb.DLB_TALP_CollectPOPMetrics(solve)
node = dlb.DLB_TALP_CollectPOPNodeMetrics(solve)
glob = dlb.DLB_TALP_CollectPOPMetrics(dlb.DLB_GLOBAL_REGION)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dlb.DLB_MonitoringRegionStart(dlb.DLB_MonitoringRegionGetGlobal())  # already open: DLB_NOUPDT
warned = sum(1 for w in caught if issubclass(w.category, dlb.DLBWarning))
mon = solve.contents
if rank == 0:
    print("collect name %s ranks %d lb %.4f pe %.4f comm %.4f elapsed_ns %d useful_ns %d mpi_ns %d measurements %d" % (
        pm.name.decode(), pm.num_mpi_ranks, pm.mpi_load_balance, pm.parallel_efficiency,
        pm.mpi_communication_efficiency, pm.elapsed_time, pm.useful_time, pm.mpi_time, pm.num_measurements))
    print("node ppn %d lb %.4f" % (node.processes_per_node, node.load_balance))
    print("monitor name %s num_measurements %d elapsed_ns %d" % (
        mon.name.decode(), mon.num_measurements, mon.elapsed_time))
    print("global ranks %d" % glob.num_mpi_ranks)
    print("warned %d" % warned)
    print("ok")
dlb.DLB_Finalize()
