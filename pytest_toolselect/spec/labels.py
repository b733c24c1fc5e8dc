"""Labels (category, intent, tags) become pytest marks for -m: never one that changes an outcome.

``category: xfail`` would turn a regression into XFAIL and ``tags: [skip]`` would skip a case
forever, so the names of pytest's own marks, and of the well-known plugins' marks that change
how or whether a test runs, are refused where the case is written.
"""

from __future__ import annotations

from collections.abc import Iterable

#: pytest's built-in marks (each changes what a test does or whether it runs)
PYTEST_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings", "parametrize"})
#: marks of common plugins that change an outcome: reruns, timeouts, event loops, order
PLUGIN_MARKS = frozenset({"flaky", "timeout", "asyncio", "anyio", "trio", "forked", "repeat",
                          "dependency", "order", "run", "no_cover", "django_db", "tryfirst",
                          "trylast"})
OUTCOME_MARKS = PYTEST_MARKS | PLUGIN_MARKS


def refused(label: str) -> bool:
    """Whether a label names a mark that would change the case's outcome."""
    return label.strip().lower() in OUTCOME_MARKS


def problem(field: str, label: str) -> tuple[str, str]:
    """The message and the fix for a refused label."""
    return (f"{field} {label!r} is the name of a pytest mark that changes outcomes (it would "
            f"{_effect(label)}); labels only select cases with -k and -m",
            f"pick another name, e.g. {label}-cases")


def _effect(label: str) -> str:
    name = label.strip().lower()
    if name in ("skip", "skipif"):
        return "skip the case"
    if name == "xfail":
        return "turn a regression into XFAIL"
    return "change how the case runs"


def first_refused(labels: Iterable[str | None]) -> str | None:
    return next((label for label in labels if label and refused(label)), None)
