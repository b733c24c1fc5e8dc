"""Labels (category, intent, tags) become pytest marks for -m: never one that changes an outcome.

``category: xfail`` would turn a regression into XFAIL and ``tags: [skip]`` would skip a case
forever, so the names of pytest's own marks, and of the well-known plugins' marks that change
how or whether a test runs, are refused where the case is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: pytest's built-in marks (each changes what a test does or whether it runs)
PYTEST_MARKS = frozenset({"skip", "skipif", "xfail", "usefixtures", "filterwarnings", "parametrize"})
#: marks of common plugins that change an outcome: reruns, timeouts, event loops, order
PLUGIN_MARKS = frozenset({"flaky", "timeout", "asyncio", "anyio", "trio", "forked", "repeat",
                          "dependency", "order", "run", "no_cover", "django_db", "tryfirst",
                          "trylast"})
OUTCOME_MARKS = PYTEST_MARKS | PLUGIN_MARKS
#: the description the plugin registers a label's mark with (so -m works under --strict-markers)
OWN = "toolselect label"


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


def registered_at_run_time(lines: Iterable[str], declared: Iterable[str]) -> dict[str, str]:
    """Mark name -> its registration, for the marks pytest, a plugin or a conftest registered
    while the run started (pytest's ``markers`` lines, ``name(args): text``).

    A mark declared under ``markers`` in the ini file (``declared``) is the project's own
    selection label; a mark code registers is one that code acts on (skip unless an option
    is given, rerun, time out), which a label must not turn on. The plugin's own label and
    ``toolselect_*`` marks are neither.
    """
    found: dict[str, str] = {}
    skip = set(declared)
    for line in lines:
        name = re.split(r"[(:]", line, maxsplit=1)[0].strip()
        if (name and name not in skip and not name.startswith("toolselect_")
                and line.strip() != f"{name}: {OWN}"):
            found.setdefault(name, line.strip())
    return found


def registered_problem(field: str, label: str, registration: str) -> tuple[str, str]:
    """The message and the fix for a label naming a mark registered at run time."""
    return (f"{field} {label!r} is the name of a mark that pytest, a plugin or a conftest registered "
            f"({registration!r}): code acts on that mark and may skip, rerun or fail the case; "
            "labels only select cases with -k and -m",
            f"pick another name, e.g. {label}-cases; a mark the ini file declares under `markers` "
            "is the project's own and may be a label")


def labelled(category: str | None, intent: str | None,
             tags: Iterable[str]) -> list[tuple[str, str]]:
    """A case's labels with the field each comes from."""
    out = [(f, v) for f, v in (("category", category), ("intent", intent)) if v]
    return out + [("tag", t) for t in tags if t]


def run_time_refusals(labels: Iterable[tuple[str, str]],
                      marks: Mapping[str, str]) -> list[tuple[str, str]]:
    """(message, fix) for each label that names one of ``marks`` (registered_at_run_time)."""
    return [registered_problem(field, label, marks[label]) for field, label in labels if label in marks]
