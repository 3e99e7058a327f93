#!/usr/bin/env python3
"""Tests scripts/check_spack_recipe.py: every check passes on the real recipe and CMakeLists.txt,
and each fails, alone, on a copy broken in the way it exists to catch."""
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
ALL_CHECKS = {"load", "options", "languages", "cuda_arch", "flake8", "catch2", "environment",
              "license", "tests"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def run_checker(recipe=RECIPE, cmake=CMAKE):
    """(exit status, {check: passed}, output) of the checker on these files."""
    result = subprocess.run([sys.executable, CHECKER, "--recipe", recipe, "--cmake", cmake],
                            capture_output=True, text=True)
    output = result.stdout + result.stderr
    results = {m.group(2): m.group(1) == "PASS"
               for m in re.finditer(r"^(PASS|FAIL) (\w+):", result.stdout, re.M)}
    return result.returncode, results, output


class CheckSpackRecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.status, cls.results, cls.output = run_checker()
        # Without flake8 the style check cannot pass anywhere: it says so and is left out below.
        cls.flake8_missing = "flake8 is not installed" in cls.output
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def broken_copy(self, path, old, new):
        """A copy of `path` with `old` replaced by `new` (which must occur)."""
        text = read(path)
        self.assertIn(old, text, f"{os.path.basename(path)} changed; update this test's breakage")
        name = f"{self.id().split('.')[-1]}_{os.path.basename(path)}"
        folder = os.path.join(self.tmp.name, name)
        os.makedirs(folder, exist_ok=True)
        copy = os.path.join(folder, os.path.basename(path))
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        return copy

    def assert_only_failure(self, check, recipe=RECIPE, cmake=CMAKE):
        status, results, output = run_checker(recipe, cmake)
        self.assertEqual(set(results), ALL_CHECKS, output)
        failed = {name for name, ok in results.items() if not ok}
        expected = {check} | ({"flake8"} if self.flake8_missing else set())
        self.assertEqual(failed, expected, output)
        self.assertNotEqual(status, 0, output)
        self.assertRegex(output, rf"\d+ passed, {len(expected)} failed\n?$")

    def test_all_checks_pass_on_the_real_recipe(self):
        self.assertEqual(set(self.results), ALL_CHECKS, self.output)
        failed = {name for name, ok in self.results.items() if not ok}
        if self.flake8_missing:
            self.assertEqual(failed, {"flake8"}, self.output)
            self.skipTest("flake8 is not installed: every other check passed")
        self.assertEqual(failed, set(), self.output)
        self.assertEqual(self.status, 0, self.output)
        self.assertTrue(self.output.rstrip().endswith(f"{len(ALL_CHECKS)} passed, 0 failed"))

    def test_load_fails_when_the_recipe_needs_spack_1(self):
        recipe = self.broken_copy(
            RECIPE, "try:  # Spack >= 1.0", "if True:  # Spack >= 1.0")
        recipe = self.broken_copy(recipe, "except ImportError:", "else:")
        status, results, output = run_checker(recipe)
        self.assertNotEqual(status, 0, output)
        self.assertFalse(results["load"], output)
        self.assertIn("does not load as under Spack 0.23", output)

    def test_options_fails_without_a_define_from_variant(self):
        recipe = self.broken_copy(
            RECIPE, '            self.define_from_variant("TESSERA_ENABLE_PERF", "perf"),\n', "")
        self.assert_only_failure("options", recipe=recipe)

    def test_options_fails_on_a_cmake_option_without_a_variant(self):
        cmake = self.broken_copy(
            CMAKE, "option(TESSERA_ENABLE_PERF",
            'option(TESSERA_ENABLE_EXTRA "an option the recipe lacks" OFF)\n'
            "option(TESSERA_ENABLE_PERF")
        self.assert_only_failure("options", cmake=cmake)

    def test_languages_fails_when_c_is_always_required(self):
        recipe = self.broken_copy(
            RECIPE, 'depends_on("c", type="build", when="+hdf5")', 'depends_on("c", type="build")')
        self.assert_only_failure("languages", recipe=recipe)

    def test_languages_fails_when_c_is_not_declared(self):
        recipe = self.broken_copy(RECIPE, '    depends_on("c", type="build", when="+hdf5")\n', "")
        self.assert_only_failure("languages", recipe=recipe)

    def test_languages_fails_when_cmake_enables_c_unconditionally(self):
        cmake = self.broken_copy(CMAKE, "  enable_language(C)\n", "")
        cmake = self.broken_copy(cmake, "include(GNUInstallDirs)",
                                 "enable_language(C)\ninclude(GNUInstallDirs)")
        self.assert_only_failure("languages", cmake=cmake)

    def test_languages_fails_on_a_language_the_recipe_lacks(self):
        cmake = self.broken_copy(CMAKE, "LANGUAGES CXX)", "LANGUAGES CXX Fortran)")
        self.assert_only_failure("languages", cmake=cmake)

    def test_cuda_arch_fails_when_multi_valued(self):
        recipe = self.broken_copy(RECIPE, "multi=False,", "multi=True,")
        self.assert_only_failure("cuda_arch", recipe=recipe)

    def test_cuda_arch_fails_without_the_override(self):
        recipe = self.broken_copy(RECIPE, 'variant(\n        "cuda_arch",',
                                  'dict(\n        cuda_arch="",')
        self.assert_only_failure("cuda_arch", recipe=recipe)

    def test_flake8_fails_on_a_long_line(self):
        if self.flake8_missing:
            self.skipTest("flake8 is not installed")
        recipe = self.broken_copy(RECIPE, "    def cmake_args(self):",
                                  "    # " + "a long comment " * 7 + "\n    def cmake_args(self):")
        self.assert_only_failure("flake8", recipe=recipe)

    def test_catch2_fails_when_linked(self):
        recipe = self.broken_copy(RECIPE, 'type=("build", "test")', 'type=("build", "link")')
        self.assert_only_failure("catch2", recipe=recipe)

    def test_environment_fails_on_a_git_url_from_the_environment(self):
        recipe = self.broken_copy(RECIPE, 'git = "https://tessera.invalid/tessera.git"',
                                  'git = __import__("os").environ.get("TESSERA_GIT", "x")')
        self.assert_only_failure("environment", recipe=recipe)

    def test_license_fails_without_license(self):
        recipe = self.broken_copy(RECIPE, 'license("BSD-3-Clause")', "pass")
        self.assert_only_failure("license", recipe=recipe)

    def test_tests_fails_without_test_methods(self):
        recipe = self.broken_copy(RECIPE, "def test_info(", "def check_info(")
        recipe = self.broken_copy(recipe, "def test_train_tiny(", "def check_train_tiny(")
        self.assert_only_failure("tests", recipe=recipe)


if __name__ == "__main__":
    unittest.main(verbosity=2)
