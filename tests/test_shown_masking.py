"""Every text the plugin shows is masked as the reports are: an xfail reason (terminal
``-rA`` and JUnit), a failure's message, and a server's ``args``, whose credential flags
(``--password X``, ``--api-key=X``, ``--token X``) are private by the same rules as its
``env``."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIND, REGISTRY_TOOLS, TOOLS_SERVER, Project, case
from pytest_toolselect.messages.masking import argument_secrets, is_secret_name, redact

#: flag names a credential goes by, as people spell them
SECRET_FLAGS = st.builds(
    lambda prefix, word, sep: f"{prefix}{sep if prefix else ''}{word}",
    st.sampled_from(["", "db", "admin", "github", "service", "x"]),
    st.sampled_from(["password", "token", "api-key", "api_key", "secret", "access-key",
                     "PASSWORD", "Auth-Token", "key"]),
    st.sampled_from(["-", "_"]))
#: any value at all (every Unicode category), long enough to be worth masking
VALUES = st.text(st.characters(exclude_categories=("Cs",)), min_size=6, max_size=40).filter(
    lambda v: not v.startswith("--"))
PLAIN_FLAGS = st.sampled_from(["tools", "port", "config", "verbose", "page-size", "instructions"])


@settings(max_examples=200, deadline=None)
@given(flag=SECRET_FLAGS, value=VALUES, dashes=st.sampled_from(["-", "--"]),
       joined=st.booleans(), plain=PLAIN_FLAGS, other=st.text(min_size=0, max_size=20))
def test_a_credential_flags_value_is_masked_and_the_rest_of_the_command_line_kept(
        flag: str, value: str, dashes: str, joined: bool, plain: str, other: str) -> None:
    assert is_secret_name(flag)
    words = ["server.py", f"--{plain}", other,
             *([f"{dashes}{flag}={value}"] if joined else [f"{dashes}{flag}", value])]
    secrets = argument_secrets(words)
    assert value in secrets
    shown = redact(f"cannot start: python {' '.join(words)}", secrets)
    assert value not in shown
    # a script's path and an ordinary flag stay readable
    assert f"server.py --{plain}" in shown


def test_an_ordinary_flags_value_is_not_a_secret() -> None:
    assert argument_secrets(["server.py", "--port", "8080808", "--tools-from", "tools.json",
                             "--token", "--verbose"]) == ()


LITERAL = "hunter2-literal-pw"
DECLARED = "declared-value-qqqqqqqq"
KEY = "sk-ant-" + "k" * 24
#: a model that passes the run's secrets as an argument: a server's ${VAR} value, the
#: literal of a server's --password flag, and a key
LEAKY = f'''
import os
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall


class Leaky:
    model = "script/leaky"

    def subject(self):
        return {{"provider": "script", "model": self.model}}

    async def first_turn(self, request):
        name = " ".join([os.environ["REG_VALUE"], {LITERAL!r}, {KEY!r}])
        return Turn(calls=(ToolCall("find_company", {{"name": name}}),), usage={{}})


def pytest_toolselect_provider(model, config):
    if model == "script/leaky":
        return Leaky()
'''


def test_an_xfail_reason_and_junit_show_no_secret(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    # a plain variable name: only the server's declaring it makes its value a secret
    monkeypatch.setenv("REG_VALUE", DECLARED)
    project.pytester.makeconftest(LEAKY)
    server = {"command": sys.executable,
              "args": [str(TOOLS_SERVER), "--tools", json.dumps(REGISTRY_TOOLS), "--require-token", LITERAL],
              "env": {"REG_TOKEN": "${REG_VALUE}"}}
    project.config({"registry": server}, model="script/leaky")
    project.cases([case(*FIND, expect_args=[{"path": "name", "equals": "Acme Widgets"}])])
    # failing on the baseline too: still failing, an xfail whose reason quotes the arguments
    project.baseline({"registry.toolselect.yaml::find": {"status": "failing"}},
                     subject={"provider": "script", "model": "script/leaky"})
    result = project.pytester.runpytest("-rA", "-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--junitxml=out.xml", "--toolselect-json=out.json",
                                        "--toolselect-markdown=out.md")
    result.assert_outcomes(xfailed=1)
    out = result.stdout.str() + result.stderr.str()
    assert "XFAIL" in out and "still failing: arguments" in out, out
    for where, text in (("terminal", out), *((name, (project.path / name).read_text())
                                             for name in ("out.xml", "out.json", "out.md"))):
        for secret in (LITERAL, DECLARED, KEY):
            assert secret not in text, (where, secret)
    assert "still failing: arguments" in (project.path / "out.xml").read_text()
