"""Which baseline entry a case is compared with, and what its record says about it.

A case whose id changed but whose content did not (the same case fingerprint as an
entry no collected case holds) is compared with that entry: a rename and a break in
one pull request must still block. What the case was offered is recorded per tool, so
a report can name the tools that changed since the baseline (toolsdiff).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_toolselect.gate import toolsdiff
from pytest_toolselect.gate.keys import family_of

if TYPE_CHECKING:
    from pytest_toolselect.gate.baseline import Baseline
    from pytest_toolselect.records.baseline_entry import CaseEntry
    from pytest_toolselect.run.case_run import CaseRun


def by_case_fingerprint(cases: Mapping[str, CaseEntry]) -> dict[str, list[str]]:
    """Baseline keys by their entries' case fingerprints (built once per run)."""
    index: dict[str, list[str]] = {}
    for key, entry in cases.items():
        fp = entry.case_fingerprint
        if fp:
            index.setdefault(fp, []).append(key)
    return index


def renamed_from(index: Mapping[str, list[str]], case_fp: str,
                 collected: Collection[str]) -> str | None:
    """The one baseline key with this case fingerprint that no collected case holds.

    Two such keys (or none) is no rename anyone can name: the case stays new.
    """
    gone = [k for k in index.get(case_fp, ()) if k not in collected]
    return gone[0] if len(gone) == 1 else None


def reworded(stored: Collection[str], families: Mapping[str, Collection[str]]) -> dict[str, str]:
    """Gone entries of a parametrized decorated case, each paired with the parameter set
    that replaced it: {old key: new key}.

    A parameter set with no ``ids`` takes its id from its values, so rewording its
    question renames it. `families` holds, for each parametrized function collected in
    this run, the keys of all its parameter sets. Where exactly one of its stored keys is
    gone and exactly one of its keys is not stored, that is one case reworded; any other
    count names no pairing, and the old entries are gone.
    """
    gone: dict[str, list[str]] = {}
    for old in stored:
        members = families.get(family_of(old))
        if members is not None and old not in members:
            gone.setdefault(family_of(old), []).append(old)
    pairs: dict[str, str] = {}
    for family, olds in gone.items():
        new = [k for k in families[family] if k not in stored]
        if len(olds) == 1 and len(new) == 1:
            pairs[olds[0]] = new[0]
    return pairs


def tool_fields(run: CaseRun, tools_fp: str, base: CaseEntry | None,
                baseline: Baseline | None, sent: set[str],
                secrets: Sequence[str] = ()) -> dict[str, Any]:
    """The record's toolset, the texts this process has not sent yet (each travels to the
    controller once), and, when the tools moved under the case, what changed."""
    toolset = toolsdiff.toolset(run.tools, run.system)
    new = toolsdiff.texts(run.tools, run.system, skip=sent, secrets=secrets)
    defs = toolsdiff.definitions(run.tools, run.system, skip=sent, secrets=secrets)
    sent.update(new)
    fields: dict[str, Any] = {"toolset": toolset, "tool_texts": new, "tools_diff": None,
                              "offered": toolsdiff.offered(run.tools, run.system),
                              "tool_defs": defs}
    old_fp = base.tools_fingerprint if base is not None else None
    if baseline is not None and old_fp not in (None, tools_fp) and old_fp in baseline.toolsets:
        fields["tools_diff"] = toolsdiff.diff(
            baseline.toolsets[old_fp], toolset, baseline.descriptions,
            toolsdiff.texts(run.tools, run.system, secrets=secrets))
    return fields
