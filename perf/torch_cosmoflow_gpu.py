#!/usr/bin/env python3
"""GPU peer: PyTorch eager training throughput on cosmoflow-small (docs/benchmarks.md)
on one CUDA device, convolutions through cuDNN. The network, optimizer, data and timing are
those of perf/torch_cosmoflow.py, which runs on the CPU only.
Usage: torch_cosmoflow_gpu.py SIZE BATCH STEPS [default|channels_last] [tf32|fp32] [benchmark|heuristic]
  channels_last: model and input in channels_last_3d (NDHWC, Tessera's layout)
  fp32 (default): no TF32 in convolutions or matmuls, the precision Tessera runs without TESSERA_CUDNN_TF32
  heuristic (default): torch.backends.cudnn.benchmark off, PyTorch's default"""
import sys, time, torch, torch.nn as nn
size, batch, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
cl = len(sys.argv) > 4 and sys.argv[4] == 'channels_last'
tf32 = len(sys.argv) > 5 and sys.argv[5] == 'tf32'
bench = len(sys.argv) > 6 and sys.argv[6] == 'benchmark'
if not torch.cuda.is_available():
    sys.exit("torch_cosmoflow_gpu.py: PyTorch sees no CUDA device")
torch.backends.cudnn.enabled = True
torch.backends.cudnn.allow_tf32 = tf32
torch.backends.cuda.matmul.allow_tf32 = tf32
torch.backends.cudnn.benchmark = bench
dev = torch.device('cuda')
torch.manual_seed(0)
chans = [4, 32, 64, 128, 256, 256]
layers = []
for i in range(5):
    layers += [nn.Conv3d(chans[i], chans[i+1], 3, padding=1), nn.LeakyReLU(0.01), nn.MaxPool3d(2)]
s = size // 32
layers += [nn.Flatten(), nn.Linear(256 * s**3, 128), nn.LeakyReLU(0.01), nn.Linear(128, 64), nn.LeakyReLU(0.01), nn.Linear(64, 4)]
model = nn.Sequential(*layers).to(dev)
x = torch.randn(batch, 4, size, size, size, device=dev); y = torch.randn(batch, 4, device=dev)
if cl:
    model = model.to(memory_format=torch.channels_last_3d); x = x.to(memory_format=torch.channels_last_3d)
opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
def step():
    opt.zero_grad(); loss = nn.functional.mse_loss(model(x), y); loss.backward(); opt.step()
    torch.cuda.synchronize(); return loss.item()
step(); step()
t = []
for _ in range(steps):
    t0 = time.perf_counter(); step(); t.append(time.perf_counter() - t0)
t.sort(); med = t[len(t)//2]
flops = 0; d = size
for i in range(5):
    flops += 2 * 27 * chans[i] * chans[i+1] * d**3; d //= 2
print(f"torch {torch.__version__} cudnn {torch.backends.cudnn.version()} device={torch.cuda.get_device_name()} "
      f"channels_last={cl} tf32={tf32} cudnn_benchmark={bench} size={size} batch={batch} median_step_s={med:.4f} "
      f"samples_per_s={batch/med:.2f} conv_fwd_gflop_per_sample={flops/1e9:.1f} est_train_gflops={3*flops*batch/med/1e9:.1f}")
