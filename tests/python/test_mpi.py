"""Several ranks under mpirun, with and without mpi4py: every layout trains as one rank does,
and only rank 0 prints."""

import os
import subprocess
import sys

import numpy
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MPIEXEC = os.environ.get("TESSERA_MPIEXEC", "mpirun")


def run(ranks, distribution, out, starter="tessera", data="arrays"):
    command = [MPIEXEC, "-np", str(ranks), sys.executable, os.path.join(HERE, "mpi_train_check.py"), str(out),
               distribution, starter, data]
    done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return numpy.load(out), done.stdout + done.stderr


@pytest.fixture(scope="module")
def one_rank(tmp_path_factory):
    result, _ = run(1, '{"sample": 1}', tmp_path_factory.mktemp("one") / "one.npz")
    return result


@pytest.fixture(scope="module")
def one_rank_stream(tmp_path_factory):
    result, _ = run(1, '{"sample": 1}', tmp_path_factory.mktemp("one") / "stream.npz", data="stream")
    return result


def assert_same_training(many, one):
    numpy.testing.assert_allclose(many["losses"], one["losses"], rtol=2e-4)
    assert float(many["validation"]) == pytest.approx(float(one["validation"]), rel=2e-4)
    numpy.testing.assert_allclose(many["predictions"], one["predictions"], rtol=1e-3, atol=1e-4)
    for key in one.files:
        if key.startswith("w:"):
            numpy.testing.assert_allclose(many[key], one[key], rtol=1e-3, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("distribution, starter", [
    ('{"sample": 2}', "mpi4py"),
    ('{"depth": 2}', "mpi4py"),
    ('{"sample": 2}', "tessera"),
    ('{"filter": 2}', "tessera"),
    ('{"channel": 2}', "tessera"),
])
def test_two_ranks_train_as_one(one_rank, tmp_path, distribution, starter):
    if starter == "mpi4py":
        pytest.importorskip("mpi4py")
    many, output = run(2, distribution, tmp_path / "two.npz", starter)
    assert int(many["ranks"]) == 2
    assert_same_training(many, one_rank)
    # The run's description and every validation line are printed once, by rank 0.
    assert output.count("total trainable parameters") == 1
    assert output.count("epoch 2: validation loss") == 1


@pytest.mark.parametrize("distribution", ['{"sample": 2}', '{"depth": 2}'])
def test_two_ranks_take_their_part_of_each_batch_of_an_iterable(one_rank_stream, tmp_path, distribution):
    many, _ = run(2, distribution, tmp_path / "two.npz", data="stream")
    assert_same_training(many, one_rank_stream)
