"""Every case the run expected is judged or named: the rule no way of losing a case escapes.

The controller knows each case it expected to judge (collected, less what was narrowed on
purpose: -k, -m, --deselect, --lf, a shard, all of which pytest reports as deselected). A
case it expected and holds no record for (its worker crashed, a hook ran the tests itself,
a conftest dropped the item) did not run: it gets an error record that names why, so the
verdict blocks on it and every report lists it. Pure: records in, records out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace

from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Verdict

#: how every not-run error begins (the reports and tests recognise it)
NOT_RUN = "the case did not run"


def not_run_record(rec: CaseRecord, why: str) -> CaseRecord:
    """The error record of an expected case that was never judged: nothing scored, the
    baseline keeps its entry, the verdict blocks."""
    return replace(rec, status=None, verdict=Verdict.ERROR, passes=0, reps=0,
                   error=f"{NOT_RUN}: {why}")


def unjudged(expected: Mapping[str, CaseRecord], judged: Collection[str],
             why: Callable[[str], str]) -> list[CaseRecord]:
    """The error record of each expected case (node id -> the case as a record) that has no
    record among ``judged`` (node ids), in the run's order; ``why`` says, per node id, what
    left it out."""
    missing = [rec for nodeid, rec in expected.items() if nodeid not in judged]
    missing.sort(key=lambda r: (r.order is None, r.order or 0, r.nodeid))
    return [not_run_record(rec, why(rec.nodeid)) for rec in missing]


#: the question of a case known by its key alone
UNKNOWN = "(not known: the case was not collected in this run)"
#: why a case of a sharded suite is in no shard's results
NOT_IN_ANY_SHARD = ("no shard's results hold it and no shard deselected it (its shard's job "
                    "lost it: a results file written by hand, or by a run that did not judge it)")


def unjudged_keys(suite: Collection[str], judged: Collection[str],
                  narrowed: Collection[str]) -> list[CaseRecord]:
    """The error record of each case of a suite (its keys, as the shards' documents list
    them) that no shard judged and none left out on purpose, by key: what a merge holds of
    a case is its key alone."""
    gone = sorted(set(suite) - set(judged) - set(narrowed))
    return [not_run_record(key_record(key), NOT_IN_ANY_SHARD) for key in gone]


def key_record(key: str) -> CaseRecord:
    """A case known by its key alone (a baseline's entry, a shard's list), as a record:
    the node id is the key, nothing else is known."""
    return CaseRecord(
        nodeid=key, key=key, order=None, case_id=key.rpartition("::")[2], question=UNKNOWN,
        category=None, intent=None, why=None, expect_tool=None, allow_no_tool=False,
        case_fingerprint=None, status=None, verdict=Verdict.ERROR)
