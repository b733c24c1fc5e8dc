"""Secrets stay out of everything the plugin writes, and out of the MCP servers it starts.

The SDKs are imported once here, before pytester snapshots sys.modules: its in-process
runs may not import them afresh (a second numpy/pydantic import fails).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

# litellm fetches its price map from the network at import unless told not to
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import anthropic  # noqa: F401
import litellm  # noqa: F401
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401

from conftest import FIND, Project, case
from pytest_toolselect.providers.api_keys import PROVIDER_KEY_VARS, declared_secrets, redact

ENV_SERVER = Path(__file__).parent / "servers" / "env_server.py"


def fake_secret(name: str) -> str:
    """A value for a variable, built at run time; not shaped like a key, so only the
    variable it sits in (not its look) can tell redaction that it is a secret."""
    return "fake-" + name.lower().replace("_", "") + "-" + "q" * 12


def test_redact_survives_the_environment_changing_under_it() -> None:
    stop = threading.Event()

    def churn() -> None:
        # as pytest does with PYTEST_CURRENT_TEST at every phase of every item
        while not stop.is_set():
            os.environ["TOOLSELECT_CHURN_TOKEN"] = "churn-value-123456"
            os.environ.pop("TOOLSELECT_CHURN_TOKEN", None)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(3000):
            assert redact("no secret here") == "no secret here"
    finally:
        stop.set()
        thread.join()


def test_redact_masks_secret_variables_and_key_shapes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-123456")
    text = redact("token tok-abcdef-123456 and key sk-" + "abcdefghijklmnop")
    assert "tok-abcdef-123456" not in text and "abcdefghijklmnop" not in text


def test_every_provider_variable_is_masked_whatever_its_name_looks_like(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROVIDER_KEY_VARS:
        monkeypatch.setenv(name, fake_secret(name))
    text = redact(" ".join(fake_secret(n) for n in PROVIDER_KEY_VARS))
    assert set(text.split()) == {"***"}


def test_declared_values_are_masked_whatever_their_names() -> None:
    dsn = "postgres://app:" + "s" * 10 + "@db:5432/main"
    pairs = [("COMPANIES_API_KEY", "c" * 10), ("DB_PASSWORD", "p" * 6),
             ("Authorization", "Bearer " + "t" * 10), ("X-Api-Key", "x" * 10),
             ("DATABASE_URL", dsn), ("REGION", "eu-west"), ("SHORT_TOKEN", "abc"), ("DEBUG", "1")]
    # a secret-looking name from 6 characters, any other name from 8: short flags stay readable
    assert declared_secrets(pairs) == tuple(sorted(("Bearer " + "t" * 10, "c" * 10, "p" * 6, dsn, "x" * 10)))


# -- one run, every output -----------------------------------------------------------------------

SHELL_ARGS = ["; touch pwned", "$(touch pwned)", "`touch pwned`", "| touch pwned", "&& touch pwned"]
SERVER_SECRETS = {"VAULT_API_TOKEN": "fake-vaulttoken-" + "w" * 12,
                  "LEAKY_API_TOKEN": "fake-leakytoken-" + "l" * 12}
VAULT_QUESTION = "Which environment does the vault server run with?"
DENIED_QUESTION = "Look up the denied company DENY-1"


def _written(path: Path) -> bytes:
    assert path.is_file() and path.stat().st_size > 0, f"{path.name} was not written"
    return path.read_bytes()


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-test"])
def test_no_secret_reaches_any_output(project: Project, fake_api: FakeAPI,
                                      monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    keys = {name: fake_secret(name) for name in PROVIDER_KEY_VARS}
    for name, value in keys.items():
        monkeypatch.setenv(name, value)

    def answer(body: dict[str, Any]) -> Reply:
        question = json.dumps(body["messages"])
        if "DENY-1" in question:
            # a provider that echoes the credentials it refused, as some gateways do
            return Reply(status=401, error=f"invalid x-api-key {keys['ANTHROPIC_API_KEY']}; "
                                           f"Authorization: Bearer {keys['OPENAI_API_KEY']}")
        if "Acme" in question:
            return Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})])
        return Reply(text="No tool needed.")

    fake_api.handler = answer
    monkeypatch.setenv("REGISTRY_LOGIN", SERVER_SECRETS["LEAKY_API_TOKEN"])
    env_server = [str(ENV_SERVER)]
    project.config(
        servers={
            "registry": {"tools_file": project.tools_file()},
            "vault": {"command": sys.executable, "args": [*env_server, "names", *SHELL_ARGS],
                      "env": {"VAULT_API_TOKEN": SERVER_SECRETS["VAULT_API_TOKEN"],
                              "VAULT_REGION": "eu-west"}},
            # read from the environment (CI's secrets) under a name that does not look secret:
            # masked because the config routes it to a server
            "leaky": {"command": sys.executable, "args": [*env_server, "leak", "LEAKY_API_TOKEN"],
                      "env": {"LEAKY_API_TOKEN": "${REGISTRY_LOGIN}"}},
            "shelly": {"command": "echo hi; touch pwned"},
        },
        model=model, api_base=fake_api.url + ("" if model.startswith("anthropic/") else "/v1"),
        retry_backoff=0, retries=0,
    )
    project.cases([case(*FIND, servers=["registry"]),
                   case("vault", VAULT_QUESTION, [], servers=["registry", "vault"]),
                   case("leaky", FIND[1], FIND[2], servers=["leaky"]),
                   case("shelly", FIND[1], FIND[2], servers=["shelly"]),
                   case("denied", DENIED_QUESTION, ["find_company"], servers=["registry"])])
    result = project.pytester.runpytest(
        "-vv", "-rA", "--log-level=DEBUG", "--toolselect-baseline=base.json",
        "--toolselect-cache=cache.sqlite", "--toolselect-json=results.json", "--junitxml=junit.xml",
        "--toolselect-markdown=report.md", "--toolselect-html=report.html", "-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=3)
    terminal = (result.stdout.str() + result.stderr.str()).encode()
    # each error path ran, and its message kept its sense with the secret masked
    # (the length shows the server got the value ${REGISTRY_LOGIN} read, not the reference)
    length = len(SERVER_SECRETS["LEAKY_API_TOKEN"])
    result.stdout.fnmatch_lines([f"*refused the token '***' ({length} characters)*"])
    result.stdout.fnmatch_lines(["*invalid x-api-key ***; Authorization: Bearer ****"])
    result.stdout.fnmatch_lines(["*command 'echo hi; touch pwned' not found*"])

    outputs = {"terminal": terminal,
               "baseline": _written(project.path / "base.json"),
               "junit": _written(project.path / "junit.xml"),
               "json": _written(project.path / "results.json"),
               "markdown": _written(project.path / "report.md"),
               "html": _written(project.path / "report.html"),
               # the cache is SQLite: its raw pages, and its journal files if any are left
               "cache": b"".join(_written(p) if p.name == "cache.sqlite" else p.read_bytes()
                                 for p in sorted(project.path.glob("cache.sqlite*")))}
    # the reports carry the server's error, masked: their silence about the secret means something
    for where in ("terminal", "junit", "json", "markdown", "html"):
        assert b"refused the token" in outputs[where], f"the {where} output lacks the server's error"
    secrets = [*keys.values(), *SERVER_SECRETS.values()]
    for where, blob in outputs.items():
        for secret in secrets:
            # the value's distinctive tail: a partly masked secret is a leak too
            assert secret[5:].encode() not in blob, f"{secret} in the {where} output"

    # the model was never sent a server's secret, and got the tools of the servers that started
    bodies = json.dumps([r.body for r in fake_api.requests])
    assert not any(s in bodies for s in SERVER_SECRETS.values())
    assert not list(project.path.rglob("pwned*")), "a shell ran a server command"
    assert_server_env_and_args(fake_api)


def assert_server_env_and_args(fake_api: FakeAPI) -> None:
    """The vault server saw its declared env plus the SDK's default set, and its args as written."""
    from mcp.client.stdio import get_default_environment

    described = {}
    for request in fake_api.requests:
        if VAULT_QUESTION in json.dumps(request.body["messages"]):
            for tool in request.body["tools"]:
                name = tool.get("name") or tool["function"]["name"]
                described[name] = tool.get("description") or tool["function"]["description"]
    names = set(described["env_names"].removeprefix("Environment: ").split())
    assert {"VAULT_API_TOKEN", "VAULT_REGION"} <= names
    assert not names & set(PROVIDER_KEY_VARS), "a provider key reached an MCP server"
    assert "PYTEST_ADDOPTS" in os.environ and "PYTEST_ADDOPTS" not in names
    # nothing else from this process (LC_CTYPE: Python's own locale coercion in the child)
    assert names <= {"VAULT_API_TOKEN", "VAULT_REGION", "LC_CTYPE", *get_default_environment()}
    # no shell between the config and the server: each argument arrived as one literal string
    assert json.loads(described["argv"]) == ["names", *SHELL_ARGS]


def test_the_password_in_a_url_is_masked_and_the_rest_kept() -> None:
    password = "pw-" + "q" * 9
    text = f"--toolselect-api-base https://bob:{password}@proxy.local:8080/v1 (mail: x@y.com, http://h:80/a@b)"
    assert redact(text) == ("--toolselect-api-base https://***@proxy.local:8080/v1 "
                            "(mail: x@y.com, http://h:80/a@b)")
