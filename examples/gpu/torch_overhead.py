#!/usr/bin/env python3
"""torch_overhead.py: a launch-bound PyTorch loop, for the overhead table of
scripts/gpu-validate.sh (PyTorch rows): uninstrumented, under
`popmon run --no-mpi --gpu on`, and under torch.profiler (--profile).

    python3 examples/gpu/torch_overhead.py [--ops N] [--profile]

The loop is the one of gpu_pop's overhead mode in PyTorch: N tiny
elementwise operations (x.add_(1) on 1024 floats on the GPU: one kernel
launch each), with torch.cuda.synchronize() every 100; 1000 more before, as
warm-up (context, kernels, allocator), untimed. Prints one line:

    torch loop_ns=X ops=N [kernels=K]

X: mean wall time per operation in ns; with --profile, the loop runs inside
torch.profiler.profile(activities=[CPU, CUDA]) (profiler start-up and
post-processing untimed) and K is the number of CUDA kernel events the
profiler kept (N when none was lost; absent when it cannot be counted).
Exit status 3 when PyTorch has no CUDA device.
"""
import argparse
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=100000, help="timed operations (default 100000)")
    ap.add_argument("--profile", action="store_true", help="run the timed loop under torch.profiler")
    a = ap.parse_args()
    if a.ops < 1:
        ap.error("--ops wants a positive integer")

    import torch

    if not torch.cuda.is_available():
        print("torch_overhead: PyTorch sees no CUDA device", file=sys.stderr)
        return 3
    x = torch.zeros(1024, device="cuda")

    def loop(n):
        for i in range(1, n + 1):
            x.add_(1.0)
            if i % 100 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()

    loop(1000)
    kernels = None
    if a.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            loop(a.ops)
            t1 = time.perf_counter()
        try:
            cuda = torch.autograd.DeviceType.CUDA
            kernels = sum(1 for e in prof.events() if e.device_type == cuda) or None
        except Exception:  # the events' API differs between versions: no count
            kernels = None
    else:
        t0 = time.perf_counter()
        loop(a.ops)
        t1 = time.perf_counter()
    line = "torch loop_ns=%.1f ops=%d" % ((t1 - t0) * 1e9 / a.ops, a.ops)
    if kernels is not None:
        line += " kernels=%d" % kernels
    print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
