#!/usr/bin/env python3
"""The run config and the figures every cosmoflow-small benchmark in perf/ shares.

  cosmoflow_run.py config SIZE BATCH EPOCHS OUT [PATH=JSON ...]
      examples/cosmoflow_small.json at input size SIZE, trained like the peers: on one stored
      batch of BATCH samples (the in-memory store serves it after the first step, so the timed
      steps measure training, not data generation), no validation, one step per epoch for
      EPOCHS epochs, every step logged. Each PATH=JSON then sets a dotted key, e.g.
      model.distribution='{"depth": 2}' or data.store_mb=0.
  cosmoflow_run.py rate METRICS BATCH
      samples/s of the median step after the two warm-up steps (docs/benchmarks.md),
      from a `tessera train --metrics` log.
"""
import json
import os
import statistics
import sys

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "cosmoflow_small.json")


def config(size, batch, epochs, out, settings):
    c = json.load(open(EXAMPLE))
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


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "config":
        config(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:])
    elif len(sys.argv) == 4 and sys.argv[1] == "rate":
        print(f"{rate(sys.argv[2], int(sys.argv[3])):.3f}")
    else:
        sys.exit(__doc__)
