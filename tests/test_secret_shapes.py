"""Credentials known by their shape are masked wherever text leaves the plugin, and ordinary
text (prose about tokens, company numbers, UUIDs, hashes) is left as it is.

The corpus is generated: every shape of the table in ``messages/masking.py`` (AWS key ids and
secret assignments, GitHub, GitLab, Slack and Google keys, JWTs, private-key blocks, and
``password``/``secret``/``token``/``api_key`` assignments in their three forms), drawn with
random bodies. End to end, a real MCP server prints the corpus to its stderr and fails.
"""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import FIND, Project, case
from pytest_toolselect.messages.masking import redact, redact_data

LEAKY_SERVER = Path(__file__).parent / "servers" / "leaky_server.py"

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def _text(alphabet: str, low: int, high: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=low, max_size=high if high is not None else low)


def _joined(*parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(*parts).map("".join)


def _assignment() -> st.SearchStrategy[tuple[str, str]]:
    """(the text, the value it assigns) in the key=value, key: value and JSON forms."""
    names = st.sampled_from(["password", "PASSWORD", "passwd", "secret", "client_secret", "token",
                             "GITHUB_TOKEN", "api_key", "apiKey", "API-KEY", "DB_PASSWORD",
                             "access_token", "AWS_SECRET_ACCESS_KEY", "private_key"])
    # a value as a password manager makes them (no quote, space or separator inside)
    # (and not a plain snake_case word: hypothesis also draws the package's own string
    # constants, and a key such as allow_no_tool is in every results document)
    values = _text(ALNUM + "!@#%^-_./+=~:", 6, 40).filter(
        lambda v: any(c.isalnum() for c in v) and not re.fullmatch(r"[a-z_]+", v))
    forms = st.sampled_from(["{n}={v}", "{n}: {v}", "{n} = {v}", '"{n}": "{v}"', "'{n}': '{v}'",
                             "{n}='{v}'", '{n}="{v}"'])
    return st.tuples(names, values, forms).map(lambda t: (t[2].format(n=t[0], v=t[1]), t[1]))


def _private_key() -> st.SearchStrategy[tuple[str, str]]:
    kind = st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED "])
    body = st.lists(_text(ALNUM + "+/", 24, 64), min_size=1, max_size=4).map("\n".join)
    return st.tuples(kind, body).map(
        lambda t: (f"-----BEGIN {t[0]}PRIVATE KEY-----\n{t[1]}\n-----END {t[0]}PRIVATE KEY-----", t[1]))


def _whole(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    """A credential that is a secret from its first character to its last."""
    return strategy.map(lambda s: (s, s))


#: each kind of credential: (text as printed, the part that must not be shown)
SHAPES: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    "aws_key_id": _whole(_joined(st.sampled_from(["AKIA", "ASIA", "AROA", "AIDA", "ANPA"]),
                                 _text(UPPER_DIGITS, 16))),
    "github": _whole(_joined(st.sampled_from(["ghp_", "gho_", "ghs_", "ghu_"]), _text(ALNUM, 36))),
    "github_pat": _whole(_joined(st.just("github_pat_"), _text(ALNUM + "_", 22, 82))),
    "gitlab": _whole(_joined(st.just("glpat-"), _text(B64URL, 20, 26))),
    "slack": _whole(_joined(st.sampled_from(["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"]),
                            _text(string.digits, 10, 13), st.just("-"), _text(ALNUM, 12, 32))),
    "google": _whole(_joined(st.just("AIza"), _text(B64URL, 35))),
    "jwt": _whole(_joined(st.just("eyJ"), _text(B64URL, 10, 40), st.just(".eyJ"),
                          _text(B64URL, 10, 60), st.just("."), _text(B64URL, 20, 43))),
    "openai": _whole(_joined(st.sampled_from(["sk-", "sk-proj-", "sk-ant-api03-"]),
                             _text(B64URL, 20, 48))),
    "bearer": st.tuples(st.just("Authorization: Bearer "), _text(B64URL + ".", 12, 40)).map(
        lambda t: (t[0] + t[1], t[1])),
    "assignment": _assignment(),
    "private_key": _private_key(),
}

#: words of ordinary text, the credential words among them (in prose, not as a name=value)
WORDS = ["the", "company", "register", "returns", "a", "session", "token", "for", "user",
         "password", "reset", "link", "secret", "santa", "API", "key", "of", "officers",
         "search", "by", "name", "number", "VAT", "registered", "office", "auth", "tokens",
         "directors", "limit", "results", "bearer", "credentials", "stored", "elsewhere"]
ORDINARY_PAIRS = ["company_number: {n}", "max_tokens=1024", "input_tokens: 12", "token_count: 3",
                  '"name": "Acme Widgets"', "status: active", "id: {u}", "key_id: {n}",
                  "tokens: 250", "page=2&per_page=50", "fingerprint: {h}"]


@st.composite
def ordinary_text(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["word", "word", "word", "uuid", "number", "hash", "pair"]))
        if kind == "word":
            parts.append(draw(st.sampled_from(WORDS)))
        elif kind == "uuid":
            parts.append(str(draw(st.uuids())))
        elif kind == "number":  # company numbers: 8 digits, or two letters and six digits
            parts.append(draw(st.one_of(_text(string.digits, 8),
                                        _joined(st.sampled_from(["SC", "NI", "OC"]),
                                                _text(string.digits, 6)))))
        elif kind == "hash":
            parts.append(draw(_text("0123456789abcdef", 40, 64)))
        else:
            parts.append(draw(st.sampled_from(ORDINARY_PAIRS)).format(
                n=draw(_text(string.digits, 8)), u=draw(st.uuids()),
                h=draw(_text("0123456789abcdef", 64))))
    seps = draw(st.lists(st.sampled_from([" ", ", ", ". ", "\n", " (", ") "]),
                         min_size=len(parts), max_size=len(parts)))
    return "".join(p + s for p, s in zip(parts, seps, strict=True)).strip()


credential = st.one_of(*SHAPES.values())


@settings(max_examples=400, deadline=None)
@given(before=ordinary_text(), found=credential, after=ordinary_text(),
       sep=st.sampled_from([" ", "\n", ": ", " (", "\t", ", "]))
def test_every_credential_shape_is_masked_in_any_text(before: str, found: tuple[str, str],
                                                      after: str, sep: str) -> None:
    text, secret = found
    # a clipped tail of a private key or a token is still a leak: no long run of it is left
    runs = {secret, *(secret[i:i + 12] for i in range(0, len(secret) - 11, 6))}
    assume(not any(r in before + after for r in runs))  # "0000..." may be a company number too
    masked = redact(f"{before}{sep}{text}{sep}{after}")
    assert not {r for r in runs if r in masked}


@settings(max_examples=400, deadline=None)
@given(text=ordinary_text())
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert redact(text) == text


@settings(max_examples=100, deadline=None)
@given(found=credential, ordinary=ordinary_text())
def test_a_document_is_masked_string_by_string(found: tuple[str, str], ordinary: str) -> None:
    text, secret = found
    document = {"cases": {"a.yaml::c1": {"error": f"it said {text}", "question": ordinary,
                                         "notes": [text, 3, None]}}}
    masked = redact_data(document)
    assert secret not in repr(masked["cases"]["a.yaml::c1"]["error"])
    assert secret not in repr(masked["cases"]["a.yaml::c1"]["notes"])
    assert masked["cases"]["a.yaml::c1"]["question"] == ordinary
    assert masked["cases"]["a.yaml::c1"]["notes"][1:] == [3, None]


@pytest.mark.parametrize("text", ["password: password: 000000", "token=api_key=abcdef123",
                                  "secret: my_password=hunter22"])
def test_a_name_before_an_assignment_is_not_taken_for_its_value(text: str) -> None:
    # the first name's value would be the second name, and the real value shown after it
    value = text.rsplit("=" if "=" in text else ": ", 1)[1]
    assert value not in redact(text)


def test_a_private_key_cut_off_at_either_end_is_masked() -> None:
    body = "\n".join("MIIEow" + c * 58 for c in "ABCD")
    assert "MIIEow" not in redact(f"-----BEGIN RSA PRIVATE KEY-----\n{body}")
    assert "MIIEow" not in redact(f"  {body}\n  -----END RSA PRIVATE KEY-----\nserver stopped")
    assert redact(f"{body}\n-----END PRIVATE KEY-----\nserver stopped").endswith("server stopped")


def test_references_and_masks_stay_readable() -> None:
    # a config's own reference, an already masked value and a placeholder are not secrets
    for text in ("token: ${GITHUB_TOKEN}", "password=***", "api_key: <your key>",
                 "Authorization: Bearer ***"):
        assert redact(text) == text


# --- end to end: a real MCP server prints the corpus to stderr and fails ---------------------

#: one credential of each kind, drawn afresh for each run
corpus = st.fixed_dictionaries(SHAPES)


def _artifact(path: Path) -> bytes:
    assert path.is_file() and path.stat().st_size > 0, f"{path.name} was not written"
    return path.read_bytes()


@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(found=corpus)
def test_no_credential_a_server_prints_reaches_any_artifact(project: Project,
                                                            found: dict[str, tuple[str, str]]) -> None:
    for old in project.path.glob("*"):  # each example is a fresh run of the same project
        if old.is_file():
            old.unlink()
    (project.path / "stderr.txt").write_text(
        "starting the registry\n" + "\n".join(text for text, _ in found.values()) +
        "\nfatal: cannot reach the registry\n", encoding="utf-8")
    project.config({"registry": {"tools_file": project.tools_file()},
                    "leaky": {"command": sys.executable, "args": [str(LEAKY_SERVER), "stderr.txt"]}})
    project.cases([case(*FIND, servers=["registry"]), case("leaky", FIND[1], FIND[2], servers=["leaky"])])
    result = project.pytester.runpytest(
        "-vv", "-rA", "--log-level=DEBUG", "--toolselect-baseline=base.json",
        "--toolselect-cache=cache.sqlite", "--toolselect-json=results.json", "--junitxml=junit.xml",
        "--toolselect-markdown=report.md", "--toolselect-html=report.html")
    result.assert_outcomes(passed=1, errors=1)
    outputs = {"terminal": (result.stdout.str() + result.stderr.str()).encode(),
               "junit": _artifact(project.path / "junit.xml"),
               "json": _artifact(project.path / "results.json"),
               "markdown": _artifact(project.path / "report.md"),
               "html": _artifact(project.path / "report.html"),
               "baseline": _artifact(project.path / "base.json"),
               "cache": b"".join(p.read_bytes() for p in sorted(project.path.glob("cache.sqlite*")))}
    # the server's error, with its stderr, is in each report: its silence about secrets counts
    for where in ("terminal", "junit", "json", "markdown", "html"):
        assert b"fatal: cannot reach the registry" in outputs[where], f"no stderr in the {where}"
    for kind, (_, secret) in found.items():
        for line in secret.splitlines():
            for where, blob in outputs.items():
                assert line.encode() not in blob, f"the {kind} credential is in the {where} output"


@pytest.mark.parametrize("description", [
    "Returns a session token for the user; the password is never shown.",
    "Search the register by company number (e.g. 04138203 or SC123456).",
    "Look up case 123e4567-e89b-12d3-a456-426614174000 by its id.",
])
def test_a_tool_description_about_tokens_is_shown_whole(description: str) -> None:
    assert redact(description) == description
    assert redact_data({"description": description}) == {"description": description}
