#!/usr/bin/env python3
"""Check that arrows point down only: python -> bench -> sw -> host (docs/architecture.md, "Layout").

A file under host/ may include only headers that live under host/ (or outside the rooms:
generated, system); a file under sw/ may include host/ and sw/ headers; bench/ may include those
and its own; python/ (the Python module) may include all.
The same holds for CMake: a target_link_libraries() under host/ may not name a library defined
under sw/ or bench/, nor one under sw/ a library of bench/. Device programs that sw/ builds and
host tests load at run time are data, not an arrow, and are not checked.

Usage: check-layout.py SOURCE_DIR     exit 1 and one line per back-arrow if there is any
       check-layout.py --self-test    check that a planted back-arrow of each kind is found
"""
import os
import re
import sys
import tempfile

# Lowest first: a room may use itself and the rooms before it.
ROOMS = ["host", "sw", "bench", "python"]
SOURCE_EXT = (".c", ".cc", ".cpp", ".h", ".hpp", ".S", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ADD_TARGET = re.compile(r"\badd_(?:library|executable)\s*\(\s*([A-Za-z0-9_.+-]+)")
LINK = re.compile(r"\btarget_link_libraries\s*\(([^)]*)\)", re.S)


def room_of(rel):
    top = rel.split("/", 1)[0]
    return ROOMS.index(top) if top in ROOMS else None


def walk(root):
    for room in ROOMS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, room)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "build"]
            for name in filenames:
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def check(root):
    files = sorted(walk(root))
    headers = [f for f in files if f.endswith((".h", ".hpp", ".inc", ".svh"))]
    problems = []
    for f in files:
        if not f.endswith(SOURCE_EXT):
            continue
        mine = room_of(f)
        with open(os.path.join(root, f), errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            beside = os.path.normpath(os.path.join(os.path.dirname(f), inc)).replace(os.sep, "/")
            if beside in files:
                found = [beside]
            else:
                found = [h for h in headers if h == inc or h.endswith("/" + inc)]
            # Not in the tree (generated, verilated, system): not an arrow between rooms.
            if found and all(room_of(h) > mine for h in found):
                problems.append(f"{f}: includes \"{inc}\" ({found[0]}): {ROOMS[mine]}/ may not "
                                f"include {ROOMS[room_of(found[0])]}/")
    cmake = [f for f in files if os.path.basename(f) == "CMakeLists.txt"]
    defined = {}
    texts = {}
    for f in cmake:
        with open(os.path.join(root, f)) as fh:
            texts[f] = re.sub(r"#[^\n]*", "", fh.read())
        for target in ADD_TARGET.findall(texts[f]):
            defined[target] = room_of(f)
    for f in cmake:
        mine = room_of(f)
        for args in LINK.findall(texts[f]):
            for token in args.split()[1:]:
                if token in defined and defined[token] > mine:
                    problems.append(f"{f}: links {token}, a library of {ROOMS[defined[token]]}/: "
                                    f"{ROOMS[mine]}/ may not use {ROOMS[defined[token]]}/")
    return problems


def self_test():
    plant = {
        "host/include/tessera/device.hpp": "",
        "host/a/a.cpp": '#include "tessera/device.hpp"\n#include "tessera/graph.hpp"\n',
        "host/a/CMakeLists.txt": "add_library(tessera_a a.cpp)\n"
                                 "target_link_libraries(tessera_a PRIVATE tessera_compiler)\n",
        "sw/compiler/include/tessera/graph.hpp": '#include "tessera/device.hpp"\n',
        "sw/compiler/CMakeLists.txt": "add_library(tessera_compiler graph.cpp)\n"
                                      "target_link_libraries(tessera_compiler PUBLIC tessera_a)\n",
        "sw/compiler/graph.cpp": '#include "tessera/graph.hpp"\n#include "bench_only.hpp"\n',
        "bench/bench_only.hpp": "",
        "bench/b.cpp": '#include "tessera/graph.hpp"\n#include "tessera/device.hpp"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in plant.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as fh:
                fh.write(text)
        got = sorted(p.split(":")[0] + " " + p.split(":")[1].split()[0] for p in check(root))
    want = sorted(["host/a/a.cpp includes", "host/a/CMakeLists.txt links",
                   "sw/compiler/graph.cpp includes"])
    if got != want:
        print(f"check-layout self-test: found {got}, expected {want}")
        return 1
    print("check-layout self-test: the three planted back-arrows found, nothing else")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} back-arrow(s): arrows point down only, "
              "python -> bench -> sw -> host (docs/architecture.md, \"Layout\")")
        return 1
    print("layout: arrows point down only (python -> bench -> sw -> host)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
