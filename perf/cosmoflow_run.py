#!/usr/bin/env python3
"""The run config and the figures every cosmoflow-small benchmark in perf/ shares.

  cosmoflow_run.py config SIZE BATCH EPOCHS OUT [PATH=JSON ...]
      examples/cosmoflow_small.json at input size SIZE, trained like the peers: on one stored
      batch of BATCH samples (the in-memory store serves it after the first step, so the timed
      steps measure training, not data generation), no validation, one step per epoch for
      EPOCHS epochs, every step logged. Each PATH=JSON then sets a dotted key, e.g.
      model.distribution='{"depth": 2}' or data.store_mb=0.
  cosmoflow_run.py example_config EXAMPLE SIZE BATCH EPOCHS OUT [PATH=JSON ...]
      the same made from another example config, e.g. examples/unet3d_small.json.
  cosmoflow_run.py model_config MODEL SIZE BATCH EPOCHS OUT [PATH=JSON ...]
      the same for a benchmark model by name: cosmoflow-small, unet3d-small, or
      cosmoflow-mlperf (the network of examples/cosmoflow/cosmoflow_128.json, its HDF5 data
      replaced by synthetic fields of 4 channels: the benchmark times training, not reading;
      its checkpointing and validation metric left out).
  cosmoflow_run.py rate METRICS BATCH
      samples/s of the median step after the two warm-up steps (docs/benchmarks.md),
      from a `tessera train --metrics` log.
  cosmoflow_run.py conv_limit OPS BACKEND
      the convolutions' GFLOP/s per layer and the conv-bound limit (samples/s if a step were
      its convolutions alone) from a `tessera bench ops` result, for BACKEND.
"""
import json
import os
import statistics
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
EXAMPLE = os.path.join(EXAMPLES, "cosmoflow_small.json")
MODELS = {"cosmoflow-small": "cosmoflow_small.json", "unet3d-small": "unet3d_small.json",
          "cosmoflow-mlperf": "cosmoflow/cosmoflow_128.json"}


def config(size, batch, epochs, out, settings, example=EXAMPLE):
    c = json.load(open(example))
    if c["data"].get("source") == "hdf5":
        c["data"] = {"source": "synthetic_fields", "channels": c["model"]["input"]["channels"]}
        for key in ("checkpoint", "metrics"):
            c["training"].pop(key, None)
    c["model"]["input"]["size"] = [size] * 3
    c["data"].update({"size": size, "samples": batch, "validation_samples": 0})
    c["training"].update({"batch_size": batch, "epochs": epochs, "log_every": 1})
    for setting in settings:
        path, _, value = setting.partition("=")
        *parents, key = path.split(".")
        node = c
        for p in parents:
            node = node.setdefault(p, {})
        node[key] = json.loads(value)
    json.dump(c, open(out, "w"))


def rate(metrics, batch):
    events = [json.loads(l) for l in open(metrics)]
    timed = [e for e in events if e["event"] == "train"][2:]  # two warm-up steps
    return batch / statistics.median(batch / e["samples_per_s"] for e in timed)


def conv_limit(ops_file, backend):
    result = json.load(open(ops_file))
    convs = [o for o in result["ops"] if o["backend"] == backend and o["op_class"].startswith("conv_")]
    if not convs or not all(o["supported"] for o in convs):
        sys.exit(f"{ops_file}: {backend} has no timed convolutions")
    layers = list(dict.fromkeys(o["layer"] for o in convs))
    total = 0.0
    for i, layer in enumerate(layers):
        # A transposed convolution's passes count as a convolution's (unet3d-small's upsampling).
        t = {o["op_class"].replace("conv_transpose_", "conv_"): o for o in convs if o["layer"] == layer}
        print(f"{backend:8s} {layer:8s} {t['conv_forward']['shape']:44s} fwd {t['conv_forward']['gflops']:7.1f}"
              f"  bwd_d {t['conv_backward_data']['gflops']:7.1f}  bwd_w {t['conv_backward_weights']['gflops']:7.1f} GF/s")
        # Training needs no gradient of the model input: the first layer has no backward-data.
        total += t["conv_forward"]["seconds"] + t["conv_backward_weights"]["seconds"]
        total += 0 if i == 0 else t["conv_backward_data"]["seconds"]
    print(f"{backend:8s} conv-bound limit {result['batch'] / total:.2f} samples/s")


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "config":
        config(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:])
    elif len(sys.argv) >= 7 and sys.argv[1] == "example_config":
        config(int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7:], example=sys.argv[2])
    elif len(sys.argv) >= 7 and sys.argv[1] == "model_config":
        if sys.argv[2] not in MODELS:
            sys.exit(f"cosmoflow_run.py: model_config: no model '{sys.argv[2]}' (one of {', '.join(MODELS)})")
        config(int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7:],
               example=os.path.join(EXAMPLES, MODELS[sys.argv[2]]))
    elif len(sys.argv) == 4 and sys.argv[1] == "rate":
        print(f"{rate(sys.argv[2], int(sys.argv[3])):.3f}")
    elif len(sys.argv) == 4 and sys.argv[1] == "conv_limit":
        conv_limit(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
