#!/usr/bin/env python3
"""Checks the layer rule of engine/layers.txt on a source tree.

    check_layers.py [--root DIR] [--rules FILE]

Scans the library (engine/LAYER/, include/colflow/LAYER/, the top-level public headers of the
lowest layer) and the clients named in the rules file (preprocess/, cli/, examples/, python/),
each folder with every folder below it (the Python extension's sources are in python/src/), and
reports, one line each (`path:line: what`), every file that

  - includes a header of a layer listed after its own ("layer codec includes layer analysis
    (higher)"), or a public header of a client;
  - inside a layer split into sub-layers (`sublayers` in the rules), includes a header of a
    higher sub-layer ("analysis/inputs includes analysis/scans (higher)") or of a sibling on
    the same level ("analysis/scans includes analysis/models (a sibling)"), or sits outside
    every sub-layer folder;
  - belongs to a client or is a public header, and includes a private header (*_internal.hpp,
    or a path into engine/);
  - includes the flow graph (tbb/flow_graph.h, tbb/tbb.h) outside the sources of the
    flow-graph layer, directly or through a header of the project;
  - belongs to a no-tbb layer and includes a oneTBB header, directly or through a header of
    the project;
  - sits in a folder of engine/ or include/colflow/ that names no layer or client, or
    includes colflow/NAME/... or NAME/x_internal.hpp for such a NAME.

Exit status: 0 when the tree follows the rule, 1 when something breaks it, 2 when the rules
file cannot be read. Python 3 standard library only.
"""

import argparse
import re
import sys
from pathlib import Path

CPP_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inl", ".ipp", ".tpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
UMBRELLA = "colflow.hpp"
ATTRIBUTES = {"flow-graph", "no-tbb", "own-library"}


class RulesError(Exception):
    pass


class Rules:
    """The ordered layers and clients of a layers.txt file."""

    def __init__(self, path):
        self.layers = []  # lowest first
        self.clients = []
        self.attributes = {}  # layer -> set of words
        self.sublevels = {}  # layer -> [[sub-layer names of a level], ...], lowest level first
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise RulesError(f"{path}: cannot read the rules: {e.strerror}")
        for number, line in enumerate(text.splitlines(), 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            where = f"{path}:{number}"
            kind, names = words[0], words[1:]
            if kind == "sublayers":
                self.add_sublayers(where, names)
                continue
            if kind not in ("layer", "client") or not names:
                raise RulesError(f"{where}: expected `layer NAME [WORDS]`, "
                                 "`sublayers LAYER LEVEL...` or `client NAME`")
            name, words = names[0], set(names[1:])
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise RulesError(f"{where}: `{name}` is not a folder name")
            if name in self.layers or name in self.clients:
                raise RulesError(f"{where}: `{name}` is named twice")
            if kind == "client":
                if words:
                    raise RulesError(f"{where}: a client takes no words")
                self.clients.append(name)
                continue
            if self.clients:
                raise RulesError(f"{where}: layers come before clients")
            if words - ATTRIBUTES:
                raise RulesError(f"{where}: unknown words {sorted(words - ATTRIBUTES)}")
            self.layers.append(name)
            self.attributes[name] = words
        if not self.layers:
            raise RulesError(f"{path}: no layer")

    def add_sublayers(self, where, names):
        """`sublayers LAYER LEVEL LEVEL...`: the folders of engine/LAYER/, lowest level first;
        a level is one folder name or siblings joined by `|`."""
        if len(names) < 2:
            raise RulesError(f"{where}: expected `sublayers LAYER LEVEL LEVEL...`")
        layer, levels = names[0], [level.split("|") for level in names[1:]]
        if layer not in self.layers:
            raise RulesError(f"{where}: `{layer}` is no layer named above")
        if layer in self.sublevels:
            raise RulesError(f"{where}: the sub-layers of `{layer}` are named twice")
        seen = [name for level in levels for name in level]
        for name in seen:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise RulesError(f"{where}: `{name}` is not a folder name")
        if len(set(seen)) != len(seen):
            raise RulesError(f"{where}: a sub-layer of `{layer}` is named twice")
        self.sublevels[layer] = levels

    def sub_rank(self, layer, sub):
        """The level of sub-layer `sub` of `layer`, None if it is none."""
        for number, level in enumerate(self.sublevels.get(layer, [])):
            if sub in level:
                return number
        return None

    def rank(self, owner):
        kind, name = owner
        if kind == "layer":
            return self.layers.index(name)
        return len(self.layers) + self.clients.index(name)

    def lowest(self):
        return ("layer", self.layers[0])

    def highest(self):
        return ("layer", self.layers[-1])

    def owner_of_name(self, name):
        if name in self.layers:
            return ("layer", name)
        if name in self.clients:
            return ("client", name)
        return None


def is_tbb(spec):
    return spec.startswith(("tbb/", "oneapi/tbb/")) or spec in ("tbb.h", "oneapi/tbb.h")


def is_flow_graph(spec):
    for prefix in ("tbb/", "oneapi/tbb/"):
        if spec.startswith(prefix):
            rest = spec[len(prefix):]
            return rest.startswith("flow_graph") or rest == "tbb.h"
    return spec in ("tbb.h", "oneapi/tbb.h")


def is_private(spec):
    return (spec.endswith("_internal.hpp") or spec.startswith("engine/") or "/engine/" in spec)


class Checker:
    def __init__(self, root, rules):
        self.root = Path(root)
        self.rules = rules
        self.violations = []  # (path, line, message)
        self.files = 0
        self.includes = 0
        self._reach = {}  # (path, predicate name) -> (spec, chain) or None
        self.sub_of = {}  # path -> its sub-layer, for the files of layers split into some
        self._namesakes = {}  # layer -> {stem of a source: its sub-layer}

    def report(self, path, line, message):
        self.violations.append((path, line, message))

    def rel(self, path):
        return path.relative_to(self.root).as_posix()

    # ---- which file belongs to whom ---------------------------------------------------------

    def owned_files(self):
        """(path, owner, public, exempt) for every C++ file the rule governs."""
        out = []
        engine = self.root / "engine"
        if engine.is_dir():
            for entry in sorted(engine.iterdir()):
                if entry.is_dir():
                    if entry.name not in self.rules.layers:
                        self.report(self.rel(entry) + "/", 0,
                                    f"folder `{entry.name}` is no layer of engine/layers.txt")
                        continue
                    for f in self.cpp_files(entry):
                        out.append((f, ("layer", entry.name), False, False))
                        self.place_in_sublayer(f, entry)
                elif entry.suffix in CPP_SUFFIXES:
                    self.report(self.rel(entry), 0, "a source file outside every layer folder")
        public = self.root / "include" / "colflow"
        if public.is_dir():
            for entry in sorted(public.iterdir()):
                if entry.is_dir():
                    owner = self.rules.owner_of_name(entry.name)
                    if owner is None:
                        self.report(self.rel(entry) + "/", 0,
                                    f"folder `{entry.name}` is no layer or client of "
                                    "engine/layers.txt")
                        continue
                    for f in self.cpp_files(entry):
                        out.append((f, owner, True, False))
                        if entry.name in self.rules.sublevels:
                            self.sub_of[f] = self.public_sublayer(entry.name, f.stem)
                elif entry.suffix in CPP_SUFFIXES:
                    out.append((entry, self.rules.lowest(), True, entry.name == UMBRELLA))
        for client in self.rules.clients:
            folder = self.root / client
            if folder.is_dir():
                for f in self.cpp_files(folder):
                    out.append((f, ("client", client), False, False))
        return out

    def place_in_sublayer(self, path, layer_folder):
        """Records the sub-layer of a source of a layer split into sub-layers, reporting a file
        outside every sub-layer folder and a folder the rules do not name."""
        layer = layer_folder.name
        if layer not in self.rules.sublevels:
            return
        parts = path.relative_to(layer_folder).parts
        if len(parts) == 1:
            self.report(self.rel(path), 0, f"a source file outside every sub-layer folder of "
                        f"engine/{layer}/")
        elif self.rules.sub_rank(layer, parts[0]) is None:
            folder = self.rel(layer_folder / parts[0]) + "/"
            if not any(v[0] == folder for v in self.violations):
                self.report(folder, 0, f"folder `{parts[0]}` is no sub-layer of {layer} in "
                            "engine/layers.txt")
        else:
            self.sub_of[path] = parts[0]

    def public_sublayer(self, layer, stem):
        """A public header include/colflow/LAYER/X.hpp belongs to the sub-layer whose folder
        holds X.cpp; one without a namesake (the options every analysis takes) to the lowest."""
        if layer not in self._namesakes:
            found = {}
            for f in self.cpp_files(self.root / "engine" / layer):
                parts = f.relative_to(self.root / "engine" / layer).parts
                if len(parts) > 1 and f.suffix == ".cpp":
                    found.setdefault(f.stem, parts[0])
            self._namesakes[layer] = found
        return self._namesakes[layer].get(stem, self.rules.sublevels[layer][0][0])

    def target_sublayer(self, target, spec, file):
        """The sub-layer of an included header of a layer split into sub-layers, or None."""
        if target is None or target[0] != "layer" or target[1] not in self.rules.sublevels:
            return None
        layer = target[1]
        if spec.startswith("colflow/"):
            return self.public_sublayer(layer, Path(spec).stem)
        if file is not None and file.is_file():
            parts = file.resolve().relative_to((self.root / "engine" / layer).resolve()).parts
            return parts[0] if len(parts) > 1 else None
        parts = spec.split("/")
        return parts[1] if len(parts) > 2 else None

    @staticmethod
    def cpp_files(folder):
        return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in CPP_SUFFIXES)

    @staticmethod
    def include_lines(path):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        found = []
        for number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if m:
                found.append((number, m.group(1), m.group(2).strip()))
        return found

    # ---- what an include names ---------------------------------------------------------------

    def target(self, spec, delimiter, includer):
        """(owner or None, file or None, unknown NAME or None) of an included header."""
        if spec.startswith("colflow/"):
            parts = spec.split("/")
            file = self.root / "include" / spec
            if len(parts) == 2:
                owner = self.rules.highest() if parts[1] == UMBRELLA else self.rules.lowest()
                return owner, file, None
            owner = self.rules.owner_of_name(parts[1])
            return owner, file, (None if owner else parts[1])
        if delimiter == '"' and spec.endswith("_internal.hpp"):
            parts = spec.split("/")
            if len(parts) == 1:  # beside the includer: its own folder
                return None, includer.parent / spec, None
            if parts[0] in self.rules.layers:
                return ("layer", parts[0]), self.root / "engine" / spec, None
            return None, None, parts[0]
        if delimiter == '"':
            beside = includer.parent / spec
            if beside.is_file():
                return None, beside, None
        return None, None, None

    def reaches(self, path, predicate, seen=None):
        """(spec, chain) when `path` includes a header matching `predicate` through headers of
        the project, `chain` the project headers on the way; None otherwise."""
        key = (path, predicate.__name__)
        if key in self._reach:
            return self._reach[key]
        seen = set() if seen is None else seen
        if path in seen:
            return None
        seen.add(path)
        result = None
        for _, delimiter, spec in self.include_lines(path):
            if predicate(spec):
                result = (spec, [])
                break
            _, file, _ = self.target(spec, delimiter, path)
            if file is not None and file.is_file():
                inner = self.reaches(file, predicate, seen)
                if inner:
                    result = (inner[0], [self.rel(file)] + inner[1])
                    break
        self._reach[key] = result
        return result

    # ---- the rule -----------------------------------------------------------------------------

    def check(self):
        rules = self.rules
        flow_graph_layers = [l for l in rules.layers if "flow-graph" in rules.attributes[l]]
        for path, owner, public, exempt in self.owned_files():
            self.files += 1
            rel = self.rel(path)
            kind, name = owner
            who = f"{kind} {name}"
            may_include_flow_graph = (kind == "layer" and not public and name in flow_graph_layers)
            no_tbb = kind == "layer" and "no-tbb" in rules.attributes[name]
            for line, delimiter, spec in self.include_lines(path):
                self.includes += 1
                target, file, unknown = self.target(spec, delimiter, path)
                if unknown is not None:
                    self.report(rel, line, f"{who} includes {spec}: `{unknown}` is no layer or "
                                "client of engine/layers.txt")
                if is_private(spec) and (kind == "client" or public):
                    what = f"client {name}" if kind == "client" else f"public header of {who}"
                    self.report(rel, line, f"{what} includes a private header ({spec}); only "
                                "public headers (colflow/...) may be included here")
                elif (target is not None and not exempt
                      and rules.rank(target) > rules.rank(owner)):
                    self.report(rel, line,
                                f"{who} includes {target[0]} {target[1]} (higher)")
                elif target == owner and not exempt and path in self.sub_of:
                    self.check_sublayers(rel, line, name, self.sub_of[path],
                                         self.target_sublayer(target, spec, file))
                # oneTBB: the flow graph stays in the streaming code; some layers use no TBB.
                if not may_include_flow_graph:
                    found = (spec, []) if is_flow_graph(spec) else self.through(file, is_flow_graph)
                    if found:
                        allowed = ", ".join(f"engine/{l}/" for l in flow_graph_layers) or "nothing"
                        self.report(rel, line, f"{who} includes the flow graph "
                                    f"{self.describe(found)}; only {allowed} may")
                if no_tbb:
                    found = (spec, []) if is_tbb(spec) else self.through(file, is_tbb)
                    if found:
                        self.report(rel, line, f"{who} includes a oneTBB header "
                                    f"{self.describe(found)}; layer {name} uses no TBB")
        self.violations.sort(key=lambda v: (v[0], v[1], v[2]))
        return not self.violations

    def check_sublayers(self, rel, line, layer, sub, included):
        """Inside a layer: an include of a higher sub-layer or of a sibling breaks the rule."""
        if included is None or included == sub:
            return
        mine, theirs = self.rules.sub_rank(layer, sub), self.rules.sub_rank(layer, included)
        if theirs is None:
            return  # a folder the rules do not name, reported where it is
        if theirs > mine:
            self.report(rel, line, f"{layer}/{sub} includes {layer}/{included} (higher)")
        elif theirs == mine:
            self.report(rel, line, f"{layer}/{sub} includes {layer}/{included} (a sibling)")

    def through(self, file, predicate):
        if file is None or not file.is_file():
            return None
        inner = self.reaches(file, predicate)
        if inner:
            return (inner[0], [self.rel(file)] + inner[1])
        return None

    @staticmethod
    def describe(found):
        spec, chain = found
        return f"({spec})" if not chain else f"({spec}, through {' -> '.join(chain)})"


def main(argv=None):
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=here.parent.parent,
                        help="the source tree (default: the one holding this script)")
    parser.add_argument("--rules", type=Path,
                        help="the layers file (default: ROOT/engine/layers.txt)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    rules_path = args.rules or root / "engine" / "layers.txt"
    try:
        rules = Rules(rules_path)
    except RulesError as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    checker = Checker(root, rules)
    ok = checker.check()
    for path, line, message in checker.violations:
        print(f"{path}:{line}: {message}" if line else f"{path}: {message}")
    summary = (f"{len(rules.layers)} layers ({', '.join(rules.layers)}), "
               f"{len(rules.clients)} clients; {checker.files} files, "
               f"{checker.includes} includes")
    if ok:
        print(f"check_layers: {summary}: the layer rule holds")
        return 0
    print(f"check_layers: {summary}: {len(checker.violations)} violation(s)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
