#!/usr/bin/env python3
"""Self-test of check_layers.py: a tiny tree that follows the rule of the real engine/layers.txt
must pass, and each violation planted in a copy of it must fail the check with a line naming
the file, the line and the broken rule (and nothing else).

    self_test.py        (exit 0 when every case behaves; prints one line per case)
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKER = HERE / "check_layers.py"
REAL_RULES = HERE.parent.parent / "engine" / "layers.txt"

sys.path.insert(0, str(HERE))
from check_layers import Rules  # noqa: E402  (the same parser the check uses)


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def public_header(rules, layer):
    """The include spec of the fake public header of `layer`."""
    return f"colflow/{layer}.hpp" if layer == rules.layers[0] else f"colflow/{layer}/{layer}.hpp"


def private_folder(rules, layer):
    """The folder of a layer's fake sources: its lowest sub-layer's if it has sub-layers."""
    levels = rules.sublevels.get(layer)
    return f"{layer}/{levels[0][0]}" if levels else layer


def make_clean_tree(root, rules):
    """Per layer: a public header, a private header and a source that includes both and the
    public header of the layer below; clients that use public headers; the umbrella."""
    (root / "engine").mkdir(parents=True, exist_ok=True)
    shutil.copy(REAL_RULES, root / "engine" / "layers.txt")
    below = None
    for layer in rules.layers:
        spec = public_header(rules, layer)
        lines = ["#pragma once"]
        if below:
            lines.append(f'#include "{public_header(rules, below)}"')
        write(root, "include/" + spec, "\n".join(lines) + "\n")
        write(root, f"engine/{private_folder(rules, layer)}/{layer}_internal.hpp",
              f'#pragma once\n#include "{spec}"\n')
        source = [f'#include "{spec}"', "#include <vector>",
                  f'#include "{private_folder(rules, layer)}/{layer}_internal.hpp"']
        if below:
            source.append(f'#include "{private_folder(rules, below)}/{below}_internal.hpp"')
        attributes = rules.attributes[layer]
        if "flow-graph" in attributes:
            source.append("#include <tbb/flow_graph.h>")
        elif "no-tbb" not in attributes:
            source.append("#include <tbb/parallel_for.h>")
        write(root, f"engine/{private_folder(rules, layer)}/{layer}.cpp", "\n".join(source) + "\n")
        for level in rules.sublevels.get(layer, [])[1:]:
            for sub in level:  # a source per higher sub-layer, including the lowest one's header
                write(root, f"engine/{layer}/{sub}/{sub}.cpp",
                      f'#include "{private_folder(rules, layer)}/{layer}_internal.hpp"\n')
        below = layer
    umbrella = [f'#include "{public_header(rules, l)}"' for l in rules.layers]
    write(root, "include/colflow/colflow.hpp", "#pragma once\n" + "\n".join(umbrella) + "\n")
    for client in rules.clients:
        write(root, f"{client}/{client}.hpp", '#pragma once\n#include "colflow/colflow.hpp"\n')
        write(root, f"{client}/{client}.cpp",
              f'#include "{client}.hpp"\n#include <colflow/colflow.hpp>\n'
              f'#include "{public_header(rules, rules.layers[-1])}"\n#include <tbb/parallel_for.h>\n')
        # Sources a folder down, as the Python extension's are (python/src/), with a private
        # header of their own beside them: a client's own headers are no library header.
        write(root, f"{client}/src/bindings.hpp", '#pragma once\n#include "colflow/colflow.hpp"\n')
        write(root, f"{client}/src/bind.cpp",
              f'#include "bindings.hpp"\n#include "{public_header(rules, rules.layers[-1])}"\n')


def run_checker(root):
    done = subprocess.run([sys.executable, str(CHECKER), "--root", str(root)],
                          capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def umbrella_cases(scratch, clean, rules):
    """check_umbrella.py passes the clean tree and names a public header planted outside the
    umbrella. Returns the number of failed cases."""
    checker = HERE / "check_umbrella.py"
    failures = 0
    done = subprocess.run([sys.executable, str(checker), "--root", str(clean)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL umbrella of the clean tree: exit {done.returncode}\n{done.stdout}{done.stderr}")
        failures += 1
    else:
        print("ok   umbrella of the clean tree includes every public header")
    tree = scratch / "umbrella"
    shutil.copytree(clean, tree)
    layer = next(l for l in rules.layers[1:] if "own-library" not in rules.attributes[l])
    write(tree, f"include/colflow/{layer}/planted.hpp", "#pragma once\n")
    done = subprocess.run([sys.executable, str(checker), "--root", str(tree)],
                          capture_output=True, text=True)
    expected = f"include/colflow/colflow.hpp: misses colflow/{layer}/planted.hpp"
    if done.returncode != 1 or expected not in done.stdout:
        print(f"FAIL umbrella misses a header: exit {done.returncode}, expected\n  {expected}\n"
              f"got:\n{done.stdout}{done.stderr}")
        failures += 1
    else:
        print(f"ok   umbrella misses a header: {expected}")
    return failures


def main():
    rules = Rules(REAL_RULES)
    layers = rules.layers
    low, high = layers[0], layers[-1]
    no_tbb = [l for l in layers if "no-tbb" in rules.attributes[l]]
    flow_graph = [l for l in layers if "flow-graph" in rules.attributes[l]]
    # A layer that must not see a higher one: the first no-TBB layer (codec), else the lowest
    # layer that is not the highest.
    plain = no_tbb[0] if no_tbb and no_tbb[0] != high else layers[0]
    client = rules.clients[0] if rules.clients else None
    not_flow = next(l for l in reversed(layers) if l not in flow_graph)

    # (name, files to plant {path: text}, expected substring of the one violation line)
    cases = [
        ("lower layer includes a higher public header",
         {f"engine/{plain}/planted.cpp": f'#include <vector>\n#include "{public_header(rules, high)}"\n'},
         f"engine/{plain}/planted.cpp:2: layer {plain} includes layer {high} (higher)"),
        ("lower layer includes a higher private header",
         {f"engine/{plain}/planted.cpp": f'#include "{private_folder(rules, high)}/{high}_internal.hpp"\n'},
         f"engine/{plain}/planted.cpp:1: layer {plain} includes layer {high} (higher)"),
        ("lower layer includes the umbrella",
         {f"engine/{plain}/planted.cpp": '#include "colflow/colflow.hpp"\n'},
         f"engine/{plain}/planted.cpp:1: layer {plain} includes layer {high} (higher)"),
        ("public header includes a higher layer",
         {f"include/{public_header(rules, plain)}":
              f'#pragma once\n#include "{public_header(rules, high)}"\n'},
         f"include/{public_header(rules, plain)}:2: layer {plain} includes layer {high} (higher)"),
        ("public header includes a private header",
         {f"include/colflow/{high}/planted.hpp": f'#pragma once\n#include "{private_folder(rules, high)}/{high}_internal.hpp"\n'},
         f"include/colflow/{high}/planted.hpp:2: public header of layer {high} includes a private header"),
        ("unknown folder under engine/",
         {"engine/plugins/planted.cpp": f'#include "{public_header(rules, low)}"\n'},
         "engine/plugins/: folder `plugins` is no layer"),
        ("unknown folder under include/colflow/",
         {"include/colflow/plugins/planted.hpp": "#pragma once\n"},
         "include/colflow/plugins/: folder `plugins` is no layer or client"),
        ("include of an unknown layer",
         {f"engine/{high}/planted.cpp": '#include "colflow/plugins/x.hpp"\n'},
         f"engine/{high}/planted.cpp:1: layer {high} includes colflow/plugins/x.hpp: `plugins` is no layer"),
        ("source file outside every layer folder",
         {"engine/planted.cpp": "int x;\n"},
         "engine/planted.cpp: a source file outside every layer folder"),
        ("flow graph outside the flow-graph layer",
         {f"engine/{not_flow}/planted.cpp": "#include <tbb/flow_graph.h>\n"},
         f"engine/{not_flow}/planted.cpp:1: layer {not_flow} includes the flow graph (tbb/flow_graph.h)"),
        ("flow graph through tbb/tbb.h",
         {f"engine/{not_flow}/planted.cpp": "#include <vector>\n#include <tbb/tbb.h>\n"},
         f"engine/{not_flow}/planted.cpp:2: layer {not_flow} includes the flow graph (tbb/tbb.h)"),
    ]
    if client:
        cases += [
            ("client includes a private header",
             {f"{client}/planted.cpp": f'#include "colflow/colflow.hpp"\n#include "{low}/{low}_internal.hpp"\n'},
             f"{client}/planted.cpp:2: client {client} includes a private header ({low}/{low}_internal.hpp)"),
            ("client includes a path into engine/",
             {f"{client}/planted.cpp": f'#include "../engine/{low}/{low}.hpp"\n'},
             f"{client}/planted.cpp:1: client {client} includes a private header"),
            ("client includes the flow graph",
             {f"{client}/planted.cpp": "#include <tbb/flow_graph.h>\n"},
             f"{client}/planted.cpp:1: client {client} includes the flow graph"),
            ("layer includes a client's public header",
             {f"include/colflow/{client}/api.hpp": "#pragma once\n",
              f"engine/{high}/planted.cpp": f'#include "colflow/{client}/api.hpp"\n'},
             f"engine/{high}/planted.cpp:1: layer {high} includes client {client} (higher)"),
        ]
    # Sub-layers, planted whatever the rules say: the real rules must split some layer (the
    # analyses), or this self-test fails, so that the rule cannot silently vanish.
    split = next(iter(rules.sublevels), None)
    if split is None:
        print("FAIL engine/layers.txt splits no layer into sub-layers")
        return 1
    levels = rules.sublevels[split]
    bottom = levels[0][0]
    top = levels[-1]
    cases += [
        ("sub-layer includes a higher sub-layer's private header",
         {f"engine/{split}/{top[0]}/top_internal.hpp": "#pragma once\n",
          f"engine/{split}/{bottom}/planted.cpp": f'#include "{split}/{top[0]}/top_internal.hpp"\n'},
         f"engine/{split}/{bottom}/planted.cpp:1: {split}/{bottom} includes {split}/{top[0]} (higher)"),
        ("sub-layer includes a higher sub-layer's public header",
         {f"include/colflow/{split}/{top[0]}.hpp": "#pragma once\n",
          f"engine/{split}/{bottom}/planted.cpp": f'#include "colflow/{split}/{top[0]}.hpp"\n'},
         f"engine/{split}/{bottom}/planted.cpp:1: {split}/{bottom} includes {split}/{top[0]} (higher)"),
        ("source outside every sub-layer folder",
         {f"engine/{split}/planted.cpp": "int x;\n"},
         f"engine/{split}/planted.cpp: a source file outside every sub-layer folder"),
        ("folder that is no sub-layer",
         {f"engine/{split}/plugins/planted.cpp": "int x;\n"},
         f"engine/{split}/plugins/: folder `plugins` is no sub-layer of {split}"),
    ]
    siblings = next((level for level in levels if len(level) > 1), None)
    if siblings:
        a, b = siblings[0], siblings[1]
        cases.append(
            ("sub-layer includes a sibling's private header (at any depth)",
             {f"engine/{split}/{b}/deep/sibling_internal.hpp": "#pragma once\n",
              f"engine/{split}/{a}/planted.cpp":
                  f'#include <vector>\n#include "{split}/{b}/deep/sibling_internal.hpp"\n'},
             f"engine/{split}/{a}/planted.cpp:2: {split}/{a} includes {split}/{b} (a sibling)"))

    # The Python extension is a client whose sources sit a folder down, in python/src/: the
    # check must reach them. Planted whatever the rules say, so that this case fails when
    # engine/layers.txt stops naming `python` or the checker stops looking below a client's top
    # folder.
    private = "store" if "store" in layers else low
    cases.append(
        ("Python extension source includes a private header",
         {"python/src/planted.cpp": f'#include "bindings.hpp"\n#include "{private}/format_internal.hpp"\n'},
         f"python/src/planted.cpp:2: client python includes a private header "
         f"({private}/format_internal.hpp)"))
    if flow_graph:
        fg = flow_graph[0]
        cases += [
            ("public header of the flow-graph layer includes the flow graph",
             {f"include/colflow/{fg}/planted.hpp": "#pragma once\n#include <tbb/flow_graph.h>\n"},
             f"include/colflow/{fg}/planted.hpp:2: layer {fg} includes the flow graph"),
        ]
        above = [l for l in layers[layers.index(fg) + 1:]]
        if above:
            cases.append(
                ("flow graph reached through a private header of the flow-graph layer",
                 {f"engine/{fg}/graph_internal.hpp": "#pragma once\n#include <tbb/flow_graph.h>\n",
                  f"engine/{above[0]}/planted.cpp": f'#include "{fg}/graph_internal.hpp"\n'},
                 f"engine/{above[0]}/planted.cpp:1: layer {above[0]} includes the flow graph "
                 f"(tbb/flow_graph.h, through engine/{fg}/graph_internal.hpp)"))
    if no_tbb:
        nt = no_tbb[0]
        cases.append(
            ("no-TBB layer includes a oneTBB header",
             {f"engine/{nt}/planted.cpp": "#include <tbb/parallel_for.h>\n"},
             f"engine/{nt}/planted.cpp:1: layer {nt} includes a oneTBB header (tbb/parallel_for.h); "
             f"layer {nt} uses no TBB"))
        lower = [l for l in layers[:layers.index(nt)] if "no-tbb" not in rules.attributes[l]]
        if lower:
            lw = lower[-1]
            spec = f"colflow/{lw}/tbb_user.hpp" if lw != low else "colflow/tbb_user.hpp"
            cases.append(
                ("no-TBB layer reaches oneTBB through a lower layer's header",
                 {f"include/{spec}": "#pragma once\n#include <tbb/parallel_for.h>\n",
                  f"engine/{nt}/planted.cpp": f'#include "{spec}"\n'},
                 f"engine/{nt}/planted.cpp:1: layer {nt} includes a oneTBB header "
                 f"(tbb/parallel_for.h, through include/{spec})"))

    failures = 0
    with tempfile.TemporaryDirectory(prefix="colflow-layering-") as scratch:
        clean = Path(scratch) / "clean"
        make_clean_tree(clean, rules)
        status, out, err = run_checker(clean)
        if status != 0 or "the layer rule holds" not in out:
            print(f"FAIL clean tree: exit {status}\n{out}{err}")
            failures += 1
        else:
            print("ok   clean tree passes")

        for number, (name, planted, expected) in enumerate(cases):
            tree = Path(scratch) / f"case{number}"
            shutil.copytree(clean, tree)
            for rel, text in planted.items():
                write(tree, rel, text)
            status, out, err = run_checker(tree)
            lines = out.splitlines()
            # The planted file is the only one at fault: the clean rest stays clean.
            culprit = expected.split(":", 1)[0]
            stray = [l for l in lines if not l.startswith(culprit + ":")]
            if status != 1 or not any(expected in l for l in lines) or stray:
                print(f"FAIL {name}: exit {status}, expected a line with\n  {expected}\ngot:\n{out}{err}")
                failures += 1
            else:
                print(f"ok   {name}: {next(l for l in lines if expected in l)}")

        failures += umbrella_cases(Path(scratch), clean, rules)

        broken = Path(scratch) / "broken-rules"
        shutil.copytree(clean, broken)
        write(broken, "engine/layers.txt", "layer common\nlayer io sideways\n")
        status, out, err = run_checker(broken)
        if status != 2 or "unknown words" not in err:
            print(f"FAIL malformed layers.txt: exit {status}\n{out}{err}")
            failures += 1
        else:
            print(f"ok   malformed layers.txt: {err.strip()}")

    total = len(cases) + 2 + 2
    print(f"self_test: {total - failures} of {total} cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
