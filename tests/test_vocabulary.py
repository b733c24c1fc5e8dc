"""The plugin's words are enums: each member is its word wherever text is read or written,
the results schema names the same words, and the package compares with members, not with
the words written again."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pytest_toolselect
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.lint.findings import SEVERITIES, Finding
from pytest_toolselect.terms.vocabulary import Outcome, Severity, Status, Step, Verdict, Word

PACKAGE = Path(pytest_toolselect.__file__).parent
VOCABULARIES = (Status, Verdict, Outcome, Step, Severity)
members = st.sampled_from([m for v in VOCABULARIES for m in v])


@given(members, st.sampled_from(["", "<12", ">9", "^14"]))
def test_a_member_is_its_word_as_text(member: Word, spec: str) -> None:
    word = member.value
    assert type(word) is str
    assert member == word and hash(member) == hash(word) and {word: 1}[member] == 1
    assert str(member) == word and f"{member}" == word and format(member, spec) == format(word, spec)
    assert json.dumps({"v": member}) == json.dumps({"v": word})


def _schema() -> dict:
    return json.loads((PACKAGE / "schemas" / "tool_selection.v1.json").read_text())


def test_the_results_schema_names_the_same_words() -> None:
    schema = _schema()
    case = schema["$defs"]["case"]["properties"]
    assert schema["$defs"]["verdict_name"]["enum"] == [v.value for v in Verdict]
    statuses = [s.value for s in Status] + [None]
    assert case["status"]["enum"] == statuses
    assert case["baseline"]["oneOf"][1]["properties"]["status"]["enum"] == statuses
    assert case["outcome"]["enum"] == [o.value for o in Outcome]


def test_the_gate_speaks_the_vocabulary() -> None:
    # the order of severity is the order of the verdict enum
    assert tuple(Verdict) == gate.VERDICT_ORDER
    assert tuple(Severity) == SEVERITIES
    for passes, reps in [(2, 2), (1, 2), (0, 2)]:
        assert isinstance(gate.status_of(passes, reps), Status)
        assert isinstance(gate.classify(passes, reps, None, have_baseline=True), Verdict)
        outcome = gate.pytest_outcome(gate.classify(passes, reps, None, have_baseline=False),
                                      fail_on_flaky=False, fail_on_still_failing=False,
                                      accept_regressions=False)
        assert isinstance(outcome, Outcome)


def test_a_finding_holds_its_severity_as_a_member_and_writes_plain_text() -> None:
    finding = Finding("r", "warning", ("s",), ("t",), "m", "f")
    assert finding.severity is Severity.WARNING
    assert type(finding.to_dict()["severity"]) is str
    with pytest.raises(ValueError):
        Finding("r", "loud", ("s",), ("t",), "m", "f")


#: words no other vocabulary the package meets uses (pytest's report outcomes, JSON keys and
#: error bodies share "error", "passed", "failed", "skipped", "new" and "info")
OWN_WORDS = {w.value for v in VOCABULARIES for w in v} - {
    "error", "passed", "failed", "skipped", "new", "info", "warning", "more"}


def test_the_package_compares_with_members_not_with_words() -> None:
    # a word written again in a comparison is the drift the enums exist to stop
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                found += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}"
                          for c in ast.walk(node)
                          if isinstance(c, ast.Constant) and c.value in OWN_WORDS]
    assert not found, "\n".join(found)
