"""Counts in words: "1 case", "2 cases", "2 regressions" (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_toolselect.messages.plural import plural

if TYPE_CHECKING:
    from pytest_toolselect.records.report_input import Escalations

#: the verdict and unit words that take an s; the others read as adjectives ("2 held", "3 new")
_NOUNS = {"case": "cases", "regression": "regressions", "error": "errors", "rep": "reps",
          "call": "calls"}


def counted(n: int, word: str) -> str:
    """`n` and `word` (a verdict name, underscores as spaces), plural where the word is a noun
    (``messages.plural``, the one pluraliser, with the adjective its own plural)."""
    word = word.replace("_", " ")
    return plural(n, word, _NOUNS.get(word, word))


def verdict_counts(counts: dict[str, int] | list[tuple[str, int]]) -> str:
    """"1 regression, 2 errors, 3 held": verdict names and counts, in the given order."""
    items = counts.items() if isinstance(counts, dict) else counts
    return ", ".join(counted(n, v) for v, n in items)


def attribution_cost_line(spent: Mapping[str, Any]) -> str:
    """The attribution's share of the cost, in one line (its calls are in the totals)."""
    return (f"attribution: {counted(spent['calls'], 'call')} asking {counted(spent['cases'], 'case')} "
            f"again with the baseline's tools, ${spent['priced_usd']:.4f} (in the totals above)")


#: keys named in a not-run line before "and N more"
NOT_RUN_SHOWN = 5


def not_run_line(keys: Sequence[str]) -> str | None:
    """The cases the run left out on purpose (deselected with -k, -m, --deselect or --lf):
    named, never blocking. None: every case the run collected ran."""
    if not keys:
        return None
    more = f" and {len(keys) - NOT_RUN_SHOWN} more" if len(keys) > NOT_RUN_SHOWN else ""
    return (f"not run in this run (deselected on purpose: -k, -m, --deselect, --lf; not "
            f"blocking): {counted(len(keys), 'case')}: {', '.join(keys[:NOT_RUN_SHOWN])}{more}")


def escalation_line(escalations: Escalations | Mapping[str, Any]) -> str:
    """Adaptive reps in one line: cases asked again, extra calls, verdicts (a live run's
    Escalations, or a saved document's summary.escalations)."""
    esc = escalations if isinstance(escalations, Mapping) else escalations.to_json()
    verdicts = verdict_counts(esc["verdicts"])
    line = (f"adaptive reps: {esc['cases']} case(s) asked again, {esc['calls']} extra call(s); "
            f"settled as {verdicts}")
    if esc["stopped"]:
        line += f"; {esc['stopped']} stopped early (cost cap or stopped run)"
    # calls nobody counted on are a surprise unless the line says why and what bounds them
    return line + f" (to settle a verdict the reps left open; {EXTRA_REPS_BOUND})"


#: what bounds the calls each extra step makes, as the summaries and the dry run say it
EXTRA_REPS_BOUND = "at most --toolselect-max-extra-reps a case, none with --toolselect-adaptive off"
ATTRIBUTION_BOUND = "at most --toolselect-attribution-max-calls, none with --toolselect-attribution off"


def attribution_calls_line(spent: Mapping[str, Any]) -> str:
    """The attribution's calls at the top of a summary, with why and what bounds them."""
    return (f"attribution: {counted(spent['calls'], 'call')} asking {counted(spent['cases'], 'case')} "
            f"again with the baseline's tools (to tell this change from the model's drift; "
            f"{ATTRIBUTION_BOUND})")
