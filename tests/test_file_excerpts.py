"""A file that is not what the config says (``tools_file: /etc/passwd``, a path mistyped) is
never printed: its error says where and what is wrong, quoting at most a short excerpt of a
value, its credentials masked."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIND, Project, case
from pytest_toolselect.discovery.servers import load_tools_file
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourcemap import EXCERPT

#: an /etc/shadow-like file: one account a line, a password hash in the second field
SHADOW = "\n".join(
    f"user{i}:$6$salt{i:04d}$" + "Qx7" * 28 + f"{i:02d}:19000:0:99999:7:::" for i in range(30)) + "\n"
#: an /etc/passwd-like one, which YAML reads as one long string
PASSWD = "\n".join(f"user{i}:x:{1000 + i}:{1000 + i}:User Number {i}:/home/user{i}:/bin/bash"
                   for i in range(30)) + "\n"


def _error(path: Path) -> str:
    with pytest.raises(ToolselectError) as info:
        load_tools_file(path)
    return str(info.value)


@pytest.mark.parametrize("text", [SHADOW, PASSWD], ids=["shadow", "passwd"])
def test_a_file_that_is_no_tools_file_is_named_not_printed(tmp_path: Path, text: str) -> None:
    path = tmp_path / "accounts"
    path.write_text(text)
    message = _error(path)
    assert message.startswith(f"{path}:1: ") and "list of tools" in message
    assert "Qx7Qx7" not in message, "a password hash was shown"
    assert sum(f"user{i}:" in message for i in range(30)) <= 3, "the file's lines were shown"
    # as YAML reads it (a plain scalar folds its lines into one), no more than an excerpt
    folded = " ".join(text.splitlines())
    assert not any(folded[i:i + EXCERPT + 1] in message for i in range(len(folded) - EXCERPT))
    assert len(message) < 400


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.text(string.ascii_letters + string.digits + " :-=_/.,$#@!'\"{}[]",
                              min_size=EXCERPT + 1, max_size=120), min_size=1, max_size=20))
def test_no_run_longer_than_the_excerpt_is_quoted(tmp_path_factory: pytest.TempPathFactory,
                                                  lines: list[str]) -> None:
    path = tmp_path_factory.mktemp("f") / "some.tools.yaml"
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    try:
        load_tools_file(path)
    except ToolselectError as exc:
        message = str(exc)
    else:
        return  # the lines happened to make a valid tools file (an empty list, say)
    for line in lines:
        runs = {line[i:i + EXCERPT + 1] for i in range(len(line) - EXCERPT)}
        assert not {r for r in runs if r in message}, message


def test_a_credential_in_the_excerpt_is_masked(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    key = "AKIA" + "Q" * 16
    path.write_text('{"tools": "' + key + ' is the key"}')
    message = _error(path)
    assert key not in message and "'*** is the key'" in message


def test_a_tools_file_pointed_at_the_wrong_file_errors_its_cases(project: Project) -> None:
    (project.path / "accounts").write_text(SHADOW)
    project.config({"odd": {"tools_file": "accounts"}, "registry": {"tools_file": project.tools_file()}})
    project.cases([case(*FIND, servers=["odd"]), case("ok", FIND[1], FIND[2], servers=["registry"])])
    result = project.pytester.runpytest("-rA")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*accounts:1: server 'odd': a mapping needs a 'tools' list (it has 'user0:***:*"])
    terminal = result.stdout.str()
    assert "Qx7Qx7" not in terminal and "user5:" not in terminal
