"""The newcomer's path of one case in docs/architecture.md is the path a case takes."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from conftest import FIND, Project, case

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
PKG = "pytest_toolselect"
MAX_MODULES = 15


def drawn_path(text: str | None = None) -> list[tuple[str, str]]:
    """The drawing's steps, in order: (dotted module under the package, function)."""
    if text is None:
        text = DOC.read_text(encoding="utf-8")
    block = text.split("## A case's path", 1)[1].split("```")[1]
    steps = [re.match(r"\s*\d+\s+(\S+)\s+(\S+)", line) for line in block.strip().splitlines()]
    return [(m.group(1), m.group(2)) for m in steps if m is not None]


def test_the_drawing_has_at_most_15_modules() -> None:
    steps = drawn_path()
    assert 5 <= len({module for module, _ in steps}) <= MAX_MODULES, steps
    assert drawn_path("## A case's path\n```\n 1  plugin  f  x\n 2  run.a  B.g  y\n```\n") == [
        ("plugin", "f"), ("run.a", "B.g")]


def test_one_case_crosses_the_drawn_modules_in_the_drawn_order(project: Project) -> None:
    project.config(model="local/bm25")
    project.cases([case(*FIND)])
    first: dict[tuple[str, str], int] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.startswith(PKG):
                first.setdefault((module, frame.f_code.co_qualname), len(first))

    # the case's reps run on the scheduler's threads: they are profiled too
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        result = project.pytester.runpytest_inprocess("-p", "no:cacheprovider")
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert result.ret == 0, result.stdout.str()
    steps = drawn_path()
    where = {step: first.get((f"{PKG}.{step[0]}", step[1])) for step in steps}
    missing = [step for step, index in where.items() if index is None]
    assert not missing, f"drawn but not on the path: {missing}"
    order = [where[step] for step in steps]
    # in the message: the steps in the order the case took them
    assert order == sorted(order), sorted(steps, key=lambda step: where[step] or 0)
