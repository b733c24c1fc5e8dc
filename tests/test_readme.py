"""The README's options table names every option the plugin has (and none it lacks), and what it
says of the suite is true."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pytest_toolselect.inputs.option_table import OPTIONS

README = Path(__file__).parent.parent / "README.md"


def test_every_option_is_in_the_readme_and_every_flag_there_exists() -> None:
    text = README.read_text()
    documented = set(re.findall(r"--toolselect-[a-z0-9-]+", text))
    flags = {opt.flag for opt in OPTIONS}
    assert flags - documented == set(), "options missing from the README"
    assert documented - flags == set(), "flags in the README that do not exist"


def test_the_readme_counts_the_tests_that_skip_without_a_browser() -> None:
    """Each test that takes the `browser` fixture skips without Chromium: the README says how
    many, so a reader of a skipped count knows it is these."""
    users = [node.name for path in (README.parent / "tests").glob("test_*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
             and "browser" in [a.arg for a in node.args.args]]
    said = re.search(r"without a browser those (\d+) tests skip", README.read_text())
    assert said is not None, "the README no longer says which tests skip without a browser"
    assert int(said.group(1)) == len(users), users
