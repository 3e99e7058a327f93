#!/usr/bin/env python3
"""Checks the Spack recipe (spack/packages/tessera/package.py) against CMakeLists.txt without
Spack: the recipe is loaded with stand-in `spack.package` modules whose directives record their
arguments, once as Spack 1.x sees it and once as Spack 0.23 does, and what it declares is
compared with the options and languages of the CMake project.

Usage: scripts/check_spack_recipe.py [--recipe PATH] [--cmake PATH] [--onednn-cmake PATH]
                                     [--spack-readme PATH]
Prints one line per check (PASS/FAIL, its name, what was found), then `N passed, N failed`;
exits 1 if any check failed. Python standard library only; the style check runs flake8.
"""
import argparse
import ast
import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Spack's own CudaPackage list is longer; a few values are enough for the checks below.
CUDA_ARCH_VALUES = ("60", "70", "75", "80", "86", "89", "90")

#: CMake's language names and the virtual packages Spack declares compilers through.
SPACK_LANGUAGE = {"C": "c", "CXX": "cxx", "Fortran": "fortran"}

#: flake8 as Spack's own style configuration runs it on package.py files: 99 columns, and no
#: findings about `from spack.package import *` (the documented idiom) or the names it brings.
FLAKE8_ARGS = ["--max-line-length", "99", "--extend-ignore", "F403,F405"]


class CheckError(Exception):
    """A check's finding, in words."""


# --- stand-in Spack modules ---------------------------------------------------------------------


class Directive:
    """One directive call in a class body: its name, arguments and the enclosing when()s."""

    def __init__(self, name, args, kwargs, when_stack, defaults):
        self.name = name
        self.args = args
        self.kwargs = {**defaults, **kwargs}
        if when_stack:  # inside `with when(...)`: the conditions add up
            conditions = [*when_stack, self.kwargs.get("when")]
            self.kwargs["when"] = " ".join(c for c in conditions if c)

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"


class Recorder:
    """Collects directives; `target` is the list the next class body's directives go to."""

    def __init__(self):
        self.target = []
        self.when_stack = []
        self.defaults = [{}]

    def directive(self, name):
        def record(*args, **kwargs):
            self.target.append(Directive(name, args, kwargs, self.when_stack, self.defaults[-1]))

        record.__name__ = name
        return record

    @contextlib.contextmanager
    def when(self, condition):
        self.when_stack.append(condition)
        try:
            yield
        finally:
            self.when_stack.pop()

    @contextlib.contextmanager
    def default_args(self, **kwargs):
        self.defaults.append({**self.defaults[-1], **kwargs})
        try:
            yield
        finally:
            self.defaults.pop()


class RecordingEnviron(dict):
    """os.environ while the recipe loads: a copy that remembers which variables were read."""

    def __init__(self, environ):
        super().__init__(environ)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


class BareSpec:
    """A spec that satisfies no constraint, so cmake_args() takes only its unconditional path."""

    def satisfies(self, _constraint):
        return False


def make_spack_modules(recorder):
    """The modules `from spack.package import *` and the build-system imports resolve to."""
    package = types.ModuleType("spack.package")
    names = {}
    for name in ("version", "variant", "depends_on", "conflicts", "requires", "license",
                 "maintainers", "patch", "resource", "provides", "extends", "build_system",
                 "can_splice", "redistribute", "filter_compiler_wrappers"):
        names[name] = recorder.directive(name)
    names["when"] = recorder.when

    def generator(*values, default=None):
        names["variant"]("generator", default=default or values[0], values=values,
                         description="CMake generator")

    names["generator"] = generator
    names["default_args"] = recorder.default_args

    def any_combination_of(*values):
        return ("any_combination_of",) + values

    def unavailable(*_args, **_kwargs):
        raise CheckError("a Spack runtime helper was called while the recipe was loaded")

    for helper in ("Executable", "which", "join_path", "test_part", "working_dir",
                   "filter_file", "install", "mkdirp"):
        names[helper] = unavailable
    names["any_combination_of"] = any_combination_of
    names["InstallError"] = type("InstallError", (Exception,), {})
    names["SkipTest"] = type("SkipTest", (Exception,), {})

    class PackageBase:
        spec = BareSpec()

    class CMakePackage(PackageBase):
        def define(self, name, value):
            return f"-D{name}={value}"

        def define_from_variant(self, name, variant=None):
            self.defined_from_variant.append((name, variant))
            return f"-D{name}=<{variant}>"

    # CudaPackage as Spack declares it: cuda_arch is multi-valued there.
    recorder.target = []
    variant = names["variant"]
    variant("cuda", default=False, description="Build with CUDA")
    variant("cuda_arch", description="CUDA architecture",
            values=any_combination_of(*CUDA_ARCH_VALUES), sticky=True, when="+cuda")
    names["depends_on"]("cuda", when="+cuda")
    cuda_directives = recorder.target
    CudaPackage = type("CudaPackage", (PackageBase,), {
        "cuda_arch_values": CUDA_ARCH_VALUES, "_directives": cuda_directives})
    # What Spack 1.x's CMakePackage itself declares (spack_repo.builtin.build_systems.cmake):
    # a generator variant, make by default, and the build tools it implies. These are
    # dependencies of every CMake recipe that a guide declaring externals must cover.
    recorder.target = []
    variant("generator", default="make", values=("make", "ninja"), description="CMake generator")
    names["depends_on"]("cmake", type="build")
    names["depends_on"]("gmake", type="build", when="generator=make")
    names["depends_on"]("ninja", type="build", when="generator=ninja")
    CMakePackage._directives = recorder.target
    recorder.target = []

    names["PackageBase"] = PackageBase
    names["CMakePackage"] = CMakePackage
    names["CudaPackage"] = CudaPackage
    package.__dict__.update(names)
    package.__all__ = list(names)

    spack = types.ModuleType("spack")
    spack.package = package
    build_systems = {}
    for leaf, cls in (("cmake", CMakePackage), ("cuda", CudaPackage)):
        module = types.ModuleType(f"spack_repo.builtin.build_systems.{leaf}")
        setattr(module, cls.__name__, cls)
        build_systems[leaf] = module
    return spack, package, build_systems


class LoadedRecipe:
    """The recipe's package class and, in order, the directives it and its bases declared."""

    def __init__(self, cls, directives, path):
        self.cls = cls
        self.directives = directives
        self.path = path

    def calls(self, name):
        return [d for d in self.directives if d.name == name]

    def variant(self, name):
        """The variant a Spack build sees: the last declaration of that name wins."""
        found = [d for d in self.calls("variant") if d.args and d.args[0] == name]
        return found[-1] if found else None

    def defined_from_variant(self):
        """The (CMake option, variant) pairs cmake_args() passes to define_from_variant."""
        pkg = self.cls.__new__(self.cls)
        pkg.defined_from_variant = []
        pkg.spec = BareSpec()
        try:
            self.cls.cmake_args(pkg)
        except Exception as e:  # the recipe's own error is the finding
            raise CheckError(f"cmake_args() fails: {type(e).__name__}: {e}")
        return pkg.defined_from_variant


def load_recipe(path, spack_major):
    """Loads package.py as Spack `spack_major` (0 for 0.23, 1 for 1.x) would import it."""
    recorder = Recorder()
    spack, package, build_systems = make_spack_modules(recorder)
    stand_ins = {"spack": spack, "spack.package": package}
    if spack_major >= 1:
        for name in ("spack_repo", "spack_repo.builtin", "spack_repo.builtin.build_systems"):
            stand_ins[name] = types.ModuleType(name)
        for leaf, module in build_systems.items():
            stand_ins[f"spack_repo.builtin.build_systems.{leaf}"] = module
    blocked = [m for m in sys.modules if m == "spack_repo" or m.startswith("spack_repo.")]
    saved = {name: sys.modules.get(name) for name in [*stand_ins, *blocked, "spack_repo"]}
    for name in blocked:
        del sys.modules[name]
    sys.modules.update(stand_ins)
    if spack_major < 1:
        # Spack 0.23 has no spack_repo package: the recipe's import of it must fail.
        sys.modules["spack_repo"] = None
    environ = os.environ
    os.environ = RecordingEnviron(environ)
    try:
        spec = importlib.util.spec_from_file_location(f"tessera_recipe_{spack_major}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except CheckError:
        raise
    except Exception as e:  # any failure to load is the finding
        raise CheckError(f"{path} does not load as under Spack {'1.x' if spack_major else '0.23'}:"
                         f" {type(e).__name__}: {e}")
    finally:
        read_at_load = os.environ.read
        os.environ = environ
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    classes = [v for v in vars(module).values() if isinstance(v, type)
               and issubclass(v, package.PackageBase) and v.__module__ == module.__name__]
    if len(classes) != 1:
        raise CheckError(f"{path} defines {len(classes)} package classes, expected one")
    cls = classes[0]
    inherited = []
    for base in reversed(cls.__mro__[1:]):
        inherited.extend(vars(base).get("_directives", []))
    recipe = LoadedRecipe(cls, inherited + recorder.target, path)
    recipe.environment_read = sorted(read_at_load)
    return recipe


# --- CMake reading ------------------------------------------------------------------------------

COMMAND = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def cmake_commands(text):
    """(name, arguments) of each command in a CMake file, comments and strings respected."""
    commands = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            if text.startswith("#[[", i) or text.startswith("#[=", i):
                m = re.compile(r"#\[(=*)\[").match(text, i)
                end = text.find("]" + m.group(1) + "]", i) if m else -1
                i = n if end < 0 else end + len(m.group(1)) + 2
            else:
                end = text.find("\n", i)
                i = n if end < 0 else end
            continue
        m = COMMAND.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            args, i = _cmake_arguments(text, m.end())
            commands.append((m.group(1).lower(), args))
            continue
        i += 1
    return commands


def _cmake_arguments(text, i):
    """Arguments from just after a command's '(' to its ')': (list, index after ')')."""
    args = []
    depth = 1
    current = ""
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            current += text[i + 1:j]
            i = j + 1
            continue
        if c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                if current:
                    args.append(current)
                return args, i + 1
        if c.isspace() or c in "()":
            if current:
                args.append(current)
            current = ""
            if c in "()":
                args.append(c)
        else:
            current += c
        i += 1
    raise CheckError("unbalanced parentheses in a CMake file")


PROJECT_KEYWORDS = {"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"}


def project_languages(args):
    """Languages a project() call enables: LANGUAGES ..., positional ones, or C and CXX."""
    rest = args[1:]
    if "LANGUAGES" in rest:
        langs = []
        for a in rest[rest.index("LANGUAGES") + 1:]:
            if a in PROJECT_KEYWORDS:
                break
            langs.append(a)
    elif any(a in PROJECT_KEYWORDS for a in rest):
        langs = []
    else:
        langs = rest
    if not langs:
        return ["C", "CXX"]
    return [] if langs == ["NONE"] else langs


def enabled_languages(cmake_path, seen=None):
    """(language, [condition words...]) for every project()/enable_language() call in the file
    and the subdirectories it adds, each with the if() conditions it sits under ('NOT X' for
    an else branch)."""
    seen = set() if seen is None else seen
    cmake_path = os.path.abspath(cmake_path)
    if cmake_path in seen:
        return []
    seen.add(cmake_path)
    with open(cmake_path, encoding="utf-8") as f:
        commands = cmake_commands(f.read())
    found = []
    # One entry per open if(): the conditions of its branches so far and whether the current
    # branch is the else(). A branch holds when its condition does and no earlier one did.
    stack = []

    def conditions():
        words = []
        for branches, in_else in stack:
            words += [f"NOT ({c})" for c in branches[:-1]]
            words.append(f"NOT ({branches[-1]})" if in_else else branches[-1])
        return words

    for name, args in commands:
        if name == "if":
            stack.append(([" ".join(args)], False))
        elif name in ("elseif", "else"):
            if not stack:
                raise CheckError(f"{cmake_path}: {name}() outside if()")
            branches, _ = stack[-1]
            if name == "elseif":
                stack[-1] = (branches + [" ".join(args)], False)
            else:
                stack[-1] = (branches, True)
        elif name == "endif":
            if not stack:
                raise CheckError(f"{cmake_path}: endif() without if()")
            stack.pop()
        elif name == "project":
            found.extend((lang, conditions()) for lang in project_languages(args))
        elif name == "enable_language":
            found.extend((lang, conditions()) for lang in args if lang != "OPTIONAL")
        elif name == "add_subdirectory" and args:
            sub = os.path.join(os.path.dirname(cmake_path), args[0], "CMakeLists.txt")
            if os.path.exists(sub):
                found.extend((lang, conditions() + conds)
                             for lang, conds in enabled_languages(sub, seen))
    return found


# Options of developers' own builds, never of an installed package: scripts/fuzz.sh configures
# the libFuzzer targets with clang and sanitizer flags that no package build uses.
DEVELOPER_OPTIONS = {"TESSERA_ENABLE_FUZZERS"}


def cmake_options(cmake_path):
    """The TESSERA_ENABLE_* options: option() calls, and cache strings set(NAME value CACHE
    STRING ...) such as TESSERA_ENABLE_PYTHON (AUTO, ON or OFF; a variant sets ON or OFF)."""
    with open(cmake_path, encoding="utf-8") as f:
        return [args[0] for name, args in cmake_commands(f.read())
                if (name == "option" or (name == "set" and "CACHE" in args)) and args
                and args[0].startswith("TESSERA_ENABLE_") and args[0] not in DEVELOPER_OPTIONS]


def spack_condition(conditions, option_to_variant):
    """The `when` spec for CMake if() conditions over options, or None if unconditional."""
    words = []
    for condition in conditions:
        m = re.fullmatch(r"(NOT\s+\(?\s*)?([A-Za-z0-9_]+)\s*\)?", condition)
        if not m or m.group(2) not in option_to_variant:
            raise CheckError(f"cannot express the CMake condition if({condition}) as a variant:"
                             " only the options cmake_args() sets from variants map")
        words.append(("~" if m.group(1) else "+") + option_to_variant[m.group(2)])
    return " ".join(sorted(words)) or None


def normalize_when(when):
    return " ".join(sorted(when.split())) if when else None


def dep_types(directive):
    t = directive.kwargs.get("type", ("build", "link"))
    return {t} if isinstance(t, str) else set(t)


def dep_name(directive):
    return re.match(r"[A-Za-z0-9_.-]+", directive.args[0]).group(0) if directive.args else ""


# --- the checks ---------------------------------------------------------------------------------


def check_loads(ctx):
    """loads as under Spack 1.x and 0.23, declaring the same directives"""
    new, old = ctx["recipe"], ctx["recipe_0_23"]
    if repr(new.directives) != repr(old.directives):
        raise CheckError("the directives differ between the Spack 1.x and 0.23 imports")
    return f"{len(new.directives)} directives either way"


def check_options(ctx):
    """every option(TESSERA_ENABLE_*) has its variant and define_from_variant in cmake_args"""
    recipe = ctx["recipe"]
    options = cmake_options(ctx["cmake"])
    defined = dict(ctx["defined"])
    problems = []
    for option in options:
        if option not in defined:
            problems.append(f"cmake_args() has no define_from_variant(\"{option}\", ...)")
        elif recipe.variant(defined[option]) is None:
            problems.append(f"{option} is set from variant '{defined[option]}', never declared")
    for option in defined:
        if option not in options:
            problems.append(f"cmake_args() sets {option}, which CMakeLists.txt has no option for")
    if problems:
        raise CheckError("; ".join(problems))
    return (f"{len(options)} options: " + ", ".join(f"{o}={defined[o]}" for o in options)
            + " (developer builds only, no variant: " + ", ".join(sorted(DEVELOPER_OPTIONS)) + ")")


def check_languages(ctx):
    """each language CMake enables has depends_on(lang, type=build) with the matching when"""
    option_to_variant = dict(ctx["defined"])
    required = {}
    for lang, conditions in enabled_languages(ctx["cmake"]):
        if lang not in SPACK_LANGUAGE:
            raise CheckError(f"CMake enables {lang}, which has no Spack language dependency")
        required.setdefault(SPACK_LANGUAGE[lang], set()).add(
            spack_condition(conditions, option_to_variant))
    for whens in required.values():
        if None in whens:  # enabled unconditionally somewhere: the condition elsewhere is moot
            whens.intersection_update({None})
    declared = {}
    problems = []
    for d in ctx["recipe"].calls("depends_on"):
        name = dep_name(d)
        if name in SPACK_LANGUAGE.values():
            if "build" not in dep_types(d):
                problems.append(f"depends_on(\"{name}\") is not type=\"build\"")
            declared.setdefault(name, set()).add(normalize_when(d.kwargs.get("when")))
    for lang in sorted(set(required) | set(declared)):
        want = {normalize_when(w) for w in required.get(lang, set())}
        have = declared.get(lang, set())
        if want != have:
            problems.append(f"'{lang}': CMake enables it {_describe(want)}, the recipe depends on"
                            f" it {_describe(have)}")
    if problems:
        raise CheckError("; ".join(problems))
    return ", ".join(f"{lang} {_describe(w)}" for lang, w in sorted(required.items()))


def _describe(whens):
    if not whens:
        return "never"
    return " and ".join("always" if w is None else f"when {w}" for w in sorted(whens, key=str))


def check_cuda_arch(ctx):
    """cuda_arch is single-valued, and each value gives Kokkos the same architecture"""
    recipe = ctx["recipe"]
    v = recipe.variant("cuda_arch")
    if v is None:
        raise CheckError("no cuda_arch variant")
    values = v.kwargs.get("values", ())
    if v.kwargs.get("multi", False) or (values and values[0] == "any_combination_of"):
        raise CheckError(f"cuda_arch is multi-valued ({v}); Kokkos takes one architecture")
    missing = []
    for arch in ctx["cuda_arch_values"]:
        when = normalize_when(f"+cuda cuda_arch={arch}")
        deps = [d for d in recipe.calls("depends_on")
                if dep_name(d) == "kokkos" and normalize_when(d.kwargs.get("when")) == when
                and f"cuda_arch={arch}" in d.args[0]]
        if not deps:
            missing.append(arch)
    if missing:
        raise CheckError("no kokkos cuda_arch=N dependency when +cuda cuda_arch=N for N in "
                         + ", ".join(missing))
    return f"single-valued, default {v.kwargs.get('default')!r}, Kokkos follows each value"


def spec_holds(when, spec):
    """Whether every word of `when` holds for `spec` (variant name -> value, "target" -> the
    target's family): +v, ~v, k=v, and target=F: (family F). Other forms are not understood."""
    for word in (when or "").split():
        if word[0] in "+~":
            ok = spec.get(word[1:]) is (word[0] == "+")
        elif "=" in word:
            key, value = word.split("=", 1)
            if key == "target":
                if not value.endswith(":"):
                    raise CheckError(f"cannot evaluate '{word}': only target=FAMILY: ranges")
                ok = spec.get("target") == value[:-1]
            else:
                ok = str(spec.get(key)) == value
        else:
            raise CheckError(f"cannot evaluate the condition word '{word}'")
        if not ok:
            return False
    return True


def default_spec(recipe, target, given):
    """The variant values of a spec that asks for `given` on `target`: every other variant at
    its default where its `when` holds (twice, for variants conditional on others)."""
    spec = dict(given, target=target)
    for _ in range(2):
        for d in recipe.calls("variant"):
            name = d.args[0]
            if name not in given and spec_holds(d.kwargs.get("when"), spec):
                spec[name] = d.kwargs.get("default")
    return spec


def active(recipe, directive_name, spec):
    """The directives of that name whose `when` holds for `spec`."""
    return [d for d in recipe.calls(directive_name) if spec_holds(d.kwargs.get("when"), spec)]


def check_onednn_default(ctx):
    """the default spec has +onednn where oneDNN runs (x86_64, aarch64, ppc64le)"""
    recipe, families = ctx["recipe"], ("x86_64", "aarch64", "ppc64le")
    problems = []
    for family in families:
        spec = default_spec(recipe, family, {})
        if spec.get("onednn") is not True:
            problems.append(f"on {family} the default is onednn={spec.get('onednn')}")
        elif not any(dep_name(d) == "onednn" for d in active(recipe, "depends_on", spec)):
            problems.append(f"+onednn on {family} depends on no onednn")
    if problems:
        raise CheckError("; ".join(problems) + ": a default install would train on the portable"
                         " kernels, several times slower")
    return "+onednn by default on " + ", ".join(families)


def check_gpu_spec(ctx):
    """+cuda cuda_arch=90 +cudnn: no conflict, no oneDNN, cuDNN and an sm_90 Kokkos"""
    recipe = ctx["recipe"]
    given = {"cuda": True, "cuda_arch": "90", "cudnn": True}
    spec = default_spec(recipe, "x86_64", given)
    arch = recipe.variant("cuda_arch")
    values = arch.kwargs.get("values", ()) if arch else ()
    problems = [] if "90" in values else ["cuda_arch has no value 90"]
    if spec.get("onednn") is True:
        problems.append("+onednn is on in a CUDA build, whose tensors oneDNN cannot read")
    for d in active(recipe, "conflicts", spec):
        if spec_holds(d.args[0], spec):
            problems.append(f"conflicts({d.args[0]!r}, when={d.kwargs.get('when')!r}):"
                            f" {d.kwargs.get('msg', '')}")
    deps = [d.args[0] for d in active(recipe, "depends_on", spec)]
    for wanted in ("cudnn", "kokkos+cuda"):
        if not any(dep.startswith(wanted) for dep in deps):
            problems.append(f"no {wanted} dependency for this spec")
    if not any("kokkos+cuda" in dep and "cuda_arch=90" in dep for dep in deps):
        problems.append("no Kokkos built for cuda_arch=90")
    if problems:
        raise CheckError("; ".join(problems))
    return "conflicts none; brings " + ", ".join(d for d in deps if "cud" in d)


def onednn_versions_accepted(path):
    """(lowest version, lowest major refused) that the oneDNN backend's CMake file accepts."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"dnnl_VERSION\s+VERSION_LESS\s+([\d.]+)\s+OR\s+"
                  r"NOT\s+dnnl_VERSION\s+VERSION_LESS\s+(\d+)", text)
    if not m:
        raise CheckError(f"{path}: no `dnnl_VERSION VERSION_LESS <lowest> OR NOT dnnl_VERSION "
                         "VERSION_LESS <major>` test to compare with")
    return m.group(1), int(m.group(2))


def check_onednn_range(ctx):
    """the recipe asks for the oneDNN versions the backend's CMake accepts"""
    lowest, refused = onednn_versions_accepted(ctx["onednn_cmake"])
    expected = f"onednn@{lowest}:{refused - 1}"
    deps = [d for d in ctx["recipe"].calls("depends_on") if dep_name(d) == "onednn"]
    if not deps:
        raise CheckError("no depends_on(\"onednn...\")")
    for d in deps:
        if d.args[0].split()[0] != expected:
            raise CheckError(f"{d}: CMake accepts {lowest} up to {refused - 1}.x, so the recipe "
                             f"should ask for {expected}")
    return f"{expected}, as CMake accepts"


def check_flake8(ctx):
    """passes flake8 --max-line-length 99 (Spack's style limit)"""
    if shutil.which("flake8"):
        command = ["flake8"]
    elif importlib.util.find_spec("flake8") is not None:
        command = [sys.executable, "-m", "flake8"]
    else:
        raise CheckError("flake8 is not installed, so the style was not checked"
                         " (apt-get install flake8, or pip install flake8)")
    result = subprocess.run(command + FLAKE8_ARGS + [ctx["recipe_path"]],
                            capture_output=True, text=True)
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines()
        raise CheckError(f"{len(lines)} finding(s): " + " | ".join(lines[:5]))
    return "clean"


def check_catch2(ctx):
    """Catch2 (header-only v2) is a build and test dependency, never linked"""
    deps = [d for d in ctx["recipe"].calls("depends_on") if dep_name(d) == "catch2"]
    if not deps:
        raise CheckError("no depends_on(\"catch2...\")")
    for d in deps:
        types_ = dep_types(d)
        if types_ != {"build", "test"}:
            raise CheckError(f"{d}: type should be (\"build\", \"test\"), is {sorted(types_)}")
    return f"{deps[0].args[0]} type=(build, test) when {deps[0].kwargs.get('when')}"


def check_no_environment(ctx):
    """reads no environment variable as it loads (same recipe and hashes everywhere)"""
    with open(ctx["recipe_path"], encoding="utf-8") as f:
        tree = ast.parse(f.read(), ctx["recipe_path"])
    found = []

    def visit(node, in_function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function = True
        if not in_function:
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.Name) and node.id in ("environ", "getenv"):
                found.append(f"line {node.lineno}: {node.id}")
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(tree, False)
    for recipe in (ctx["recipe"], ctx["recipe_0_23"]):
        found += [f"${name} read while loading" for name in recipe.environment_read
                  if f"${name} read while loading" not in found]
    if found:
        raise CheckError("reads the environment outside a method: " + "; ".join(found))
    git = getattr(ctx["recipe"].cls, "git", None)
    return f"git = {git!r}"


def check_license(ctx):
    """declares the license of the LICENSE file"""
    licenses = [d.args[0] for d in ctx["recipe"].calls("license") if d.args]
    if not licenses:
        raise CheckError("no license(...) directive")
    license_file = os.path.join(ctx["source_root"], "LICENSE")
    if os.path.exists(license_file):
        with open(license_file, encoding="utf-8") as f:
            first = f.readline()
        m = re.match(r"BSD (\d)-Clause", first)
        expected = f"BSD-{m.group(1)}-Clause" if m else None
        if expected and expected not in licenses:
            raise CheckError(f"license({licenses[0]!r}) but LICENSE says {first.strip()!r}")
    return f"license({licenses[0]!r})"


def check_standalone_tests(ctx):
    """has stand-alone tests (test_* methods with a docstring) for `spack test run`"""
    tests = {name: fn for name, fn in vars(ctx["recipe"].cls).items()
             if name.startswith("test_") and callable(fn)}
    if not tests:
        raise CheckError("no test_* method, so `spack test run tessera` tests nothing")
    undocumented = [name for name, fn in tests.items() if not (fn.__doc__ or "").strip()]
    if undocumented:
        raise CheckError("Spack prints a test's docstring as its purpose; none on "
                         + ", ".join(undocumented))
    return ", ".join(sorted(tests))


#: Virtual packages a recipe may depend on, and the providers a guide may declare for them.
VIRTUAL_PROVIDERS = {
    "mpi": ("openmpi", "mpich", "mvapich2", "intel-oneapi-mpi", "cray-mpich"),
    "blas": ("openblas", "intel-oneapi-mkl", "blis", "netlib-lapack"),
    "zlib-api": ("zlib", "zlib-ng"),
    "pkgconfig": ("pkgconf", "pkg-config"),
}
#: Language virtuals: provided by the compilers `spack compiler find` registers.
LANGUAGES = set(SPACK_LANGUAGE.values())


def offline_guide_packages(path):
    """The packages the packages.yaml of the README's offline section declares as externals:
    name -> its entry's text. (A `require:` alone does not count: it names what to build.)"""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Offline[^\n]*\n(.*?)(?=^## )", text, re.S | re.M)
    if not section:
        raise CheckError(f"{os.path.relpath(path, ROOT)} has no '## Offline' section")
    block = re.search(r"```yaml\n(.*?)```", section.group(1), re.S)
    if not block:
        raise CheckError("the offline section has no ```yaml block")
    entries = {}
    current = None
    for line in block.group(1).splitlines():
        m = re.match(r"^  ([A-Za-z0-9_.-]+):(.*)$", line)
        if m:
            current = m.group(1)
            entries[current] = m.group(2)
        elif current and line.startswith("    "):
            entries[current] += " " + line.strip()
    return {name: body for name, body in entries.items() if "externals" in body}


def check_offline_externals(ctx):
    """spack/README.md's offline packages.yaml declares every dependency of a default install"""
    # The CMake build system's own (cmake, and gmake for its default generator) included: a
    # guide without gmake had Spack 1.1 download make offline, and stop.
    recipe = ctx["recipe"]
    declared = offline_guide_packages(ctx["spack_readme"])
    spec = default_spec(recipe, "x86_64", {})
    missing = []
    needed = sorted({dep_name(d) for d in active(recipe, "depends_on", spec)} - LANGUAGES)
    for name in needed:
        candidates = (name,) + VIRTUAL_PROVIDERS.get(name, ())
        if not any(c in declared for c in candidates):
            missing.append(name if name not in VIRTUAL_PROVIDERS
                           else f"{name} (a provider: {', '.join(VIRTUAL_PROVIDERS[name])})")
    if missing:
        raise CheckError("the offline packages.yaml declares no external for " + ", ".join(missing)
                         + ": Spack would download and build it")
    return f"{len(needed)} dependencies of the default x86_64 spec declared: " + ", ".join(needed)


CHECKS = [
    ("load", check_loads),
    ("options", check_options),
    ("languages", check_languages),
    ("cuda_arch", check_cuda_arch),
    ("onednn_default", check_onednn_default),
    ("gpu_spec", check_gpu_spec),
    ("onednn_range", check_onednn_range),
    ("flake8", check_flake8),
    ("catch2", check_catch2),
    ("environment", check_no_environment),
    ("license", check_license),
    ("tests", check_standalone_tests),
    ("offline_externals", check_offline_externals),
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=os.path.join(ROOT, "spack", "packages", "tessera",
                                                         "package.py"))
    parser.add_argument("--cmake", default=os.path.join(ROOT, "CMakeLists.txt"))
    parser.add_argument("--onednn-cmake",
                        default=os.path.join(ROOT, "backends", "onednn", "CMakeLists.txt"))
    parser.add_argument("--spack-readme", default=os.path.join(ROOT, "spack", "README.md"))
    args = parser.parse_args(argv)

    ctx = {"recipe_path": args.recipe, "cmake": args.cmake, "onednn_cmake": args.onednn_cmake,
           "source_root": os.path.dirname(os.path.abspath(args.cmake)),
           "spack_readme": args.spack_readme,
           "cuda_arch_values": CUDA_ARCH_VALUES}
    passed = failed = 0
    try:
        ctx["recipe"] = load_recipe(args.recipe, 1)
        ctx["recipe_0_23"] = load_recipe(args.recipe, 0)
        ctx["defined"] = ctx["recipe"].defined_from_variant()
    except CheckError as e:
        print(f"FAIL load: {check_loads.__doc__}: {e}")
        for name, check in CHECKS[1:]:
            print(f"FAIL {name}: {check.__doc__}: not checked, the recipe did not load")
        print(f"0 passed, {len(CHECKS)} failed")
        return 1
    for name, check in CHECKS:
        try:
            detail = check(ctx)
            print(f"PASS {name}: {check.__doc__} ({detail})")
            passed += 1
        except CheckError as e:
            print(f"FAIL {name}: {check.__doc__}: {e}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
