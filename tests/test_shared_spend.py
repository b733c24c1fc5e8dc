"""One cost cap across xdist workers: the whole run, not each worker, holds to it."""

from __future__ import annotations

import re

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from test_models_e2e import CALL_COST, _config, models  # noqa: F401  (a fixture)

from conftest import FIND, NESTED_XDIST, Project, case

WORKERS = 3
# the end-to-end tests' `models`: the keys set, and a fake API that answers right
pytestmark = pytest.mark.usefixtures("models")


@NESTED_XDIST
@pytest.mark.parametrize("concurrency", [2])
def test_the_cap_holds_for_the_whole_run_under_xdist(project: Project, fake_api: FakeAPI,
                                                      concurrency: int) -> None:
    _config(project, fake_api, "openai/gpt-test")
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme"})],
                                          input_tokens=1000, output_tokens=100, delay=0.15)
    project.cases([case(f"c{n:02d}", FIND[1], FIND[2]) for n in range(30)])
    cap_calls = 5
    cap = cap_calls * CALL_COST - CALL_COST / 2  # five priced calls cross it
    result = project.pytester.runpytest_subprocess(
        f"-n{WORKERS}", f"--toolselect-max-cost-usd={cap}", "-rs",
        f"--toolselect-concurrency={concurrency}", "-p", "no:cacheprovider")
    assert result.ret == 2, result.stdout.str()
    in_flight = WORKERS * concurrency
    made = len(fake_api.requests)
    # a call starts only while the shared spend is under the cap: past the calls that crossed
    # it, only those already in flight finish (a worker's own tally would allow 3 caps)
    assert cap_calls <= made <= cap_calls - 1 + in_flight
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == made and outcomes["skipped"] == 30 - made
    spent = made * CALL_COST
    assert spent <= cap + in_flight * CALL_COST
    result.stdout.fnmatch_lines([f"*cost: ${spent:.4f} of a ${cap:g} cap*"])
    # each skip quotes the whole run's spend when it was skipped: at or past the cap
    quoted = [float(m) for m in re.findall(r"priced calls spent \$([0-9.]+) of", result.stdout.str())]
    assert quoted and all(cap <= q <= spent + 1e-9 for q in quoted)
