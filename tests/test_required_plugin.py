"""`toolselect init` makes the pytest configuration require the plugin, so a run without it
(`-p no:toolselect`, `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`) fails instead of passing: pytest's
own required_plugins check, in whichever file pytest reads, and never a user's own line
rewritten."""

from __future__ import annotations

import configparser
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIND, Project, case
from pytest_toolselect.cli.ini import DISTRIBUTION, require_plugin, with_required

TOOLSELECT = Path(sys.executable).with_name("toolselect")

#: ini keys and values as a user may write them (no line breaks inside a value)
KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True).filter(lambda k: k != "required_plugins")
VALUES = st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30).map(
    str.strip)


@settings(max_examples=60, deadline=None)
@given(before=st.dictionaries(KEYS, VALUES, max_size=4), section=st.dictionaries(KEYS, VALUES, max_size=4),
       after=st.dictionaries(KEYS, VALUES, max_size=4))
def test_the_line_lands_in_the_pytest_section_and_keeps_every_other_line(
        before: dict[str, str], section: dict[str, str], after: dict[str, str]) -> None:
    def block(header: str, items: dict[str, str]) -> str:
        return header + "\n" + "".join(f"{k} = {v}\n" for k, v in items.items())

    text = block("[other]", before) + block("[pytest]", section) + block("[more]", after)
    changed, named = with_required(text, "[pytest]", f"required_plugins = {DISTRIBUTION}")
    assert changed is not None and not named
    # every line the user wrote is there, in its order; one line more
    assert [line for line in changed.splitlines() if line != f"required_plugins = {DISTRIBUTION}"] \
        == text.splitlines()
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(changed)
    assert parser["pytest"]["required_plugins"] == DISTRIBUTION
    assert {k: parser["pytest"][k] for k in section} == section
    assert "required_plugins" not in parser["other"] and "required_plugins" not in parser["more"]
    # a second init changes nothing
    assert with_required(changed, "[pytest]", f"required_plugins = {DISTRIBUTION}") == (None, True)


def test_a_users_own_required_plugins_is_never_rewritten(tmp_path: Path) -> None:
    ini = tmp_path / "tox.ini"
    ini.write_text("[tox]\nenv_list = py3\n[pytest]\nrequired_plugins =\n    pytest-xdist\n")
    before = ini.read_text()
    said = require_plugin(tmp_path)
    assert ini.read_text() == before and "add pytest-toolselect" in said, said


@pytest.mark.parametrize(("files", "written"), [
    ({}, "pytest.ini"),
    ({"pyproject.toml": '[project]\nname = "x"\n'}, "pyproject.toml"),
    ({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-q"\n'}, "pyproject.toml"),
    ({"setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\nmarkers =\n    slow\n"}, "setup.cfg"),
], ids=["none", "pyproject-without-pytest", "pyproject-ini-options", "setup-cfg"])
def test_init_requires_the_plugin_so_a_run_without_it_fails(
        project: Project, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], written: str) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS")  # the suite's addopts name the plugin's own flags
    for name, text in files.items():
        (project.path / name).write_text(text)
    project.config()
    result = project.pytester.run(TOOLSELECT, "init", timeout=300)
    assert result.ret == 0, result.stderr.str()
    assert DISTRIBUTION in (project.path / written).read_text()
    project.cases([case(*FIND)])
    with_plugin = project.pytester.runpytest_subprocess("-p", "no:randomly")
    assert with_plugin.ret == 0, with_plugin.stdout.str() + with_plugin.stderr.str()
    without = project.pytester.runpytest_subprocess("-p", "no:toolselect")
    assert without.ret != 0 and "Missing required plugins: pytest-toolselect" in without.stderr.str()
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    unloaded = project.pytester.runpytest_subprocess()
    assert unloaded.ret != 0 and "Missing required plugins: pytest-toolselect" in unloaded.stderr.str()
