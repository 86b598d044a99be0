"""Two gloo ranks trading tensors point-to-point under torch.profiler (CPU only), for the p2p tests.

Per step: rank 0 ``send``s to 1 (rank 1 ``recv``s), then a ``batch_isend_irecv`` of one isend and one
irecv each way, then an ``all_reduce``. ``python -m tests.workloads.p2p_gloo OUT PORT`` writes
``OUT/rank{0,1}.json``.
"""

from __future__ import annotations

import os
import sys


def _rank(rank: int, world: int, out: str, port: int) -> None:
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, record_function

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    t = torch.ones(1 << 14)
    other = 1 - rank
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for step in range(2):
            with record_function(f"ProfilerStep#{step}"):
                if rank == 0:
                    dist.send(t, dst=1)
                else:
                    dist.recv(t, src=0)
                ops = [dist.P2POp(dist.isend, t, other), dist.P2POp(dist.irecv, t.clone(), other)]
                for w in dist.batch_isend_irecv(ops if rank == 0 else ops[::-1]):
                    w.wait()
                dist.all_reduce(t)
    prof.export_chrome_trace(os.path.join(out, f"rank{rank}.json"))
    dist.destroy_process_group()


if __name__ == "__main__":
    import torch.multiprocessing as mp

    os.makedirs(sys.argv[1], exist_ok=True)
    mp.spawn(_rank, args=(2, sys.argv[1], int(sys.argv[2])), nprocs=2)
