"""Groups files (tool_preference_groups.v1): valid input, references, and bad input.

Every error test checks that the message names the file, the line, the JSON path of the
bad place, and the fix.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs import GROUPS_SUFFIXES, is_groups_file
from pytest_toolselect.inputs.groups import (
    Group,
    Twin,
    load_groups_file,
    resolve_group,
)
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.probe.preference import cells_for

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "preference.groups.json"

#: the reference's own example, verbatim
REFERENCE = {
    "schema_version": "tool_preference_groups.v1",
    "groups": [{
        "id": "G01",
        "query": "Find where the retry backoff is configured in the docs for our HTTP client.",
        "twins": {
            "A": {"name": "search_docs",
                  "description": "Search the project documentation and return matching passages.",
                  "vendor_name": "acme_docs_search",
                  "detail": "Covers the user guide, API reference and changelog.",
                  "example": "search_docs(query='retry backoff')",
                  "exclusion": "Do NOT use this tool for editing documentation files."},
            "B": {"name": "find_documentation",
                  "description": "Look up passages in the project's reference and user guides."},
        },
        "distractors": [{"name": "read_file", "description": "Read the contents of a file at a given path."}],
    }],
}


def write(tmp_path: Path, data: Any, name: str = "g.groups.json") -> Path:
    path = tmp_path / name
    # indent=2 puts every key on its own line, so line numbers below are predictable
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def mutated(fn: Any) -> dict[str, Any]:
    data = copy.deepcopy(REFERENCE)
    fn(data)
    return data


def error_of(path: Path) -> ToolselectError:
    with pytest.raises(ToolselectError) as info:
        load_groups_file(path)
    return info.value


def line_of(path: Path, needle: str, nth: int = 0) -> int:
    hits = [i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line]
    return hits[nth]


def check(err: ToolselectError, path: Path, *, line: int | None, place: str,
          has: tuple[str, ...] = (), fix: tuple[str, ...] = ()) -> None:
    text = str(err)
    assert err.file == str(path)
    assert err.line == line, text
    assert text.startswith(f"{path}:{line}: at {place}: "), text
    assert err.place == place
    for part in has:
        assert part in err.message, text
    assert err.fix, text
    for part in fix:
        assert part in err.fix, text


# -- valid input -----------------------------------------------------------------------


def test_the_reference_example_loads_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, REFERENCE)
    (group,) = load_groups_file(path)
    assert group.id == "G01" and group.expect == "pair" and not group.is_control
    a, b = group.twins["A"], group.twins["B"]
    assert (a.name, a.vendor_name, a.detail, a.example, a.exclusion) == (
        "search_docs", "acme_docs_search", "Covers the user guide, API reference and changelog.",
        "search_docs(query='retry backoff')", "Do NOT use this tool for editing documentation files.")
    assert (b.name, b.vendor_name, b.detail, b.example, b.exclusion) == (
        "find_documentation", None, None, None, None)
    assert [d.name for d in group.distractors] == ["read_file"]
    assert group.source == str(path) and group.line == 4
    assert group.cues == {} and group.system is None and group.domain is None
    # no input_schema written: offered as a tool that takes no arguments
    assert a.as_tool().input_schema == {"type": "object", "properties": {}}


def test_the_shipped_example_has_realistic_pairs_and_controls() -> None:
    groups = load_groups_file(EXAMPLE)
    pairs = [g for g in groups if not g.is_control]
    controls = [g for g in groups if g.is_control]
    assert len(pairs) >= 12 and len(controls) >= 3
    for g in groups:
        assert g.domain and g.distractors
        assert all(t.input_schema.get("properties") for t in g.twins.values())
    # every pair group exercises most factors on both twins
    assert sum(1 for g in pairs if len(cells_for(g)) == 22) >= 10


def test_yaml_groups_files_load_too(tmp_path: Path) -> None:
    import yaml

    path = write(tmp_path, yaml.safe_dump(REFERENCE, sort_keys=False), "g.groups.yaml")
    (group,) = load_groups_file(path)
    assert group.twins["A"].vendor_name == "acme_docs_search"


def test_controls_cues_system_and_domain(tmp_path: Path) -> None:
    data = mutated(lambda d: d.update(cues={"assertive": "File-wide cue."}, system="File system."))
    second = copy.deepcopy(data["groups"][0])
    second.update(id="C01", expect="none", domain="docs", system="",
                  cues={"social_proof": "Group cue."})
    data["groups"].append(second)
    first, control = load_groups_file(write(tmp_path, data))
    assert first.system == "File system." and first.cues == {"assertive": "File-wide cue."}
    assert control.is_control and control.domain == "docs"
    # the group's own keys win over the file's; "" is kept (it sends no system prompt)
    assert control.system == ""
    assert control.cues == {"assertive": "File-wide cue.", "social_proof": "Group cue."}
    # a group's line is where its mapping opens
    assert control.line == line_of(tmp_path / "g.groups.json", '"id": "C01"') - 1


def test_groups_file_suffixes() -> None:
    assert GROUPS_SUFFIXES == (".groups.json", ".groups.yaml", ".groups.yml")
    assert is_groups_file(Path("x/pref.groups.json")) and is_groups_file(Path("a.groups.yml"))
    assert not is_groups_file(Path("groups.json")) and not is_groups_file(Path("a.toolselect.yaml"))
    # as written, as collection (and pytest with its own patterns) reads a name
    assert not is_groups_file(Path("A.GROUPS.JSON")) and not is_groups_file(Path("a.Groups.yml"))


def test_the_shipped_schema_is_a_valid_json_schema() -> None:
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(load_schema("tool_preference_groups.v1"))


def test_loading_groups_imports_no_numpy() -> None:
    code = ("import sys, pathlib, pytest_toolselect.inputs.groups as g; "
            f"g.load_groups_file(pathlib.Path({str(EXAMPLE)!r})); print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- references to real tools ------------------------------------------------------------


def _with_refs(d: dict[str, Any]) -> None:
    g = d["groups"][0]
    g["twins"]["A"] = {"server": "docs", "tool": "search", "vendor_name": "acme_search",
                       "exclusion": "Do NOT use this tool for code."}
    g["distractors"] = [{"server": "files", "tool": "read_file"}]


def test_references_load_and_resolve_to_the_real_tools(tmp_path: Path) -> None:
    (group,) = load_groups_file(write(tmp_path, mutated(_with_refs)))
    assert not group.resolved
    a = group.twins["A"]
    assert (a.server, a.tool, a.name) == ("docs", "search", "")
    with pytest.raises(ToolselectError, match="resolve_group"):
        cells_for(group)

    real = {
        ("docs", "search"): Tool("search", "Search the docs.", {"type": "object", "properties": {
            "q": {"type": "string"}}}, server="docs"),
        ("files", "read_file"): Tool("read_file", "Read a file.", {"type": "object"}, server="files"),
    }
    asked: list[tuple[str, str]] = []

    def lookup(server: str, tool: str) -> Tool:
        asked.append((server, tool))
        return real[(server, tool)]

    resolved = resolve_group(group, lookup)
    assert sorted(asked) == sorted(real)
    ra = resolved.twins["A"]
    assert isinstance(ra, Twin)
    assert (ra.name, ra.description, ra.input_schema) == (
        "search", "Search the docs.", {"type": "object", "properties": {"q": {"type": "string"}}})
    # the factor fields written beside the reference are kept
    assert (ra.vendor_name, ra.exclusion, ra.server) == (
        "acme_search", "Do NOT use this tool for code.", "docs")
    assert resolved.distractors[0].name == "read_file"
    assert resolved.twins["B"] == group.twins["B"]
    cells = cells_for(resolved)
    assert {t.name for t in cells[0].tools} == {"search", "find_documentation", "read_file"}
    assert resolve_group(resolved, lookup) is resolved  # nothing left to resolve


def test_a_resolved_name_clash_is_an_error_naming_the_group(tmp_path: Path) -> None:
    (group,) = load_groups_file(write(tmp_path, mutated(_with_refs)))

    def lookup(server: str, tool: str) -> Tool:
        # the server's tool has the same name as twin B
        return Tool("find_documentation", "Find docs.")

    with pytest.raises(ToolselectError) as info:
        resolve_group(group, lookup)
    err = info.value
    assert err.file == str(tmp_path / "g.groups.json") and err.line == 4
    assert err.place == "group 'G01'"
    assert "'find_documentation' is offered twice" in err.message and err.fix


# -- bad input -------------------------------------------------------------------------


def test_unknown_key_names_the_nearest_key(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["twins"]["B"].update(descripton="x")))
    check(error_of(path), path, line=line_of(path, '"descripton"'), place="groups[0].twins.B.descripton",
          has=("unknown key 'descripton'", "did you mean 'description'?"), fix=("rename it to description",))


def test_unknown_group_key_names_the_nearest_key(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0].update(distractor=[])))
    check(error_of(path), path, line=line_of(path, '"distractor"'), place="groups[0].distractor",
          has=("did you mean 'distractors'?",), fix=("rename it to distractors",))


def test_missing_twin_b(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["twins"].pop("B")))
    check(error_of(path), path, line=line_of(path, '"twins"'), place="groups[0].twins",
          has=("missing the required key 'B'",), fix=("add B:", "as well as A"))


def test_a_third_twin_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["twins"].update(C={"name": "x"})))
    check(error_of(path), path, line=line_of(path, '"C"'), place="groups[0].twins.C",
          has=("unknown key 'C'",), fix=("A, B",))


def test_duplicate_group_id(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"].append(copy.deepcopy(d["groups"][0]))))
    first, second = line_of(path, '"id"', 0), line_of(path, '"id"', 1)
    check(error_of(path), path, line=second, place="groups[1].id",
          has=("duplicate group id 'G01'", f"groups[0] on line {first}", f"groups[1] on line {second}"),
          fix=("unique id",))


@pytest.mark.parametrize(("value", "hint"), [("nothing", None), ("None", "did you mean 'none'?"),
                                             (False, None)])
def test_wrong_expect_value(tmp_path: Path, value: object, hint: str | None) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0].update(expect=value)))
    err = error_of(path)
    check(err, path, line=line_of(path, '"expect"'), place="groups[0].expect",
          has=('expect must be "none" or "pair"',), fix=('expect: "none" for a control', "leave expect out"))
    assert (hint in err.message) if hint else "did you mean" not in err.message


def test_missing_description(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["twins"]["A"].pop("description")))
    check(error_of(path), path, line=line_of(path, '"A"'), place="groups[0].twins.A",
          has=("this twin is missing the required key 'description'",), fix=("add description:",))


def test_a_reference_needs_its_tool(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(
        lambda d: d["groups"][0]["distractors"].__setitem__(0, {"server": "docs"})))
    # the line of the item's opening brace
    check(error_of(path), path, line=line_of(path, '"server"') - 1, place="groups[0].distractors[0]",
          has=("this tool is missing the required key 'tool'",), fix=("add tool:",))


def test_a_reference_with_a_written_out_name_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["twins"]["A"].update(server="docs", tool="s")))
    check(error_of(path), path, line=line_of(path, '"search_docs"'), place="groups[0].twins.A.name",
          has=("both 'server'", "and 'name'"), fix=("server: and tool:", "name: and description:"))


def test_factor_fields_on_a_distractor_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["distractors"][0].update(exclusion="x")))
    check(error_of(path), path, line=line_of(path, '"exclusion"', 1),
          place="groups[0].distractors[0].exclusion", has=("unknown key 'exclusion'",), fix=("remove it",))


def test_two_tools_with_one_name(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["distractors"][0].update(name="search_docs")))
    check(error_of(path), path, line=line_of(path, '"search_docs"', 1), place="groups[0].distractors[0].name",
          has=("'search_docs' is offered twice", "twins.A.name"), fix=("distinct name",))


def test_a_vendor_name_that_names_another_tool(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0]["twins"]["A"].update(vendor_name="read_file")))
    check(error_of(path), path, line=line_of(path, '"vendor_name"'), place="groups[0].twins.A.vendor_name",
          has=("vendor_name 'read_file' is the name of another tool", "distractors[0].name"),
          fix=("vendor name",))


def test_a_misspelled_cue(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d["groups"][0].update(cues={"social_prof": "x"})))
    check(error_of(path), path, line=line_of(path, '"social_prof"'), place="groups[0].cues.social_prof",
          has=("did you mean 'social_proof'?",), fix=("rename it to social_proof",))


def test_wrong_schema_version(tmp_path: Path) -> None:
    path = write(tmp_path, mutated(lambda d: d.update(schema_version="toolselect_cases.v1")))
    check(error_of(path), path, line=2, place="schema_version",
          has=("schema_version must be tool_preference_groups.v1",), fix=("tool_preference_groups.v1",))


def test_empty_and_non_mapping_files(tmp_path: Path) -> None:
    empty = write(tmp_path, "", "e.groups.yaml")
    err = error_of(empty)
    assert err.file == str(empty) and "empty" in err.message and err.fix
    listed = write(tmp_path, "[]", "l.groups.json")
    err = error_of(listed)
    assert "must be a mapping" in err.message and "schema_version" in (err.fix or "")


def test_group_model_is_hashable_and_comparable(tmp_path: Path) -> None:
    (a,) = load_groups_file(write(tmp_path, REFERENCE))
    (b,) = load_groups_file(write(tmp_path, REFERENCE, "other.groups.json"))
    assert isinstance(a, Group)
    assert a.fingerprint_data() == b.fingerprint_data()
    assert a != b  # different source files
