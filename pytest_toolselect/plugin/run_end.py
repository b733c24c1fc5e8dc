"""The end of a run on the controller: the baseline written, the reports, one exit status.

The facts the exit status depends on are gathered here, in the order the run's end needs
them, and handed to the one function that decides it (gate/exit_status.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_toolselect.gate.exit_status import RunFacts, exit_status
from pytest_toolselect.run.lifecycle import overlap_problem

if TYPE_CHECKING:
    import pytest

    from pytest_toolselect.run.session import RunSession


def end_of_run(run: RunSession, session: pytest.Session, refused: Sequence[str] = ()) -> int | None:
    """Finish the run (controller) and set the session's exit status; return the status the
    plugin decided (None: pytest's own stands), which the plugin keeps to the end.

    ``refused``: what the xdist workers refused at their start (plugin.ownership)."""
    state = run.state
    usage_problem = bool(refused)
    write_refused: str | None = None
    if usage_problem:
        # refused on the workers at their start (nothing ran): said once, a usage error
        state.report_problems.extend(refused)
    else:
        if state.collected and getattr(session.config.option, "dist", "no") != "no":
            # under xdist the controller learns the cases only now: refuse the gate here
            problem = overlap_problem(run.baselines)
            if problem is not None:
                state.report_problems.append(problem)
                usage_problem = True
        write_refused = run.finish()
        if write_refused is not None:
            # another subject's baseline is on disk now: said once, a usage error
            state.report_problems.append(write_refused)
    gathered = state.gathered() and not refused
    facts = RunFacts(pytest_status=int(session.exitstatus), usage_problem=usage_problem,
                     write_refused=write_refused is not None,
                     # the one verdict decides, never the count pytest kept of the items
                     verdict=run.summary.decision().exit_status if gathered else None,
                     report_problems=bool(state.report_problems))
    decided = exit_status(facts)
    if gathered:
        # the reports say the status as known before they are written
        run.summary.write_reports(session.exitstatus if decided is None else decided,
                                  session.testsfailed)
        decided = exit_status(dataclasses.replace(facts,
                                                  report_problems=bool(state.report_problems)))
    if decided is not None:
        session.exitstatus = decided
    return decided
