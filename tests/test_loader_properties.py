"""Property: whatever bytes a file holds, every loader either loads it or raises one
ToolselectError that names the file and a fix; nothing else ever comes out.

Documents come from four sources: random JSON-like trees, random YAML-ish text, random
bytes, and mutations (of the parsed tree and of the text) of a valid document of each kind.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_toolselect.discovery.servers import load_tools_file
from pytest_toolselect.gate import baseline
from pytest_toolselect.inputs.config import load_config
from pytest_toolselect.inputs.groups import load_groups_file
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.contradictions import load_case_file

#: per test (so 200 or more per loader); raise it for a deeper search, e.g.
#: TOOLSELECT_PROPERTY_EXAMPLES=2000 pytest tests/test_loader_properties.py
EXAMPLES = int(os.environ.get("TOOLSELECT_PROPERTY_EXAMPLES", "50"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

# -- one valid document of each kind ----------------------------------------------------------

VALID: dict[str, Any] = {
    "case": {
        "schema_version": "toolselect_cases.v1",
        "servers": ["companies"],
        "cases": [
            {"id": "grounding-profile", "category": "grounding", "intent": "name-to-number",
             "tags": ["smoke"], "question": "Can you tell me about Royal Mail Group Limited?",
             "expect_tool": ["find_company"], "allow_no_tool": True, "forbid_tools": ["get_company"],
             "expect_args": [{"path": "company_number", "equals": "04138203"},
                             {"path": "any", "one_of": ["a", 2]},
                             {"path": "q", "matches": "^[0-9]{8}$"},
                             {"path": "page", "absent": True}],
             "forbid_ungrounded": True, "decoys": ["GB745938421"],
             "identifiers": {"params": ["vat"], "ignore_params": ["page"], "leading_zeros": False},
             "system": "", "why": "A name and no number: search first."},
            {"id": "vat", "servers": ["docs"], "question": "What is VAT number GB 745 9384 21?",
             "expectTool": [], "why": "Nothing to look up."},
        ],
    },
    "groups": {
        "schema_version": "tool_preference_groups.v1",
        "cues": {"assertive": "Always use this tool first."},
        "groups": [
            {"id": "G01", "query": "Find where the retry backoff is configured in the docs.",
             "twins": {"A": {"name": "search_docs", "description": "Search the documentation.",
                             "vendor_name": "acme_docs_search", "detail": "Covers the guide.",
                             "example": "search_docs(query='x')", "exclusion": "Not for edits."},
                       "B": {"name": "find_documentation", "description": "Look up passages."}},
             "distractors": [{"name": "read_file", "description": "Read a file.",
                              "input_schema": {"type": "object",
                                               "properties": {"path": {"type": "string"}}}}]},
            {"id": "C01", "query": "Say hello.", "expect": "none", "domain": "chat",
             "twins": {"A": {"server": "docs", "tool": "search"},
                       "B": {"name": "greet", "description": "Greet the user."}}},
        ],
    },
    "config": {
        "model": "anthropic/claude-haiku-4-5", "reps": 3, "fail_on_flaky": True,
        "bm25_threshold": 2, "tool_name_format": "mcp__{server}__{tool}", "system": "Be helpful.",
        "identifiers": {"params": ["vat"], "leading_zeros": False},
        "prices": {"m/x": {"input_per_mtok": 1.0, "output_per_mtok": 5}},
        "servers": {
            "companies": {"command": "python", "args": ["server.py"], "env": {"KEY": "v"},
                          "cwd": "examples", "timeout": 5},
            "docs": {"url": "http://127.0.0.1:8765/mcp", "headers": {"Authorization": "x"}},
            "builtins": {"tools_file": "tools/builtins.yaml"},
        },
    },
    "tools": {
        "tools": [
            {"name": "mcp_camel", "description": "MCP shape.",
             "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}},
            {"name": "mcp_snake", "input_schema": {"type": "object"}},
            {"type": "function", "function": {"name": "openai_nested", "parameters": {"type": "object"}}},
            {"type": "function", "name": "openai_flat", "parameters": None},
            {"name": "bare"},
        ],
    },
    "baseline": {
        "schema_version": "toolselect_baseline.v1",
        "subject": {"provider": "local", "model": "local/bm25", "settings": {"bm25_threshold": 1.0},
                    "system_hash": None},
        "cases": {
            "c.toolselect.yaml::a": {
                "status": "held", "passes": 1, "reps": 1, "first_tool": "find_company",
                "failing_checks": [], "case_fingerprint": "sha256:c0c76239243ee4e4",
                "tools_fingerprint": "sha256:23ff44c1d30f1c2f", "history": [[1, 1], [0, 1]]},
        },
    },
}

#: (kind, file name): each kind in each syntax its loader reads
FILES = [
    ("case", "c.toolselect.yaml"), ("case", "c.toolselect.json"),
    ("groups", "g.groups.yaml"), ("groups", "g.groups.json"),
    ("config", "toolselect.yaml"), ("config", "pyproject.toml"),
    ("tools", "t.tools.yaml"), ("tools", "t.tools.json"),
    ("baseline", "base.json"),
]
IDS = [name for _, name in FILES]

LOADERS: dict[str, Callable[[Path], Any]] = {
    "case": load_case_file,
    "groups": load_groups_file,
    "config": lambda path: load_config(path.parent),
    "tools": load_tools_file,
    "baseline": baseline.load,
}


# -- writing a tree in each syntax --------------------------------------------------------------

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)



def _toml_key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "_-" for c in key) and key.isascii() \
        else json.dumps(key)


def _toml_value(value: Any) -> str | None:
    """An inline TOML value (None for what TOML cannot hold: null, NaN is fine)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(v for v in map(_toml_value, value) if v is not None) + "]"
    items = [(k, _toml_value(v)) for k, v in value.items()]
    return "{" + ", ".join(f"{_toml_key(k)} = {v}" for k, v in items if v is not None) + "}"


def render(tree: Any, name: str) -> str:
    if name.endswith(".json"):
        return json.dumps(tree, indent=1)
    if name.endswith(".toml"):
        lines = ["[project]", 'name = "x"', "", "[tool.toolselect]"]
        if isinstance(tree, dict):
            lines += [f"{_toml_key(k)} = {v}" for k, v in ((k, _toml_value(v)) for k, v in tree.items())
                      if v is not None]
        else:
            lines = ["[tool]", f"toolselect = {_toml_value(tree) or '0'}"]
        return "\n".join(lines) + "\n"
    return yaml.dump(tree, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)


# -- the property ------------------------------------------------------------------------------


def load_or_clear_error(kind: str, path: Path, data: bytes) -> None:
    path.write_bytes(data)
    try:
        LOADERS[kind](path)
    except ToolselectError as err:
        # one clear message: it names the file, and says how to fix it
        assert err.file is not None and Path(err.file).name == path.name, str(err)
        assert err.fix, str(err)


# -- strategies --------------------------------------------------------------------------------

scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=10)
           | st.sampled_from(["", " ", "x", "04138203", "[", "*", "::", "a b", "{tool}", "(", "none"]))
trees = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)
#: keys worth trying: the real ones of every format, near misses, and noise
KEYS = sorted({
    "schema_version", "servers", "cases", "groups", "id", "question", "why", "expect_tool",
    "expectTool", "forbid_tools", "expect_args", "path", "equals", "one_of", "oneOf", "contains",
    "matches", "absent", "identifiers", "params", "twins", "A", "B", "C", "name", "description",
    "input_schema", "inputSchema", "parameters", "function", "type", "tools", "tool", "server",
    "distractors", "expect", "cues", "vendor_name", "command", "args", "url", "tools_file", "env",
    "prices", "tool_name_format", "reps", "model", "subject", "history", "passes", "status",
    "config", "wyh", "", "qestion",
})


@st.composite
def mutated_trees(draw: st.DrawFn, kind: str) -> Any:
    """The valid document of ``kind`` with a few random edits at random places."""
    doc = copy.deepcopy(VALID[kind])
    for _ in range(draw(st.integers(1, 3))):
        # walk down to a random container
        node: Any = doc
        for _depth in range(draw(st.integers(0, 5))):
            children = list(node.values()) if isinstance(node, dict) else node \
                if isinstance(node, list) else []
            children = [c for c in children if isinstance(c, (dict, list))]
            if not children:
                break
            node = draw(st.sampled_from(children))
        if not isinstance(node, (dict, list)):
            continue
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        action = draw(st.sampled_from(["replace", "delete", "add", "copy", "wrap"]))
        value = draw(trees | st.sampled_from(["find_company", "a", 1, [], {}]))
        if action == "add" or not keys:
            if isinstance(node, dict):
                node[draw(st.sampled_from(KEYS) | st.text(max_size=6))] = value
            else:
                node.append(value)
            continue
        key = draw(st.sampled_from(keys))
        if action == "replace":
            node[key] = value
        elif action == "delete":
            del node[key]
        elif action == "copy" and isinstance(node, list):
            node.append(copy.deepcopy(node[key]))
        elif action == "copy":
            node[draw(st.sampled_from(KEYS))] = copy.deepcopy(node[key])
        else:
            node[key] = [node[key]] if draw(st.booleans()) else {"x": node[key]}
    return doc


#: characters that mean something in YAML, JSON or TOML (and two that never should appear)
SPECIAL = st.sampled_from([*"[]{}:,-'\"&*!|>#\t\n\x00 \\=", "\ufeff"])


@st.composite
def mutated_text(draw: st.DrawFn, kind: str, name: str) -> bytes:
    """The valid document's text with a few characters or lines inserted, dropped or swapped."""
    text = render(VALID[kind], name)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "drop", "dup-line", "drop-line", "tab"]))
        if action == "insert":
            text = text[:at] + draw(SPECIAL | st.text(max_size=3)) + text[at:]
        elif action == "drop":
            text = text[:at] + text[at + draw(st.integers(1, 5)):]
        else:
            lines = text.splitlines(keepends=True)
            i = draw(st.integers(0, max(len(lines) - 1, 0)))
            if lines and action == "dup-line":
                lines.insert(i, lines[i])
            elif lines and action == "drop-line":
                del lines[i]
            elif lines:
                lines[i] = "\t" + lines[i].lstrip(" ")
            text = "".join(lines)
    return text.encode("utf-8", "surrogatepass")


yaml_ish = st.text(alphabet=[*"abcxyz01._-: \n\t[]{},#&*!|>'\"%@`?~\\", "\u00e9", "\ufeff"], max_size=120)


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "name"), FILES, ids=IDS)
def test_random_trees(tmp_path: Path, kind: str, name: str) -> None:
    @SETTINGS
    @given(trees)
    def prop(tree: Any) -> None:
        load_or_clear_error(kind, tmp_path / name, render(tree, name).encode("utf-8", "surrogatepass"))

    prop()


@pytest.mark.parametrize(("kind", "name"), FILES, ids=IDS)
def test_mutations_of_valid_documents(tmp_path: Path, kind: str, name: str) -> None:
    # the valid document itself loads (so the mutations start from something real)
    (tmp_path / name).write_text(render(VALID[kind], name), encoding="utf-8")
    assert LOADERS[kind](tmp_path / name) is not None

    @SETTINGS
    @given(mutated_trees(kind))
    def prop(tree: Any) -> None:
        load_or_clear_error(kind, tmp_path / name, render(tree, name).encode("utf-8", "surrogatepass"))

    prop()


@pytest.mark.parametrize(("kind", "name"), FILES, ids=IDS)
def test_text_mutations_of_valid_documents(tmp_path: Path, kind: str, name: str) -> None:
    @SETTINGS
    @given(mutated_text(kind, name))
    def prop(data: bytes) -> None:
        load_or_clear_error(kind, tmp_path / name, data)

    prop()


@pytest.mark.parametrize(("kind", "name"), FILES, ids=IDS)
def test_random_text_and_bytes(tmp_path: Path, kind: str, name: str) -> None:
    @SETTINGS
    @given(yaml_ish.map(lambda s: s.encode("utf-8")) | st.binary(max_size=200))
    def prop(data: bytes) -> None:
        load_or_clear_error(kind, tmp_path / name, data)

    prop()
