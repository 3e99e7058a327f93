"""examples/python/train_and_export.py runs as its README says, learns, and PyTorch agrees."""

import os
import re
import subprocess
import sys

from conftest import SOURCE


def test_the_example_learns_and_pytorch_gives_its_predictions(tmp_path):
    script = os.path.join(SOURCE, "examples", "python", "train_and_export.py")
    done = subprocess.run([sys.executable, script, "--out", str(tmp_path), "--require-ratio", "8"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    trained = re.search(r"^trained 192 steps .* validation loss ([0-9.]+), ([0-9.]+)x below", done.stdout, re.M)
    assert trained, done.stdout
    assert (tmp_path / "model.ckpt").exists() and (tmp_path / "metrics.jsonl").exists()
    agreement = re.search(r"PyTorch gives Tessera's predictions within ([0-9.e+-]+)", done.stdout)
    if agreement:  # torch installed
        assert float(agreement.group(1)) < 1e-4
