#!/usr/bin/env python3
"""Tests scripts/check_spack_recipe.py: every check passes on the real recipe and CMakeLists.txt,
and each fails, alone, on a copy broken in the way it exists to catch."""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(ROOT, "scripts", "check_spack_recipe.py")
RECIPE = os.path.join(ROOT, "spack", "packages", "tessera", "package.py")
CMAKE = os.path.join(ROOT, "CMakeLists.txt")
ONEDNN_CMAKE = os.path.join(ROOT, "backends", "onednn", "CMakeLists.txt")
SPACK_README = os.path.join(ROOT, "spack", "README.md")
ALL_CHECKS = {"load", "options", "languages", "cuda_arch", "onednn_default", "gpu_spec",
              "onednn_range", "flake8", "catch2", "environment", "license", "tests",
              "offline_externals"}

#: name: (the check that must fail alone, the file broken, [(text, its replacement), ...]).
#: Each text must occur in the real file, so a breakage cannot silently stop applying.
BROKEN = {
    "recipe_needs_spack_1": ("load", RECIPE, [
        ("try:  # Spack >= 1.0", "if True:  # Spack >= 1.0"),
        ("except ImportError:", "else:"),
    ]),
    "no_define_from_variant": ("options", RECIPE, [
        ('            self.define_from_variant("TESSERA_ENABLE_PERF", "perf"),\n', ""),
    ]),
    "cmake_option_without_variant": ("options", CMAKE, [
        ("option(TESSERA_ENABLE_PERF",
         'option(TESSERA_ENABLE_EXTRA "an option the recipe lacks" OFF)\n'
         "option(TESSERA_ENABLE_PERF"),
    ]),
    "c_always_required": ("languages", RECIPE, [
        ('depends_on("c", type="build", when="+hdf5")', 'depends_on("c", type="build")'),
    ]),
    "c_not_declared": ("languages", RECIPE, [
        ('    depends_on("c", type="build", when="+hdf5")\n', ""),
    ]),
    "cmake_enables_c_unconditionally": ("languages", CMAKE, [
        ("  enable_language(C)\n", ""),
        ("include(GNUInstallDirs)", "enable_language(C)\ninclude(GNUInstallDirs)"),
    ]),
    "cmake_enables_c_in_else_branch": ("languages", CMAKE, [
        ("  enable_language(C)\n", ""),
        ("  find_package(HDF5 REQUIRED COMPONENTS C)\n",
         "  find_package(HDF5 REQUIRED COMPONENTS C)\nelse()\n  enable_language(C)\n"),
    ]),
    "cmake_enables_fortran": ("languages", CMAKE, [
        ("LANGUAGES CXX)", "LANGUAGES CXX Fortran)"),
    ]),
    "cuda_arch_multi_valued": ("cuda_arch", RECIPE, [("multi=False,", "multi=True,")]),
    "cuda_arch_not_overridden": ("cuda_arch", RECIPE, [
        ('variant(\n        "cuda_arch",', 'dict(\n        cuda_arch="",'),
    ]),
    "onednn_off_by_default": ("onednn_default", RECIPE, [
        ('            default=True,\n            description="oneDNN',
         '            default=False,\n            description="oneDNN'),
    ]),
    "cudnn_refused_on_hopper": ("gpu_spec", RECIPE, [
        ('    conflicts("+cudnn", when="~cuda"',
         '    conflicts("+cudnn", when="cuda_arch=90")\n    conflicts("+cudnn", when="~cuda"'),
    ]),
    "onednn_in_cuda_builds": ("gpu_spec", RECIPE, [
        ('when=f"target={_family}: ~cuda"', 'when=f"target={_family}:"'),
    ]),
    "onednn_2x_only": ("onednn_range", RECIPE, [('"onednn@2.6:3"', '"onednn@2.6:2"')]),
    "cmake_accepts_onednn_4": ("onednn_range", ONEDNN_CMAKE, [
        ("NOT dnnl_VERSION VERSION_LESS 4", "NOT dnnl_VERSION VERSION_LESS 5"),
    ]),
    "long_line": ("flake8", RECIPE, [
        ("    def cmake_args(self):",
         "    # " + "a long comment " * 7 + "\n    def cmake_args(self):"),
    ]),
    "catch2_linked": ("catch2", RECIPE, [('type=("build", "test")', 'type=("build", "link")')]),
    "git_url_from_environment": ("environment", RECIPE, [
        ('git = "https://tessera.invalid/tessera.git"',
         'git = __import__("os").environ.get("TESSERA_GIT", "x")'),
    ]),
    "no_license": ("license", RECIPE, [('license("BSD-3-Clause")', "pass")]),
    "no_test_methods": ("tests", RECIPE, [
        ("def test_info(", "def check_info("),
        ("def test_train_tiny(", "def check_train_tiny("),
        ("def test_python_import(", "def check_python_import("),
    ]),
    # The offline guide as Spack 1.1 found it: no gmake, which CMakePackage depends on.
    "guide_without_gmake": ("offline_externals", SPACK_README, [
        ("  gmake:           {buildable: false, externals: [{spec: gmake@4.3, prefix: /usr}]}"
         "             # make\n", ""),
    ]),
    # A virtual with a requirement but no external that provides it.
    "guide_without_mpi_provider": ("offline_externals", SPACK_README, [
        ("  openmpi:         {buildable: false, externals: [{spec: openmpi@4.1.4, prefix: /usr}]}", ""),
    ]),
    "recipe_dependency_not_in_guide": ("offline_externals", RECIPE, [
        ('    depends_on("cli11@2:")\n', '    depends_on("cli11@2:")\n    depends_on("fftw")\n'),
    ]),
}


def run_checker(recipe=RECIPE, cmake=CMAKE, onednn_cmake=ONEDNN_CMAKE,
                spack_readme=SPACK_README):
    """(exit status, {check: passed}, output) of the checker on these files."""
    result = subprocess.run([sys.executable, CHECKER, "--recipe", recipe, "--cmake", cmake,
                             "--onednn-cmake", onednn_cmake, "--spack-readme", spack_readme],
                            capture_output=True, text=True)
    output = result.stdout + result.stderr
    results = {m.group(2): m.group(1) == "PASS"
               for m in re.finditer(r"^(PASS|FAIL) (\w+):", result.stdout, re.M)}
    return result.returncode, results, output


def broken_copy(folder, path, replacements):
    """A copy of `path` in `folder` with the replacements made; None if a text is missing."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for old, new in replacements:
        if old not in text:
            return None
        text = text.replace(old, new, 1)
    os.makedirs(folder)
    copy = os.path.join(folder, os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text)
    return copy


class CheckSpackRecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The checker runs once per case, in parallel: each run is mostly interpreter start-up
        # and flake8, so a few at a time take the wall time of one.
        cls.tmp = tempfile.TemporaryDirectory()
        cls.copies = {}
        jobs = {"real": (RECIPE, CMAKE, ONEDNN_CMAKE, SPACK_README)}
        for name, (_check, path, replacements) in BROKEN.items():
            copy = broken_copy(os.path.join(cls.tmp.name, name), path, replacements)
            cls.copies[name] = copy
            if copy:
                files = {RECIPE: RECIPE, CMAKE: CMAKE, ONEDNN_CMAKE: ONEDNN_CMAKE,
                         SPACK_README: SPACK_README, path: copy}
                jobs[name] = (files[RECIPE], files[CMAKE], files[ONEDNN_CMAKE], files[SPACK_README])
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = {name: pool.submit(run_checker, *files) for name, files in jobs.items()}
            cls.runs = {name: future.result() for name, future in futures.items()}
        # Without flake8 the style check cannot pass anywhere: it says so and is left out below.
        cls.flake8_missing = "flake8 is not installed" in cls.runs["real"][2]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_all_checks_pass_on_the_real_recipe(self):
        status, results, output = self.runs["real"]
        self.assertEqual(set(results), ALL_CHECKS, output)
        failed = {name for name, ok in results.items() if not ok}
        if self.flake8_missing:
            self.assertEqual(failed, {"flake8"}, output)
            self.skipTest("flake8 is not installed: every other check passed")
        self.assertEqual(failed, set(), output)
        self.assertEqual(status, 0, output)
        self.assertTrue(output.rstrip().endswith(f"{len(ALL_CHECKS)} passed, 0 failed"), output)

    def test_each_check_fails_alone_on_its_broken_copy(self):
        for name, (check, path, _replacements) in BROKEN.items():
            with self.subTest(name):
                self.assertIsNotNone(self.copies[name],
                                     f"{os.path.basename(path)} changed: update case {name}")
                if check == "flake8" and self.flake8_missing:
                    continue
                status, results, output = self.runs[name]
                self.assertNotEqual(status, 0, output)
                self.assertEqual(set(results), ALL_CHECKS, output)
                failed = {c for c, ok in results.items() if not ok}
                if check == "load":  # nothing else can be checked on a recipe that fails to load
                    self.assertIn("does not load as under Spack 0.23", output)
                    self.assertEqual(failed, ALL_CHECKS, output)
                    continue
                expected = {check} | ({"flake8"} if self.flake8_missing else set())
                self.assertEqual(failed, expected, output)
                self.assertRegex(output, rf"\d+ passed, {len(expected)} failed\n?$")


if __name__ == "__main__":
    unittest.main(verbosity=2)
