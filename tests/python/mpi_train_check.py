"""Trains CosmoFlow-tiny (synchronised batch norm) on numpy arrays under the distribution given
as JSON in argv[2], on however many ranks mpirun started, and writes rank 0's losses and
trained weights to argv[1] (.npz). With argv[3] == "mpi4py", mpi4py starts MPI first, as in a
user's script; otherwise tessera does. With argv[4] == "stream" the data is a list of batches
instead of arrays. A "filter" or "channel" distribution goes to conv2 alone (the model's
input cannot be split by channels); the result's weights are then gathered from the ranks.
Training starts from whole weights given with init=, which such a layer cuts its part from."""

import json
import sys

if len(sys.argv) > 3 and sys.argv[3] == "mpi4py":
    from mpi4py import MPI  # noqa: F401  (initialises MPI before tessera is imported)

import numpy  # noqa: E402

import tessera  # noqa: E402
from conftest import regression_arrays, tiny_regression_config  # noqa: E402

config = tiny_regression_config()
for layer in config["model"]["layers"]:
    if layer["type"] == "batch_norm":
        layer["sync"] = True
distribution = json.loads(sys.argv[2])
if set(distribution) & {"filter", "channel"}:
    config["model"]["layers"][4]["distribution"] = distribution  # conv2's weights split over the ranks
else:
    config["model"]["distribution"] = distribution
# Plain SGD: Adam would scale the rounding noise of gradients that are zero in exact arithmetic
# (a convolution's bias before a batch norm) up to whole steps, and the ranks round differently.
config["optimizer"] = {"type": "sgd", "lr": 0.01}
x, y = regression_arrays(32, seed=11)
data = (x, y)
if len(sys.argv) > 4 and sys.argv[4] == "stream":
    data = [(x[i:i + 8], y[i:i + 8]) for i in range(0, len(x), 8)]
# Whole starting weights, which a rank holding part of a parameter cuts its part from.
start = tessera.Model(config).state_dict(copy=True)
start = {k: v * 0.9 for k, v in start.items()}
result = tessera.train(config, data=data, validation=(x[:8], y[:8]), epochs=2, progress=True, init=start)
if tessera.rank() == 0:
    state = result.model.state_dict(copy=True)
    numpy.savez(sys.argv[1], losses=numpy.array(result.step_losses), validation=result.validation_loss,
                predictions=result.model.predict(x[:8]),
                ranks=tessera.ranks(), **{"w:" + k: v for k, v in state.items()})
