#!/usr/bin/env python3
"""Self-test of check_commands.py: a fake program whose every command has help, an example and
its Python counterpart must pass, and each fault planted in a copy of it (a command without
help, without an example, with a missing Python counterpart, a broken listing) must fail the
check with a line naming the command and the fault (and nothing else).

    self_test.py        (exit 0 when every case behaves; prints one line per case)
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKER = HERE / "check_commands.py"

# The fake program: `FAKE SPEC --list-commands` prints the table of SPEC (a JSON list of
# {name, python, description, help_status}) as colflow does; `FAKE SPEC NAME --help` prints the
# command's description and usage line as CLI11 does, and for a name it does not register the
# program's own help, as CLI11 does for an unknown word before --help.
FAKE_PROGRAM = r'''
import json, sys
spec, args = json.load(open(sys.argv[1])), sys.argv[2:]
if args == ["--list-commands"]:
    if isinstance(spec, str):
        print(spec, end="")
    else:
        for c in spec:
            print(c["name"] + "\t" + (c["python"] or "-"))
    sys.exit(0)
registered = {c["name"]: c for c in spec if c.get("registered", True)}
if len(args) == 2 and args[1] == "--help" and args[0] in registered:
    c = registered[args[0]]
    if c["description"]:
        print(c["description"])
    print("Usage: colflow " + c["name"] + " [OPTIONS] STORE")
    sys.exit(c.get("help_status", 0))
print("colflow: the fake program\nUsage: colflow [OPTIONS] SUBCOMMAND")
'''

GOOD = [
    {"name": "info", "python": "Store.info", "description": "Describe a store"},
    {"name": "verify", "python": None, "description": "Check a store"},
    {"name": "assoc", "python": "assoc", "description": "Association scan"},
    {"name": "ridge", "python": "ridge", "description": "Ridge path"},
]

USAGE = """# Using colflow

```
colflow info   STORE [--json]
colflow verify STORE
```

Some prose that names `colflow planted STORE`, which is no example.

```sh
colflow assoc sim.cf --pheno sim.phen --out sim   # a scan
mpirun -np 4 colflow ridge geno.cf --pheno y.phen --out path
```
"""

DEMO = """#!/usr/bin/env bash
colflow=build/cli/colflow
"$colflow" info sim.cf
# not in the demo: verify: checked by the step before
x=$("$colflow" assoc sim.cf --out a)
colflow ridge sim.cf --out r
"$colflow" planted sim.cf
"$colflow" as sim.cf
# "$colflow" demoless sim.cf   (a comment is no step)
"""

INIT = '''"""The fake package."""
from ._models import ridge
from ._hidden import hidden

__all__ = ["Store", "assoc", "ridge"]


class Store:
    def info(self):
        return {}


def assoc(store):
    def planted(x):  # nested: no function of the package
        return x
    return planted
'''

MODELS = "def ridge(store):\n    return store\n\n\ndef unexported(store):\n    return store\n"
HIDDEN = "def hidden():\n    pass\n"


def planted(name, python=None, description="A planted command", **fields):
    return {"name": name, "python": python, "description": description, **fields}


def make_tree(root):
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "USAGE.md").write_text(USAGE, encoding="utf-8")
    package = root / "python" / "colflow"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(INIT, encoding="utf-8")
    (package / "_models.py").write_text(MODELS, encoding="utf-8")
    (package / "_hidden.py").write_text(HIDDEN, encoding="utf-8")
    (package / "_core.pyi").write_text("def stub() -> None: ...\n", encoding="utf-8")
    (root / "fake.py").write_text(FAKE_PROGRAM, encoding="utf-8")
    (root / "scripts").mkdir()
    (root / "scripts" / "demo.sh").write_text(DEMO, encoding="utf-8")


def run_checker(root, spec):
    (root / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    program = [sys.executable, str(root / "fake.py"), str(root / "spec.json")]
    done = subprocess.run([sys.executable, str(CHECKER), "--root", str(root), "--program", *program],
                          capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def main():
    # Cases about help or Python plant a command with its example, so that only their fault fails.
    usage_planted = "\n```\ncolflow planted STORE\n```\n"
    # (name, the table, extra USAGE.md text, expected substring of the one failure line)
    cases = [
        ("command without a description",
         GOOD + [planted("planted", description="")], usage_planted,
         "planted: `planted --help` prints no description before its usage line"),
        ("command whose --help fails",
         GOOD + [planted("planted", help_status=109)], usage_planted,
         "planted: `planted --help` exited with 109"),
        ("command listed but not registered",
         GOOD + [planted("planted", registered=False)], usage_planted,
         "planted: `planted --help` prints no `Usage: colflow planted` line"),
        ("command without an example in a code block",
         GOOD + [planted("planted")], "",
         "planted: no example running `colflow planted` in a code block of docs/USAGE.md"),
        ("example of a longer name only",
         GOOD + [planted("as")], "",
         "as: no example running `colflow as`"),
        ("promised Python function missing",
         GOOD + [planted("planted", python="planted")], usage_planted,
         "planted: promises Python's planted, but no top-level `def planted`"),
        ("promised Python function not exported",
         GOOD + [planted("planted", python="unexported")], usage_planted,
         "planted: promises Python's unexported, but unexported is not in __all__"),
        ("promised Python function imported but not in __all__",
         GOOD + [planted("planted", python="hidden")], usage_planted,
         "planted: promises Python's hidden, but hidden is not in __all__"),
        ("promised Python function only in a stub",
         GOOD + [planted("planted", python="stub")], usage_planted,
         "planted: promises Python's stub, but no top-level `def stub`"),
        ("command without a step in the demo",
         GOOD + [planted("demoless")], "\n```\ncolflow demoless STORE\n```\n",
         "demoless: no step of scripts/demo.sh runs `colflow demoless`"),
        ("promised Python method missing",
         GOOD + [planted("planted", python="Store.planted")], usage_planted,
         "planted: promises Python's Store.planted, but no method planted of a class Store"),
    ]

    failures = 0
    with tempfile.TemporaryDirectory(prefix="colflow-commands-") as scratch:
        clean = Path(scratch) / "clean"
        make_tree(clean)
        status, out, err = run_checker(clean, GOOD)
        if status != 0 or "4 commands have help" not in out:
            print(f"FAIL clean table: exit {status}\n{out}{err}")
            failures += 1
        else:
            print(f"ok   clean table passes: {out.strip()}")

        for number, (name, spec, usage_text, expected) in enumerate(cases):
            tree = Path(scratch) / f"case{number}"
            make_tree(tree)
            with (tree / "docs" / "USAGE.md").open("a", encoding="utf-8") as usage:
                usage.write(usage_text)
            status, out, err = run_checker(tree, spec)
            lines = out.splitlines()
            # The planted command is the only one at fault, and only for the planted fault.
            if status != 1 or len(lines) != 1 or expected not in lines[0]:
                print(f"FAIL {name}: exit {status}, expected one line with\n  {expected}\n"
                      f"got:\n{out}{err}")
                failures += 1
            else:
                print(f"ok   {name}: {lines[0]}")

        for name, listing in [("empty listing", ""), ("listing without a tab", "info\n"),
                              ("command listed twice", "info\t-\ninfo\t-\n")]:
            status, out, err = run_checker(clean, listing)
            if status != 2 or "--list-commands" not in err:
                print(f"FAIL {name}: exit {status}\n{out}{err}")
                failures += 1
            else:
                print(f"ok   {name}: {err.strip()}")

    total = len(cases) + 4
    print(f"self_test: {total - failures} of {total} cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
