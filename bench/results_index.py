"""The results index: the figures the docs cite, checked against their result files, and the
tables of README.md and docs/performance.md written from it.

``bench/results/index.json`` lists one entry a result the docs cite (benchmark, date, device,
commit, command, the result file) with its headline figures, each a path into the file and
the value as the docs show it. A figure agrees with its file when the file's value, rounded to
the shown digits, is the shown value; so a doc's figure cannot drift from its measurement.

    python bench/results_index.py            # check the figures and that the docs are current
    python bench/results_index.py --write    # rewrite the generated tables in the docs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
INDEX = RESULTS / "index.json"
BEGIN, END = "<!-- headline figures: generated -->", "<!-- end of generated figures -->"
#: Each generated document and whether it shows every entry or the README's headline ones.
DOCUMENTS = {ROOT / "README.md": "headline", ROOT / "docs" / "performance.md": "all"}


def load_index(path: Path = INDEX) -> list[dict]:
    return json.loads(path.read_text())["results"]


def value_at(document, path: str):
    """The value at a dotted path (object keys, or list positions as integers)."""
    for part in path.split("."):
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def disagreements(entries: list[dict], results: Path = RESULTS) -> list[str]:
    """Every figure that its result file does not give, one line each."""
    found = []
    for entry in entries:
        name = entry["file"]
        if not (results / name).is_file():
            found.append(f"{entry['id']}: {name} is not in {results}")
            continue
        data = json.loads((results / name).read_text())
        for key, figure in entry["figures"].items():
            shown = figure["value"]
            digits = len(shown.partition(".")[2])
            try:
                actual = value_at(data, figure["path"])
            except (KeyError, IndexError, ValueError, TypeError):
                found.append(f"{entry['id']}.{key}: no {figure['path']} in {name}")
                continue
            if f"{float(actual):.{digits}f}" != shown:
                found.append(f"{entry['id']}.{key}: the docs show {shown}, {name} has "
                             f"{figure['path']} = {actual}")
    return found


def headline(entry: dict) -> str:
    return entry["headline"].format(**{k: f["value"] for k, f in entry["figures"].items()})


def table(entries: list[dict], which: str) -> str:
    """The Markdown table of the entries (``headline``: the README's, ``all``: every one)."""
    if which == "headline":
        rows = ["| what | where | figure |", "| --- | --- | --- |"]
        rows += [f"| {e['what']} | {e['device']} | {headline(e)} |"
                 for e in entries if e["readme"]]
    else:
        rows = ["| what | figure | where | date, commit | result |",
                "| --- | --- | --- | --- | --- |"]
        rows += [f"| {e['what']} | {headline(e)} | {e['device']} | {e['date']}, {e['commit']} "
                 f"| `bench/results/{e['file']}` |" for e in entries]
    return "\n".join(rows)


def rendered(text: str, entries: list[dict], which: str) -> str:
    """The document with its generated part replaced by the current table."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not (begin and end):
        raise ValueError(f"the generated part's markers are missing: {BEGIN} … {END}")
    return f"{head}{BEGIN}\n{table(entries, which)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the docs' tables")
    args = parser.parse_args(argv)
    entries = load_index()
    problems = disagreements(entries)
    for path, which in DOCUMENTS.items():
        text = path.read_text()
        current = rendered(text, entries, which)
        if args.write:
            path.write_text(current)
        elif current != text:
            problems.append(f"{path.relative_to(ROOT)}: its table is not the index's "
                            "(python bench/results_index.py --write)")
    print("\n".join(problems) or f"{len(entries)} results, every figure agrees with its file")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
