"""A dry run before a first paid run: no key, no network, and a price for cases and groups."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakeapi import FakeAPI, fake_api_fixture  # noqa: F401
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, OFFICERS, Project, case
from pytest_toolselect.run.dry_run import case_dry_run

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    # the examples start their servers with `python`: this interpreter's
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest -p no:cacheprovider"
    return env


def test_the_getting_started_dry_run_needs_no_key_and_prices_cases_and_groups(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "examples"), "--toolselect-dry-run",
         "--toolselect-model", "anthropic/claude-haiku-4-5", "--toolselect-reps", "3"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "no API key" not in out + done.stderr
    cases = re.search(r"selection cases: (\d+) items, (\d+) calls \(3 reps\)", out)
    assert cases is not None, out
    assert int(cases.group(2)) == 3 * int(cases.group(1)) > 0
    tokens = re.search(r"input: about ([\d,]+) tokens \(tools ([\d,]+), system ([\d,]+), "
                       r"question ([\d,]+), tool use ([\d,]+)\)", out)
    assert tokens is not None, out
    total, *parts = (int(g.replace(",", "")) for g in tokens.groups())
    assert total == sum(parts) and parts[0] > parts[2] > 0  # tool definitions weigh most
    # a priced line for the cases, and one for the preference groups
    priced = re.findall(r"^cost: about \$(\d+\.\d+)", out, flags=re.M)
    assert len(priced) == 2, out
    assert all(float(p) > 0 for p in priced)
    assert "per million tokens" in out


def test_against_a_baseline_the_extra_reps_make_a_range(project: Project, fake_api: FakeAPI,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    project.config(prices={"anthropic/claude-haiku-4-5": {"input_per_mtok": 1, "output_per_mtok": 5}})
    project.cases([case(*FIND), case(*OFFICERS)])
    result = project.pytester.runpytest(
        "--toolselect-dry-run", "--toolselect-model=anthropic/claude-haiku-4-5",
        "--toolselect-reps=3", "--toolselect-baseline=base.json", "--toolselect-max-extra-reps=12")
    assert result.ret == 0, result.stdout.str()
    assert fake_api.requests == []
    assert not (project.path / "base.json").exists()  # a dry run records nothing
    result.stdout.fnmatch_lines([
        "selection cases: 2 items, 6 calls (3 reps), and up to 24 more if adaptive reps ask "
        "again (at most 12 a case: --toolselect-max-extra-reps)",
        "cost: about $0.0* to $0.0* if every extra rep is asked, an estimate: text at 4 "
        "characters a token*"])
    low, high = (float(x) for x in re.findall(r"\$(\d+\.\d+)", result.stdout.str())[:2])
    # twelve more reps on top of three: five times the fixed reps' cost
    assert high == pytest.approx(5 * low, rel=0.01)


@pytest.mark.parametrize(("flags", "said"), [
    ((), "  and up to 180 calls if a case would block: attribution asks it again with the baseline's "
         "tools (--toolselect-attribution-max-calls, or --toolselect-attribution off)"),
    (("--toolselect-attribution-max-calls=7/10",), "  and up to 10 calls if a case would block*"),
    (("--toolselect-attribution-max-calls=2",), "  and up to 4 calls if a case would block*"),
])
def test_the_dry_run_counts_what_attribution_may_ask_and_names_its_bound(
        project: Project, flags: tuple[str, ...], said: str) -> None:
    project.config()
    project.cases([case(*FIND), case(*OFFICERS)])
    base = ("--toolselect-dry-run", "--toolselect-baseline=base.json", "--toolselect-attribution=on")
    result = project.pytester.runpytest(*base, *flags)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([said])
    off = project.pytester.runpytest(*base, *flags, "--toolselect-attribution=off")
    assert "attribution asks" not in off.stdout.str()


def test_an_unpriced_model_says_it_has_no_estimate(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    project.config()
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-dry-run", "--toolselect-model=openai/no-such-model-x")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["selection cases: 1 item, 1 call (1 rep)",
                                 "cost: no price known for the model*"])


part = st.fixed_dictionaries({k: st.integers(0, 10**6) for k in ("tools", "system", "question", "overhead")})


@given(parts=st.lists(st.one_of(st.none(), part), max_size=20), reps=st.integers(1, 50),
       extra=st.integers(0, 100),
       prices=st.fixed_dictionaries({"input_per_mtok": st.floats(0, 100),
                                     "output_per_mtok": st.floats(0, 100)}))
def test_the_estimate_adds_up(parts: list[dict[str, int] | None], reps: int, extra: int,
                              prices: dict[str, float]) -> None:
    dry = case_dry_run(parts, reps, extra, prices)
    known = [p for p in parts if p is not None]
    assert dry.calls == len(parts) * reps
    assert dry.extra_calls_max == len(parts) * extra
    assert dry.input_tokens_estimate == sum(dry.input_tokens.values()) == reps * sum(
        sum(p.values()) for p in known)
    assert dry.estimated_cost_usd is not None
    low, high = dry.estimated_cost_usd
    assert 0 <= low <= high
    if extra == 0:
        assert high == low
    # every rep costs the same: the range is the fixed reps' cost scaled by (reps + extra) / reps
    assert high == pytest.approx(low * (reps + extra) / reps, rel=1e-9, abs=1e-12)
    assert case_dry_run(parts, reps, extra, None).estimated_cost_usd is None


DETERMINISTIC = '''
from pytest_toolselect import ToolCall, Turn


class Same:
    """A hook's model that answers the same when asked again."""

    model = "mine/same"
    deterministic = True
    fills_arguments = False

    def subject(self):
        return {"provider": "mine", "model": self.model}

    async def first_turn(self, request):
        return Turn(calls=(ToolCall(request.tools[0].name, {}),))


def pytest_toolselect_provider(model, config):
    if model == "mine/same":
        return Same()
'''


def test_the_dry_run_caps_extra_reps_by_the_rule_adaptive_reps_read(project: Project) -> None:
    # a model is asked again only when its provider is not deterministic, whatever its name:
    # the dry run's range reads that one rule (once it read the `local/` prefix alone)
    project.config()
    project.cases([case(*FIND)])
    project.pytester.makeconftest(DETERMINISTIC)
    base = ("--toolselect-dry-run", "--toolselect-baseline=base.json", "--toolselect-reps=3")
    same = project.pytester.runpytest(*base, "--toolselect-model=mine/same")
    assert same.ret == 0, same.stdout.str()
    same.stdout.fnmatch_lines(["selection cases: 1 item, 3 calls (3 reps)"])
    assert "adaptive reps ask again" not in same.stdout.str()
    other = project.pytester.runpytest(*base, "--toolselect-model=anthropic/claude-haiku-4-5")
    other.stdout.fnmatch_lines(["selection cases: 1 item, 3 calls (3 reps), and up to * more if "
                                "adaptive reps ask again*"])
