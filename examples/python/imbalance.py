#!/usr/bin/env python3
"""imbalance.py: a designed load imbalance in popmon regions, over MPI.

Usage: python3 imbalance.py mpi4py|ctypes|none [K_MS [ITERATIONS]]
       defaults K = 100 ms, N = 3 (wall time about N*P*K + K)

Every iteration rank r of P works (r+1)*K in region "compute" (sleeping, as
in the C examples), then all ranks sum a number (allreduce). Region "solve"
holds the whole loop; "setup" (a decorated function) works K on every rank.
Designed: "solve" and "compute" have load balance (P+1)/(2P) (0.75 for
P = 2), "solve" communication efficiency 1 and elapsed N*P*K; "setup" load
balance 1, elapsed K. After the loop every rank asks for "solve"
collectively (popmon.metrics), and rank 0 prints
  "query solve ranks P lb LB pe PE comm CE elapsed_ns E useful_ns U visits V"
  "sum S" (the allreduce's result, N*P*(P+1)/2) and "ok".
"""
import sys
import time

import popmon
import world

kind, (k_ms, n) = world.args(sys.argv, {"K_MS": 100, "ITERATIONS": 3})
rank, size, allreduce, barrier = world.connect(kind)
K = k_ms / 1000.0


@popmon.region("setup")
def setup():
    time.sleep(K)


setup()
barrier()
total = 0
with popmon.region("solve"):
    for _ in range(int(n)):
        with popmon.region("compute"):
            time.sleep((rank + 1) * K)
        total += allreduce(rank + 1)

m = popmon.metrics("solve")  # collective: every rank asks
if rank == 0:
    if m is None:
        print("query solve none")
    else:
        print("query solve ranks %d lb %.4f pe %.4f comm %.4f elapsed_ns %d useful_ns %d visits %d" % (
            m["processes"], m["mpi_load_balance"], m["parallel_efficiency"],
            m["mpi_communication_efficiency"], m["elapsed_ns"], m["useful_ns"], m["visits"]))
    print("sum %g" % total)
    print("ok")
