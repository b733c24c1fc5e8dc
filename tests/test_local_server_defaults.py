"""An api_base on this machine gets defaults that fit a local server, named in the summary.

A local server on a CPU answers one call at a time, slowly: the hosted API's defaults
(60 s, 8 in flight, 4 retries) would queue calls into timeouts. Set options still win.
"""

from __future__ import annotations

import pytest
import test_models_e2e
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from hypothesis import given
from hypothesis import strategies as st
from test_models_e2e import _answer, _config

from conftest import FIND, Project, case
from pytest_toolselect.run.local_server import is_loopback

# the fixture of that module, used here by name
models = test_models_e2e.models

LINE = ("toolselect: api_base is on this machine, so a local server's defaults apply: "
        "{} (set --toolselect-timeout, -concurrency or -retries to change them)")


def test_a_loopback_api_base_takes_one_call_at_a_time(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND)])

    def slow(body: dict) -> Reply:
        # holds the reply until a second call is in flight (never, one at a time)
        fake_api.wait_in_flight(2, timeout=1.0)
        return _answer(body)

    fake_api.handler = slow
    result = models.pytester.runpytest("--toolselect-reps=3")
    result.assert_outcomes(passed=1)
    assert len(fake_api.requests) == 3 and fake_api.max_in_flight == 1
    line = LINE.format("timeout 600 s, concurrency 1, retries 1")
    # in the header and in the summary
    assert result.stdout.str().count(line) == 2, result.stdout.str()


def test_an_option_set_keeps_its_value(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test", timeout=30)
    models.cases([case(*FIND)])
    fake_api.queue(Reply(status=529, error="Overloaded"), Reply(status=529, error="Overloaded"))
    fake_api.default = _answer({"messages": [FIND[1]]})
    result = models.pytester.runpytest("--toolselect-concurrency=4", "--toolselect-retries=2")
    result.assert_outcomes(passed=1)  # two retries, as set: one would have failed
    assert len(fake_api.requests) == 3
    assert "api_base is on this machine" not in result.stdout.str()


@given(host=st.sampled_from(["127.0.0.1", "127.1.2.3", "localhost", "[::1]", "api.localhost"]),
       port=st.none() | st.integers(1, 65535), path=st.sampled_from(["", "/v1", "/openai/v1"]),
       scheme=st.sampled_from(["http", "https"]))
def test_loopback_hosts_are_told_from_others(host: str, port: int | None, path: str,
                                             scheme: str) -> None:
    where = f"{host}:{port}" if port else host
    assert is_loopback(f"{scheme}://{where}{path}")
    for other in ("10.0.0.1", "api.openai.com", "192.168.1.5", "localhost.example.com", "[::2]"):
        assert not is_loopback(f"{scheme}://{other}{':' + str(port) if port else ''}{path}")


@pytest.mark.parametrize("value", [None, "", "not a url", "http://", "http://[bad"])
def test_no_url_is_no_loopback(value: str | None) -> None:
    assert not is_loopback(value)
