"""Shards joined: N ``tool_selection.v1`` documents of one suite as the one run they add up to.

Each shard (``--toolselect-shard K/N``) scored its own cases against the same
baseline, so a case's entry is final where it ran; what depends on every case
(the verdict, the summary, the cost, the suite's pass rate, the exit status) is
computed again over all of them, as the unsharded run would have. Pure: documents
in, a document out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.json_value import JSONObject
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.decision import BLOCKING_OUTCOMES
from pytest_toolselect.gate.expected import unjudged_keys
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.messages.plural import noun
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.run_records import CaseRecord

from . import results
from .document import DocumentCost, DocumentSummary, DocumentVerdict, ResultsDocument
from .merge_lint import merge_lint
from .merge_probe import merge_preference
from .run_report import build_report

#: settings every shard must share for their cases to be one run's
_SAME = ("subject", "settings")


def merge_documents(documents: Sequence[tuple[str, ResultsDocument]],
                    partial: bool = False) -> ResultsDocument:
    """The merged document; ToolselectError naming the file when the shards do not fit together
    (or, unless partial, when one is missing or given twice)."""
    if not documents:
        raise ToolselectError("no results to merge", fix="pass every shard's --toolselect-json file")
    # the shard checks read the files as written
    shards = [doc.to_json() for _, doc in documents]
    missing = check_shards([(path, shard) for (path, _), shard in zip(documents, shards,
                                                                      strict=True)], partial)
    first_path, first = documents[0]
    seen: dict[str, str] = {}
    cases: list[dict[str, Any]] = []
    for path, doc in documents:
        for key in _SAME:
            if getattr(doc, key) != getattr(first, key):
                raise ToolselectError(
                    f"its {key} differs from {first_path}'s: these are not shards of one run",
                    file=path, fix="merge the results of one suite run with the same model and flags")
        for case in doc.cases:
            other = seen.get(case["nodeid"])
            if other is not None:
                raise ToolselectError(f"{case['nodeid']} ran in two shards (also in {other})",
                                      file=path, fix="give every job the same N in --toolselect-shard K/N")
            seen[case["nodeid"]] = path
            cases.append(dict(case))
    if not missing:
        # every shard is here: each case of the suite was judged, left out on purpose, or lost
        suite_keys = {k for _, doc in documents if doc.shard is not None for k in doc.shard.keys}
        narrowed = {k for _, doc in documents for k in doc.summary.not_run_in_this_run}
        cases += [results.case_entry(rec, None, first.settings) for rec in unjudged_keys(
            suite_keys, {c.get("key") or c["nodeid"] for c in cases}, narrowed)]
    # the whole suite's order, which every shard kept (older files: node id order)
    cases.sort(key=lambda c: (c.get("order") is None, c.get("order") or 0, c["nodeid"]))
    settings = first.settings
    # keyed as the run's baseline is (a case's key, not its node id, which holds the folder
    # pytest started in); a renamed case's entry is under its old key, which the run's
    # suite check does not look up either
    base_status = {c.get("key") or c["nodeid"]: c["baseline"].get("status") for c in cases
                   if c.get("baseline") is not None and not c.get("renamed_from")}
    # the saved cases typed once, here: the suite check, the verdict and every count read these
    records = [read_case(c) for c in cases]
    measured = gate.measure_suite(records, base_status, fail_on_drop=bool(
        settings.get("fail_on_suite_drop") and not settings.get("update_baseline")))
    suite = measured.to_json() if measured is not None else None
    capped = any(doc.cost.capped for _, doc in documents)
    savings: Counter[str] = Counter()
    for _, doc in documents:
        savings.update(doc.cost.cache_savings_usd)
    preference = merge_preference([(path, doc.preference) for path, doc in documents
                                   if doc.preference is not None],
                                  min_effect_change=settings.get("min_effect_change"))
    probe_cost = sum(r["cost_usd"] or 0.0 for r in preference["results"]) if preference else None
    # the probe's gate over every group, as the unsharded run decides it
    probe_blocks = bool(preference and (preference["comparison"] or {}).get("blocking")
                        and not settings.get("update_baseline"))
    lint = merge_lint([(path, doc.lint) for path, doc in documents if doc.lint])
    decision = results.verdict(records, settings, suite, probe_blocks, capped, lint,
                               other_failed(shards), stopped(shards))
    report = build_report(records, {
        c["nodeid"]: c["baseline"]["status"] for c in cases if c.get("baseline")})
    provenance = {**first.provenance,
                  "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                  "exit_status": decision.exit_status, "other_failed": other_failed(shards)}
    provenance.pop("stopped", None)
    if stopped(shards):
        provenance["stopped"] = stopped(shards)
    provenance.pop("failed_items", None)
    if all("failed_items" in s["provenance"] for s in shards):
        provenance["failed_items"] = sum(s["provenance"]["failed_items"] for s in shards)
    tool_defs = {k: v for _, doc in documents for k, v in (doc.tools or {}).items()}
    return ResultsDocument(
        provenance=provenance,
        subject=first.subject,
        settings=dict(settings),
        baseline=dataclasses.replace(
            first.baseline, written=any(doc.baseline.written for _, doc in documents),
            gone=tuple(sorted({g for _, doc in documents for g in doc.baseline.gone}))),
        # --partial: the shards it lacks said in the document, so no reader takes it for the
        # whole suite
        verdict=DocumentVerdict.of(decision, missing),
        summary=DocumentSummary.of(report, suite, results.escalations(records), sorted(
            {k for _, doc in documents for k in doc.summary.not_run_in_this_run}
            - {r.key for r in records})),
        cost=DocumentCost.of(report, dict(savings), first.cost.cap_usd, capped, probe_cost),
        cases=tuple(cases),
        preference=preference,
        tool_texts=dict(sorted({k: v for _, doc in documents
                                for k, v in (doc.tool_texts or {}).items()}.items())),
        tools=dict(sorted(tool_defs.items())) or None,
        lint=lint or None,
    )


def read_case(case: Mapping[str, Any]) -> CaseRecord:
    """A saved document's case as the run's record. An older document keeps one cost per
    case, not per rep: its reps read as unpriced when it had no price, else the sum on the
    first."""
    record = CaseRecord.read(case)
    if "costs" in case or not record.first_tools:
        return record
    reps = len(record.first_tools)
    costs: list[float | None] = ([None] * reps if case.get("cost_usd") is None
                                 else [float(case["cost_usd"]), *[0.0] * (reps - 1)])
    return dataclasses.replace(record, costs=costs)


def other_failed(shards: Sequence[Mapping[str, Any]]) -> int:
    """The items the shards failed outside the gate's cases (plain tests, a group's error)."""
    return sum(_other_failed(s) for s in shards)


def _other_failed(shard: Mapping[str, Any]) -> int:
    known = shard["provenance"].get("other_failed")
    if known is not None:
        return int(known)
    # an older file counted every failed item: those that are not its cases
    failed = int(shard["provenance"].get("failed_items") or 0)
    return max(0, failed - sum(1 for c in shard["cases"] if c["outcome"] in BLOCKING_OUTCOMES))


def stopped(shards: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a shard ended before all its items ran (the first that did), or None."""
    return next((s["provenance"]["stopped"] for s in shards if s["provenance"].get("stopped")), None)


def check_shards(documents: Sequence[tuple[str, Mapping[str, Any]]], partial: bool) -> list[str]:
    """Refuse shards that do not add up to their suite: one missing (unless partial), one
    given twice, two of different splits or suites. Returns the shards missing ("2/3")."""
    fix = "pass every shard's --toolselect-json file once"
    if partial:
        fix = "pass each shard's file once"
    seen: dict[int, str] = {}
    count: int | None = None
    keys: set[str] | None = None
    for path, doc in documents:
        shard = doc.get("shard")
        if shard is None:
            if len(documents) > 1 and not partial:
                raise ToolselectError(
                    "it was not written by a sharded run (no shard K/N in it), so the merge cannot "
                    "tell whether every shard is here", file=path,
                    fix="run each job with --toolselect-shard K/N, or merge with --partial")
            continue
        k, n = int(shard["index"]), int(shard["count"])
        if count is not None and n != count:
            raise ToolselectError(f"it is shard {k}/{n}, another file is of {count} shards",
                                  file=path, fix="merge the shards of one split (the same N)")
        if keys is not None and set(shard["keys"]) != keys:
            raise ToolselectError("its suite holds other cases than the other shards' (the suite "
                                  "changed between the jobs)", file=path,
                                  fix="merge the shards of one run of one commit")
        if k in seen:
            raise ToolselectError(f"shard {k}/{n} is given twice (also {seen[k]})", file=path,
                                  fix=fix)
        seen[k], count, keys = path, n, set(shard["keys"])
    if count is None:
        return []
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]
    if missing and not partial:
        raise ToolselectError(
            f"{noun(len(missing), 'shard')} {', '.join(missing)} "
            f"{'are' if len(missing) > 1 else 'is'} missing: a merge of part of the suite "
            "would pass cases that never ran", file=documents[0][0],
            fix="pass every shard's results file, or merge with --partial to see part of the suite")
    return missing


def baseline_records(cases: Sequence[CaseRecord], tool_texts: Mapping[str, str],
                     tools: Mapping[str, JSONObject]) -> list[CaseRecord]:
    """The merged document's cases (read as records) as the run records baseline.build
    reads: the document's tool texts and tools ride on the first, as a run's first record
    carries them."""
    if not cases:
        return []
    first = dataclasses.replace(cases[0], tool_texts=dict(tool_texts),
                                tool_defs={t: dict(d) for t, d in tools.items()})
    return [first, *cases[1:]]


def baseline_lint_entries(document: ResultsDocument) -> dict[str, list[str]]:
    """The merged lint's entries by server, as the run hands them to baseline.build (a
    server no shard linted has none: its old entry stays)."""
    return {s: list(ids) for s, ids in ((document.lint or {}).get("entries") or {}).items()}


def baseline_lint_tools(document: ResultsDocument) -> dict[str, dict[str, dict[str, str]]]:
    """The merged lint's accepted tools by server (description and fingerprints by tool
    name), as the run hands them to baseline.build."""
    snapshots = (document.lint or {}).get("snapshots") or {}
    return {s: {t: dict(fields) for t, fields in tools.items()} for s, tools in snapshots.items()}


def baseline_group_entries(document: ResultsDocument) -> dict[str, GroupEntry]:
    """The merged probe's group entries by baseline key, as the run hands them to
    baseline.build (a group with no scored call has none: its old entry stays)."""
    rows = (document.preference or {}).get("groups") or ()
    return {r["key"]: GroupEntry.from_json(r["entry"]) for r in rows if r.get("entry")}
