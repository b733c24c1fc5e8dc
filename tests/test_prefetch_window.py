"""Calls run ahead of their items by a window, not the whole run: a suite of 20,000 cases
holds a window's jobs and outcomes at a time (the rule as a property, then end to end)."""

from __future__ import annotations

import json
from typing import Any

import anthropic  # noqa: F401  (imported before pytester snapshots sys.modules)
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIND, NESTED_XDIST, OFFICERS, Project, case
from pytest_toolselect.run.runner import PREFETCH_MIN, calls_to_start, prefetch_window

KEY = "sk-ant-" + "api03-window-" + "0" * 16  # built: no key-shaped literal
MODEL = "anthropic/claude-test"


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 400), window=st.integers(1, 80), reruns=st.sets(st.integers(0, 399)))
def test_each_item_starts_once_before_it_runs_and_never_more_than_a_window_ahead(
        n: int, window: int, reruns: set[int]) -> None:
    items = [f"t.yaml::c{i}" for i in range(n)]
    started: list[str] = []
    seen: set[str] = set()
    handovers = 0
    for k in range(n):
        for _ in range(2 if k in reruns else 1):  # a rerun plugin runs an item again
            due = calls_to_start(items[k:k + window], seen.__contains__)
            handovers += bool(due)
            assert not seen & set(due)  # none twice
            started += due
            seen.update(due)
            assert items[k] in seen  # the running item's call has started
            assert len(seen) - k <= window  # the running one and at most a window ahead
    assert started == items  # every item, once, in the run's order
    # refilled in batches: about one hand-over per half window, not one per item
    assert handovers <= n // max(1, window // 2) + 1


def test_the_window_keeps_every_call_slot_busy() -> None:
    for concurrency in (1, 8, 32, 500):
        assert prefetch_window(concurrency) >= max(PREFETCH_MIN, 2 * concurrency)


class RequestsAtSetup:
    """A plugin for an in-process run: how many requests the server had seen once each
    item's own call was answered (its setup done)."""

    def __init__(self, api: FakeAPI) -> None:
        self.api = api
        self.seen: list[int] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Any:
        result = yield
        self.seen.append(len(self.api.requests))
        return result


@pytest.fixture
def api_project(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    project.config(model=MODEL, api_base=fake_api.url, retry_backoff=0)
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})])
    return project


def test_a_long_run_calls_ahead_by_a_window_and_judges_every_case(
        api_project: Project, fake_api: FakeAPI) -> None:
    n, window = 3 * PREFETCH_MIN + 5, prefetch_window(2)
    held: list[int] = []

    def answer(body: Any) -> Reply:
        if "directors" in json.dumps(body.get("messages")):
            # the first case's reply waits for calls beyond the window: none may come
            # while its item waits, so this waits its whole (short) timeout and goes on
            fake_api.wait_requests(window + 1, timeout=3)
            held.append(len(fake_api.requests))
            return Reply(tool_calls=[("list_officers", {"company_number": "01234567"})])
        return Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})])

    fake_api.handler = answer
    api_project.cases([case("c000", OFFICERS[1], OFFICERS[2])]
                      + [case(f"c{i:03d}", FIND[1], FIND[2]) for i in range(1, n)])
    seen = RequestsAtSetup(fake_api)
    result = api_project.pytester.runpytest("-p", "no:randomly", "--toolselect-concurrency=2",
                                            "--toolselect-json=r.json", plugins=[seen])
    result.assert_outcomes(passed=n)
    assert len(fake_api.requests) == n
    # while the first item waited, the other call slot ran ahead, up to the window only
    assert 2 < held[0] <= window, held
    assert all(count <= k + window for k, count in enumerate(seen.seen)), seen.seen
    doc = json.loads((api_project.pytester.path / "r.json").read_text())
    assert [c["nodeid"].rpartition("::")[2] for c in doc["cases"]] == [f"c{i:03d}" for i in range(n)]
    assert {c["verdict"] for c in doc["cases"]} == {"passed"}


@NESTED_XDIST
def test_workers_call_ahead_by_a_window_too(api_project: Project, fake_api: FakeAPI) -> None:
    n = 2 * PREFETCH_MIN + 9
    api_project.cases([case(f"c{i:03d}", FIND[1], FIND[2]) for i in range(n)])
    result = api_project.pytester.runpytest_subprocess("-n", "2", "--toolselect-concurrency=2")
    result.assert_outcomes(passed=n)
    assert len(fake_api.requests) == n
