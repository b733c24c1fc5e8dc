"""Secrets known by name or shape, and the masking that keeps them out of every message and file.

Here, not in providers, because a server's declared ``env:``/``headers:`` values are secrets too
and the config loader collects them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

#: the variables the SDKs read keys from; masked whatever their names look like
PROVIDER_KEY_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "COHERE_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY",
    "TOGETHERAI_API_KEY", "FIREWORKS_API_KEY", "HUGGINGFACE_API_KEY", "HF_TOKEN",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "LITELLM_API_KEY",
)
#: a variable (or header) whose name ends like this holds a secret
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|KEY_ID|AUTHORIZATION)$")
#: credential shapes, masked wherever they appear (a compact table after the rules of
#: gitleaks and detect-secrets: each shape is specific enough that prose, UUIDs, hashes and
#: numbers never match it)
_SHAPE_TABLE = (
    r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{6,}",  # OpenAI, Anthropic and the like
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}",  # Stripe
    r"(?<=Bearer )[A-Za-z0-9._\-~+/]{8,}=*",  # a bearer value, whatever its issuer
    # the password of a URL's user info: https://user:pw@proxy
    r"(?<=://)(?=[^/@\s:]*:[^/@\s]+@)[^/@\s:]*:[^/@\s]+(?=@)",
    r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b",  # AWS key ids
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub: personal, OAuth, user, server, refresh tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained tokens
    r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab personal access tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
    r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
    # a password hash in the modular crypt format (/etc/shadow, htpasswd): $6$salt$hash
    r"\$(?:1|2[abxy]?|5|6|7|y|gy|argon2(?:id|i|d)?|scrypt|pbkdf2(?:-sha\d+)?)\$[./A-Za-z0-9$=,+\-]{8,}",
    r"\beyJ[A-Za-z0-9_\-]{6,}\.eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]*",  # JWTs
    # a private key block, to its end (or the end of the text, when it was cut off there)
    r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|\Z)",
    # and its tail, when the text starts inside the block (a log's last lines)
    r"(?:^[ \t]*[A-Za-z0-9+/=]{16,}[ \t]*\n)+[ \t]*-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----",
)
_SECRET_SHAPES = re.compile("|".join(f"(?:{p})" for p in _SHAPE_TABLE), re.MULTILINE)
#: `password=...`, `AWS_SECRET_ACCESS_KEY: ...`, `"api_key": "..."`: the value after a name
#: that ends like a credential's (the name and its quotes stay, so the message keeps its sense)
_NAME = (r"(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|access[_\-]?key"
         r"|account[_\-]?key|private[_\-]?key|credentials?|authorization)[\"']?\s*(?:=|:)")
_ASSIGNED = re.compile(
    rf"(?P<name>{_NAME}\s*)"
    r"(?:(?P<quote>[\"'])(?P<quoted>(?:\\.|(?!(?P=quote))[^\\\n]){4,})(?P=quote)"
    # a bare value is never the next assignment's name (`password: password: hunter2`): that
    # would mask the name and leave the value after it shown
    rf"|(?P<scheme>(?:Basic|Bearer|Token|Digest) )?(?P<bare>(?![\"'])(?!\w*{_NAME})"
    r"[^\s\"'`,;&<>()\[\]{}]{4,}))",
    re.IGNORECASE)
#: values after such a name that hold no secret: a reference, a mask, a placeholder
_NOT_A_VALUE = re.compile(r"\$\{\w+\}|\*+|<[^>]*>|null|none|true|false|required|optional"
                          r"|basic|bearer|token|digest",
                          re.IGNORECASE)


def _mask_assigned(match: re.Match[str]) -> str:
    value = match.group("quoted") if match.group("quote") else match.group("bare")
    if value.startswith("***") or _NOT_A_VALUE.fullmatch(value.strip("\"'")):
        return match.group(0)  # masked already (a shape, a query), or no value at all
    if match.group("quote"):
        return f"{match.group('name')}{match.group('quote')}***{match.group('quote')}"
    return f"{match.group('name')}{match.group('scheme') or ''}***"


#: shorter values are not masked: "***" in place of every "1" or "true" would hide the message
_MIN_SECRET = 6


def is_secret_name(name: str) -> bool:
    """Whether a variable or header of this name holds a secret (by its name)."""
    upper = name.upper().replace("-", "_")
    return upper in PROVIDER_KEY_VARS or bool(_SECRET_NAME.search(upper))


#: a declared value this long is masked whatever its name: `DATABASE_URL: postgres://u:pw@h`
#: holds a password under a harmless name; shorter ones (1, debug, true) are not worth hiding
_MIN_DECLARED = 8


def declared_secrets(pairs: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The values among (name, value) pairs to mask: a server's `env:` or `headers:`.

    Every value the user wrote for a server is private to it, so any long enough one is
    masked, not only those under secret-looking names.
    """
    return tuple(sorted({str(v) for k, v in pairs
                         if len(str(v)) >= (_MIN_SECRET if is_secret_name(k) else _MIN_DECLARED)}))


#: a command-line flag and, after `=`, its value: `--password=x`, `-token`, `--api-key`
_FLAG = re.compile(r"-{1,2}(?P<name>[A-Za-z][\w.\-]*)(?:=(?P<value>.*))?", re.DOTALL)


def argument_secrets(args: Iterable[str]) -> tuple[str, ...]:
    """The values to mask among a server's command-line ``args``, by the rules of ``env``'s
    names: the value of a flag named like a credential (``--password X``, ``--api-key=X``,
    ``--token X``). Other arguments (a script's path, a port) are shown as written; a value
    shaped like a key is masked wherever it appears anyway."""
    words = [str(a) for a in args]
    pairs: list[tuple[str, str]] = []
    for i, word in enumerate(words):
        flag = _FLAG.fullmatch(word)
        if flag is None or not is_secret_name(flag.group("name")):
            continue
        value = flag.group("value")
        if value is None and i + 1 < len(words) and not words[i + 1].startswith("--"):
            value = words[i + 1]  # `--password X`: the next word is its value
        if value is not None:
            pairs.append((flag.group("name"), value))
    return declared_secrets(pairs)


#: the value of a URL query parameter named like a credential: ?token=..., &api_key=...
_QUERY_SECRET = re.compile(
    r"([?&][\w.\-]*?(?:token|key|secret|password|passwd|pwd|auth|signature|sig|credentials?)s?=)"
    r"[^&#\s'\"<>]+", re.IGNORECASE)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """The text with every key we know of (and anything shaped like one) masked."""
    return _masked(text, _known(secrets))


def _known(secrets: Iterable[str | None]) -> list[str]:
    """The values to mask as they are: the given secrets and the environment's, longest first."""
    known = [s for s in secrets if s and len(s) >= _MIN_SECRET]
    # list() then get(): pytest's main thread sets and deletes variables (PYTEST_CURRENT_TEST)
    # while calls run on the scheduler's thread, and iterating items() would race with it
    for name in list(os.environ):
        if is_secret_name(name):
            value = os.environ.get(name)
            if value and len(value) >= _MIN_SECRET:
                known.append(value)
    return sorted(set(known), key=len, reverse=True)


def _masked(text: str, known: Iterable[str]) -> str:
    for secret in known:
        text = text.replace(secret, "***")
    # the query's rule first: it knows where a URL's value ends (at & or #)
    text = _QUERY_SECRET.sub(r"\1***", _SECRET_SHAPES.sub("***", text))
    return _ASSIGNED.sub(_mask_assigned, text)


def redact_data(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """Every string in a JSON-shaped value (dict keys too) passed through redact (the
    environment read once for the whole value: a results document holds a million strings)."""
    known = _known(secrets)

    def masked(value: Any) -> Any:
        if isinstance(value, str):
            return _masked(value, known)
        if isinstance(value, Mapping):
            return {masked(str(k)): masked(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [masked(v) for v in value]
        return value

    return masked(value)
