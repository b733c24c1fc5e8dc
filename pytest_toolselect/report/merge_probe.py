"""Shards' preference probes joined: N ``tool_preference.v1`` documents as the one run's.

A group is one item, so it runs whole in one shard: its calls, its stats and its
baseline entry are final where it ran. What spans groups (the effects and position
bias with their bootstrap CIs, the pair and control shares, the agreement across reps,
the comparison with the baseline) is computed again over every group, in the whole
suite's order, from the calls the documents hold. The bootstrap resamples groups by
position with a generator seeded by ``--toolselect-seed``, so with the groups and calls
in the unsharded run's order the merged figures are that run's, to the last bit. Pure:
documents in, a document out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.probe.comparison import compare
from pytest_toolselect.probe.preference import summarize_stats
from pytest_toolselect.probe.values import GroupStats
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.probe_call import ProbeCall

#: what each shard's probe must share for its groups to be one run's (the subject is
#: the results document's, checked there)
_SAME_SETTINGS = ("max_tokens", "reps", "system", "cues")
#: what a group row must carry to be merged (written since `toolselect merge` joins probes)
_GATE_KEYS = ("key", "order")
RERUN = "run the shards again with this version of pytest-toolselect"


@dataclass(frozen=True)
class _Kind:
    """A group row read back, as much of a group as the summary needs."""

    id: str
    is_control: bool
    domain: str | None


def merge_preference(documents: Sequence[tuple[str, Mapping[str, Any]]], *,
                     min_effect_change: float | None) -> dict[str, Any] | None:
    """The probe document of the whole run (None: no shard ran a group); ToolselectError
    naming the file when the shards' probes are not one run's."""
    if not documents:
        return None

    first_path, first = documents[0]
    seed, resamples = int(first["summary"]["seed"]), int(first["summary"]["resamples"])
    owner: dict[str, str] = {}
    rows: list[tuple[Mapping[str, Any], str, Mapping[str, Any]]] = []
    for path, doc in documents:
        _check_fits(path, doc, first_path, first)
        for row in doc["groups"]:
            missing = [k for k in _GATE_KEYS if k not in row]
            if missing:
                raise ToolselectError(
                    f"its preference group {row['id']} has no {' or '.join(missing)}: the file was "
                    "written by an older version", file=path, fix=RERUN)
            other = owner.get(row["id"])
            if other is not None:
                raise ToolselectError(f"preference group {row['id']} ran in two shards (also in {other})",
                                      file=path, fix="give every job the same N in --toolselect-shard K/N")
            owner[row["id"]] = path
            rows.append((row, path, doc))
    # the whole suite's order, which every shard kept: the run's group order
    rows.sort(key=lambda r: (r[0]["order"], r[0]["key"]))
    results: list[dict[str, Any]] = []
    per_group: dict[str, GroupStats] = {}
    for row, path, doc in rows:
        results.extend(dict(r) for r in doc["results"] if r["group"] == row["id"])
        stats = doc["summary"]["groups"].get(row["id"])
        if stats is None:
            raise ToolselectError(f"its preference summary has no stats for group {row['id']}",
                                  file=path, fix="pass the file as pytest --toolselect-json wrote it")
        per_group[row["id"]] = GroupStats.from_json(stats)
    kinds = [_Kind(r["id"], per_group[r["id"]].control, r["domain"]) for r, _, _ in rows]
    # the documents' calls and entries are read once here; the merged document keeps them as written
    calls = [ProbeCall.from_json(r) for r in results]
    summary = summarize_stats(calls, kinds, per_group, seed, resamples)
    if "model" in first["summary"]:
        summary = replace(summary, model=first["summary"]["model"])
    comparison = None
    if first.get("comparison") is not None:
        stored = {r["key"]: GroupEntry.from_json(r["baseline"]) for r, _, _ in rows
                  if r.get("baseline") is not None}
        current = {r["key"]: GroupEntry.from_json(r["entry"]) for r, _, _ in rows if r.get("entry")}
        comparison = compare(stored, current, seed=seed, resamples=resamples,
                             min_effect_change=min_effect_change).to_json()
    return {
        "schema_version": first["schema_version"],
        "subject": dict(first["subject"]),
        "settings": dict(first["settings"]),
        "groups": [dict(r) for r, _, _ in rows],
        "results": results,
        "summary": summary.to_json(),
        "comparison": comparison,
    }


def _check_fits(path: str, doc: Mapping[str, Any], first_path: str, first: Mapping[str, Any]) -> None:
    def differs(what: str, fix: str) -> ToolselectError:
        return ToolselectError(f"its preference probe's {what} differs from {first_path}'s: these are "
                               "not shards of one run", file=path, fix=fix)

    if "comparison" not in doc:
        raise ToolselectError("its preference probe has no comparison with the baseline: the file "
                              "was written by an older version", file=path, fix=RERUN)
    for key in ("seed", "resamples"):
        if doc["summary"].get(key) != first["summary"].get(key):
            raise differs(f"{key} ({doc['summary'].get(key)} against {first['summary'].get(key)})",
                          "give every shard the same --toolselect-seed")
    for key in _SAME_SETTINGS:
        if doc["settings"].get(key) != first["settings"].get(key):
            raise differs(f"{key} setting", "run every shard with the same flags and config")
    if (doc["comparison"] is None) != (first["comparison"] is None):
        raise differs("baseline (one compared its groups with a baseline, the other did not)",
                      "give every shard the same --toolselect-baseline file")
