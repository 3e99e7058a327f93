#!/usr/bin/env python3
"""Tests scripts/check_examples.py --check-docs: the README's Example apps table states each
app's figure with a tolerance and every app README still shows the commands the check runs; a
copy of the docs that lacks either is refused, naming the app."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(ROOT, "scripts", "check_examples.py")
APPS = ("unet3d", "ffn", "resnet", "cosmoflow", "bcpnn", "cpp")


def check_docs(docs_root):
    done = subprocess.run([sys.executable, CHECKER, "--check-docs", "--docs-root", docs_root],
                          capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


class CheckExamplesDocsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        shutil.copy(os.path.join(ROOT, "README.md"), self.root)
        for app in APPS:
            os.makedirs(os.path.join(self.root, "examples", app))
            shutil.copy(os.path.join(ROOT, "examples", app, "README.md"),
                        os.path.join(self.root, "examples", app))

    def tearDown(self):
        self.tmp.cleanup()

    def edit(self, path, old, new):
        path = os.path.join(self.root, path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertIn(old, text, f"{path} changed: update this test")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def test_the_real_docs_pass(self):
        status, output = check_docs(self.root)
        self.assertEqual(status, 0, output)
        for app in APPS:
            self.assertIn(f"{app}: ", output)

    def test_a_figure_without_tolerance_is_refused(self):
        self.edit("README.md", "foreground IoU 0.957 ± 0.01", "foreground IoU 0.957")
        status, output = check_docs(self.root)
        self.assertNotEqual(status, 0, output)
        self.assertIn("FAIL unet3d: the README's row '3D U-Net' states no figure with a tolerance", output)

    def test_a_changed_app_command_is_refused(self):
        self.edit("examples/cosmoflow/README.md", "--validation-samples 128", "--validation-samples 256")
        status, output = check_docs(self.root)
        self.assertNotEqual(status, 0, output)
        self.assertIn("FAIL cosmoflow: examples/cosmoflow/README.md no longer shows the command", output)


if __name__ == "__main__":
    unittest.main(verbosity=2)
