"""Run the example of docs/python.md as it is written and compare what it prints with the output
the page shows (ctest -R python.doc_example): the code block after <!-- python-example --> and
the block after <!-- python-example-output -->, so the page and the test cannot drift.

Usage: run_doc_example.py docs/python.md   (PYTHONPATH=<build>/python, numpy importable)
"""
import contextlib
import io
import re
import sys


def block_after(text, marker, path):
    m = re.search(re.escape(marker) + r"\s*\n```[a-z]*\n(.*?)\n```", text, re.S)
    if not m:
        sys.exit(f"{path}: no code block after {marker}")
    return m.group(1) + "\n"


def main():
    path = sys.argv[1]
    with open(path) as f:
        text = f.read()
    code = block_after(text, "<!-- python-example -->", path)
    expected = block_after(text, "<!-- python-example-output -->", path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{path} (python-example)", "exec"), {"__name__": "__main__"})
    if out.getvalue() != expected:
        sys.exit(f"{path}: the example printed\n{out.getvalue()}\nthe page says\n{expected}")
    print(f"{path}: the example ran and printed what the page says")


if __name__ == "__main__":
    main()
