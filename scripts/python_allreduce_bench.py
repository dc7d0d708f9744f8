#!/usr/bin/env python3
"""Plain Python allreduce timing loop, the reference for `ddpbench comm --collectives allreduce`.

Per size (nccl-tests' sweep: from --minbytes, times --stepfactor, up to --maxbytes), a float32
tensor of size/4 elements on every rank, --warmup untimed torch.distributed.all_reduce calls,
then --iters calls timed as one span with time.perf_counter and divided (each call waits for
its result, as `ddpbench comm` waits for each operation on the CPU). The per-rank time is
averaged over ranks (nccl-tests' default, as ddpbench); algbw = size / time, busbw = algbw *
2(n-1)/n (nccl-tests doc/PERFORMANCE.md). Rank 0 prints one JSON line per size. Launch with
torchrun, e.g.

  OMP_NUM_THREADS=1 python3 -m torch.distributed.run --nproc_per_node 2 --redirects 1 --tee 1 \
      scripts/python_allreduce_bench.py -b 1K -e 256M -f 2

It is a measuring aid, not part of the product: ddpbench itself has no Python.
"""
import argparse
import json
import time

import torch
import torch.distributed as dist


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-b", "--minbytes", default="1K")
    p.add_argument("-e", "--maxbytes", default="256M")
    p.add_argument("-f", "--stepfactor", type=int, default=2)
    p.add_argument("-w", "--warmup_iters", type=int, default=5)
    p.add_argument("-n", "--iters", type=int, default=20)
    a = p.parse_args()

    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    size = parse_size(a.minbytes)
    last = parse_size(a.maxbytes)
    while size <= last:
        t = torch.ones(size // 4, dtype=torch.float32)
        for _ in range(a.warmup_iters):
            dist.all_reduce(t)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(a.iters):
            dist.all_reduce(t)
        per_op = (time.perf_counter() - t0) / a.iters
        times = torch.tensor([per_op], dtype=torch.float64)
        dist.all_reduce(times)  # mean over ranks
        mean = times.item() / n
        nbytes = t.numel() * 4
        algbw = nbytes / mean / 1e9
        if rank == 0:
            print(json.dumps({"size": nbytes, "count": t.numel(), "time_us": mean * 1e6, "algbw_gbps": algbw,
                              "busbw_gbps": algbw * 2 * (n - 1) / n, "world_size": n,
                              "warmup": a.warmup_iters, "iters": a.iters}), flush=True)
        del t
        size *= a.stepfactor
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
