"""The README's options table names every option the plugin has (and none it lacks)."""

from __future__ import annotations

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
