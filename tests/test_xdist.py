"""Under pytest-xdist the summary and the baseline are those of a serial run."""

from __future__ import annotations

import re

from conftest import FIND, NESTED_XDIST, OFFICERS, OUT_OF_SCOPE, WRONG, Project, case


def _summary(text: str) -> str:
    """The toolselect section of the terminal output."""
    match = re.search(r"=+ toolselect =+\n(.*?)\n=+ ", text, re.S)
    assert match, text
    return match.group(1).strip("\n")


@NESTED_XDIST
def test_two_workers_match_a_serial_run(project: Project) -> None:
    project.config()
    cases = []
    for n in range(6):
        cases += [case(f"find{n}", FIND[1], FIND[2], category="search", intent="lookup"),
                  case(f"officers{n}", OFFICERS[1], OFFICERS[2], category="people",
                       intent="lookup"),
                  case(f"weather{n}", OUT_OF_SCOPE[1], [], category="scope"),
                  case(f"wrong{n}", WRONG[1], WRONG[2], category="people")]
    project.cases(cases)
    serial = project.pytester.runpytest_subprocess("--toolselect-baseline=serial.json", "-p",
                                                   "no:randomly")
    serial.assert_outcomes(passed=18, xfailed=6)
    parallel = project.pytester.runpytest_subprocess("--toolselect-baseline=parallel.json", "-n",
                                                     "2")
    parallel.assert_outcomes(passed=18, xfailed=6)
    assert "2 workers" in parallel.stdout.str()
    assert (project.path / "serial.json").read_bytes() == (project.path / "parallel.json").read_bytes()
    summary = _summary(serial.stdout.str()).replace("serial.json", "X")
    assert summary == _summary(parallel.stdout.str()).replace("parallel.json", "X")
    assert "lookup: find_company x6, list_officers x6" in summary

    # and the gate against that baseline is the same both ways, gone cases included
    project.cases(cases[:-1])
    again = project.pytester.runpytest_subprocess("--toolselect-baseline=serial.json", "-n", "2")
    again.assert_outcomes(passed=18, xfailed=5)
    again.stdout.fnmatch_lines(["*in the baseline, no longer a case: 1*", "*::wrong5*"])
