#!/usr/bin/env python3
"""Packs one build of Tessera into a relocatable folder that runs on a machine with none of
this machine's libraries (used by scripts/gpu_bundle.sh).

  bin/      tessera, the test programs the bundle's tests run, Open MPI's mpirun and orted
  lib/      every shared library they load (found with ldd), but the C/C++ runtimes (libc,
            libm, libstdc++, libgcc_s, ...) and the CUDA libraries (driver, runtime, cuDNN,
            cuBLAS, cuSPARSE, nvJitLink), which the target machine has; each file's run path
            is set to find its neighbours ($ORIGIN)
  lib/x86_64-linux-gnu/openmpi/lib/openmpi3/, lib/pmix/, share/openmpi/, share/pmix/:
            Open MPI's and PMIx's plugins and messages, where OPAL_PREFIX and env.sh point
  tests/    CTestTestfile.cmake: the build's tests of one label, their paths made bundle paths
  share/tessera/  the source-tree files those tests read (scripts, example configs)
  env.sh    what to source before running anything in the bundle
  VARIANT   "cpu" or "cuda"
  MANIFEST  every file with its size, and the plugins left out with the library each lacks

Usage: pack_bundle.py --build DIR --out DIR [--label L] [--map PATH=BUNDLE_PATH ...]
  --label L: bundle the tests of ctest label L, and the programs they run (default: none)
  --map: a path the tests name outside the build and source trees, and where the bundle
         has it (relative to the bundle folder), e.g. a host build's tessera
"""
import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys

# The target machine brings these: the C and C++ runtimes, and the CUDA libraries (its driver,
# and the runtime, cuDNN, cuBLAS, ... of its own Python packages, which env.sh puts on the path).
RUNTIME = re.compile(r"^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so|"
                     r"libutil\.so|libresolv|libanl|libmvec|libcuda\.so|libcudart|libcublas|libcudnn|libcusparse|"
                     r"libnvJitLink|libcufft|libcurand|libcusolver|libnccl|libnvrtc)")
FABRIC = re.compile(r"^(libuc[mpst]\.|libfabric|libibverbs|libpsm|libinfinipath|liboshmem|libnl-|librdmacm|libefa|"
                    r"libmca_common_(ucx|verbs|ofi))")
OMPI_LIBDIR = "/usr/lib/x86_64-linux-gnu/openmpi/lib"
OMPI_COMPONENTS = OMPI_LIBDIR + "/openmpi3"
PMIX_PLUGINS = "/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
SHARE = {"/usr/share/openmpi": "share/openmpi", "/usr/lib/x86_64-linux-gnu/pmix2/share/pmix": "share/pmix"}


def ldd(path):
    """{soname: resolved path or None} of everything `path` loads."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    deps = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s*=>\s*(\S+)?", line)
        if m:
            deps[m.group(1)] = None if m.group(2) in (None, "not") else m.group(2)
    return deps


def soname(path):
    """The name a library is loaded by ("libmca_common_sm.so.40")."""
    out = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, check=True).stdout
    return re.search(r"SONAME\s+(\S+)", out).group(1)


def carried(deps):
    return {name: path for name, path in deps.items() if not RUNTIME.match(name)}


def copy_elf(src, dst, rpath):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(os.path.realpath(src), dst)
    os.chmod(dst, os.stat(dst).st_mode | stat.S_IWUSR)
    subprocess.run(["strip", "--strip-unneeded", dst], check=True)
    subprocess.run(["patchelf", "--set-rpath", rpath, dst], check=True)


class Bundle:
    def __init__(self, out):
        self.out = out
        self.libs = {}  # soname -> source path
        self.left_out = []

    def need_libs(self, binary):
        deps = carried(ldd(binary))
        missing = [n for n, p in deps.items() if p is None]
        if missing:
            sys.exit(f"pack_bundle.py: {binary} needs {', '.join(missing)}, which this machine lacks")
        self.libs.update(deps)

    def add_program(self, src):
        dst = os.path.join(self.out, "bin", os.path.basename(src))
        if not os.path.exists(dst):
            self.need_libs(src)
            copy_elf(src, dst, "$ORIGIN/../lib")
        return dst

    def add_plugins(self, src_dir, dst_rel, rpath, prefix):
        """Every plugin with the libraries it needs, but those of network fabrics and OpenSHMEM
        (UCX, libfabric, verbs, PSM): one node needs none, and they would bring a driver stack.
        The plugins left out are named in MANIFEST; Open MPI never tries to open them there."""
        for name in sorted(os.listdir(src_dir)):
            path = os.path.join(src_dir, name)
            if not (name.startswith(prefix) and name.endswith(".so")):
                continue
            deps = carried(ldd(path))
            fabric = sorted(n for n in deps if FABRIC.match(n))
            if fabric:
                self.left_out.append(f"{path}: needs {', '.join(fabric)}")
                continue
            self.need_libs(path)
            copy_elf(path, os.path.join(self.out, dst_rel, name), rpath)

    def add_mpi(self):
        for prog in ("orterun", "orted"):
            self.add_program(shutil.which(prog) or f"/usr/bin/{prog}")
        os.symlink("orterun", os.path.join(self.out, "bin", "mpirun"))
        self.need_libs(os.path.join(OMPI_LIBDIR, "libmpi.so"))
        # The helper libraries of the shared-memory collectives and of MPI-IO's plugins.
        for common in ("libmca_common_sm.so", "libmca_common_ompio.so", "libmca_common_monitoring.so"):
            path = os.path.join(OMPI_LIBDIR, common)
            self.libs[soname(path)] = path
            self.need_libs(path)
        self.need_libs(os.path.join(PMIX_PLUGINS, "..", "libpmix.so.2"))
        self.add_plugins(OMPI_COMPONENTS, "lib/x86_64-linux-gnu/openmpi/lib/openmpi3", "$ORIGIN/../../../..", "mca_")
        self.add_plugins(PMIX_PLUGINS, "lib/pmix", "$ORIGIN/..", "pmix_mca_")
        for src, dst in SHARE.items():
            shutil.copytree(src, os.path.join(self.out, dst), dirs_exist_ok=True)

    def write_libs(self):
        for name, src in sorted(self.libs.items()):
            copy_elf(src, os.path.join(self.out, "lib", name), "$ORIGIN")


def test_list(build, label):
    js = subprocess.run(["ctest", "--show-only=json-v1", "-L", label], cwd=build, capture_output=True, text=True,
                        check=True).stdout
    return json.loads(js)["tests"]


def map_arg(arg, bundle, build, source, maps):
    """A test argument as the bundle's test file writes it: bundle paths relative to it."""
    for path, rel in maps.items():
        if arg == path:
            return "${B}/" + rel
    if arg.startswith(build + "/") and os.path.isfile(arg) and os.access(arg, os.X_OK):
        return "${B}/" + os.path.relpath(bundle.add_program(arg), bundle.out)
    if arg.startswith(build + "/"):  # an output folder of the test, made as the build made it
        rel = os.path.relpath(arg, build)
        if os.path.isdir(arg):
            os.makedirs(os.path.join(bundle.out, "work", rel), exist_ok=True)
        return "${B}/work/" + rel
    if arg.startswith(source + "/") and os.path.exists(arg):
        rel = os.path.relpath(arg, source)
        dst = os.path.join(bundle.out, "share/tessera", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(arg, dst)
        return "${B}/share/tessera/" + rel
    return arg


def cmake_quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_tests(bundle, build, source, label, maps):
    lines = ["# Made by scripts/pack_bundle.py from the build's tests labelled " + label + ".",
             "set(B ..)  # ctest runs each test in this folder, and sets no CMAKE_CURRENT_LIST_DIR"]
    for t in test_list(build, label):
        cmd = [map_arg(a, bundle, build, source, maps) for a in t["command"]]
        if cmd[0].endswith(("/mpiexec", "/mpirun")):
            cmd[0] = "${B}/bin/mpirun"
        lines.append(f"add_test({cmake_quote(t['name'])} " + " ".join(cmake_quote(c) for c in cmd) + ")")
        props = []
        for p in t.get("properties", []):
            if p["name"] in ("LABELS", "ENVIRONMENT", "TIMEOUT", "PASS_REGULAR_EXPRESSION", "FAIL_REGULAR_EXPRESSION",
                             "SKIP_REGULAR_EXPRESSION", "WILL_FAIL"):
                v = p["value"]
                v = ";".join(v) if isinstance(v, list) else str(v)
                props.append(f"{p['name']} {cmake_quote(v)}")
        if props:
            lines.append(f"set_tests_properties({cmake_quote(t['name'])} PROPERTIES " + " ".join(props) + ")")
    os.makedirs(os.path.join(bundle.out, "tests"), exist_ok=True)
    with open(os.path.join(bundle.out, "tests", "CTestTestfile.cmake"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines) // 2


ENV_SH = r'''# Source this before running anything in the bundle: . path/to/bundle/env.sh
# Made by scripts/pack_bundle.py.
export TESSERA_BUNDLE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH=$TESSERA_BUNDLE/bin:$PATH
# Open MPI and PMIx find their plugins and messages under the bundle, not where Debian put them.
export OPAL_PREFIX=$TESSERA_BUNDLE PMIX_PREFIX=$TESSERA_BUNDLE
export PMIX_MCA_mca_base_component_path=$TESSERA_BUNDLE/lib/pmix PMIX_MCA_pcompress_base_silence_warning=1
export OMPI_MCA_mca_base_component_show_load_errors=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The CUDA libraries of this machine's Python packages (cuDNN, cuBLAS, the runtime, ...).
tessera_nvidia=$("${TESSERA_PEER_PYTHON:-python3}" -c 'import nvidia, os; print(os.pathsep.join(nvidia.__path__))' \
  2>/dev/null || true)
if [[ -n $tessera_nvidia ]]; then
  tessera_cuda_libs=$(IFS=:; for d in $tessera_nvidia; do find "$d" -maxdepth 3 -name 'lib*.so*' -printf '%h\n'; done |
    sort -u | paste -sd:)
  export LD_LIBRARY_PATH=$tessera_cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
unset tessera_nvidia tessera_cuda_libs
# Code built for an older GPU than this one runs from the PTX the build carries, compiled by
# the driver at first use: keep what it compiles for the next run.
export CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-$HOME/.cache/tessera-cuda-jit} CUDA_CACHE_MAXSIZE=4294967296
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label")
    ap.add_argument("--map", action="append", default=[])
    a = ap.parse_args()
    build, out = os.path.abspath(a.build), os.path.abspath(a.out)
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shutil.rmtree(out, ignore_errors=True)
    bundle = Bundle(out)
    bundle.add_program(os.path.join(build, "tessera"))
    maps = dict(m.split("=", 1) for m in a.map)
    tests = write_tests(bundle, build, source, a.label, maps) if a.label else 0
    bundle.need_libs(os.path.join(build, "tessera"))
    bundle.add_mpi()
    bundle.write_libs()
    with open(os.path.join(out, "env.sh"), "w") as f:
        f.write(ENV_SH)
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        cuda = re.search(r"^TESSERA_ENABLE_CUDNN:BOOL=ON$", f.read(), re.M) is not None
    with open(os.path.join(out, "VARIANT"), "w") as f:
        f.write("cuda\n" if cuda else "cpu\n")
    files = []
    for root, _, names in os.walk(out):
        for n in names:
            p = os.path.join(root, n)
            if not os.path.islink(p):
                files.append((os.path.relpath(p, out), os.path.getsize(p)))
    with open(os.path.join(out, "MANIFEST"), "w") as f:
        for rel, size in sorted(files):
            f.write(f"{size:>10} {rel}\n")
        for line in bundle.left_out:
            f.write(f"left out: {line}\n")
    total = sum(s for _, s in files)
    print(f"{out}: {len(files)} files, {total / 2**20:.1f} MiB, {tests} tests, "
          f"{len(bundle.left_out)} plugins left out (MANIFEST)")


if __name__ == "__main__":
    main()
