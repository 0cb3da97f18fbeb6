"""The PyTorch peer of bench/step_bench.cpp: the same cosmoflow-mrt network (MRT paper Fig. 1a,
as mrplan's op list builds it), one training step timed. Run with Debian's /usr/bin/python3.
Usage: step_pytorch.py [SIZE] [BATCH] [THREADS] [STEPS] [DEVICE] [MODE] [LAYOUT]: MODE eager (torch.optim.Adam's
default), fused (Adam(fused=True)), graph (the fused step captured as a CUDA graph, PyTorch's
"whole-network capture"), compile (torch.compile(mode="reduce-overhead"), where the machine's
torch has it); LAYOUT contiguous or channels_last (the weights and input NDHWC)."""
import statistics
import sys
import time

import torch
import torch.nn as nn

size = int(sys.argv[1]) if len(sys.argv) > 1 else 32
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 8
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 20
dev = torch.device(sys.argv[5] if len(sys.argv) > 5 else "cpu")
mode = sys.argv[6] if len(sys.argv) > 6 else "eager"
channels_last = (sys.argv[7] if len(sys.argv) > 7 else "contiguous") == "channels_last"
torch.set_num_threads(threads)
torch.manual_seed(0)

pools = max(0, min(5, size.bit_length() - 1 - 2))  # as mrplan: dense keeps >= 2 cells
layers = [nn.BatchNorm3d(4)]
cin, extent = 4, size
for i, f in enumerate([16, 32, 64, 128, 256, 256, 256]):
    stride = 2 if i == 3 else 1
    layers += [nn.Conv3d(cin, f, 3, stride=stride, padding=1), nn.BatchNorm3d(f), nn.ReLU()]
    extent = (extent + stride - 1) // stride
    if i < pools:
        layers.append(nn.AvgPool3d(2))
        extent //= 2
    cin = f
layers += [nn.Flatten(), nn.Linear(cin * extent ** 3, 2048), nn.ReLU(), nn.Dropout(0.05),
           nn.Linear(2048, 256), nn.ReLU(), nn.Dropout(0.05), nn.Linear(256, 4)]
net = nn.Sequential(*layers).to(dev)
if channels_last:
    net = net.to(memory_format=torch.channels_last_3d)
# a captured step needs the optimizer's counts on the device: capturable
opt = torch.optim.Adam(net.parameters(), 1e-3, **{"eager": {}, "compile": {}, "fused": {"fused": True},
                                                   "graph": {"fused": True, "capturable": True}}[mode])
x, y = torch.rand(batch, 4, size, size, size).to(dev), torch.rand(batch, 4).to(dev)
if channels_last:
    x = x.to(memory_format=torch.channels_last_3d)
model = torch.compile(net, mode="reduce-overhead") if mode == "compile" else net


def step():
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


if mode == "graph":  # warm-up on a side stream, then one step captured (CUDA semantics notes)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        step()
    one = graph.replay
else:
    one = step
ms = []
for s in range(steps + 3):
    t0 = time.perf_counter()
    one()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    if s >= 3:
        ms.append((time.perf_counter() - t0) * 1e3)
params = sum(p.numel() for p in net.parameters())
print(f"pytorch {mode}{' channels_last' if channels_last else ''} {dev} size {size} batch {batch} threads {threads}: median step {statistics.median(ms):.2f} ms "
      f"(min {min(ms):.2f}, max {max(ms):.2f}) over {len(ms)} steps, {params} parameters")
