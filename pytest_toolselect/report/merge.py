"""Shards joined: N ``tool_selection.v1`` documents of one suite as the one run they add up to.

Each shard (``--toolselect-shard K/N``) scored its own cases against the same
baseline, so a case's entry is final where it ran; what depends on every case
(the verdict, the summary, the cost, the suite's pass rate, the exit status) is
computed again over all of them, as the unsharded run would have. Pure: documents
in, a document out.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.gate import rules as gate
from pytest_toolselect.spec.errors import ToolselectError

from . import results
from .merge_lint import merge_lint
from .merge_probe import merge_preference

#: settings every shard must share for their cases to be one run's
_SAME = ("subject", "settings")


def merge_documents(documents: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The merged document; ToolselectError naming the file when the shards do not fit together."""
    if not documents:
        raise ToolselectError("no results to merge", fix="pass every shard's --toolselect-json file")
    first_path, first = documents[0]
    seen: dict[str, str] = {}
    cases: list[dict[str, Any]] = []
    for path, doc in documents:
        for key in _SAME:
            if doc[key] != first[key]:
                raise ToolselectError(
                    f"its {key} differs from {first_path}'s: these are not shards of one run",
                    file=path, fix="merge the results of one suite run with the same model and flags")
        for case in doc["cases"]:
            other = seen.get(case["nodeid"])
            if other is not None:
                raise ToolselectError(f"{case['nodeid']} ran in two shards (also in {other})",
                                      file=path, fix="give every job the same N in --toolselect-shard K/N")
            seen[case["nodeid"]] = path
            cases.append(dict(case))
    # the whole suite's order, which every shard kept (older files: node id order)
    cases.sort(key=lambda c: (c.get("order") is None, c.get("order") or 0, c["nodeid"]))
    settings = first["settings"]
    # keyed as the run's baseline is (a case's key, not its node id, which holds the folder
    # pytest started in); a renamed case's entry is under its old key, which the run's
    # suite check does not look up either
    base_cases = {c.get("key") or c["nodeid"]: c["baseline"] for c in cases
                  if c.get("baseline") is not None and not c.get("renamed_from")}
    suite = gate.suite_change(cases, base_cases, fail_on_drop=bool(
        settings.get("fail_on_suite_drop") and not settings.get("update_baseline")))
    capped = any(doc["cost"]["capped"] for _, doc in documents)
    savings: Counter[str] = Counter()
    for _, doc in documents:
        savings.update(doc["cost"]["cache_savings_usd"])
    verdicts = Counter(c["verdict"] for c in cases)
    preference = merge_preference([(path, doc["preference"]) for path, doc in documents
                                   if doc.get("preference") is not None],
                                  min_effect_change=settings.get("min_effect_change"))
    probe_cost = sum(r["cost_usd"] or 0.0 for r in preference["results"]) if preference else None
    # the probe's gate over every group, as the unsharded run decides it
    probe_blocks = bool(preference and (preference["comparison"] or {}).get("blocking")
                        and not settings.get("update_baseline"))
    lint = merge_lint([(path, doc["lint"]) for path, doc in documents if doc.get("lint")])
    document = {
        "schema_version": results.SCHEMA_VERSION,
        "provenance": {**first["provenance"],
                       "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")},
        "subject": dict(first["subject"]),
        "settings": dict(settings),
        "baseline": {
            **first["baseline"],
            "written": any(doc["baseline"]["written"] for _, doc in documents),
            "gone": sorted({g for _, doc in documents for g in doc["baseline"]["gone"]}),
        },
        "verdict": results.verdict(cases, settings, suite, probe_blocks, capped, lint),
        "summary": {
            "total": len(cases),
            "verdicts": {v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
            "categories": results.categories(cases),
            "confusion": results.confusion(cases),
            "intent_disagreements": results.intent_disagreements(results.first_tools_by_intent(cases)),
            "suite": suite,
        },
        "cost": results.cost(cases, dict(savings), first["cost"]["cap_usd"], capped, probe_cost),
        "cases": cases,
        "preference": preference,
        "tool_texts": dict(sorted({k: v for _, doc in documents
                                   for k, v in (doc.get("tool_texts") or {}).items()}.items())),
        **({"lint": lint} if lint else {}),
    }
    escalated = results.escalations(cases)
    if escalated:
        document["summary"]["escalations"] = escalated.to_json()
    shards = [d for _, d in documents]
    document["provenance"]["exit_status"] = exit_status(document, shards, probe_blocks)
    document["provenance"].pop("failed_items", None)
    if all("failed_items" in s["provenance"] for s in shards):
        document["provenance"]["failed_items"] = sum(s["provenance"]["failed_items"] for s in shards)
    return document


def exit_status(document: Mapping[str, Any], shards: Sequence[Mapping[str, Any]],
                probe_blocks: bool = False) -> int:
    """The exit status the unsharded run would have had, as the plugin decides it."""
    status = 1 if any(c["outcome"] in ("failed", "error") for c in document["cases"]) else 0
    # a shard's items not in the document (plain tests, preference groups) may have failed.
    # Its exit status also holds its gates over its own share of the suite (the suite's
    # pass rate, the probe's effects), which the merged document decides again: its count
    # of failed items says which; older files have only the exit status
    if all("failed_items" in s["provenance"] for s in shards):
        failed = any(s["provenance"]["failed_items"] for s in shards)
    else:
        failed = any(s["provenance"].get("exit_status") == 1 for s in shards)
    # a lint item marks findings new only when they fail it (older files may lack failed_items)
    lint_blocks = bool((document.get("lint") or {}).get("new"))
    if status == 0 and (failed or probe_blocks or lint_blocks):
        status = 1
    if document["cost"]["capped"]:
        return 2  # calls were left unmade: the run is incomplete, whatever it found
    suite = document["summary"]["suite"]
    if status == 0 and suite is not None and suite.get("blocks"):
        status = 1
    return status


def baseline_records(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The merged cases as the run records baseline.build reads (the document's tool texts
    ride on the first, as a run's first record carries them)."""
    records = [dict(c) for c in document["cases"]]
    if records:
        records[0]["tool_texts"] = dict(document.get("tool_texts") or {})
    return records


def baseline_lint_entries(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """The merged lint's entries by server, as the run hands them to baseline.build (a
    server no shard linted has none: its old entry stays)."""
    return {s: list(ids) for s, ids in ((document.get("lint") or {}).get("entries") or {}).items()}


def baseline_group_entries(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The merged probe's group entries by baseline key, as the run hands them to
    baseline.build (a group with no scored call has none: its old entry stays)."""
    rows = (document.get("preference") or {}).get("groups") or ()
    return {r["key"]: dict(r["entry"]) for r in rows if r.get("entry")}
