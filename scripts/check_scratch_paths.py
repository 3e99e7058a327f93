#!/usr/bin/env python3
"""Fails when a test names a fixed path in the temporary folder.

ctest runs test cases as separate processes, several at once, and two runs of the suite may share
a machine: a test that writes /tmp/name, or temp_directory_path() / "name", races every other
process that does the same. Tests make their scratch space with tests/support/scratch_folder.hpp
(mkdtemp under TMPDIR; every Catch2 test process already runs inside one of its own), or
`mktemp -d` in shell. This check flags, outside comments:
  - a literal path under /tmp (C++, shell, Python, CMake, JSON);
  - std::filesystem::temp_directory_path() anywhere but tests/support/scratch_folder.hpp;
  - Python's tempfile.gettempdir() joined with a fixed name.

Usage: scripts/check_scratch_paths.py [PATH ...]   (default: the repository's tests/)
       scripts/check_scratch_paths.py --self-test  (shows that each rule catches its case)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
ALLOWED = {"tests/support/scratch_folder.hpp"}
SUFFIXES = {".cpp", ".hpp", ".h", ".sh", ".py", ".cmake", ".txt", ".json"}

RULES = [
    (re.compile(r"""(?<![\w.$}/-])/tmp(?=/|["'\s]|$)"""), "a fixed path under /tmp"),
    (re.compile(r"temp_directory_path\s*\("), "temp_directory_path(): use testing::ScratchFolder"),
    (re.compile(r"gettempdir\s*\("), "tempfile.gettempdir(): use tempfile.mkdtemp()"),
]


def code_of(line, suffix):
    """The line without its comment (// for C++, # for the rest; crude but enough here)."""
    marker = "//" if suffix in {".cpp", ".hpp", ".h"} else "#"
    if marker == "#" and line.lstrip().startswith("#!"):
        return ""
    at = line.find(marker)
    return line if at < 0 else line[:at]


def problems_in(text, suffix, name):
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = code_of(line, suffix)
        for pattern, what in RULES:
            if pattern.search(code):
                found.append(f"{name}:{number}: {what}: {line.strip()}")
    return found


def files_under(paths):
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and (p.suffix in SUFFIXES))
        else:
            yield path


def self_test():
    cases = [
        ('const std::string p = "/tmp/tessera_x.ckpt";', ".cpp", 1),
        ('auto d = std::filesystem::temp_directory_path() / "fixed";', ".cpp", 1),
        ('work=/tmp/tessera_work', ".sh", 1),
        ('d = os.path.join(tempfile.gettempdir(), "x")', ".py", 1),
        ('// a comment may say /tmp', ".cpp", 0),
        ('work=$(mktemp -d)  # never /tmp/x', ".sh", 0),
        ('const std::string p = folder / "x.ckpt";', ".cpp", 0),
        ('path=$work/tmp/x', ".sh", 0),
    ]
    failed = 0
    for text, suffix, expected in cases:
        got = len(problems_in(text, suffix, "case"))
        if got != expected:
            print(f"self-test: {text!r} gave {got} problems, expected {expected}")
            failed += 1
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    paths = [pathlib.Path(a) for a in argv] or [ROOT / "tests"]
    problems = []
    for f in files_under(paths):
        try:
            rel = f.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            rel = str(f)
        if rel in ALLOWED:
            continue
        problems += problems_in(f.read_text(errors="replace"), f.suffix, rel)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} fixed temporary paths: give each test a folder of its own "
              "(tests/support/scratch_folder.hpp, mktemp -d)")
        return 1
    print("no test names a fixed path in the temporary folder")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
