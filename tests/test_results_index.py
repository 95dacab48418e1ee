"""The results index against its files and the docs: no figure in the docs disagrees with its
result file, the generated tables are current, and bench/results holds what the docs cite."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import results_index  # noqa: E402

#: The current docs (the notebook is history: the files it names are in git's history).
CURRENT_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                *sorted((ROOT / "docs" / "decisions").glob("*.md"))]


def test_every_figure_agrees_with_its_result_file():
    assert results_index.disagreements(results_index.load_index()) == []


def test_a_figure_that_drifts_from_its_file_is_found():
    entries = copy.deepcopy(results_index.load_index())
    figure = next(iter(entries[0]["figures"].values()))
    shown = figure["value"]
    figure["value"] = shown[:-1] + ("1" if shown[-1] != "1" else "2")
    [problem] = results_index.disagreements(entries)
    assert f"the docs show {figure['value']}" in problem and entries[0]["file"] in problem


def test_the_generated_tables_are_the_index_s():
    entries = results_index.load_index()
    for path, which in results_index.DOCUMENTS.items():
        text = path.read_text()
        assert results_index.rendered(text, entries, which) == text, (
            f"{path.name}: run python bench/results_index.py --write")


def test_every_entry_says_what_ran_where_and_when():
    for entry in results_index.load_index():
        for field in ("id", "benchmark", "file", "date", "device", "commit", "command", "what",
                      "headline", "figures"):
            assert entry.get(field), (entry.get("id"), field)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", entry["date"]), entry["id"]
        assert (ROOT / entry["benchmark"]).is_file(), entry["benchmark"]


def test_bench_results_holds_what_the_docs_cite_and_nothing_else():
    cited = {entry["file"] for entry in results_index.load_index()}
    for doc in CURRENT_DOCS:
        cited |= set(re.findall(r"bench/results/([\w.-]+\.(?:json|log|txt|csv))", doc.read_text()))
    cited.discard("index.json")
    present = {p.name for p in (ROOT / "bench" / "results").iterdir()} - {"index.json"}
    assert cited - present == set(), "cited but not in bench/results"
    assert present - cited == set(), "in bench/results but cited by no doc"
