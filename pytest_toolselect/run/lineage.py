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

if TYPE_CHECKING:
    from pytest_toolselect.gate.baseline import Baseline
    from pytest_toolselect.run.case_run import CaseRun


def by_case_fingerprint(cases: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Baseline keys by their entries' case fingerprints (built once per run)."""
    index: dict[str, list[str]] = {}
    for key, entry in cases.items():
        fp = entry.get("case_fingerprint")
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


def tool_fields(run: CaseRun, tools_fp: str, base: Mapping[str, Any] | None,
                baseline: Baseline | None, sent: set[str],
                secrets: Sequence[str] = ()) -> dict[str, Any]:
    """The record's toolset, the texts this process has not sent yet (each travels to the
    controller once), and, when the tools moved under the case, what changed."""
    toolset = toolsdiff.toolset(run.tools, run.system)
    new = toolsdiff.texts(run.tools, run.system, skip=sent, secrets=secrets)
    sent.update(new)
    fields: dict[str, Any] = {"toolset": toolset, "tool_texts": new, "tools_diff": None}
    old_fp = base.get("tools_fingerprint") if base is not None else None
    if baseline is not None and old_fp not in (None, tools_fp) and old_fp in baseline.toolsets:
        fields["tools_diff"] = toolsdiff.diff(
            baseline.toolsets[old_fp], toolset, baseline.descriptions,
            toolsdiff.texts(run.tools, run.system, secrets=secrets))
    return fields
