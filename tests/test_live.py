"""Live runs against real providers: opt-in with `-m live`, skipped without a key.

They gate the small suite in tests/live/cases.yaml on a real model, through the same
plugin run a user makes, and check the run completes with every case scored (a real
model may fail a case: that is a finding, not a broken test).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.live

HERE = Path(__file__).parent
COMPANIES = HERE.parent / "examples" / "companies" / "server.py"

LIVE = [
    pytest.param("anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY", None, id="anthropic"),
    pytest.param(os.environ.get("TOOLSELECT_LIVE_OPENAI_MODEL", "openai/gpt-4.1-mini"),
                 os.environ.get("TOOLSELECT_LIVE_OPENAI_KEY_ENV", "OPENAI_API_KEY"),
                 os.environ.get("TOOLSELECT_LIVE_OPENAI_API_BASE"), id="openai-compatible"),
]


@pytest.mark.parametrize(("model", "key_env", "api_base"), LIVE)
def test_live_suite(pytester: pytest.Pytester, model: str, key_env: str,
                    api_base: str | None) -> None:
    if not os.environ.get(key_env):
        pytest.skip(f"{key_env} is not set: live tests need a real key")
    config = {"model": model, "api_key_env": key_env, "max_cost_usd": 0.50,
              "servers": {"companies": {"command": sys.executable, "args": [str(COMPANIES)]}}}
    if api_base:
        config["api_base"] = api_base
    (pytester.path / "toolselect.yaml").write_text(yaml.safe_dump(config))
    shutil.copy(HERE / "live" / "cases.yaml", pytester.path / "live.toolselect.yaml")
    result = pytester.runpytest_subprocess("--toolselect-baseline=live.json", "-p",
                                           "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("error", 0) + outcomes.get("errors", 0) == 0, result.stdout.str()
    assert sum(outcomes.get(k, 0) for k in ("passed", "xfailed")) == 4
    result.stdout.fnmatch_lines(["*cost: $*", f"*{model}: $* over 4 calls*"])
    assert os.environ[key_env] not in result.stdout.str() + (pytester.path / "live.json").read_text()
