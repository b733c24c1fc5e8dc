"""Files that are not files: ``/dev/zero`` never ends, ``/dev/urandom`` neither, a FIFO blocks
until a writer comes. Wherever the plugin reads a path it was given, such a path is refused at
once (read only if it is a regular file, and never more than its cap plus one byte).

Each run is a subprocess with a deadline that only catches a hang: before, a tools file of
``/dev/zero`` grew to gigabytes and a FIFO never returned.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import FIND, Project, case
from pytest_toolselect.positions.bounded import FileTooLarge, NotRegularFile, read_bounded

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(),
                                reason="needs /dev/zero, /dev/urandom and FIFOs (POSIX)")

#: a generous deadline: a refusal takes a second; only a hang comes near it
HANG = 120

KINDS = {"zero": "a character device", "urandom": "a character device", "fifo": "a named pipe (FIFO)"}


def _special(project: Project, name: str) -> str:
    if name == "fifo":
        fifo = project.path / "pipe"
        os.mkfifo(fifo)  # no writer ever comes: opening it for reading would block
        return str(fifo)
    return f"/dev/{name}"


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_special_tools_file_is_an_error_on_its_cases(project: Project, name: str) -> None:
    project.config({"odd": {"tools_file": _special(project, name)},
                    "registry": {"tools_file": project.tools_file()}})
    project.cases([case(*FIND, servers=["odd"]), case("ok", FIND[1], FIND[2], servers=["registry"])])
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=HANG)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*cannot read tools file: it is {KINDS[name]}, not a regular file*"])


@pytest.mark.parametrize("option", ["config", "baseline"])
@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_special_config_or_baseline_is_a_usage_error(project: Project, name: str,
                                                      option: str) -> None:
    project.config()
    project.cases([case(*FIND)])
    path = _special(project, name)
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                                   f"--toolselect-{option}={path}", timeout=HANG)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert KINDS[name] in text and path in text
    assert text.count(KINDS[name]) == 1, "a usage error is said once"


def test_a_special_cache_path_is_a_usage_error(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    path = _special(project, "fifo")
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                                   f"--toolselect-cache={path}", timeout=HANG)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "the cache path is a named pipe (FIFO), not a file" in result.stdout.str() + result.stderr.str()


def test_read_bounded_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, kind in [("/dev/zero", "a character device"), ("/dev/urandom", "a character device"),
                       (fifo, "a named pipe (FIFO)"), (tmp_path, "a folder")]:
        with pytest.raises(NotRegularFile) as info:
            read_bounded(path, 1024)
        assert info.value.kind == kind


def test_read_bounded_reads_at_most_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    assert read_bounded(path, 10, head=True) == b"x" * 10
    with pytest.raises(FileTooLarge) as info:
        read_bounded(path, 99)
    assert info.value.size == 100
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as f:
        f.truncate(sys.maxsize >> 32)  # gigabytes on paper, refused on its size alone
    with pytest.raises(FileTooLarge):
        read_bounded(sparse, 1024)
