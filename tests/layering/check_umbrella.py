#!/usr/bin/env python3
"""Checks that the umbrella header include/colflow/colflow.hpp includes every public header of
the library: each include/colflow/LAYER/*.hpp of a layer of engine/layers.txt and each public
header of the lowest layer (the top of include/colflow/), except the layers built as libraries
of their own (`own-library`) and the clients' public headers.

    check_umbrella.py [--root DIR]

Prints one line per header the umbrella misses and exits 1; exits 0 when it misses none.
(That the umbrella compiles alone is the build's part: the object library `umbrella_alone`.)
Python 3 standard library only.
"""

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_layers import INCLUDE, UMBRELLA, Rules, RulesError  # noqa: E402


def public_headers(root, rules):
    """The include specs (colflow/...) of the headers the umbrella must include."""
    public = root / "include" / "colflow"
    wanted = [f"colflow/{p.name}" for p in sorted(public.glob("*.hpp")) if p.name != UMBRELLA]
    for layer in rules.layers:
        if "own-library" in rules.attributes[layer] or not (public / layer).is_dir():
            continue
        wanted += [f"colflow/{p.relative_to(public).as_posix()}"
                   for p in sorted((public / layer).rglob("*.hpp"))]
    return wanted


def main(argv=None):
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=here.parent.parent)
    root = parser.parse_args(argv).root.resolve()
    try:
        rules = Rules(root / "engine" / "layers.txt")
    except RulesError as e:
        print(f"check_umbrella: {e}", file=sys.stderr)
        return 2
    umbrella = root / "include" / "colflow" / UMBRELLA
    included = {m.group(2).strip() for line in umbrella.read_text(encoding="utf-8").splitlines()
                if (m := INCLUDE.match(line))}
    missing = [spec for spec in public_headers(root, rules) if spec not in included]
    for spec in missing:
        print(f"include/colflow/{UMBRELLA}: misses {spec}")
    if missing:
        print(f"check_umbrella: the umbrella misses {len(missing)} public header(s)",
              file=sys.stderr)
        return 1
    print(f"check_umbrella: the umbrella includes all {len(public_headers(root, rules))} "
          "public headers of the library")
    return 0


if __name__ == "__main__":
    sys.exit(main())
