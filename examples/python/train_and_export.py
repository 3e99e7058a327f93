"""Tessera from Python, start to finish, as a notebook would go: make data in numpy, build a
3D CNN, train it, plot its loss, then run the trained model in PyTorch and compare.

    python3 examples/python/train_and_export.py [--samples N] [--epochs N] [--out DIR]
    mpirun -np 2 python3 examples/python/train_and_export.py      # the same, on 2 ranks

The task: volumes of 4 channels of smooth random fields, each channel shifted by an offset and
all scaled by a random amplitude; the targets are the 4 offsets, which the network must learn
to tell from the noise and the amplitude. Needs numpy;
matplotlib for the plot and torch for the comparison are used where installed.
"""

import argparse
import os

import numpy

import tessera

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--samples", type=int, default=512, help="training samples (default 512)")
parser.add_argument("--size", type=int, default=16, help="voxels per side (default 16)")
parser.add_argument("--epochs", type=int, default=6, help="epochs (default 6)")
parser.add_argument("--out", default="runs/python_example", help="folder for the checkpoint, log and plot")
parser.add_argument("--require-ratio", type=float, default=0.0,
                    help="exit 1 unless the validation loss is this many times below predicting the mean")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)


# 1. Data, channels-last [N, D, H, W, C] float32, the same on every rank (same seed).
def make_data(samples, size, seed):
    rng = numpy.random.default_rng(seed)
    noise = rng.standard_normal((samples, size, size, size, 4), dtype=numpy.float32)
    # Smooth each field a little (a 3-point average along every axis).
    for axis in (1, 2, 3):
        noise = (noise + numpy.roll(noise, 1, axis) + numpy.roll(noise, -1, axis)) / 3
    offsets = rng.uniform(-1, 1, (samples, 4)).astype(numpy.float32)
    amplitude = rng.uniform(0.5, 2, (samples, 1, 1, 1, 1)).astype(numpy.float32)
    x = amplitude * noise + offsets[:, None, None, None, :]
    return numpy.ascontiguousarray(x, dtype=numpy.float32), offsets


x, y = make_data(args.samples, args.size, seed=1)
x_val, y_val = make_data(128, args.size, seed=2)

# 2. The model, written with the builder (a dict in the JSON config's structure would do too).
b = tessera.ModelBuilder(channels=4, size=[args.size] * 3)
for i, filters in enumerate((16, 32), 1):
    b.conv3d(filters, name=f"conv{i}", kernel=3, padding=1).batch_norm(name=f"bn{i}").relu(name=f"relu{i}")
    b.max_pool3d(name=f"pool{i}", kernel=2)
b.flatten(name="flatten").dense(64, name="fc").relu(name="fc_relu").dense(4, name="out")
config = b.config(loss={"type": "mse"},
                  optimizer={"type": "adam", "lr": 0.002, "schedule": {"type": "cosine", "warmup_steps": 16}},
                  training={"batch_size": 16, "seed": 42, "log_every": 8})

# 3. Train, with a callback that records every step's loss.
losses = []
result = tessera.train(config, data=(x, y), validation=(x_val, y_val), epochs=args.epochs,
                       checkpoint=os.path.join(args.out, "model.ckpt"), metrics=os.path.join(args.out, "metrics.jsonl"),
                       on_step=lambda m: losses.append(m["loss"]))
ratio = result.validation_baseline / result.validation_loss
if tessera.rank() == 0:
    print(f"trained {result.steps} steps at {result.samples_per_second:.0f} samples/s: validation loss "
          f"{result.validation_loss:.4f}, {ratio:.1f}x below predicting the mean ({result.validation_baseline:.4f})")

    # 4. The loss curve, from the callback's record (the metrics log has it too:
    #    tessera.read_metrics(...).series("train", "loss")).
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.figure(figsize=(6, 3.5))
        plt.semilogy(range(1, len(losses) + 1), losses)
        plt.xlabel("step")
        plt.ylabel("training loss (MSE)")
        plt.tight_layout()
        plt.savefig(os.path.join(args.out, "loss.png"), dpi=100)
        print(f"loss curve: {os.path.join(args.out, 'loss.png')}")
    except ImportError:
        print("matplotlib is not installed: no plot (Debian: python3-matplotlib)")

    # 5. Predict in Tessera, then in PyTorch from the exported module.
    model = result.model
    predictions = model.predict(x_val[:8])
    try:
        import torch
        import tessera.torch
    except ImportError:
        print("torch is not installed: no PyTorch comparison (Debian: python3-torch)")
    else:
        module = tessera.torch.export(model)
        with torch.no_grad():
            in_torch = module(torch.from_numpy(numpy.moveaxis(x_val[:8], -1, 1).copy())).numpy()
        difference = float(numpy.abs(in_torch - predictions).max())
        print(f"PyTorch gives Tessera's predictions within {difference:.2e} (largest |prediction| "
              f"{float(numpy.abs(predictions).max()):.2f})")
if ratio < args.require_ratio:
    raise SystemExit(f"validation loss only {ratio:.2f}x below predicting the mean, {args.require_ratio} required")
