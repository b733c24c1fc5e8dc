"""Several runs side by side (say, several models on one suite): pure, documents in, text out.

The input is ``tool_selection.v1`` documents (``ResultsDocument``), each with the name of
the file it came from. The output is a table of held/scored per category and per run, then the cases
where the runs disagree (status or first tool), then the preference probe's effects of each
run (a one-call proxy's beside a harness's), then the cases only some runs hold.
Plain text (aligned columns) or markdown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Status

from .document import ResultsDocument

NO_CATEGORY = "(none)"
NOTHING = "(nothing)"
ABSENT = "(absent)"
#: a case differs when any of these differ between runs: what the models did. The verdict
#: is shown but not compared: it is relative to each run's own baseline (held with one,
#: passed without), so it would mark every case of a run gated against nothing
COMPARED = ("status", "first_tool")


@dataclass(frozen=True)
class Run:
    """One run: its column header, the file it came from and its document."""

    label: str
    source: str
    document: ResultsDocument

    @property
    def cases(self) -> dict[str, CaseRecord]:
        return {c.nodeid: c for c in self.document.records}


def labels(models: Sequence[str], sources: Sequence[str]) -> list[str]:
    """Column headers: each run's model, with its file name where two runs share a model."""
    from pathlib import PurePath

    out = list(models)
    attempts: tuple[Callable[[int], str], ...] = (
        lambda i: f"{models[i]} ({PurePath(sources[i]).name})",
        lambda i: f"{models[i]} ({sources[i]})",
        lambda i: f"{models[i]} ({sources[i]} #{i + 1})")
    for attempt in attempts:
        clashing = [i for i, name in enumerate(out) if out.count(name) > 1]
        if not clashing:
            break
        # only the clashing ones get longer: a unique model stays a short header
        for i in clashing:
            out[i] = attempt(i)
    return out


def runs(named: Sequence[tuple[str, ResultsDocument]]) -> list[Run]:
    """Runs from (source, document) pairs, in the order given."""
    models = [str(doc.subject.model or "(no model)") for _, doc in named]
    sources = [source for source, _ in named]
    return [Run(label, source, doc)
            for label, (source, doc) in zip(labels(models, sources), named, strict=True)]


# -- the comparison ---------------------------------------------------------------------------------

def category_counts(run: Run) -> dict[str, tuple[int, int]]:
    """(held, scored) per category, from the run's cases (not scored: an error or capped)."""
    out: dict[str, tuple[int, int]] = {}
    for c in run.document.records:
        held, scored = out.get(c.category or NO_CATEGORY, (0, 0))
        if c.status is not None:
            scored += 1
            held += c.status == Status.HELD
        out[c.category or NO_CATEGORY] = (held, scored)
    return out


def category_table(all_runs: Sequence[Run]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per category (sorted), then the total row."""
    counts = [category_counts(r) for r in all_runs]
    names = sorted({name for c in counts for name in c})
    rows = [[name, *(_ratio(*c[name]) if name in c else "-" for c in counts)] for name in names]
    rows.append(["total", *(_ratio(sum(h for h, _ in c.values()), sum(s for _, s in c.values()))
                            for c in counts)])
    return ["category", *(r.label for r in all_runs)], rows


def _ratio(held: int, scored: int) -> str:
    return f"{held}/{scored} ({held / scored:.0%})" if scored else f"{held}/{scored}"


def case_value(case: CaseRecord) -> str:
    """A case in one run: status (passes/reps), first tool chosen, verdict."""
    scored = case.status is not None
    status = f"{case.status} {case.passes}/{case.reps}" if scored else "not scored"
    first = case.first_tool if case.first_tool is not None else NOTHING
    return f"{status}, {first}, {case.verdict}"


def _order(all_runs: Sequence[Run]) -> list[str]:
    """Every node id once, in the order the runs list them (collection order)."""
    return list(dict.fromkeys(c.nodeid for r in all_runs for c in r.document.records))


def differing(all_runs: Sequence[Run]) -> list[tuple[str, list[str]]]:
    """Cases every run holds whose status or first tool is not the same in all."""
    cases = [r.cases for r in all_runs]
    out = []
    for nodeid in _order(all_runs):
        if not all(nodeid in c for c in cases):
            continue
        seen = {tuple(getattr(c[nodeid], k) for k in COMPARED) for c in cases}
        if len(seen) > 1:
            out.append((nodeid, [case_value(c[nodeid]) for c in cases]))
    return out


def partial(all_runs: Sequence[Run]) -> list[tuple[str, list[str]]]:
    """Cases some runs hold and others do not (another suite, or a case added since)."""
    cases = [r.cases for r in all_runs]
    return [(nodeid, [case_value(c[nodeid]) if nodeid in c else ABSENT for c in cases])
            for nodeid in _order(all_runs) if not all(nodeid in c for c in cases)]


# -- rendering --------------------------------------------------------------------------------------

def lines(named: Sequence[tuple[str, ResultsDocument]], *, markdown: bool = False) -> Iterator[str]:
    """The comparison of the runs, line by line."""
    all_runs = runs(named)
    table = _markdown_table if markdown else _text_table
    heading = (lambda level, text: f"{'#' * level} {text}") if markdown else (lambda _, text: text)

    yield heading(2, f"toolselect: {len(all_runs)} runs compared")
    yield ""
    yield from table(["run", "file", "cases", "created", "gate"],
                     [[r.label, r.source, str(len(r.document.cases)),
                       str(r.document.provenance.get("created") or "-"),
                       "blocks" if r.document.verdict.blocking else "passes"]
                      for r in all_runs], code=())
    yield ""
    yield heading(3, "Held / scored, by category")
    yield ""
    header, rows = category_table(all_runs)
    yield from table(header, rows, right=range(1, len(header)), bold_last=True, code=())
    diff = differing(all_runs)
    yield ""
    yield heading(3, f"Cases that differ ({len(diff)}): status passes/reps, first tool, verdict")
    yield ""
    if diff:
        yield from table(["case", *(r.label for r in all_runs)],
                         [[nodeid, *values] for nodeid, values in diff])
    else:
        yield "none: every case common to the runs has the same status and first tool"
    effects = probe_table(all_runs)
    if effects is not None:
        yield ""
        yield heading(3, "Preference probe: effects on the choice share, mean [95% CI]")
        yield ""
        yield from table(effects[0], effects[1], code=())
    some = partial(all_runs)
    if some:
        yield ""
        yield heading(3, f"Cases in only some runs ({len(some)})")
        yield ""
        yield from table(["case", *(r.label for r in all_runs)],
                         [[nodeid, *values] for nodeid, values in some])


def _effect(value: object) -> str:
    """A probe figure ({mean, ci, groups}) as the probe's summary prints it."""
    if not isinstance(value, dict) or not isinstance(value.get("mean"), (int, float)):
        return "-"
    low, high = [*list(value.get("ci") or []), None, None][:2]
    bounds = (f" [{low:+.2f}, {high:+.2f}]" if isinstance(low, (int, float))
              and isinstance(high, (int, float)) else "")
    return f"{value['mean']:+.2f}{bounds} (groups={value.get('groups')})"


def probe_table(all_runs: Sequence[Run]) -> tuple[list[str], list[list[str]]] | None:
    """The preference probe's effects of each run, a row per figure (None: no run has any).
    A run on a harness route has no position figure: "not measured" says so."""
    summaries = []
    for run in all_runs:
        preference = run.document.preference
        summary = preference.get("summary") if isinstance(preference, dict) else None
        summaries.append(summary if isinstance(summary, dict) else None)
    if not any(summaries):
        return None
    harness = ("claude-code/",)  # the harness that sorts the tools it is given
    factors = sorted({f for s in summaries if s for f in (s.get("factor_effects") or {})})
    rows = []
    for name in ("first-listed twin share (baseline)", *factors):
        row = [name]
        for run, summary in zip(all_runs, summaries, strict=True):
            if summary is None:
                row.append(ABSENT)
                continue
            value = (summary.get("first_twin_share_baseline") if name.startswith("first-listed")
                     else (summary.get("factor_effects") or {}).get(name))
            unmeasured = (name.startswith("first-listed") or name == "vendor_name")
            row.append("not measured (the harness sorts tools)" if value is None and unmeasured
                       and str(run.document.subject.model or "").startswith(harness) else _effect(value))
        rows.append(row)
    return ["effect", *(r.label for r in all_runs)], rows


def render(named: Sequence[tuple[str, ResultsDocument]], *, markdown: bool = False) -> str:
    """The comparison as one text, ending in a newline."""
    return "\n".join(lines(named, markdown=markdown)) + "\n"


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = (),
                bold_last: bool = False, code: Sequence[int] = (0,)) -> Iterator[str]:
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    yield line(header)
    yield line(["-" * w for w in widths])
    for row in rows:
        yield line(row)


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = (),
                    bold_last: bool = False, code: Sequence[int] = (0,)) -> Iterator[str]:
    def cell(text: str, i: int, bold: bool) -> str:
        text = _code(text) if i in code else _escape(text)
        return f"**{text}**" if bold and text else text

    yield "| " + " | ".join(_escape(h) for h in header) + " |"
    yield "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"
    for n, row in enumerate(rows):
        bold = bold_last and n == len(rows) - 1
        yield "| " + " | ".join(cell(c, i, bold) for i, c in enumerate(row)) + " |"


def _escape(text: str) -> str:
    """Plain text safe in a table cell: a pipe would end the cell, markup would render."""
    out = re.sub(r"([\\|*`\[\]<>])", r"\\\1", text)
    # an underscore inside a word never emphasizes (GFM): list_charges stays readable
    out = re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\_", out)
    return out.replace("\n", " ")


def _code(text: str) -> str:
    """A code span in a table cell: pipes still escaped (GFM), fences longer than any backtick run."""
    text = text.replace("|", "\\|").replace("\n", " ")
    ticks = 1
    while "`" * ticks in text:
        ticks += 1
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{'`' * ticks}{pad}{text}{pad}{'`' * ticks}"
