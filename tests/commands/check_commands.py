#!/usr/bin/env python3
"""Checks every command of the colflow program's command table (cli/command_table.cpp).

    check_commands.py --program PROGRAM [ARG...] [--root DIR]

Reads the table from `PROGRAM --list-commands` (one `NAME<TAB>PYTHON` line per command, `-` for
no Python counterpart) and reports, one line each (`NAME: what`), every command that

  - has no help: `PROGRAM NAME --help` fails, is not the command's own help (a `Usage: colflow
    NAME` line), or prints no description before that line;
  - has no example in DIR/docs/USAGE.md: no line of a fenced code block runs `colflow NAME`
    (a synopsis form such as `colflow info STORE`, or an example, after `mpirun ...` or not);
  - promises a Python counterpart that the package's sources (DIR/python/colflow/*.py, parsed
    and never imported, so no built package is needed) do not define and export: a function
    `PYTHON` at the top level of a module, or for `CLASS.METHOD` a method of a top-level class,
    and `PYTHON` (or `CLASS`) listed in `__all__` of __init__.py;
  - is not shown by the demo: no line of DIR/scripts/demo.sh runs it (`"$colflow" NAME ...` or
    `colflow NAME ...`) and no line `# not in the demo: NAME: REASON` says why.

Exit status: 0 when every command passes, 1 when one fails, 2 when the table cannot be read.
Python 3 standard library only.
"""

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")


class TableError(Exception):
    pass


def run(program, args):
    """(exit status, stdout + stderr) of the program with `args`."""
    try:
        done = subprocess.run(program + args, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise TableError(f"cannot run {' '.join(program + args)}: {e}")
    return done.returncode, done.stdout + done.stderr


def read_table(program):
    """[(name, python counterpart or None)] in the program's order."""
    status, out = run(program, ["--list-commands"])
    if status != 0:
        raise TableError(f"--list-commands exited with {status}:\n{out}")
    table = []
    for number, line in enumerate(out.splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 2 or not re.fullmatch(r"[a-z][a-z0-9-]*", fields[0]) or not fields[1]:
            raise TableError(f"--list-commands line {number}: expected NAME<TAB>PYTHON, "
                             f"got {line!r}")
        name, python = fields
        if any(name == n for n, _ in table):
            raise TableError(f"--list-commands line {number}: {name} listed twice")
        table.append((name, None if python == "-" else python))
    if not table:
        raise TableError("--list-commands listed no command")
    return table


def help_problem(program, name):
    """What is wrong with `PROGRAM NAME --help`, or None."""
    status, out = run(program, [name, "--help"])
    if status != 0:
        return f"`{name} --help` exited with {status}"
    lines = out.splitlines()
    own_usage = re.compile(rf"Usage: colflow {re.escape(name)}(\s|$)")
    usage = next((i for i, line in enumerate(lines) if own_usage.match(line)), None)
    if usage is None:
        return (f"`{name} --help` prints no `Usage: colflow {name}` line "
                "(not the command's own help)")
    if not any(l.strip() for l in lines[:usage]):
        return f"`{name} --help` prints no description before its usage line"
    return None


def code_block_lines(text):
    """The lines inside fenced code blocks of a Markdown text."""
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
        elif inside:
            yield line


def demo_problem(demo, name):
    """What is wrong with the demo's coverage of `name`, or None."""
    runs = re.compile(rf'(\$colflow"?|(^|\s)colflow)\s+{re.escape(name)}(\s|$)')
    excused = re.compile(rf"^\s*# not in the demo: {re.escape(name)}: \S")
    for line in demo.splitlines():
        if excused.match(line) or (not line.lstrip().startswith("#") and runs.search(line)):
            return None
    return (f"no step of scripts/demo.sh runs `colflow {name}` (or a line "
            f"`# not in the demo: {name}: REASON`)")


def has_usage_example(lines, name):
    runs = re.compile(rf"(^|\s)colflow\s+{re.escape(name)}(\s|$)")
    return any(runs.search(l) for l in lines)


class PythonPackage:
    """The functions, classes with their methods, and `__all__` of the package's sources."""

    def __init__(self, folder):
        self.functions, self.methods, self.exported = set(), {}, set()
        for path in sorted(Path(folder).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions.add(node.name)
                elif isinstance(node, ast.ClassDef):
                    self.methods.setdefault(node.name, set()).update(
                        n.name for n in node.body
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
                elif path.name == "__init__.py" and self.is_all(node):
                    self.exported.update(ast.literal_eval(node.value))

    @staticmethod
    def is_all(node):
        return (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__all__")

    def problem(self, counterpart):
        """What the package lacks of `counterpart` (FUNCTION or CLASS.METHOD), or None."""
        owner, _, method = counterpart.partition(".")
        if method:
            if method not in self.methods.get(owner, set()):
                return f"no method {method} of a class {owner} in python/colflow/*.py"
        elif owner not in self.functions:
            return f"no top-level `def {owner}` in python/colflow/*.py"
        if owner not in self.exported:
            return f"{owner} is not in __all__ of python/colflow/__init__.py"
        return None


def check(program, root):
    """The failure lines of every command of the table."""
    table = read_table(program)
    usage = list(code_block_lines((root / "docs" / "USAGE.md").read_text(encoding="utf-8")))
    package = PythonPackage(root / "python" / "colflow")
    demo = (root / "scripts" / "demo.sh").read_text(encoding="utf-8")
    failures = []
    for name, python in table:
        problem = help_problem(program, name)
        if problem:
            failures.append(f"{name}: {problem}")
        if not has_usage_example(usage, name):
            failures.append(f"{name}: no example running `colflow {name}` in a code block of "
                            "docs/USAGE.md")
        problem = demo_problem(demo, name)
        if problem:
            failures.append(f"{name}: {problem}")
        if python:
            problem = package.problem(python)
            if problem:
                failures.append(f"{name}: promises Python's {python}, but {problem}")
    return table, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--program", nargs="+", required=True,
                        help="the colflow program (and any words that run it)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the source tree (default: the one holding this script)")
    args = parser.parse_args()
    try:
        table, failures = check(args.program, args.root)
    except (TableError, OSError, SyntaxError, ValueError) as e:
        print(f"check_commands: {e}", file=sys.stderr)
        return 2
    for line in failures:
        print(line)
    if failures:
        return 1
    print(f"check_commands: {len(table)} commands have help, an example in docs/USAGE.md, "
          "a step in the demo and the Python counterpart they promise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
