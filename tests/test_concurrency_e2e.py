"""Calls run ahead of their items on a bounded scheduler: behaviour end to end, not timing.

A real SDK (anthropic) is pointed at the fake API, which counts the calls in flight and
holds its replies until an event (so many calls in flight, another reply sent), never for
a fixed time: a loaded machine makes the runs slower, not different. The SDK is imported
here, before pytester snapshots sys.modules: its in-process runs may not import it afresh.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import anthropic  # noqa: F401
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401

from conftest import FIND, NESTED_XDIST, OFFICERS, Project, case

KEY = "sk-ant-" + "api03-concurrency-" + "0" * 16  # built: no key-shaped literal
MODEL = "anthropic/claude-test"
PRICES = {MODEL: {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}


def _question(body: Any) -> str:
    return json.dumps(body.get("messages")) if isinstance(body, dict) else ""


def _right(body: Any, delay: float = 0.0) -> Reply:
    """The right first turn for FIND and OFFICERS questions."""
    if "directors" in _question(body):
        return Reply(tool_calls=[("list_officers", {"company_number": "01234567"})], delay=delay)
    return Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})], delay=delay)


@pytest.fixture
def api_project(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    project.config(model=MODEL, api_base=fake_api.url, retry_backoff=0, prices=PRICES)
    return project


def _when_in_flight(api: FakeAPI, n: int, delay: float) -> Callable[[Any], Reply]:
    """Right answers, each held until `n` calls were in flight at once and then `delay`
    more seconds: time for a call beyond the bound to arrive and be counted."""
    def answer(body: Any) -> Reply:
        api.wait_in_flight(n)
        return _right(body, delay=delay)
    return answer


def test_never_more_than_n_calls_in_flight(api_project: Project, fake_api: FakeAPI) -> None:
    fake_api.handler = _when_in_flight(fake_api, 4, delay=0.2)
    api_project.cases([case(f"c{n:02d}", FIND[1], FIND[2]) for n in range(20)])
    result = api_project.pytester.runpytest("--toolselect-concurrency=4")
    result.assert_outcomes(passed=20)
    assert len(fake_api.requests) == 20
    # the calls did overlap (run ahead of the items), and never beyond the bound
    assert fake_api.max_in_flight == 4


class FirstTornDown:
    """A plugin for an in-process run: set once the first item is torn down, which comes
    after its failure was reported (and -x stopped new calls)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def pytest_runtest_teardown(self) -> None:
        self.event.set()


def test_exitfirst_stops_new_calls(api_project: Project, fake_api: FakeAPI) -> None:
    torn_down = FirstTornDown()

    def answer(body: Any) -> Reply:
        if "directors" in _question(body):  # the first case: a wrong first turn
            return Reply(tool_calls=[("find_company", {"name": "Acme"})])
        # the others answer once the first failure has stopped the run, however long it took
        torn_down.event.wait(60)
        return _right(body, delay=0.2)

    fake_api.handler = answer
    cases = [case("first", OFFICERS[1], OFFICERS[2])]
    cases += [case(f"c{n:02d}", FIND[1], FIND[2]) for n in range(29)]
    api_project.cases(cases)
    result = api_project.pytester.runpytest("-x", "--toolselect-concurrency=2", plugins=[torn_down])
    result.assert_outcomes(failed=1)
    assert result.ret == 1
    # the first call fails the run; only the call already in flight and the one taking the
    # first's slot as it ended reach the server, not the 30 a run to the end would make
    assert len(fake_api.requests) <= 3, len(fake_api.requests)


def test_items_report_in_pytest_order_when_later_calls_answer_first(
        api_project: Project, fake_api: FakeAPI) -> None:
    n = 8
    answered: list[str] = []
    lock = threading.Lock()
    sent = [threading.Event() for _ in range(n)]

    def answer(body: Any) -> Reply:
        index = int(re.search(r"number (\d+)", _question(body)).group(1))  # type: ignore[union-attr]
        # earlier questions are slower: each reply waits for the next question's
        if index + 1 < n:
            sent[index + 1].wait(60)
        with lock:
            answered.append(f"c{index}")
        sent[index].set()
        return _right(body)

    fake_api.handler = answer
    ids = [f"c{i}" for i in range(n)]
    api_project.cases([case(f"c{i}", f"Find the company register number {i} for Acme Widgets",
                            ["find_company"]) for i in range(n)])
    result = api_project.pytester.runpytest("-v", "-p", "no:randomly", f"--toolselect-concurrency={n}")
    result.assert_outcomes(passed=n)
    # the server answered the later cases first ...
    assert answered == list(reversed(ids))
    # ... and pytest still reports the items in the case file's order
    reported = re.findall(r"registry\.toolselect\.yaml::(c\d+) PASSED", result.stdout.str())
    assert reported == ids


@NESTED_XDIST
def test_two_workers_share_one_response_cache(api_project: Project, fake_api: FakeAPI) -> None:
    fake_api.handler = lambda body: _right(body, delay=0.05)
    cases = []
    for n in range(12):
        cases += [case(f"find{n}", f"{FIND[1]} number {n}", FIND[2]),
                  case(f"officers{n}", f"{OFFICERS[1]} (ask {n})", OFFICERS[2])]
    api_project.cases(cases)
    args = ("-n", "2", "--toolselect-cache=responses.sqlite", "--toolselect-concurrency=4")

    first = api_project.pytester.runpytest_subprocess(*args)
    first.assert_outcomes(passed=24)
    assert "2 workers" in first.stdout.str()
    first.stdout.fnmatch_lines(["*response cache: 0 hits, 24 misses*"])
    # each question reached the server exactly once, whichever worker asked it
    asked = sorted(_question(r.body) for r in fake_api.requests)
    assert len(asked) == 24 and len(set(asked)) == 24

    # both workers read what both wrote: nothing is asked again
    fake_api.requests.clear()
    second = api_project.pytester.runpytest_subprocess(*args)
    second.assert_outcomes(passed=24)
    second.stdout.fnmatch_lines(["*response cache: 24 hits, 0 misses*"])
    assert fake_api.requests == []


@NESTED_XDIST
def test_each_xdist_worker_gets_enough_items_to_fill_its_calls(api_project: Project,
                                                              fake_api: FakeAPI) -> None:
    # xdist's own scheduler would hand each worker 2 of these 20 items at first, and
    # refill slowly: the plugin's scheduler keeps each worker's queue deep enough
    fake_api.handler = _when_in_flight(fake_api, 8, delay=0.4)
    api_project.cases([case(f"c{n:02d}", FIND[1], FIND[2]) for n in range(20)])
    result = api_project.pytester.runpytest_subprocess("-n", "2", "--toolselect-concurrency=4")
    result.assert_outcomes(passed=20)
    assert len(fake_api.requests) == 20
    assert fake_api.max_in_flight == 8
