"""Confusable pairs from an index: only the pairs that may reach the threshold are scored,
and the findings are those of scoring every pair (on the other tests' tool sets, and on
generated ones); a long lint says its steps on stderr."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lint_data import DISTINCT, TWIN
from poison_data import ORDINARY, POISONED
from test_lint_corpora import corpus_toolset
from test_lint_poisoning import as_tool, example_tools

from pytest_toolselect.cli.lint import Progress
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.lint.similarity import THRESHOLD, similarity
from pytest_toolselect.lint.tool_rules import ToolSet, confusable_pairs

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
from lint_speed import generated


def every_pair(ts: ToolSet, threshold: float = THRESHOLD) -> list[dict[str, Any]]:
    """The confusable pairs as scoring every pair finds them (the method before the index)."""
    tools = [t for _, t in ts.all_tools()]
    return [f.to_dict() for f in confusable_pairs(ts, similarity(tools, None), threshold)]


def indexed(ts: ToolSet, threshold: float = THRESHOLD) -> list[dict[str, Any]]:
    tools = [t for _, t in ts.all_tools()]
    return [f.to_dict() for f in confusable_pairs(ts, similarity(tools, threshold), threshold)]


def sets() -> list[tuple[str, ToolSet]]:
    out = [("distinct+twin", ToolSet({"s": tuple(as_tool(t) for t in [*DISTINCT, TWIN])})),
           ("ordinary", ToolSet({"s": tuple(as_tool(t) for t in ORDINARY)})),
           ("examples", ToolSet({s: tuple(as_tool(t) for t in tools)
                                 for s, tools in example_tools().items()})),
           ("clean corpus", corpus_toolset())]
    out += [(f"poisoned {label}", ToolSet({"evil": tuple(as_tool(t) for t in tools),
                                            **{s: tuple(as_tool(t) for t in o) for s, o in others.items()}}))
            for _, label, tools, others in POISONED]
    return out


@pytest.mark.parametrize(("label", "ts"), sets(), ids=lambda x: x if isinstance(x, str) else "")
def test_the_index_finds_the_pairs_scoring_every_pair_finds(label: str, ts: ToolSet) -> None:
    assert indexed(ts) == every_pair(ts)


def test_the_clean_corpus_has_pairs_to_find_and_the_index_scores_few_pairs() -> None:
    ts = corpus_toolset()
    n = sum(len(t) for t in ts.servers.values())
    sim = similarity([t for _, t in ts.all_tools()], THRESHOLD)
    assert len(every_pair(ts)) >= 10
    assert len(sim.candidates) < n * (n - 1) / 2 / 10


WORDS = st.sampled_from("file read write list search branch commit issue user page query "
                        "repository table row column create delete update get send message "
                        "weather city forecast".split())
TOOLSETS = st.lists(st.tuples(st.lists(WORDS, min_size=1, max_size=3), st.lists(WORDS, max_size=12)),
                    min_size=2, max_size=30)


@settings(max_examples=80, deadline=None)
@given(TOOLSETS, st.sampled_from([0.3, THRESHOLD, 0.8]))
def test_on_any_tool_set_the_index_misses_no_pair(spec: list[tuple[list[str], list[str]]],
                                                  threshold: float) -> None:
    ts = ToolSet({"s": tuple(Tool("_".join(name) + f"_{i}", " ".join(words) + ".")
                             for i, (name, words) in enumerate(spec))})
    assert indexed(ts, threshold) == every_pair(ts, threshold)


def test_a_large_generated_set_scores_a_small_share_of_its_pairs() -> None:
    ts = generated(1000)
    sim = similarity([t for _, t in ts.all_tools()], THRESHOLD)
    assert len(sim.candidates) < 1000 * 999 / 2 / 20
    pairs = [f for f in confusable_pairs(ts, sim, THRESHOLD)]
    assert len(pairs) >= 5  # the generated twins are found


def test_progress_says_nothing_for_a_quick_lint() -> None:
    out = io.StringIO()
    progress = Progress(out, after=5.0)
    progress("indexing")
    progress("scoring")
    progress.done()
    assert out.getvalue() == ""


def test_progress_says_the_step_under_way_past_the_wait_and_each_one_after() -> None:
    out = io.StringIO()
    progress = Progress(out, after=0.05)
    progress("indexing 5000 tools")
    deadline = time.monotonic() + 5
    while not out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    progress("scoring 12 candidate pairs")
    progress.done()
    assert out.getvalue().splitlines() == ["toolselect lint: indexing 5000 tools (0 s)",
                                           "toolselect lint: scoring 12 candidate pairs (0 s)"]


def test_a_large_sets_document_holds_the_heatmap_not_every_pair() -> None:
    from pytest_toolselect.inputs.cases import IdentifierSettings
    from pytest_toolselect.lint.run import MATRIX_TOOLS, lint

    small = lint(generated(60), IdentifierSettings()).to_dict()
    assert len(small["similarity"]) == 60 and all(len(row) == 60 for row in small["similarity"])
    big = lint(generated(MATRIX_TOOLS + 1), IdentifierSettings()).to_dict()
    assert big["similarity"] is None
    assert big["heatmap"]["tools"] and len(big["heatmap"]["matrix"]) == len(big["heatmap"]["tools"])
