#!/usr/bin/env python3
"""Bytes one rank sends per training step under a model-parallel layout, from the formulas of
docs/parallelism.md ("Model parallelism: what each split communicates").

  channel_split_traffic.py CONFIG RANKS RANK

CONFIG is a `tessera train` config whose layers are a chain of conv3d (padding keeping the
size), max_pool3d/avg_pool3d, pointwise activations, flatten and dense layers, each with an
optional sample/channel/filter distribution (no spatial splits; channel and filter together
are the 2-D split; "weights": "sharded" shards a layer's weights over its replicas, and
"cube": q is the 3-D split of q samples x q channels x q filters with sharded weights); RANK the
rank whose traffic is wanted. Prints one JSON object: bytes per step by kind (channel,
redistribution, gradients, weights) and their total. The benchmark compares it with what the
run counted.
"""
import json
import sys

POINTWISE = {"relu", "leaky_relu", "elu", "dropout", "batch_norm"}


def expand(dist):
    """The distribution with "cube": q written out as its three counts and sharded weights."""
    d = dict(dist)
    q = d.pop("cube", None)
    if q:
        d.update(sample=q, channel=q, filter=q, weights="sharded")
    return d


def layout(dist):
    """What places activations: the counts, not where the weights live."""
    return {k: v for k, v in dist.items() if k != "weights"}


def grid_block(dist, ranks, rank, shape):
    """This rank's block of a whole activation `shape` ([N, ..., C]) as (offsets, extents)."""
    s, p = dist.get("sample", 1), dist.get("channel", 1) * dist.get("filter", 1)
    assert s * p == ranks, f"distribution {dist} does not use {ranks} ranks"
    c_index, s_index = rank % p, rank // p
    off = [0] * len(shape)
    ext = list(shape)
    ext[0] //= s
    off[0] = s_index * ext[0]
    ext[-1] //= p
    off[-1] = c_index * ext[-1]
    return off, ext


def volume(ext):
    v = 1
    for e in ext:
        v *= e
    return v


def overlap(a, b):
    v = 1
    for (ao, ae), (bo, be) in zip(zip(*a), zip(*b)):
        v *= max(0, min(ao + ae, bo + be) - max(ao, bo))
    return v


def traffic(config, ranks, rank):
    model = config["model"]
    batch = config["training"]["batch_size"]
    default = expand(model.get("distribution", {"sample": ranks}))
    shape = [batch] + list(model["input"]["size"]) + [model["input"]["channels"]]
    dist = default
    sent = {"channel": 0.0, "redistribution": 0.0, "gradients": 0.0, "weights": 0.0}
    layers = model["layers"]
    for i, layer in enumerate(layers):
        d = expand(layer.get("distribution", default))
        if layout(d) != layout(dist):  # a redistribution: what this rank holds and the other layout gives away
            src, dst = grid_block(dist, ranks, rank, shape), grid_block(d, ranks, rank, shape)
            sent["redistribution"] += 4 * (volume(src[1]) - overlap(src, dst))  # forward
            sent["redistribution"] += 4 * (volume(dst[1]) - overlap(src, dst))  # backward
            dist = d
        p = d.get("channel", 1) * d.get("filter", 1)
        s = d.get("sample", 1)
        pc, pf = d.get("channel", 1), d.get("filter", 1)
        kind = "grid" if pc > 1 and pf > 1 else "filter" if pf > 1 else "channel" if pc > 1 else None
        t = layer["type"]
        out = list(shape)
        if t == "conv3d":
            out[-1] = layer["filters"]
            weights = layer["filters"] * (layer.get("kernel", 3) ** 3) * shape[-1] + layer["filters"]
        elif t == "dense":
            out = [shape[0], layer["units"]]
            weights = layer["units"] * shape[-1] + layer["units"]
        elif t in ("max_pool3d", "avg_pool3d"):
            k = layer.get("kernel", 2)
            out = [shape[0]] + [x // k for x in shape[1:-1]] + [shape[-1]]
            weights = 0
        elif t == "flatten":
            out = [shape[0], volume(shape[1:])]
            weights = 0
        elif t in POINTWISE:
            weights = 0
        else:
            sys.exit(f"channel_split_traffic.py: layer type {t} is not modelled")
        if weights:
            needs_dx = i > 0
            if kind == "filter":  # gather the input, reduce-scatter its gradient
                x_slice = volume(shape) // s // p
                sent["channel"] += 4 * (p - 1) * x_slice * (2 if needs_dx else 1)
            elif kind == "channel":  # reduce-scatter the output, gather its gradient
                y_slice = volume(out) // s // p
                sent["channel"] += 4 * 2 * (p - 1) * y_slice
            elif kind == "grid":  # gather the input block over the row, reduce-scatter over the column
                x_slice, y_slice = volume(shape) // s // p, volume(out) // s // p
                sent["channel"] += 4 * (pf - 1) * x_slice * (2 if needs_dx else 1) + 4 * 2 * (pc - 1) * y_slice
            # A shard sums over the ranks holding it (ranks / p of them), a whole tensor over all;
            # under "channel" the bias stays whole.
            bias = layer.get("filters", layer.get("units"))
            ring = lambda group, elements: 4 * 2 * (group - 1) / group * elements
            replicas = ranks // p
            # The bias: a filter slice summed over its replicas, a 2-D column's over the ranks
            # that share it, otherwise whole over every rank.
            if kind == "filter":
                sent["gradients"] += ring(replicas, bias // p)
            elif kind == "grid":
                sent["gradients"] += ring(ranks // pf, bias // pf)
            else:
                sent["gradients"] += ring(ranks, bias)
            # The weight block: summed over its replicas, or, sharded, gathered before forward
            # and its gradient reduce-scattered after backward, in rooms of the longest run.
            block = (weights - bias) // p
            if d.get("weights") == "sharded" and replicas > 1:
                sent["weights"] += 2 * 4 * (replicas - 1) * -(-block // replicas)
            else:
                sent["gradients"] += ring(replicas, block)
        shape = out
    sent["total"] = sum(sent.values())
    return sent


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(json.dumps(traffic(json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]))))
