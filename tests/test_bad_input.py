"""The bad-input corpus (tests/badinput/): every malformed file of every kind the plugin
reads gives exactly one ToolselectError naming the file, the line or place, and the fix,
and never an exception from inside the plugin.

The corpus files and what each must say are listed in tests/badinput/manifest.yaml; files
too big, too deep or too binary to keep in the repository are made here (GENERATED). The
pytester tests at the end check that the same errors reach a user's pytest run as one
clear message, with no traceback, while the other files' items still run.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import FIND, REGISTRY_TOOLS, Project, case
from pytest_toolselect.discovery.servers import load_tools_file
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.gate import baseline
from pytest_toolselect.inputs.cases import Case, check_offered
from pytest_toolselect.inputs.config import load_config
from pytest_toolselect.inputs.groups import load_groups_file
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourcemap import MAX_DEPTH
from pytest_toolselect.scoring.contradictions import load_case_file, parse_case

CORPUS = Path(__file__).parent / "badinput"
MANIFEST: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "manifest.yaml").read_text("utf-8"))
#: faults that belong to the whole file, so no line or place is named
WHOLE_FILE = {"empty file", "file too large"}

OFFERED = tuple(Tool(t["name"], t["description"], t["inputSchema"], server="registry")
                for t in REGISTRY_TOOLS)


def _offered(path: Path) -> None:
    # the file itself is valid; its cases are checked against the tools they are offered
    for c in load_case_file(path).cases:
        check_offered(c, OFFERED)


LOADERS: dict[str, Callable[[Path], Any]] = {
    "case": load_case_file,
    "offered": _offered,
    "groups": load_groups_file,
    # an explicit path reads toolselect.yaml and pyproject.toml whatever their names
    "config": lambda path: load_config(path.parent, path),
    "tools": load_tools_file,
    "baseline": baseline.load,
}


def assert_one_clear_error(kind: str, path: Path, expect: dict[str, Any]) -> ToolselectError:
    with pytest.raises(ToolselectError) as info:
        LOADERS[kind](path)
    err = info.value
    text = str(err)
    # one error: nothing from inside the plugin chained to it
    assert err.__cause__ is None, repr(err.__cause__)
    assert err.__context__ is None or err.__suppress_context__, repr(err.__context__)
    assert err.file == str(path), text
    assert text.startswith(str(path)), text
    line = expect.get("line")
    if line is not None:
        assert err.line == line, text
        assert text.startswith(f"{path}:{line}: "), text
    elif expect["fault"] not in WHOLE_FILE:
        assert err.line is not None or err.place or re.search(r"at line \d+", err.message), text
    if "place" in expect:
        assert err.place == expect["place"], text
    for part in expect["error"]:
        assert part in err.message, f"{part!r} not in: {text}"
    assert err.fix, text
    for part in expect.get("fix", ()):
        assert part in err.fix, f"{part!r} not in the fix of: {text}"
    return err


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_corpus_file(name: str) -> None:
    assert_one_clear_error(name.split("/")[0], CORPUS / name, MANIFEST[name])


def test_the_manifest_lists_every_corpus_file() -> None:
    files = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*")
             if p.is_file() and p.name != "manifest.yaml"}
    assert files == set(MANIFEST)
    assert len(files) >= 40
    assert {n.split("/")[0] for n in files} == set(LOADERS)


# -- made at test time ---------------------------------------------------------------------

HUGE = 50 * 1024 * 1024
DEEP = 10_000

CASE_HEAD = "schema_version: toolselect_cases.v1\ncases:\n"
ONE_CASE = ("  - id: profile\n"
            "    question: Can you tell me about Royal Mail Group Limited?\n"
            "    why: Given a name and no number, the only correct first move is to search.\n")
GROUP = {"id": "G01", "query": "Find the retry backoff in the docs.",
         "twins": {"A": {"name": "search_docs", "description": "Search the docs."},
                   "B": {"name": "find_documentation", "description": "Look up the guides."}}}
BASELINE_HEAD = ('{"schema_version": "toolselect_baseline.v1", "subject": {"provider": "local", '
                 '"model": "local/bm25"}, "cases": {\n')


def _huge(head: str, item: str, tail: str = "") -> Callable[[Path], None]:
    """A file of HUGE bytes: a real head, one item repeated, a tail (written in blocks)."""
    def write(path: Path) -> None:
        block = item * (1024 * 1024 // len(item) + 1)
        with path.open("w", encoding="utf-8") as fh:
            fh.write(head)
            written = len(head)
            while written < HUGE:
                fh.write(block)
                written += len(block)
            fh.write(tail)
    return write


def _text(text: str, encoding: str = "utf-8") -> Callable[[Path], None]:
    return lambda path: path.write_bytes(text.encode(encoding))


def _binary(path: Path) -> None:
    # a PNG signature and chunk header, then noise: what a mis-pointed path finds
    noise = random.Random(7).randbytes(4096)
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + noise)


def _nested_json(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def _deep_tools_json(path: Path) -> None:
    # json.dumps recurses; build the text from a shallow head and the nesting around it
    head = '{"tools": [{"name": "find_company", "inputSchema": '
    opening = '{"type": "object", "properties": {"a": ' * DEEP
    path.write_text(head + opening + '{"type": "string"}' + "}}" * DEEP + "}]}", encoding="utf-8")


TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
TOO_DEEP_FIX = ["flatten the structure"]


def _deep(line: int | None) -> dict[str, Any]:
    return {"fault": "deep nesting", "error": [TOO_DEEP], "fix": TOO_DEEP_FIX, "line": line}


def _too_large(what: str, fix: str) -> dict[str, Any]:
    return {"fault": "file too large", "error": [f"{what} is 50.0 MB; files over 10 MB are refused"],
            "fix": [fix]}


def _binary_expect(what: str, line: int = 3, fix: str = "save it as UTF-8 text") -> dict[str, Any]:
    # line 3: the PNG signature holds two line breaks before its first NUL
    return {"fault": "binary file", "error": [f"{what} is binary (it holds NUL bytes)"], "fix": [fix],
            "line": line}


#: name -> (kind, how to make it, what its error must say)
GENERATED: dict[str, tuple[str, Callable[[Path], None], dict[str, Any]]] = {
    # 50 MB: refused from its size, before a byte is read
    "huge.toolselect.yaml": ("case", _huge(CASE_HEAD, ONE_CASE.replace("profile", "same")),
                             _too_large("case file", "split it into several *.toolselect.yaml files")),
    "huge.groups.json": ("groups", _huge('{"schema_version": "tool_preference_groups.v1", "groups": [',
                                         json.dumps(GROUP) + ",", json.dumps(GROUP) + "]}"),
                         _too_large("groups file", "split it into several *.groups.json files")),
    "huge-config/toolselect.yaml": ("config", _huge("servers:\n", "  # padding\n"),
                                    _too_large("config file", "split it into smaller files")),
    "huge.tools.json": ("tools", _huge('{"tools": [', '{"name": "t", "description": "d"},', "]}"),
                        _too_large("tools file", "each with its own tools_file")),
    # a baseline may be big (the plugin writes it): this one is read, and found cut short
    "huge-truncated-baseline.json": (
        "baseline",
        _huge(BASELINE_HEAD, '"f.toolselect.yaml::c": {"status": "held", "passes": 1, "reps": 1},\n',
              '"f.toolselect.yaml::last": {"status": "he'),
        {"fault": "truncated or conflicted baseline", "error": ["not valid JSON", "truncated"],
         "fix": ["restore it from version control"]}),
    # 10,000 nested lists or mappings: refused at MAX_DEPTH, without recursion
    "deep-flow.toolselect.yaml": ("case", _text(CASE_HEAD + "  " + _nested_json(DEEP) + "\n"), _deep(3)),
    "deep-block.toolselect.yaml": ("case", _text(CASE_HEAD + "  " + "- " * DEEP + "x\n"), _deep(3)),
    "deep.toolselect.json": (
        "case", _text('{"schema_version": "toolselect_cases.v1",\n "cases": ' + _nested_json(DEEP) + "}"),
        _deep(2)),
    "deep-in-matcher.toolselect.yaml": (
        "case", _text(CASE_HEAD + ONE_CASE + "    expect_args:\n      - path: items\n        equals: "
                      + _nested_json(DEEP) + "\n"), _deep(8)),
    "deep.groups.json": (
        "groups", _text('{"schema_version": "tool_preference_groups.v1",\n "groups": '
                        + _nested_json(DEEP, "{}") + "}"), _deep(2)),
    "deep-config/toolselect.yaml": (
        "config", _text("model: local/bm25\nsystem: " + _nested_json(DEEP) + "\n"), _deep(2)),
    "deep-config/pyproject.toml": (
        "config", _text('[project]\nname = "x"\n\n[tool.toolselect]\nsystem = ' + _nested_json(DEEP) + "\n"),
        _deep(5)),
    # deep enough to refuse, not deep enough to trouble the TOML parser
    "deep-shallow-config/pyproject.toml": (
        "config",
        _text('[tool.toolselect]\nmodel = "local/bm25"\nsystem = ' + _nested_json(MAX_DEPTH + 5) + "\n"),
        _deep(3)),
    "deep.tools.json": ("tools", _deep_tools_json, _deep(1)),
    "deep.tools.yaml": (
        "tools", _text("- name: find_company\n  inputSchema: " + _nested_json(DEEP, "{}") + "\n"), _deep(2)),
    "deep-baseline.json": (
        "baseline", _text('{"schema_version": "toolselect_baseline.v1", "subject": {"provider": "local", '
                          '"model": "local/bm25", "settings": ' + _nested_json(DEEP) + '}, "cases": {}}'),
        {"fault": "deep nesting", "error": ["malformed", TOO_DEEP],
         "fix": ["restore it from version control"], "line": 1}),
    # binary files, a stray NUL byte, and text in another encoding
    "binary.toolselect.yaml": ("case", _binary, _binary_expect("case file")),
    "binary.groups.json": ("groups", _binary, _binary_expect("groups file")),
    "binary-config/toolselect.yaml": ("config", _binary, _binary_expect("config file")),
    "binary.tools.json": ("tools", _binary, _binary_expect("tools file")),
    "binary-baseline.json": ("baseline", _binary,
                             _binary_expect("baseline", fix="restore it from version control")),
    "nul.toolselect.yaml": ("case", _text(CASE_HEAD + ONE_CASE.replace("Royal", "Roy\x00al")),
                            _binary_expect("case file", line=4)),
    "nul.tools.yaml": ("tools", _text("tools:\n  - name: find_company\n    description: Search\x00\n"),
                       _binary_expect("tools file", line=3)),
    "utf16-config/toolselect.yaml": ("config", _text("model: local/bm25\n", "utf-16"),
                                     _binary_expect("config file", line=1)),
    "latin1.toolselect.yaml": (
        "case", _text(CASE_HEAD + ONE_CASE.replace("Royal Mail Group", "Café Royal"), "latin-1"),
        {"fault": "not UTF-8", "error": ["case file is not UTF-8 text (byte 0xe9"],
         "fix": ["save it as UTF-8"], "line": 4}),
    "latin1-config/toolselect.yaml": (
        "config", _text("model: local/bm25\nsystem: Réponds en français.\n", "latin-1"),
        {"fault": "not UTF-8", "error": ["config file is not UTF-8 text (byte 0xe9"],
         "fix": ["save it as UTF-8"], "line": 2}),
    "latin1.tools.json": (
        "tools", _text('[{"name": "find_company",\n  "description": "Société search"}]', "latin-1"),
        {"fault": "not UTF-8", "error": ["tools file is not UTF-8 text (byte 0xe9"],
         "fix": ["save it as UTF-8"], "line": 2}),
}


def make(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    GENERATED[name][1](path)
    return path


@pytest.mark.parametrize("name", list(GENERATED))
def test_generated_file(tmp_path: Path, name: str) -> None:
    kind, _, expect = GENERATED[name]
    path = make(tmp_path, name)
    try:
        if name.startswith("huge"):
            assert path.stat().st_size >= HUGE
        assert_one_clear_error(kind, path, expect)
    finally:
        path.unlink()  # 50 MB files are not left behind in pytest's kept temp folders


# -- in a pytest run -------------------------------------------------------------------------

#: every bad case file (and every valid one whose tools are not offered), with the text its
#: error section must hold; the huge one is left to test_generated_file
RUN_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    **{Path(n).name: (n, e) for n, e in MANIFEST.items() if n.split("/")[0] in ("case", "offered")},
    **{n: (n, e) for n, (kind, _, e) in GENERATED.items() if kind == "case" and not n.startswith("huge")},
}
_RUN: dict[str, Any] = {}
#: "ERROR collecting <file>" for a file that fails to load, "ERROR at setup of toolselect
#: case <id>" for a case whose tools are not offered
_HEADER = re.compile(r"^_+ (ERROR (?:collecting|at setup of) .+?) _+$")


@pytest.fixture
def corpus_run(project: Project, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One pytest run over every bad case file beside a good one (made once, read by each
    test below): its outcomes, its whole output, and its error sections (header, text)."""
    if not _RUN:
        project.config()  # the registry server: REGISTRY_TOOLS from a tools file
        project.cases([case(*FIND)], name="good")
        made = tmp_path_factory.mktemp("generated")
        for file_name, (source, _) in RUN_CASES.items():
            src = CORPUS / source if source in MANIFEST else make(made, source)
            shutil.copyfile(src, project.path / file_name)
        result = project.pytester.runpytest("--continue-on-collection-errors", "-p", "no:randomly")
        sections: list[tuple[str, list[str]]] = []
        current: list[str] | None = None
        for line in result.stdout.lines:
            match = _HEADER.match(line)
            if match:
                current = []
                sections.append((match.group(1), current))
            elif line.startswith(("___", "===")):
                current = None
            elif current is not None:
                current.append(line)
        _RUN.update(outcomes=result.parseoutcomes(), output=result.stdout.str() + result.stderr.str(),
                    sections=[(h, "\n".join(body)) for h, body in sections])
    return _RUN


def test_a_run_over_the_bad_case_files(corpus_run: dict[str, Any]) -> None:
    # the good file's case ran and passed; each bad file is one error
    assert corpus_run["outcomes"].get("passed") == 1, corpus_run["outcomes"]
    assert corpus_run["outcomes"].get("errors") == len(RUN_CASES), corpus_run["outcomes"]
    assert len(corpus_run["sections"]) == len(RUN_CASES)
    # one clear message each: no traceback, nothing from inside the plugin
    assert "Traceback" not in corpus_run["output"]
    assert "pytest_toolselect/" not in corpus_run["output"]
    assert "RecursionError" not in corpus_run["output"]


@pytest.mark.parametrize("file_name", list(RUN_CASES))
def test_a_bad_case_file_in_a_run(corpus_run: dict[str, Any], file_name: str) -> None:
    source, expect = RUN_CASES[file_name]
    found = [(h, text) for h, text in corpus_run["sections"] if f"/{file_name}:" in text]
    assert len(found) == 1, [h for h, _ in found]
    header, section = found[0]
    if source.startswith("offered/"):
        assert header.startswith("ERROR at setup of toolselect case "), header
    else:
        assert header == f"ERROR collecting {file_name}", header
    line = expect.get("line")
    assert f"/{file_name}:{line}: " in section if line else f"/{file_name}: " in section, section
    for part in (*expect["error"], *expect.get("fix", ())):
        assert part in section, f"{part!r} not in:\n{section}"
    assert "Traceback" not in section and "pytest_toolselect/" not in section


def _no_traceback(result: pytest.RunResult) -> None:
    out = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in out and "pytest_toolselect/" not in out, out


@pytest.mark.parametrize(("name", "message"), [
    # ([[] is a literal [ in fnmatch)
    ("duplicate-id", "*prefs.groups.json:13: at groups[[]1].id: duplicate group id 'G01'*unique id*"),
    # another version is reported, not passed over in silence as someone else's file
    ("wrong-schema-version", "*prefs.groups.json*tool_preference_groups.v1*"),
])
def test_a_bad_groups_file_in_a_run(project: Project, name: str, message: str) -> None:
    project.config()
    project.cases([case(*FIND)])
    shutil.copyfile(CORPUS / f"groups/{name}.groups.json", project.path / "prefs.groups.json")
    result = project.pytester.runpytest("--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting prefs.groups.json*", message])
    _no_traceback(result)


def test_a_bad_tools_file_errors_only_the_cases_of_its_server(project: Project) -> None:
    shutil.copyfile(CORPUS / "tools/misspelled-key.yaml", project.path / "broken.tools.yaml")
    project.config(servers={"registry": {"tools_file": project.tools_file()},
                            "broken": {"tools_file": "broken.tools.yaml"}})
    project.cases([case(*FIND)], servers=["registry"])
    project.cases([case("uses-broken", FIND[1], ["find_company"])], name="other", servers=["broken"])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at setup of toolselect case uses-broken*",
        "*broken.tools.yaml:5: at tools[[]0]: server 'broken': unknown key 'inputschema' "
        "(did you mean 'inputSchema'?) (rename it to inputSchema)",
    ])
    _no_traceback(result)


def test_a_bad_config_stops_the_run_with_one_message(project: Project) -> None:
    shutil.copyfile(CORPUS / "config/misspelled-key.yaml", project.path / "toolselect.yaml")
    project.cases([case(*FIND)])
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *toolselect.yaml:2: at modle: unknown key 'modle'; "
                                 "did you mean 'model'? (rename it to model)"])
    _no_traceback(result)


def test_a_bad_baseline_is_refused_and_left_as_it_is(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    path = project.path / "base.json"
    shutil.copyfile(CORPUS / "baseline/duplicate-case.json", path)
    before = path.read_bytes()
    # even when asked to rewrite it: a baseline that cannot be read is never overwritten
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *base.json:7: the baseline is malformed: "
                                 "duplicate key 'registry.toolselect.yaml::find' (first on line 5)*"])
    assert path.read_bytes() == before
    _no_traceback(result)


def test_check_offered_refuses_only_paths_that_can_never_match() -> None:
    schema = {"type": "object",
              "properties": {"items": {"type": "array", "items": {"type": "object",
                                                                  "properties": {"sku": {"type": "string"}}}},
                             "filters": {"type": "object", "additionalProperties": {"type": "string"}},
                             "a.b": {"type": "string"},
                             "maybe": {"anyOf": [{"$ref": "#/$defs/M"}, {"type": "null"}]},
                             "strict": {"type": "object", "properties": {"x": {"type": "string"}},
                                        "additionalProperties": False}},
              "$defs": {"M": {"type": "object", "properties": {"colour": {"type": "string"}}}}}
    tools = (Tool("order", "Place an order.", schema), Tool("open", "Anything.", {"type": "object"}))
    # declared paths, open objects, keys holding dots, unions through $ref
    for path in ["items.0.sku", "filters.colour", "a.b", "maybe.colour", "any", "strict.x"]:
        check_offered(_case(path, "order"), tools)
    # an undeclared argument that resembles nothing declared may be a deliberate check
    check_offered(_case("page_token", "order"), tools)
    check_offered(_case("whatever.deep", "open"), tools)  # an open schema rules nothing out
    check_offered(_case("strict.y", "order", absent=True), tools)  # absent guards invented arguments
    refused = {
        "itemz.0.sku": "did you mean 'items.0.sku'?",  # a near miss
        "items.0.skus": "did you mean 'items.0.sku'?",
        "mayb.colour": "did you mean 'maybe.colour'?",
        "a.b.c": "a.b is a string, with nothing inside",  # past a scalar
        "items.sku": "items is a list: its items are reached by index, e.g. items.0",
        "strict.y": "strict declares no 'y' and allows no other keys",  # a closed object
    }
    for path, why in refused.items():
        with pytest.raises(ToolselectError) as info:
            check_offered(_case(path, "order"), tools)
        assert f"path {path!r} leads to no argument of order" in info.value.message
        assert why in info.value.message, info.value
    # a forbidden tool nobody offers and nothing resembles may guard against an invented name
    check_offered(_case("any", "order", forbid=["web_search"]), tools)


def _case(path: str, tool: str, *, absent: bool = False, forbid: tuple[str, ...] | list[str] = ()) -> Case:
    matcher: dict[str, Any] = {"path": path, "absent": True} if absent else {"path": path, "equals": "x"}
    return parse_case({"id": "c", "question": "q", "why": "w", "expect_tool": [tool],
                       "forbid_tools": list(forbid), "expect_args": [matcher]})



def test_check_offered_reads_properties_beside_refs_unions_and_conditions() -> None:
    schema = {"type": "object",
              "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                             "ref": {"$ref": "#/$defs/Base", "properties": {"names": {"type": "string"}}},
                             "tags": {"type": "array", "items": {"type": "string"}}},
              # one branch per variant, beside the common properties
              "oneOf": [{"properties": {"ids": {"type": "array"}}, "additionalProperties": False},
                        {"properties": {"idx": {"type": "integer"}}, "additionalProperties": False}],
              "$defs": {"Base": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    conditional = {"type": "object", "properties": {"kind": {"type": "string"}, "name": {"type": "string"}},
                   "if": {"properties": {"kind": {"const": "many"}}},
                   "then": {"properties": {"names": {"type": "array"}}}}
    tools = (Tool("variant", "Variants.", schema), Tool("conditional", "Conditions.", conditional))
    for path, tool in [("id", "variant"), ("ids", "variant"), ("ref.names", "variant"),
                       ("ref.name", "variant"), ("names", "conditional")]:
        check_offered(_case(path, tool), tools)
    # neither the branches nor the properties beside them hold it
    with pytest.raises(ToolselectError) as info:
        check_offered(_case("idz", "variant"), tools)
    assert "did you mean 'id'?" in info.value.message
    # an index that only looks like a number (a superscript two) is no index
    with pytest.raises(ToolselectError) as info:
        check_offered(_case("tags.²", "variant"), tools)
    assert "tags is a list: its items are reached by index" in info.value.message


def test_forbid_tools_refuses_misspellings_only() -> None:
    tools = tuple(Tool(name, "A tool.", {"type": "object"}, server="fs")
                  for name in ("read_file", "get_user", "delete_file", "list_officers"))
    # other tools a model may call (or another server offers): harmless, and deliberate
    for name in ["write_file", "set_user", "delete_files", "list_officer", "drop_database"]:
        check_offered(_case("any", "read_file", forbid=[name]), tools)
    refused = {"list_oficers": "list_officers", "lsit_officers": "list_officers",
               "Delete-File": "delete_file", "readFile": "read_file", "get_usr": "get_user"}
    for name, near in refused.items():
        with pytest.raises(ToolselectError) as info:
            check_offered(_case("any", "read_file", forbid=[name]), tools)
        assert info.value.message == (f"forbid_tools names {name!r}, which is not offered; "
                                      f"did you mean {near!r}?")


def test_names_before_tool_name_format_are_refused_with_the_new_name(project: Project) -> None:
    project.config(tool_name_format="mcp__{server}__{tool}")
    project.pytester.makepyfile(test_cases='''
from pytest_toolselect import case

QUESTION = "Who are the directors and officers of company 01234567?"

@case(question=QUESTION, expect_tool=["list_officers"], why="w")
def test_old_name(toolselect_result):
    pass

@case(question=QUESTION, expect_tool=["mcp__registry__list_officers"], forbid_tools=["lookup_vat"], why="w")
def test_old_forbidden_name(toolselect_result):
    pass

@case(question=QUESTION, expect_tool=["mcp__registry__list_officers"], why="w",
      expect_args=[{"path": "company.number", "matches": "^0"}])
def test_bad_path(toolselect_result):
    pass

@case(question=QUESTION, expect_tool=["mcp__registry__list_officers"], forbid_tools=["write_file"], why="w",
      expect_args=[{"path": "company_number", "absent": False}])
def test_new_names(toolselect_result):
    pass
''')
    result = project.pytester.runpytest()
    # local/bm25 calls the right tool, with no arguments: test_new_names fails on its matcher
    result.assert_outcomes(failed=1, errors=3)
    result.stdout.fnmatch_lines([
        "*expect_tool names 'list_officers', which the case's servers do not offer, so the case can "
        "never pass; tool_name_format renames it to 'mcp__registry__list_officers' "
        "(write mcp__registry__list_officers)*",
        "*forbid_tools names 'lookup_vat', which is not offered; tool_name_format renames it to "
        "'mcp__registry__lookup_vat' (rename it to mcp__registry__lookup_vat)*",
        "*path 'company.number' leads to no argument of mcp__registry__list_officers: the tool declares "
        "no 'company'*did you mean 'company_number'?*",
        "*company_number: expected present, but the path is missing*",
    ])
    _no_traceback(result)
