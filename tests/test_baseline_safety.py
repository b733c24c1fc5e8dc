"""The baseline is never lost: kills, Ctrl-C, corrupt files, two writers, errored cases.

The kill and race tests run pytest as users do, in subprocesses (signals need a process
of their own). The project's conftest can stop such a run at a named stage (PAUSE_AT):
it writes the file `paused` and sleeps, and the test then sends its signal. The stages
inside the baseline's write are reached by wrapping the calls the write makes
(tempfile.mkstemp, os.fdopen, os.replace) for the baseline's own temp file only.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from conftest import Project, case
from pytest_toolselect.gate.atomic import STALE_TEMP_SECONDS, temp_prefix
from pytest_toolselect.gate.baseline import Baseline, load, write

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

STAGED = '''
import faulthandler
import os
import signal
import tempfile
import time
from pathlib import Path

import pytest
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

HERE = Path(__file__).parent
STAGE = os.environ.get("PAUSE_AT", "")
#: race runs: wait for each other before writing (both have read the old baseline)
PEERS = int(os.environ.get("PEERS", "0"))
#: the deadlines here only catch a hang: a loaded machine may start a run minutes late
HANG = 600
# a run that does not end gets SIGUSR1 from the test: every thread's stack into stacks.txt
# (not stderr: pytest's capture holds fd 2 while a conftest loads)
_stacks = open(HERE / "stacks.txt", "w")
faulthandler.register(signal.SIGUSR1, file=_stacks, all_threads=True)


class Answer:
    """Calls the tool named by $ANSWER for every question."""

    model = "script/answer"
    #: it picks a tool and fills no arguments (valid_arguments has nothing to check)
    fills_arguments = False

    def subject(self):
        return {"provider": "script", "model": self.model}

    async def first_turn(self, request):
        return Turn(calls=(ToolCall(os.environ["ANSWER"], {}),))


def pytest_toolselect_provider(model, config):
    if model == "script/answer":
        return Answer()


def pause(stage):
    if stage == STAGE:
        test = os.getppid()
        (HERE / "paused").write_text(stage)
        # until the test's signal, however late a loaded machine sends it; a run whose test
        # is gone (its worker killed) ends, instead of sleeping on for HANG seconds
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            if os.getppid() != test:
                os._exit(3)
            time.sleep(1)
    if stage == os.environ.get("INTERRUPT_AT"):
        raise KeyboardInterrupt  # what Ctrl-C raises in the main thread, for in-process runs


_reports = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        _reports.append(report.nodeid)
        if len(_reports) == 3:
            pause("running")


def barrier(kind):
    """Wait until every peer run got here (at most HANG s; a run left alone says so)."""
    (HERE / f"{kind}-{os.getpid()}").write_text("")
    deadline = time.monotonic() + HANG
    while len(list(HERE.glob(f"{kind}-*"))) < PEERS:
        if time.monotonic() > deadline:
            (HERE / f"alone-{os.getpid()}").write_text("")
            break
        time.sleep(0.01)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    pause("finishing")
    if PEERS:
        barrier("arrived")


if STAGE or PEERS:
    _mkstemp, _fdopen, _replace = tempfile.mkstemp, os.fdopen, os.replace
    _ours = {}

    def mkstemp(*args, **kwargs):
        fd, path = _mkstemp(*args, **kwargs)
        if os.path.basename(path).startswith(".base.json."):
            _ours.update(fd=fd, path=path)
            pause("temp-created")
        return fd, path

    class HalfThenRest:
        def __init__(self, fh):
            self._fh = fh

        def write(self, text):
            half = len(text) // 2
            self._fh.write(text[:half])
            self._fh.flush()
            os.fsync(self._fh.fileno())
            pause("mid-write")
            return half + self._fh.write(text[half:])

        def __getattr__(self, name):
            return getattr(self._fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self._fh.__exit__(*exc)

    def fdopen(fd, *args, **kwargs):
        fh = _fdopen(fd, *args, **kwargs)
        return HalfThenRest(fh) if fd == _ours.get("fd") else fh

    def replace(src, dst, *args, **kwargs):
        ours = os.fspath(src) == _ours.get("path")
        if ours:
            pause("before-replace")
        _replace(src, dst, *args, **kwargs)
        if ours:
            pause("after-replace")

    tempfile.mkstemp, os.fdopen, os.replace = mkstemp, fdopen, replace
'''

N_CASES = 10
ANY_TOOL = ["find_company", "list_officers", "lookup_vat"]
QUESTION = "Find the company called Acme Widgets number {n} in the company register"
ARGS = ("-p", "no:randomly", "-p", "no:cacheprovider", "--toolselect-baseline=base.json")
#: plugins a subprocess run does not need (a third of its startup)
LEAN = ("-p", "no:xdist", "-p", "no:anyio")


def staged_project(project: Project) -> Project:
    project.config(model="script/answer")
    project.pytester.makeconftest(STAGED)
    # every answer holds (a failing case costs pytest a formatted traceback): runs with
    # different answers still write different documents (first tool, history)
    project.cases([case(f"c{n}", QUESTION.format(n=n), ANY_TOOL) for n in range(N_CASES)])
    return project


def record(project: Project, monkeypatch: pytest.MonkeyPatch, answer: str, *extra: str) -> bytes:
    """Run in process (no pausing) and return the baseline's bytes."""
    monkeypatch.setenv("ANSWER", answer)
    result = project.pytester.runpytest(*ARGS, *extra)
    assert result.ret in (0, 1), result.stdout.str()
    return (project.path / "base.json").read_bytes()


def document(path: Path) -> dict[str, Any]:
    """The baseline as loaded by the plugin itself (refuses a partial or invalid file)."""
    loaded = load(path)
    assert loaded is not None, f"{path} is gone"
    return json.loads(path.read_text())


def leftovers(folder: Path) -> list[str]:
    """Files beside the baseline named after it: a write's temp files."""
    return sorted(p.name for p in folder.glob(".base.json*"))


#: each started run's output file, by pid
_OUTPUT: dict[int, Path] = {}


def _ctrl_c_as_at_a_terminal() -> None:
    # a suite started in the background (`pytest ... &` in a script, CI's job runners)
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler: the
    # staged run would sleep through the test's Ctrl-C. It gets SIGINT as a terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(folder: Path, answer: str, **env: str) -> subprocess.Popen[bytes]:
    # output to a file, not a pipe: a killed run's end is its exit, not the pipe's end-of-file
    # (which waits for every process that holds the pipe; on a loaded machine one did, for
    # minutes, after the SIGKILL)
    path = folder / f"output-{answer}.txt"
    with path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", *LEAN, *ARGS, "--toolselect-update-baseline"],
            cwd=folder, env={**os.environ, "ANSWER": answer, **env},
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=_ctrl_c_as_at_a_terminal)
    _OUTPUT[proc.pid] = path
    return proc


def finish(proc: subprocess.Popen[bytes], timeout: float, what: str = "") -> str:
    """Wait for the run to end; its output. A run that does not end fails the test with
    what it was doing: its threads' stacks (the staged conftest dumps them on SIGUSR1)."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        # the main thread's stack comes last in the dump: wait for it (a loaded machine may
        # take a while to run the handler), then for the file to stop growing
        stacks = _OUTPUT[proc.pid].parent / "stacks.txt"
        dumped, seen = time.monotonic() + 60, ""
        while time.monotonic() < dumped:
            text = stacks.read_text(errors="replace") if stacks.exists() else ""
            if "Current thread" in text and text == seen:
                break
            seen = text
            time.sleep(0.5)
        proc.kill()
        proc.wait()
        out = _OUTPUT[proc.pid].read_text(errors="replace")
        pytest.fail(f"{what or 'the run'}: still running {timeout:g} s later; its output:\n"
                    f"{out}\nits threads' stacks:\n{seen}")
    return _OUTPUT[proc.pid].read_text(errors="replace")


#: for a subprocess run to reach its stage or to end: only a hang takes this long
DEADLINE = 300.0


def wait_for(path: Path, proc: subprocess.Popen[bytes], timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            out = _OUTPUT[proc.pid].read_text(errors="replace")
            pytest.fail(f"the run ended (status {proc.returncode}) before reaching its stage:\n{out}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run never reached its stage within {timeout:g} s")
        time.sleep(0.02)


def stop_all(procs: Iterable[subprocess.Popen[bytes]]) -> None:
    """Kill the runs a failed test left paused (they would sleep on for HANG seconds)."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- killed or interrupted mid-run --------------------------------------------------------------

#: (signal, stage, what the file must be afterwards, whether a temp file is left):
#: before the write (mid-run), during it (half the temp file written), after its rename
KILLS = [
    (signal.SIGKILL, "running", "old", False),
    (signal.SIGKILL, "mid-write", "old", True),
    (signal.SIGKILL, "after-replace", "new", False),
    (signal.SIGINT, "running", "old", False),
    (signal.SIGINT, "mid-write", "old", False),
]


def test_killed_or_interrupted_anywhere_the_baseline_is_old_or_new(
        project: Project, monkeypatch: pytest.MonkeyPatch,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    staged_project(project)
    old_bytes = record(project, monkeypatch, "find_company")
    new_bytes = record(project, monkeypatch, "list_officers", "--toolselect-update-baseline")
    old, new = json.loads(old_bytes), json.loads(new_bytes)
    assert old["cases"] != new["cases"] and len(old["cases"]) == N_CASES
    (project.path / "base.json").write_bytes(old_bytes)
    (project.path / "base.json").chmod(0o640)

    # every run at once: each is ~1 s of startup, and then only waits for its signal
    runs = []
    for sig, stage, _, _ in KILLS:
        folder = tmp_path_factory.mktemp(f"{sig.name}-{stage}")
        shutil.copytree(project.path, folder, dirs_exist_ok=True)
        runs.append((folder, start(folder, "list_officers", PAUSE_AT=stage)))
    left_by_kill: list[Path] = []
    try:
        for (sig, stage, expected, leaves_temp), (folder, proc) in zip(KILLS, runs, strict=True):
            wait_for(folder / "paused", proc)
            proc.send_signal(sig)
            what = f"{sig.name} at {stage}"
            out = finish(proc, DEADLINE, what)
            doc = document(folder / "base.json")
            assert doc == (new if expected == "new" else old), \
                f"{what}: the baseline is not the {expected} one"
            # the write keeps the file's permissions (mkstemp alone would leave it 0600)
            assert (folder / "base.json").stat().st_mode & 0o777 == 0o640, what
            temps = leftovers(folder)
            if leaves_temp:
                # only SIGKILL inside the write leaves one: hidden, beside the baseline, named after it
                assert len(temps) == 1 and temps[0].startswith(".base.json.unfinished-"), (what, temps)
                assert temps[0].endswith(".tmp")
                left_by_kill.append(folder / temps[0])
            else:
                assert temps == [], (what, temps)
            if sig == signal.SIGINT and stage == "running":
                # pytest's own interrupted run; the summary says the baseline was not written
                assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
                assert "KeyboardInterrupt" in out and "baseline: not updated at" in out, out
    finally:
        stop_all(proc for _, proc in runs)

    # a later run in the folder of the killed write: the leftover is not read, not collected,
    # and is cleared by the next write once no live write can own it
    (leftover,) = left_by_kill
    partial = leftover.read_bytes()
    with pytest.raises(json.JSONDecodeError):
        json.loads(partial)  # half a document
    temp = project.path / leftover.name
    temp.write_bytes(partial)
    monkeypatch.setenv("ANSWER", "find_company")
    project.pytester.runpytest(*ARGS).assert_outcomes(passed=N_CASES)
    assert (project.path / "base.json").read_bytes() == old_bytes
    # a fresh one may be another run's write in progress: an update leaves it alone...
    record(project, monkeypatch, "find_company", "--toolselect-update-baseline")
    assert temp.read_bytes() == partial
    # ...and removes it once it is older than any write could take
    aged = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(temp, (aged, aged))
    record(project, monkeypatch, "find_company", "--toolselect-update-baseline")
    assert leftovers(project.path) == []


def test_an_interrupted_first_recording_writes_no_baseline(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    staged_project(project)
    monkeypatch.setenv("ANSWER", "find_company")
    monkeypatch.setenv("INTERRUPT_AT", "running")
    # (an in-process run re-raises a Ctrl-C in the test process unless told not to)
    result = project.pytester.runpytest(*ARGS, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*baseline: none yet at*", "*KeyboardInterrupt*"])
    # three cases of ten had run: a baseline of those three would call the rest "new"
    assert not (project.path / "base.json").exists()
    assert leftovers(project.path) == []


# -- two runs writing the same baseline -----------------------------------------------------------


def test_two_update_runs_at_once_both_land(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    staged_project(project)
    old_bytes = record(project, monkeypatch, "find_company")
    for _ in range(3):
        for marker in project.path.glob("arrived-*"):
            marker.unlink()
        (project.path / "base.json").write_bytes(old_bytes)
        # both read the old baseline at start and meet before writing: each write starts
        # from a baseline the other run has not seen
        procs = [start(project.path, answer, PEERS="2") for answer in ("list_officers", "lookup_vat")]
        try:
            for proc in procs:
                out = finish(proc, DEADLINE)
                assert proc.returncode == 0, out
                assert "baseline: updated at" in out, out
        finally:
            stop_all(procs)
        assert not list(project.path.glob("alone-*")), "the two runs did not meet"
        doc = document(project.path / "base.json")
        # the second write merged under the lock with the first: both runs are in every history
        for key, entry in doc["cases"].items():
            assert entry["history"] == [[1, 1]] * 3, (key, entry)
            assert entry["first_tool"] in ("list_officers", "lookup_vat")
        assert leftovers(project.path) == []


# -- corrupt baselines ----------------------------------------------------------------------------

VALID = {"schema_version": "toolselect_baseline.v1",
         "subject": {"provider": "local", "model": "local/bm25", "settings": {"bm25_threshold": 1.0},
                     "system_hash": None},
         "cases": {"registry.toolselect.yaml::find": {"status": "held", "passes": 1, "reps": 1}}}
#: a broken file, and words its refusal must hold (the wording around them may change)
BROKEN = {
    "truncated": (json.dumps(VALID, indent=2)[:90].encode(), ["not valid JSON", "truncated"]),
    "empty": (b"", ["not valid JSON"]),
    "binary": (b"\x00\xff\xfe garbage", ["corrupted"]),
    "schema-invalid": (json.dumps({**VALID, "cases": {"registry.toolselect.yaml::find": {
        "status": "maybe", "passes": 1, "reps": 1}}}).encode(), ["malformed", "status", "'maybe'"]),
    "not-a-baseline": (json.dumps({"cases": {}}).encode(), ["not a toolselect_baseline.v1 file"]),
}


@pytest.mark.parametrize("update", [False, True], ids=["compare", "update"])
@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_baseline_is_refused_and_left_as_it_is(project: Project, kind: str, update: bool) -> None:
    from conftest import FIND

    project.config()
    project.cases([case(*FIND)])
    content, words = BROKEN[kind]
    path = project.path / "base.json"
    path.write_bytes(content)
    args = ["--toolselect-baseline=base.json"] + (["--toolselect-update-baseline"] if update else [])
    result = project.pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (error,) = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert str(path) in error and all(w in error for w in words), error
    # the fix is named, nothing ran, and not one byte of the file changed
    fix = "point --toolselect-baseline at" if kind == "not-a-baseline" else "restore it from version control"
    assert fix in error
    assert "passed" not in result.stdout.str()
    assert path.read_bytes() == content
    assert leftovers(project.path) == []


def test_write_then_load_round_trips_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "base.json"
    write(path, Baseline.from_json(path, VALID))
    loaded = load(path)
    assert loaded is not None and loaded.cases_json() == VALID["cases"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["base.json"]
    assert temp_prefix(path) == ".base.json.unfinished-"
    # a new file gets the umask's permissions, not mkstemp's 0600
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_write_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.mkdir()  # os.replace cannot put a file over a folder: the write fails at its last step
    with pytest.raises(OSError):
        write(path, Baseline.from_json(path, VALID))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json"] and path.is_dir()


def test_a_baseline_behind_a_symlink_is_written_through_it(tmp_path: Path) -> None:
    # a team keeps its baselines elsewhere and links one in: the link must stay a link
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "main.json"
    write(target, Baseline.from_json(target, VALID))
    link = tmp_path / "base.json"
    link.symlink_to(Path("store") / "main.json")
    changed = Baseline.from_json(link, {**VALID, "cases": {}})
    write(link, changed)
    assert link.is_symlink() and os.readlink(link) == str(Path("store") / "main.json")
    loaded = load(target)
    assert loaded is not None and loaded.cases == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json", "store"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["main.json"]


# -- errored items on update ----------------------------------------------------------------------


def test_update_keeps_the_entries_of_errored_and_uncollectable_cases(project: Project) -> None:
    from conftest import FIND, OFFICERS

    project.config(servers={"registry": {"tools_file": project.tools_file()},
                            "down": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}})
    project.cases([case(*FIND, servers=["registry"]), case(*OFFICERS, servers=["down"])])
    (project.path / "other.toolselect.yaml").write_text(
        "schema_version: toolselect_cases.v1\nservers: [registry]\ncases:\n"
        "  - {id: vat, question: Check VAT number GB123456789, expect_tool: [lookup_vat], why: w}\n")
    old = {"registry.toolselect.yaml::find": {"status": "failing", "first_tool": "lookup_vat"},
           "registry.toolselect.yaml::officers": {"status": "held", "first_tool": "list_officers",
                                                  "history": [[1, 1], [1, 1]]},
           "other.toolselect.yaml::vat": {"status": "held", "first_tool": "lookup_vat"}}
    project.baseline(old)
    before = project.read_baseline()["cases"]
    # the other file no longer parses: its cases are not collected, and not gone either
    (project.path / "other.toolselect.yaml").write_text("schema_version: toolselect_cases.v1\ncases: [\n")
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline",
                                        "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=2)  # the server that fails to start, the file
    result.stdout.fnmatch_lines(["*errors (not scored; baseline entries kept): 1*"])
    after = project.read_baseline()["cases"]
    assert after["registry.toolselect.yaml::officers"] == before["registry.toolselect.yaml::officers"]
    assert after["other.toolselect.yaml::vat"] == before["other.toolselect.yaml::vat"]
    # the case that ran was updated
    assert after["registry.toolselect.yaml::find"]["status"] == "held"
    assert after["registry.toolselect.yaml::find"]["history"] == [[0, 1], [1, 1]]
