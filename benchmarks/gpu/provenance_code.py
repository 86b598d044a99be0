"""Write the generated wrapper code (Triton) of a tiny model's forward and backward, and the compiled_kernels.json
the capture makes of it, into the folder given (benchmarks/gpu/provenance_samples.sh; needs a GPU)."""
import sys
import torch
from torch import nn
from torch._inductor.graph import GraphLowering
from tracekit.profile.inductor_capture import InductorCapture

out = sys.argv[1]  # the folder to write into
codes = []
GraphLowering.save_output_code = codes.append  # the capture chains to it


class Blk(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.act, self.fc2, self.norm = nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64), nn.LayerNorm(64)

    def forward(self, x):
        return self.norm(x + self.fc2(self.act(self.fc1(x))))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Blk(), Blk())

    def forward(self, x):
        return self.blocks(x)


m = Net().cuda()
m.compile()
with InductorCapture("cuda", m) as cap:
    m(torch.randn(32, 64, device="cuda")).sum().backward()
for i, c in enumerate(codes):
    open(f"{out}/cuda_{i}.txt", "w").write(c)
import msgspec
open(f"{out}/cuda_compiled_kernels.json", "wb").write(msgspec.json.encode(cap.document()))
print("dumped", len(codes), "graphs;", len(cap.doc.kernels), "kernels", cap.notes)
