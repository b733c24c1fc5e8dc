"""Case files and single case mappings: valid input, and one test per kind of bad input.

Every error test checks that the message names the file, the line (where a line exists),
the JSON path of the bad place, the key, and the fix.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_toolselect.inputs import CASE_SUFFIXES, is_case_file
from pytest_toolselect.inputs.cases import (
    Case,
    IdentifierSettings,
)
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourcemap import MAX_BYTES, MAX_DEPTH, load_schema, parse_text
from pytest_toolselect.scoring.contradictions import load_case_file, parse_case

HEAD = "schema_version: toolselect_cases.v1\ncases:\n"
#: one valid case, indented as the first item of ``cases``; line 3 is its ``id``
ONE = """\
  - id: a
    question: Can you tell me about Royal Mail Group Limited?
    why: Given a name and no number, the only correct first move is to search.
"""


def write(tmp_path: Path, text: str, name: str = "c.toolselect.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text) if text.startswith("\n") else text, encoding="utf-8")
    return path


def error_of(path: Path, **kwargs: object) -> ToolselectError:
    with pytest.raises(ToolselectError) as info:
        load_case_file(path, **kwargs)  # type: ignore[arg-type]
    return info.value


def check(err: ToolselectError, path: Path, *, line: int | None, place: str | None,
          has: tuple[str, ...] = (), fix: tuple[str, ...] = ()) -> None:
    text = str(err)
    assert err.file == str(path)
    assert text.startswith(str(path) + (f":{line}: " if line else ": ")), text
    assert err.line == line, text
    assert err.place == place, text
    if place:
        assert f"at {place}: " in text
    for part in has:
        assert part in err.message, text
    assert err.fix, text
    for part in fix:
        assert part in err.fix, text
        assert part in text


# -- valid files ---------------------------------------------------------------------------

FULL = """\
schema_version: toolselect_cases.v1
servers: [companies]
cases:
  - id: grounding-profile
    category: grounding
    intent: name-to-number
    tags: [smoke, fast_one]
    question: Can you tell me about Royal Mail Group Limited?
    expect_tool: [find_company]
    allow_no_tool: true
    forbid_tools: [get_company]
    expect_args:
      - {path: company_number, equals: 04138203}
      - {path: any, one_of: [a, 2]}
      - {path: items.0.sku, contains: Mail}
      - {path: q, matches: "^[0-9]{8}$"}
      - {path: page, absent: true}
    forbid_ungrounded: true
    forbid_any_identifier: false
    decoys: ["GB745938421"]
    identifiers: {params: [vat], ignore_params: [page_size], leading_zeros: false}
    system: ""
    why: Given a name and no number, the only correct first move is to search.
  - id: "vat:1.x"
    servers: [docs, companies]
    question: What is VAT number GB 745 9384 21?
    expect_tool: []
    why: Nothing to look up.
"""


def test_full_file_every_key(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    cf = load_case_file(path)
    assert cf.path == str(path)
    assert cf.servers == ("companies",)
    first, second = cf.cases
    assert first == Case(
        id="grounding-profile",
        question="Can you tell me about Royal Mail Group Limited?",
        why="Given a name and no number, the only correct first move is to search.",
        servers=("companies",),
        category="grounding",
        intent="name-to-number",
        tags=("smoke", "fast_one"),
        expect_tool=("find_company",),
        allow_no_tool=True,
        forbid_tools=("get_company",),
        expect_args=(
            # a leading-zero number is an identifier: it stays the string as written
            {"path": "company_number", "equals": "04138203"},
            {"path": "any", "one_of": ["a", 2]},
            {"path": "items.0.sku", "contains": "Mail"},
            {"path": "q", "matches": "^[0-9]{8}$"},
            {"path": "page", "absent": True},
        ),
        forbid_ungrounded=True,
        forbid_any_identifier=False,
        decoys=("GB745938421",),
        identifiers=IdentifierSettings(params=("vat",), ignore_params=("page_size",),
                                       leading_zeros=False),
        system="",
        source=str(path),
        line=4,
    )
    # a case's servers replace the file's; expect_tool: [] means "call nothing"
    assert second.servers == ("docs", "companies")
    assert second.expect_tool == ()
    assert second.line == 24
    assert second.system is None and second.category is None


def test_camel_case_aliases(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + """\
    expectTool: [find_company]
    allowNoTool: true
    forbidTools: [get_company]
    expectArgs: [{path: company_number, equals: "04138203"}, {path: x, oneOf: [1, 2]}]
    forbidUngrounded: true
    forbidAnyIdentifier: true
""")
    (case,) = load_case_file(path).cases
    assert case.expect_tool == ("find_company",)
    assert case.allow_no_tool is True
    assert case.forbid_tools == ("get_company",)
    assert case.expect_args == ({"path": "company_number", "equals": "04138203"},
                                {"path": "x", "one_of": [1, 2]})
    assert case.forbid_ungrounded is True
    assert case.forbid_any_identifier is True


def test_json_case_file(tmp_path: Path) -> None:
    data = {
        "schema_version": "toolselect_cases.v1",
        "cases": [
            {"id": "a", "question": "q?", "why": "w", "expectTool": ["t"],
             "expect_args": [{"path": "n", "equals": 1e5}]},
        ],
    }
    path = write(tmp_path, json.dumps(data, indent=2), "c.toolselect.json")
    (case,) = load_case_file(path).cases
    assert case.expect_tool == ("t",)
    assert case.expect_args == ({"path": "n", "equals": 100000.0},)
    assert case.line == 4
    assert case.servers is None


def test_yaml_core_schema_scalars(tmp_path: Path) -> None:
    # YAML 1.2 core, as JSON is: "no" and dates stay strings, 1e5 is a number
    path = write(tmp_path, HEAD + ONE + """\
    expect_args:
      - {path: country, equals: no}
      - {path: day, equals: 2024-01-01}
      - {path: n, equals: 1e5}
      - {path: b, equals: true}
      - {path: z, equals: ~}
""")
    (case,) = load_case_file(path).cases
    assert [m["equals"] for m in case.expect_args] == ["no", "2024-01-01", 100000.0, True, None]


def test_identifiers_merge_case_over_config(tmp_path: Path) -> None:
    config = IdentifierSettings(params=("vat",), ignore_params=("page",), leading_zeros=True)
    path = write(tmp_path, HEAD + ONE + "    identifiers: {leading_zeros: false, params: [ref]}\n"
                 + ONE.replace("id: a", "id: b"))
    with_own, without = load_case_file(path, config_identifiers=config).cases
    # keys the case sets replace the config's; the others are kept
    assert with_own.identifiers == IdentifierSettings(params=("ref",), ignore_params=("page",),
                                                      leading_zeros=False)
    assert without.identifiers == config


def test_is_case_file() -> None:
    assert CASE_SUFFIXES == (".toolselect.yaml", ".toolselect.yml", ".toolselect.json")
    for name in ("a.toolselect.yaml", "x.y.toolselect.yml", "b.toolselect.json"):
        assert is_case_file(Path("d") / name)
    for name in ("toolselect.yaml", "a.yaml", "a.toolselect.yaml.bak", "a.toolselect.txt",
                 "A.TOOLSELECT.YAML",
                 "a.Toolselect.yml"):
        assert not is_case_file(Path(name))  # as written, as pytest matches its own patterns


# -- parse_case (decorator and score_case) ----------------------------------------------------


def test_parse_case_python_values() -> None:
    case = parse_case(
        {"id": "test_x-q1", "question": "q", "why": "w", "expectTool": ("find_company",),
         "expect_args": ({"path": "n", "oneOf": ("1", "01")},), "identifiers": {"params": ("n",)}},
        source="tests/test_x.py::test_x",
        default_servers=("companies",),
        config_identifiers=IdentifierSettings(leading_zeros=False),
    )
    assert case.expect_tool == ("find_company",)
    assert case.expect_args == ({"path": "n", "one_of": ["1", "01"]},)
    assert case.servers == ("companies",)
    assert case.identifiers == IdentifierSettings(params=("n",), leading_zeros=False)
    assert case.source == "tests/test_x.py::test_x"
    assert case.line is None


def test_parse_case_why_optional_when_asked() -> None:
    case = parse_case({"id": "a", "question": "q"}, require_why=False)
    assert case.why == ""
    with pytest.raises(ToolselectError) as info:
        parse_case({"id": "a", "question": "q"}, source="tests/test_a.py::test_a")
    assert str(info.value).startswith("tests/test_a.py::test_a: ")
    assert "'why'" in info.value.message


def test_parse_case_errors_name_source_and_place() -> None:
    with pytest.raises(ToolselectError) as info:
        parse_case({"id": "a", "question": "q", "why": "w", "expect_tool": "find_company"},
                   source="tests/test_a.py::test_a")
    err = info.value
    assert err.file == "tests/test_a.py::test_a"
    assert err.place == "expect_tool"
    assert "must be a list of tool names, e.g. [find_company]" in err.message
    with pytest.raises(ToolselectError, match="not a valid regular expression"):
        parse_case({"id": "a", "question": "q", "why": "w",
                    "expect_args": [{"path": "x", "matches": "[a"}]})
    with pytest.raises(ToolselectError, match="must be a mapping"):
        parse_case(["id", "a"])  # type: ignore[arg-type]


# -- errors: reading and syntax ---------------------------------------------------------------


def test_bad_yaml_syntax(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_tool: [find_company\n    tags: [x]\n")
    err = error_of(path)
    assert err.file == str(path)
    assert err.line in (6, 7)  # where the parser noticed the unclosed list
    assert err.message.startswith("invalid YAML: ")
    assert "quot" in (err.fix or "")


def test_bad_yaml_indentation(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "  - id: a\n   question: q\n")
    err = error_of(path)
    assert err.line == 4
    assert "invalid YAML" in str(err) and "indentation" in str(err)


def test_empty_file(tmp_path: Path) -> None:
    for text in ("", "\n\n", "# only a comment\n"):
        path = write(tmp_path, text)
        err = error_of(path)
        check(err, path, line=None, place=None, has=("empty",), fix=("schema_version:",))


def test_top_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "- id: a\n  question: q\n")
    err = error_of(path)
    check(err, path, line=1, place=None, has=("must be a mapping", "got a list"),
          fix=("schema_version: toolselect_cases.v1",))


def test_missing_schema_version(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n" + ONE)
    check(error_of(path), path, line=1, place=None, has=("schema_version",),
          fix=("schema_version: toolselect_cases.v1",))


def test_wrong_schema_version(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n" + ONE + "schema_version: toolselect_cases.v2\n")
    check(error_of(path), path, line=5, place="schema_version",
          has=("must be toolselect_cases.v1", "'toolselect_cases.v2'"),
          fix=("schema_version: toolselect_cases.v1",))


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toolselect.yaml"
    path.write_bytes(b"schema_version: x\n\x00\x01\x02\xff")
    check(error_of(path), path, line=2, place=None, has=("binary",), fix=("text",))


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toolselect.yaml"
    path.write_bytes((HEAD + ONE).encode() + "    system: caf\xe9\n".encode("latin-1"))
    check(error_of(path), path, line=6, place=None, has=("not UTF-8", "0xe9"), fix=("UTF-8",))


def test_utf8_bom_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "c.toolselect.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + ONE).encode())
    assert load_case_file(path).cases[0].id == "a"


def test_huge_file_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "c.toolselect.yaml"
    with path.open("wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: cheap to make; refused on its size alone
    err = error_of(path)
    check(err, path, line=None, place=None, has=("10 MB", "refused"),
          fix=("split it into several",))


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200, 5000, 100000])
def test_deep_nesting_yaml(tmp_path: Path, depth: int) -> None:
    # past about 1000 levels libyaml stops first; the message is the same
    for nest in ("[" * depth + "]" * depth, "{a: " * depth + "1" + "}" * depth):
        path = write(tmp_path, HEAD + ONE + "    system: " + nest + "\n")
        check(error_of(path), path, line=6, place=None, has=("levels deep",), fix=("flatten",))


def test_deep_nesting_json(tmp_path: Path) -> None:
    path = write(tmp_path, '{"cases":\n' + "[" * 100000 + "]" * 100000 + "}",
                 "c.toolselect.json")
    check(error_of(path), path, line=2, place=None, has=("levels deep",), fix=("flatten",))


def test_yaml_alias_bomb(tmp_path: Path) -> None:
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        bomb += f"{name}: &{name} [{','.join(['*' + prev] * 9)}]\n"
    path = write(tmp_path, bomb)
    check(error_of(path), path, line=2, place=None, has=("aliases", "*a"),
          fix=("write the value out in full",))


def test_yaml_duplicate_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    why: again\n")
    check(error_of(path), path, line=6, place="cases[0].why",
          has=("duplicate key 'why'", "first on line 5"), fix=("keep one",))


def test_yaml_second_document(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "---\n" + HEAD + ONE)
    check(error_of(path), path, line=6, place=None, has=("more than one YAML document",),
          fix=("one document",))


def test_yaml_python_tag_refused(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    system: !!python/object/apply:os.system [ls]\n")
    check(error_of(path), path, line=6, place=None, has=("!!python/object/apply:os.system",),
          fix=("remove the tag",))


def test_bad_json_syntax(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "schema_version": "toolselect_cases.v1",\n  "cases": [],\n}\n',
                 "c.toolselect.json")
    check(error_of(path), path, line=4, place=None, has=("invalid JSON",),
          fix=("trailing comma",))


def test_json_errors_carry_lines(tmp_path: Path) -> None:
    data = {"schema_version": "toolselect_cases.v1",
            "cases": [{"id": "a", "question": "q", "why": "w"},
                      {"id": "b", "question": "q", "why": "w", "expect_tools": ["t"]}]}
    path = write(tmp_path, json.dumps(data, indent=2), "c.toolselect.json")
    check(error_of(path), path, line=13, place="cases[1].expect_tools",
          has=("unknown key 'expect_tools'; did you mean 'expect_tool'?",),
          fix=("rename it to expect_tool",))


def test_json_parser_reads_what_json_reads() -> None:
    rng = random.Random(7)

    def gen(depth: int = 0) -> object:
        r = rng.random()
        if depth > 4 or r < 0.4:
            return rng.choice([0, -3, 2.5, 1e21, -0.0, True, False, None, "", 'a"\\b\n\u00fc\U0001f600',
                               12345678901234567890])
        if r < 0.7:
            return [gen(depth + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{i} \t/": gen(depth + 1) for i in range(rng.randint(0, 4))}

    for _ in range(500):
        value = gen()
        for indent in (None, 2, "\t"):
            text = json.dumps(value, indent=indent, ensure_ascii=rng.random() < 0.5)
            got = parse_text(text, file="x.json", json_syntax=True).data
            assert json.dumps(got) == json.dumps(json.loads(text))


# -- errors: structure ------------------------------------------------------------------------


def test_unknown_key_without_near_match(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    colour: blue\n")
    err = error_of(path)
    check(err, path, line=6, place="cases[0].colour", has=("unknown key 'colour'",),
          fix=("remove it", "expect_tool"))
    assert "did you mean" not in err.message


def test_misspelled_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_tools: [find_company]\n")
    check(error_of(path), path, line=6, place="cases[0].expect_tools",
          has=("unknown key 'expect_tools'; did you mean 'expect_tool'?",),
          fix=("rename it to expect_tool",))


def test_misspelled_top_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "server: [a]\n")
    check(error_of(path), path, line=6, place="server",
          has=("did you mean 'servers'?",), fix=("rename it to servers",))


def test_misspelled_alias(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expectTools: [find_company]\n")
    check(error_of(path), path, line=6, place="cases[0].expectTools",
          has=("did you mean 'expectTool'?",), fix=("rename it to expectTool",))


def test_misspelled_matcher_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - path: n\n        equal: 1\n")
    check(error_of(path), path, line=8, place="cases[0].expect_args[0].equal",
          has=("did you mean 'equals'?",), fix=("rename it to equals",))


def test_missing_why(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "  - id: a\n    question: q\n")
    check(error_of(path), path, line=3, place="cases[0]",
          has=("missing the required key 'why'",),
          fix=("add why:", "a case nobody can justify is a case nobody fixes"))


def test_misspelled_required_key_reported_as_misspelling(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "  - id: a\n    question: q\n    wyh: w\n")
    check(error_of(path), path, line=5, place="cases[0].wyh",
          has=("unknown key 'wyh'; did you mean 'why'?",), fix=("rename it to why",))


def test_missing_question(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "  - id: b\n    why: w\n")
    check(error_of(path), path, line=6, place="cases[1]",
          has=("missing the required key 'question'",), fix=("add question:",))


def test_missing_id(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "  - question: q\n    why: w\n")
    check(error_of(path), path, line=3, place="cases[0]",
          has=("missing the required key 'id'",), fix=("add id:",))


def test_empty_why(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE.replace("why: Given", "why: '  '#") )
    err = error_of(path)
    check(err, path, line=5, place="cases[0].why", has=("why must not be empty",),
          fix=("why this is the correct first move",))


def test_null_value(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "  - id: a\n    question: q\n    why:\n")
    check(error_of(path), path, line=5, place="cases[0].why",
          has=("why must be", "got nothing"), fix=("give why a value",))


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + ONE.replace("id: a", "id: b") + ONE)
    check(error_of(path), path, line=9, place="cases[2].id",
          has=("duplicate case id 'a'", "cases[0] on line 3", "cases[2] on line 9"),
          fix=("unique id",))


def test_wrong_type_expect_tool(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_tool: find_company\n")
    check(error_of(path), path, line=6, place="cases[0].expect_tool",
          has=("expect_tool must be a list of tool names, e.g. [find_company]",
               "got the string 'find_company'"),
          fix=("expect_tool: [find_company]",))


def test_wrong_type_on_alias_names_the_alias(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expectTool: find_company\n")
    check(error_of(path), path, line=6, place="cases[0].expectTool",
          has=("expectTool must be a list of tool names",), fix=("expectTool: [find_company]",))


def test_wrong_type_boolean(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    allow_no_tool: 'yes'\n")
    check(error_of(path), path, line=6, place="cases[0].allow_no_tool",
          has=("must be true or false", "'yes'"), fix=("true or false",))


def test_number_where_string_needed(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    decoys: [745938421]\n")
    check(error_of(path), path, line=6, place="cases[0].decoys[0]",
          has=("decoys[0] must be", "745938421"), fix=('"745938421"',))


def test_cases_empty(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD.replace("cases:\n", "cases: []\n"))
    check(error_of(path), path, line=2, place="cases", has=("cases must not be empty",),
          fix=("at least one case",))


def test_cases_missing(tmp_path: Path) -> None:
    path = write(tmp_path, "schema_version: toolselect_cases.v1\nservers: [a]\n")
    check(error_of(path), path, line=1, place=None,
          has=("missing the required key 'cases'",), fix=("add cases:",))


def test_invalid_regex(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - {path: n, matches: '(ab'}\n")
    check(error_of(path), path, line=7, place="cases[0].expect_args[0].matches",
          has=("'(ab' is not a valid regular expression", "missing )"),
          fix=("escape", "backslash"))


def test_matcher_without_op(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - {path: company_number}\n")
    check(error_of(path), path, line=7, place="cases[0].expect_args[0]",
          has=("none of equals, one_of, contains, matches, absent or equals_text", "exactly one"),
          fix=("equals:",))


def test_matcher_with_two_ops(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - path: n\n        equals: 1\n"
                 "        contains: x\n")
    check(error_of(path), path, line=7, place="cases[0].expect_args[0]",
          has=("'equals' and 'contains'", "exactly one"), fix=("one matcher per operator",))


def test_matcher_without_path(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - {equals: 1}\n")
    check(error_of(path), path, line=7, place="cases[0].expect_args[0]",
          has=("missing the required key 'path'",), fix=("add path:",))


def test_matcher_one_of_not_a_list(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - {path: n, one_of: 1}\n")
    check(error_of(path), path, line=7, place="cases[0].expect_args[0].one_of",
          has=("one_of must be a list of accepted values",), fix=("one_of: [1]",))


def test_both_spellings_of_one_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_tool: [a]\n    expectTool: [b]\n")
    check(error_of(path), path, line=7, place="cases[0]",
          has=("both 'expect_tool' and 'expectTool'",), fix=("keep one",))


def test_both_spellings_in_a_matcher(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args:\n      - {path: n, oneOf: [1], one_of: [2]}\n")
    check(error_of(path), path, line=7, place="cases[0].expect_args[0]",
          has=("both 'oneOf' and 'one_of'",), fix=("keep one",))


@pytest.mark.parametrize("key", ["category", "intent"])
def test_bad_marker_name(tmp_path: Path, key: str) -> None:
    path = write(tmp_path, HEAD + ONE + f"    {key}: name to number\n")
    check(error_of(path), path, line=6, place=f"cases[0].{key}",
          has=(f"{key} 'name to number' is not valid", "pytest marker"),
          fix=(f"{key}: name-to-number",))


def test_bad_tag(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    tags: [ok, 9lives]\n")
    check(error_of(path), path, line=6, place="cases[0].tags[1]",
          has=("'9lives' is not valid", "starting with a letter or _"), fix=("_9lives",))


@pytest.mark.parametrize("bad", ["a b", "a/b", "a[1]", "a::b", ""])
def test_bad_case_id(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path, HEAD + ONE.replace("id: a", f"id: '{bad}'"))
    err = error_of(path)
    assert err.line == 3 and err.place == "cases[0].id"
    assert "node id" in err.message or "must not be empty" in err.message
    assert err.fix


def test_bad_matcher_path(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_args: [{path: a..b, equals: 1}]\n")
    check(error_of(path), path, line=6, place="cases[0].expect_args[0].path",
          has=("'a..b' is not valid", "dotted argument path"), fix=("path: items.0.sku",))


def test_bad_server_name_in_case(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    servers: [my server]\n")
    check(error_of(path), path, line=6, place="cases[0].servers[0]",
          has=("'my server' is not valid",), fix=("my-server",))


def test_unknown_identifiers_key(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    identifiers: {leading_zero: false}\n")
    check(error_of(path), path, line=6, place="cases[0].identifiers.leading_zero",
          has=("did you mean 'leading_zeros'?",), fix=("rename it to leading_zeros",))


def test_tool_both_expected_and_forbidden(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "    expect_tool: [a]\n    forbid_tools: [a]\n")
    check(error_of(path), path, line=7, place="cases[0].forbid_tools",
          has=("'a' is both expected",), fix=("remove it from one",))


def test_case_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + ONE + "  - find_company\n")
    err = error_of(path)
    assert (err.file, err.line, err.place) == (str(path), 6, "cases[1]")
    assert "cases[1] must be a case mapping" in err.message
    assert "got the string 'find_company'" in err.message
    assert err.fix == "give cases[1] a mapping"


# -- the schema and the import cost ------------------------------------------------------------


def _object_schemas(node: object) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            found.append(node)
        for v in node.values():
            found.extend(_object_schemas(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(_object_schemas(v))
    return found


def test_schema_is_valid_and_closed() -> None:
    import jsonschema

    schema = load_schema("toolselect_cases.v1")
    jsonschema.Draft202012Validator.check_schema(schema)
    objects = _object_schemas(schema)
    assert len(objects) >= 4
    assert all(o.get("additionalProperties") is False for o in objects)
    # aliases are normalized before validation: the schema lists canonical keys only
    assert "expectTool" not in json.dumps(schema)


def test_yaml_and_jsonschema_not_imported_at_module_load() -> None:
    code = ("import sys, pytest_toolselect.inputs.cases, pytest_toolselect.inputs.config, "
            "pytest_toolselect.positions.sourcemap; "
            "print(sorted(m for m in ('yaml', 'jsonschema') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pure_python_yaml_loader_gives_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # where libyaml is missing, yaml.SafeLoader is used: same data, same refusals
    import yaml

    with_c = load_case_file(write(tmp_path, FULL))
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    assert load_case_file(write(tmp_path, FULL)) == with_c
    for text, has in (
        (HEAD + ONE + "    system: " + "[" * 5000 + "]" * 5000 + "\n", "levels deep"),
        ("a: &a [1, 2]\nb: [*a, *a]\n", "aliases"),
        (HEAD + ONE + "    expect_tool: [find_company\n", "invalid YAML"),
        (HEAD + ONE + "    why: again\n", "duplicate key 'why'"),
    ):
        err = error_of(write(tmp_path, text))
        assert has in err.message
        assert err.line is not None
