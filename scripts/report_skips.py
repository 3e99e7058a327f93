#!/usr/bin/env python3
"""Says which tests a ctest run skipped, and why, from the JUnit files ctest wrote.

scripts/test.sh calls it at the end of every run (also one that failed), so that a reader of a CI
log sees each test that did not run beside its reason: the line a test printed after
TESSERA-SKIPPED (tests/support/skip.hpp), or what ctest says (a disabled test, a missing file).

Usage: scripts/report_skips.py NAME=JUNIT.xml [NAME=JUNIT.xml ...]
  NAME: the suite's name in the report (the ctest preset); a missing file is reported as a suite
  that did not run. NAME=not run: REASON reports a suite the caller chose not to run, and why.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

MARKER = re.compile(r"TESSERA-SKIPPED:\s*(.*)")


def reason_of(case):
    out = case.findtext("system-out") or ""
    found = MARKER.findall(out)
    if found:
        return "; ".join(dict.fromkeys(r.strip() for r in found))
    if case.get("status") == "disabled":
        return "disabled"
    skipped = case.find("skipped")
    message = skipped.get("message", "") if skipped is not None else ""
    if message:
        return message
    return out.strip().splitlines()[-1] if out.strip() else "no reason given"


def skips_in(path):
    root = ET.parse(path).getroot()
    cases = root.iter("testcase")
    return [(c.get("name"), reason_of(c)) for c in cases if c.get("status") in ("notrun", "disabled")]


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    total, lines = 0, []
    for arg in argv:
        name, _, path = arg.partition("=")
        if path.startswith("not run:"):
            lines.append(f"  [{name}] the whole suite {path}")
            continue
        if not pathlib.Path(path).is_file():
            lines.append(f"  [{name}] the suite did not run (no {path})")
            continue
        for test, reason in skips_in(path):
            total += 1
            lines.append(f"  [{name}] {test}: {reason}")
    print(f"== Skipped tests: {total}" + ("" if total else " (every registered test ran)"))
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
