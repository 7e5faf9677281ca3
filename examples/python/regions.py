#!/usr/bin/env python3
"""regions.py: popmon's Python region API in a program without MPI.

Usage: python3 regions.py [K_MS]          default K = 50 ms (about 16 K of wall time)

"Work" is sleeping, as in the C examples (work.h): popmon counts time
outside MPI as useful, so the designed times hold on a loaded machine.
Designed regions (one process; elapsed times):
  setup    decorator, one call sleeping 2K                             1 visit,  2K
  solve    with-block: 3 iterations of (K sleep, then inner)            1 visit,  6K
  inner    with-block nested in solve, sleeping K                      3 visits, 3K
  recurse  decorated recursive function, depth 3, K/2 at each level    1 visit,  1.5K
           (re-entered: the visit lasts from the outermost call's entry to its exit)
  fails    with-block sleeping K that raises ValueError (caught outside), then
           entered again sleeping K: stopped on the exception         2 visits, 2K
  threads  thread A in it for 2K; thread B enters K after A, for 2K     1 visit,  3K
           (regions are per process: the visit is their union)
  helper   bare decorator (@popmon.region): the function's name        1 visit,  K/2
Then the runtime query (this process is the whole job):
  "measured 1", "query solve visits V elapsed_ms E processes P pe PE",
  "local inner visits V elapsed_ms E", "missing none", "ok".
Without popmon: "measured 0", both queries "none", "ok", same exit code 0.
"""
import sys
import threading
import time

import popmon

K = (float(sys.argv[1]) if len(sys.argv) > 1 else 50.0) / 1000.0


@popmon.region("setup")
def setup():
    time.sleep(2 * K)


@popmon.region("recurse")
def recurse(depth):
    time.sleep(K / 2)
    if depth > 1:
        recurse(depth - 1)


@popmon.region
def helper():
    time.sleep(K / 2)


def in_thread(delay):
    time.sleep(delay)
    with popmon.region("threads"):
        time.sleep(2 * K)


def show(label, name, m):
    if m is None:
        print("%s %s none" % (label, name))
    else:
        print("%s %s visits %d elapsed_ms %.3f processes %d pe %.4f" % (
            label, name, m["visits"], m["elapsed_ns"] / 1e6, m["processes"], m["parallel_efficiency"]))


def main():
    print("measured %d" % popmon.measured())
    setup()
    with popmon.region("solve"):
        for _ in range(3):
            time.sleep(K)
            with popmon.region("inner"):
                time.sleep(K)
    recurse(3)
    try:
        with popmon.region("fails"):
            time.sleep(K)
            raise ValueError("designed")
    except ValueError:
        pass
    with popmon.region("fails"):
        time.sleep(K)
    a = threading.Thread(target=in_thread, args=(0,))
    b = threading.Thread(target=in_thread, args=(K,))
    a.start()
    b.start()
    a.join()
    b.join()
    helper()
    show("query", "solve", popmon.metrics("solve"))
    show("local", "inner", popmon.metrics_local("inner"))
    print("missing %s" % ("none" if popmon.metrics("no such region") is None else "some"))
    print("ok")


if __name__ == "__main__":
    main()
