"""What caused a case the gate would block: the model moved (drift), or which edit of the tools.

The baseline keeps the tool set each case was recorded with (baseline.py's ``tools`` and
``offered``). A case the gate calls a regression is asked again now, with the baseline's
tool set and the head's, interleaved, so the two arms see the same model:

* **regression** when the head is significantly worse than the baseline's tools *now*
  (one-sided Fisher exact test, p <= PAIRED_ALPHA), or when the baseline's tools still hold
  now (the gate's verdict stands: every regression must fail);
* **drift** when the baseline's tools fail now as well (their reps now are a significant
  drop from the entry's recorded history, p <= DRIFT_ALPHA) and the head is no worse.

When the tool set changed, the regression's cause is searched for by putting changed
tools back to their baseline form (``variant``) and asking again. Pure functions: the run
(run/attribution.py) asks the model and hands the counts here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict, JSONObject
from pytest_toolselect.records.attribution import Attribution, Cause, ChangedTool
from pytest_toolselect.terms.vocabulary import Verdict

from .stats import exact_drop_p
from .toolsdiff import SYSTEM, word_diff

#: the head is "significantly worse than the baseline's tools now" at this one-sided level
#: (the default rule's alpha): under drift both arms share one pass rate, and a false
#: "worse" blocks the pull request (docs/gate.md, measured by benchmarks/gate_validity.py)
PAIRED_ALPHA = 0.005
#: the baseline's tools "fail now as well" when their reps now are a drop from the
#: recorded history at this one-sided level. Lenient on purpose: a drift call needs this
#: and no paired drop, so a real break (the head far below the baseline's tools) stays a
#: regression however the baseline's arm wobbles
DRIFT_ALPHA = 0.3
#: a variant with some tools put back "takes the case back" when it is better than the
#: head now at this level (naming a cause blocks nothing: a looser level is enough)
RESTORE_ALPHA = 0.05
#: reps per arm, as a multiple of --toolselect-reps (reps 3: 15 per arm, the first look
#: and four batches of adaptive reps)
PAIRED_FACTOR = 5
#: reps of each variant of the search, as a multiple of --toolselect-reps (naming a cause
#: blocks nothing, so fewer reps than the paired check)
VARIANT_FACTOR = 3
#: changed tools tried one at a time up to this many; more are halved
ONE_AT_A_TIME = 3
#: the default attribution calls per case and per run (--toolselect-attribution-max-calls)
DEFAULT_MAX_CALLS = (90, 450)
#: the rep index the attribution's calls start at: new samples for the response cache
#: (the head's own reps hold 0..), and the same keys on every run (a replayed run replays them)
REP_OFFSET = 1_000_000


def paired_reps(reps: int, deterministic: bool) -> int:
    """Reps per arm: one for a deterministic model (it would answer the same)."""
    return 1 if deterministic else PAIRED_FACTOR * max(1, reps)


def variant_reps(reps: int, deterministic: bool) -> int:
    """Reps per variant of the search for the edit."""
    return 1 if deterministic else VARIANT_FACTOR * max(1, reps)


def parse_max_calls(value: Any) -> tuple[int, int]:
    """``PER_CASE`` or ``PER_CASE/PER_RUN`` (checked where the option is read): the two caps;
    a per-case cap alone leaves the run's at least its default."""
    numbers = [int(p) for p in str(value).strip().split("/")]
    return numbers[0], numbers[1] if len(numbers) == 2 else max(numbers[0], DEFAULT_MAX_CALLS[1])


def drifted(recorded: tuple[int, int], now: tuple[int, int], deterministic: bool = False) -> bool:
    """The baseline's tools fail now: their reps now are a drop from what was recorded."""
    if deterministic:
        return now[0] < now[1] and recorded[0] > 0
    return exact_drop_p(recorded[0], recorded[1], now[0], now[1]) <= DRIFT_ALPHA


def worse(better: tuple[int, int], head: tuple[int, int], alpha: float,
          deterministic: bool = False) -> tuple[bool, float]:
    """Whether head is significantly worse than better (one-sided Fisher), and the p."""
    if deterministic:
        drop = head[0] / head[1] < better[0] / better[1]
        return drop, 0.0 if drop else 1.0
    p = exact_drop_p(better[0], better[1], head[0], head[1])
    return p <= alpha, p


def paired_outcome(recorded: tuple[int, int], base_now: tuple[int, int], head_now: tuple[int, int],
                   deterministic: bool = False) -> tuple[Verdict, float]:
    """regression or drift for a case the gate would block, and the paired p-value."""
    significant, p = worse(base_now, head_now, PAIRED_ALPHA, deterministic)
    if significant:
        return Verdict.REGRESSION, p
    if drifted(recorded, base_now, deterministic):
        return Verdict.DRIFT, p
    return Verdict.REGRESSION, p


# -- the changed tools --------------------------------------------------------------------------

Defs = Mapping[str, Mapping[str, Any]]


def _by_name(tools: Sequence[Mapping[str, Any]], system: str | None) -> dict[str, dict[str, Any]]:
    out = {t["name"]: dict(t) for t in tools}
    if system is not None:
        out[SYSTEM] = {"name": SYSTEM, "description": system, "input_schema": {}}
    return out


def changes(base_tools: Sequence[JSONObject], base_system: str | None,
            head_tools: Sequence[JSONObject], head_system: str | None) -> list[ChangedTool]:
    """Each tool that differs between the two sets, by name, with the part that changed:
    ``description``, ``input schema``, both, ``added``, ``removed``, or a rename (a tool
    removed and one added with the same description and schema: ``name``, one change)."""
    old, new = _by_name(base_tools, base_system), _by_name(head_tools, head_system)
    out: list[ChangedTool] = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        if a is None or b is None:
            out.append(ChangedTool(name, "added" if a is None else "removed"))
            continue
        parts = [p for p, k in (("description", "description"), ("input schema", "input_schema"))
                 if a.get(k) != b.get(k)]
        out.append(ChangedTool(name, " and ".join(parts) or "description"))
    # a removed tool whose definition an added one carries under another name: a rename
    added = {c.tool: c for c in out if c.part == "added"}
    for c in [c for c in out if c.part == "removed"]:
        for name, added_tool in list(added.items()):
            if (old[c.tool].get("description"), old[c.tool].get("input_schema")) == (
                    new[name].get("description"), new[name].get("input_schema")):
                out[out.index(c)] = ChangedTool(c.tool, "name", renamed_to=name)
                out.remove(added_tool)
                del added[name]
                break
    return out


def variant(base_tools: Sequence[JSONObject], base_system: str | None,
            head_tools: Sequence[JSONObject], head_system: str | None,
            revert: Sequence[ChangedTool]) -> tuple[list[JSONDict], str | None]:
    """The head's tool set with the changes in ``revert`` put back to their baseline form,
    in the head's order (a removed tool goes back where the baseline had it, at the end)."""
    old = _by_name(base_tools, base_system)
    names = {c.tool for c in revert} | {c.renamed_to for c in revert if c.renamed_to}
    system = old.get(SYSTEM, {}).get("description") if SYSTEM in names else head_system
    tools: list[dict[str, Any]] = []
    for t in head_tools:
        if t["name"] not in names:
            tools.append(dict(t))
        elif t["name"] in old:
            tools.append(dict(old[t["name"]]))  # changed: its baseline form
        # added (or the new name of a renamed tool): left out
    present = {t["name"] for t in tools}
    tools += [dict(t) for t in base_tools if t["name"] in names and t["name"] not in present]
    return tools, system


def halves(items: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    mid = (len(items) + 1) // 2
    return list(items[:mid]), list(items[mid:])


# -- what the reports say -----------------------------------------------------------------------


def cause_phrase(cause: Cause) -> str:
    """One named cause: "the change to get_company's description", "the new tool X"."""
    tool, part = cause.change.tool, cause.change.part
    if cause.shadowing:
        return f"shadowed by the new tool {tool}"
    if part == "added":
        return f"caused by the new tool {tool}"
    if part == "removed":
        return f"caused by the removal of {tool}"
    if part == "name":
        return f"caused by the rename of {tool} to {cause.change.renamed_to}"
    if tool == SYSTEM:
        return "caused by the change to the system prompt"
    return f"caused by the change to {tool}'s {part}"


def diff_of(base_tools: Sequence[JSONObject], base_system: str | None,
            head_tools: Sequence[JSONObject], head_system: str | None,
            tool: str) -> str | None:
    """The word diff of a changed tool's description (the system prompt's text)."""
    old, new = _by_name(base_tools, base_system), _by_name(head_tools, head_system)
    a, b = old.get(tool), new.get(tool)
    if a is None or b is None or a.get("description") == b.get("description"):
        return None
    return word_diff(str(a.get("description", "")), str(b.get("description", "")))


def summary(attribution: Attribution) -> str:
    """The one line every report shows for an attributed case (its paired check made)."""
    paired, rec = attribution.paired, attribution.recorded
    if paired is None or rec is None:
        raise ValueError("an attribution says its line once its paired check is made")
    base, head = paired.baseline_tools, paired.head
    counts = f"{base[0]}/{base[1]} now, {rec[0]}/{rec[1]} recorded"
    if attribution.outcome == Verdict.DRIFT:
        return f"drift: fails with the baseline's tools too ({counts})"
    causes = attribution.causes
    paired_line = f"head {head[0]}/{head[1]}, baseline's tools {base[0]}/{base[1]} now"
    if causes:
        return "; ".join(cause_phrase(c) for c in causes) + f" ({paired_line})"
    if attribution.same_tools:
        return f"the tools did not change; the baseline's tools hold now ({counts})"
    if attribution.search == "together":
        return f"caused by the changes together, no one of them alone ({paired_line})"
    return f"the tools' change, not the model ({paired_line})"


#: what a drift says to do, in every report
DRIFT_ADVICE = ("the model moved, not this change: re-record main (--toolselect-update-baseline "
                "on main) and these cases are compared with what the model does now")


def drift_line(count: int) -> str:
    """The summary's first line when cases drifted."""
    cases = "1 case fails" if count == 1 else f"{count} cases fail"
    return f"drift: {cases} with the baseline's own tools too; {DRIFT_ADVICE}"


def unavailable(reason: str) -> Attribution:
    """An attribution that could not be made (no kept tools, the cap): the gate's verdict stands."""
    return Attribution(None, 0, reason)
