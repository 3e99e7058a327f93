#!/usr/bin/env python3
"""Lists the C++ functions in Tessera's sources that are longer than a limit, and fails when any is.

A function's length is the number of lines from the line of its opening brace to the line of
its closing brace. Lambdas and local classes count toward the function they sit in. The scanner
tracks braces outside comments, character and string literals (raw strings included), so it
needs no compiler; a brace opens a function when the text before it (back to the previous `;`,
`{` or `}`) holds a parameter list and the brace sits at namespace or class scope.

Usage: scripts/check_function_length.py [--limit N] [--top K] [PATH ...]
  PATH: files or folders (default: src, python/src and backends/*/src of the repository)
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def strip_code(text):
    """The text with comments, literals and preprocessor lines blanked, newlines kept."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A preprocessor directive, with its continuation lines.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        raw = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            end = text.find(close, i + raw.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
            continue
        if c in "\"'":
            # A ' between digits is a digit separator (1'000), not a literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n - 1) - i - 1) + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


SCOPE_OPENERS = re.compile(r"\b(namespace|class|struct|union|enum)\b")
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|try)\b")


def functions(path):
    """(name, first line, last line) of each function defined at namespace or class scope."""
    code = strip_code(path.read_text(errors="replace"))
    stack = []  # per open brace: "scope" (namespace/class), "function" or "inner"
    header_start = 0
    found = []
    line = 1
    starts = []
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            header = code[header_start:i]
            if any(kind != "scope" for kind in stack):
                stack.append("inner")
            elif ")" in header and not CONTROL.match(header) and not SCOPE_OPENERS.match(header.strip()):
                stack.append("function")
                name = re.findall(r"([~\w:<>]+)\s*\(", header)
                starts.append((name[0] if name else "?", line))
            elif SCOPE_OPENERS.search(header) or header.strip().startswith("extern"):
                stack.append("scope")
            else:
                stack.append("inner")
            header_start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function":
                name, first = starts.pop()
                found.append((name, first, line))
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
        elif c == ":" and not any(kind != "scope" for kind in stack):
            # "public:" and friends end a header at class scope; "::" does not.
            before = code[header_start:i].strip()
            if before in ("public", "private", "protected"):
                header_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60, help="the most lines a function may have (default 60)")
    parser.add_argument("--top", type=int, default=0, help="also list the K longest functions")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    roots = [pathlib.Path(p) for p in args.paths] or [ROOT / "src", ROOT / "python" / "src",
                                                  *sorted((ROOT / "backends").glob("*/src"))]
    files = []
    for r in roots:
        files += sorted(r.rglob("*.cpp")) + sorted(r.rglob("*.hpp")) if r.is_dir() else [r]
    rows = []
    for f in files:
        for name, first, last in functions(f):
            rows.append((last - first + 1, f, first, name))
    rows.sort(key=lambda r: -r[0])
    for length, f, first, name in rows[: args.top]:
        print(f"{length:5d}  {f.relative_to(ROOT) if f.is_absolute() else f}:{first}  {name}")
    over = [r for r in rows if r[0] > args.limit]
    for length, f, first, name in over:
        print(f"{f.relative_to(ROOT) if f.is_absolute() else f}:{first}: {name} is {length} lines (limit {args.limit})",
              file=sys.stderr)
    longest = rows[0] if rows else (0, None, 0, "")
    print(f"{len(rows)} functions in {len(files)} files; longest {longest[0]} lines ({longest[3]}); "
          f"{len(over)} over {args.limit}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
