"""MCP servers that misbehave, all in one real run next to a healthy one.

For each fault: the item that needs the faulty server ends as an error whose message names
it, the healthy server's items still pass, the run ends in bounded time, and no server
process outlives the run. The servers are real processes on stdio (stdlib scripts in
tests/servers/, so each starts in milliseconds); the plugin talks to them with the mcp SDK.
One run holds every fault: that is the harder case (the faults are discovered side by side)
and it keeps the suite fast.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

# Imported once here, as bm25s is in conftest: pytester's in-process runs drop the modules a
# run imported, and importing the mcp SDK again costs about two seconds of CPU per run.
import anyio  # noqa: F401
import mcp.client.stdio  # noqa: F401
import pytest

from conftest import FIND, OFFICERS, Project, case
from pytest_toolselect.discovery.servers import clear_cache, discover, schema_problem
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.messages.errors import ServerError

SERVERS = Path(__file__).parent / "servers"
PROTOCOL_SERVER = SERVERS / "protocol_server.py"
BROKEN_SERVER = SERVERS / "broken_server.py"

#: the servers' own discovery timeout: every fault but a hang must be caught by its own
#: check, long before it (a run that ends only through it takes ten minutes and fails the bound)
PATIENT = 600.0
#: a bound for one run that only catches a hang: generous for a loaded 2-core machine, yet
#: well under the 600 s the hung servers sleep (a run that waited for one would pass it)
BOUND = 300.0


def stdio(script: Path, *args: str, pid_file: Path | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(script), *args], **extra}
    if pid_file is not None:  # each start appends its pid there
        entry["env"] = {("START_LOG" if script == BROKEN_SERVER else "PID_FILE"): str(pid_file)}
    return entry


def pids(pid_file: Path) -> list[int]:
    return [int(line) for line in pid_file.read_text().split()]


def is_gone(pid: int) -> bool:
    """The process has exited. An orphaned grandchild may linger as a zombie until the
    container's init collects it: it has exited all the same."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def server_entry(name: str, script: Path | None, *args: str, timeout: float | None = PATIENT) -> Any:
    """A factory for a faulty server's config entry, given the folder for its pid file.

    Its own timeout is PATIENT unless given; None leaves it to the run-wide option."""
    extra = {} if timeout is None else {"timeout": timeout}
    if script is None:
        return lambda root: {"command": "toolselect-no-such-server", "args": ["--stdio"], **extra}
    return lambda root: stdio(script, *args, pid_file=root / f"{name}.pid", **extra)


#: server (and case) name -> (config entry factory, patterns its error message must match)
FAULTS: dict[str, tuple[Any, list[str]]] = {
    "not_found": (server_entry("not_found", None), [
        r"MCP server 'not_found' \(stdio: toolselect-no-such-server --stdio\): "
        r"command 'toolselect-no-such-server' not found"]),
    "exits": (server_entry("exits", BROKEN_SERVER, "exit"), [
        r"MCP server 'exits' .*: exited or closed its stdout during initialize",
        r"fatal: COMPANIES_API_KEY is not set"]),
    "crashes": (server_entry("crashes", PROTOCOL_SERVER, "crash-init"), [
        r"MCP server 'crashes' .*: exited or closed its stdout during initialize",
        r"RuntimeError: cannot open the registry database"]),
    # no timeout of its own: the run-wide --toolselect-discovery-timeout=1 applies
    "hangs": (server_entry("hangs", PROTOCOL_SERVER, "hang-child", timeout=None), [
        r"MCP server 'hangs' .*: did not finish start, initialize and tools/list within 1 s"
        r" \(timeout; it was at: initialize\)",
        r"raise servers\.hangs\.timeout \(or --toolselect-discovery-timeout for every server\)"]),
    # its own timeout wins over the run-wide one, even a longer one
    "hangs_own": (server_entry("hangs_own", PROTOCOL_SERVER, "hang", timeout=1.5), [
        r"MCP server 'hangs_own' .*: did not finish start, initialize and tools/list within 1\.5 s"]),
    "noise_before": (server_entry("noise_before", PROTOCOL_SERVER, "noise-before"), [
        r"MCP server 'noise_before' .*: during initialize, it wrote a line on stdout that is not JSON-RPC:"
        r" 'companies server v1.2 listening on stdio' \(an MCP stdio server must write only JSON-RPC"]),
    "noise_among": (server_entry("noise_among", PROTOCOL_SERVER, "noise-among"), [
        r"MCP server 'noise_among' .*: during tools/list, it wrote a line on stdout that is not JSON-RPC:"
        r" 'INFO: client connected, 2 tools loaded'"]),
    # the text swallowed the initialize answer: without the check this waits for the timeout
    "noise_glued": (server_entry("noise_glued", PROTOCOL_SERVER, "noise-glued"), [
        r"MCP server 'noise_glued' .*: during initialize, it wrote a line on stdout that is not JSON-RPC:"
        r" 'Loading the registry... \{\"jsonrpc\""]),
    # the mark glues to the initialize answer, which the SDK then drops: say what it is
    "bom": (server_entry("bom", PROTOCOL_SERVER, "bom"), [
        r"MCP server 'bom' .*: during initialize, it wrote a line on stdout that is not JSON-RPC:"
        r" '\\ufeff\{\"jsonrpc\".*\(it starts with a UTF-8 byte order mark: write UTF-8 without one\)"]),
    "schema_type": (server_entry("schema_type", PROTOCOL_SERVER, "bad-type"), [
        r"MCP server 'schema_type' .*: answered tools/list with a result that breaks the MCP schema:"
        r" tools\[3\]\.inputSchema\.type: Input should be 'object' \(got 12\)"]),
    "schema_not_object": (server_entry("schema_not_object", PROTOCOL_SERVER, "not-object"), [
        r"MCP server 'schema_not_object' .*: answered tools/list with a result that breaks the MCP"
        r" schema: tools\[3\]\.inputSchema: Input should be a valid dictionary.*"
        r"\(got 'an object with a name'\)"]),
    "schema_inside": (server_entry("schema_inside", PROTOCOL_SERVER, "bad-nested"), [
        r"MCP server 'schema_inside' .*: the input schema of tool 'broken_tool' is not valid JSON"
        r" Schema: at properties\.name\.type: 12 is not a JSON Schema type"]),
    "dup_page": (server_entry("dup_page", PROTOCOL_SERVER, "duplicates"), [
        r"server 'dup_page' lists the tool 'find_company' twice \(tool names must be unique"]),
    "dup_pages": (server_entry("dup_pages", PROTOCOL_SERVER, "dup-pages"), [
        r"server 'dup_pages' lists the tool 'find_company' twice"]),
    "endless": (server_entry("endless", PROTOCOL_SERVER, "endless"), [
        r"MCP server 'endless' .* was still paginating tools/list after 1000 pages"
        r" \(1000 tools so far\): every answer carried a nextCursor"]),
}


def error_sections(output: str) -> dict[str, str]:
    """Each errored case's section of the ERRORS block, by case id."""
    sections: dict[str, str] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        header = re.fullmatch(r"_+ ERROR at setup of toolselect case (\S+) _+", line)
        if header:
            current = sections.setdefault(header.group(1), [])  # type: ignore[arg-type]
        elif line.startswith(("____", "====")):
            current = None
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}  # type: ignore[misc]


def test_each_faulty_server_errors_only_its_own_items(project: Project) -> None:
    servers = {name: make(project.path) for name, (make, _) in FAULTS.items()}
    servers["healthy"] = stdio(PROTOCOL_SERVER, "ok", pid_file=project.path / "healthy.pid",
                               timeout=PATIENT)
    project.config(servers)
    project.cases([case(name, FIND[1], FIND[2], servers=[name]) for name in FAULTS]
                  + [case(*FIND, servers=["healthy"]), case(*OFFICERS, servers=["healthy"])])

    started = time.monotonic()
    result = project.pytester.runpytest("--toolselect-discovery-timeout=1")
    elapsed = time.monotonic() - started

    result.assert_outcomes(passed=2, errors=len(FAULTS))
    output = result.stdout.str()
    sections = error_sections(output)
    assert sorted(sections) == sorted(FAULTS), output
    problems = [f"{name}: {pattern!r} not in\n{sections[name]}"
                for name, (_, patterns) in FAULTS.items() for pattern in patterns
                if not re.search(pattern, sections[name])]
    problems += [f"{name}'s error names other servers" for name, text in sections.items()
                 if any(f"'{other}'" in text for other in servers if other != name)]
    assert not problems, "\n\n".join(problems)

    # the hangs sleep 600 s: their timeouts and the SDK's bounded shutdown end the run
    assert elapsed < BOUND, f"the run took {elapsed:.1f} s"
    pid_files = sorted(project.path.glob("*.pid"))
    assert len(pid_files) == len(FAULTS)  # every server but the missing command started
    left = []
    for pid_file in pid_files:
        started_pids = pids(pid_file)
        # one start per server, failures included (hang-child also wrote its child's pid)
        assert len(started_pids) == (2 if pid_file.stem == "hangs" else 1), pid_file
        left += [f"{pid_file.stem}: {pid}" for pid in started_pids if not is_gone(pid)]
    assert not left, f"processes left behind: {left}"


def test_five_thousand_tools_are_discovered_and_offered(project: Project) -> None:
    pid_file = project.path / "big.pid"
    project.config({"big": stdio(PROTOCOL_SERVER, "many", "5000", pid_file=pid_file),
                    "healthy": stdio(PROTOCOL_SERVER, "ok")}, discovery_timeout=PATIENT)
    project.cases([case(*FIND, servers=["big"]),
                   case(*OFFICERS, servers=["big"]),
                   # a tool on the ninth of ten pages: chosen only if every page was offered
                   case("deep", "Which tool files form 4321 for department 53?", ["tool_4321"],
                        servers=["big"]),
                   case("healthy", OFFICERS[1], OFFICERS[2], servers=["healthy"])])
    started = time.monotonic()
    result = project.pytester.runpytest()
    elapsed = time.monotonic() - started
    result.assert_outcomes(passed=4)
    assert elapsed < BOUND, f"the run took {elapsed:.1f} s"
    assert all(is_gone(pid) for pid in pids(pid_file))


def test_empty_lines_and_crlf_on_stdout_are_not_noise(tmp_path: Path) -> None:
    # they hold no message and hide none: the SDK passes over them, and so must discovery
    clear_cache()
    spec = ServerSpec(name="windows", command=sys.executable,
                      args=(str(PROTOCOL_SERVER), "crlf-blank"), timeout=PATIENT)
    try:
        found = discover(spec, tmp_path)
    finally:
        clear_cache()
    assert [t.name for t in found.tools] == ["find_company", "list_officers", "lookup_vat"]


# --- the input schema check, on its own ----------------------------------------------------

GOOD_SCHEMAS = [
    {"type": "object", "properties": {}},
    {},
    {"type": "object", "additionalProperties": False,
     "properties": {"id": {"type": ["string", "null"], "pattern": "^[0-9]+$", "maxLength": 8}},
     "required": ["id"]},
    {"type": "object", "$defs": {"day": {"type": "string", "format": "date"}},
     "properties": {"from": {"$ref": "#/$defs/day"}, "any": True,
                    "pair": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
                    "tuple": {"type": "array", "items": [{"type": "string"}]},
                    "kind": {"anyOf": [{"const": "a"}, {"enum": ["b", "c"]}]},
                    "n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10.5}}},
    # keywords it does not know pass as they are (vendor extensions, annotations)
    {"type": "object", "x-internal": {"type": 12}, "examples": [{"id": 1}]},
    # 5.0 is an integer to JSON Schema (draft 6 on)
    {"type": "object", "properties": {"code": {"type": "string", "minLength": 2.0, "maxLength": 5.0}}},
    # what real servers send: draft-07 (zod) and 2020-12 keywords, annotations of any type
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:tools:edit", "title": "Édition",
     "type": "object", "required": [], "additionalProperties": False, "$defs": {"E": True},
     "properties": {
         "a": {"type": ["string", "null"], "nullable": True, "enum": ["x", 1, None, True, {"k": 1}],
               "const": "x", "format": "date-time", "examples": [1, None], "default": {"title": 5}},
         "b": {"type": "array", "items": True, "uniqueItems": True, "contains": {"type": "integer"},
               "minContains": 1},
         "c": {"type": "object", "properties": {}, "propertyNames": {"pattern": "^[a-z]+$"},
               "dependentRequired": {"x": ["y"]}, "dependencies": {"x": ["y"], "z": {"required": ["w"]}}},
         "d": {"if": {"type": "string"}, "then": {"minLength": 1}, "else": False, "not": {"type": "null"}},
         "e": {"$ref": "#/$defs/E", "description": "a $ref with a sibling — 日本語"},
         "f": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 0.5, "minimum": -1e308},
         "g": {"contentMediaType": "image/png", "$comment": "c", "deprecated": True, "readOnly": True},
         "h": {"unevaluatedProperties": False, "dependentSchemas": {"x": {"required": ["y"]}}},
         "i": {"oneOf": [{"type": "string"}], "discriminator": {"propertyName": "kind"}},
         "j": {"items": [], "additionalItems": False}}},
]


@pytest.mark.parametrize("schema", GOOD_SCHEMAS)
def test_valid_schemas_pass(schema: dict[str, Any]) -> None:
    assert schema_problem(schema) is None


@pytest.mark.parametrize(("schema", "problem"), [
    ({"type": 12}, "at type: 12 is not a JSON Schema type"),
    ({"type": "object", "properties": {"id": {"type": "int"}}},
     "at properties.id.type: 'int' is not a JSON Schema type"),
    ({"type": ["string", "dict"]}, "at type: 'dict' is not a JSON Schema type"),
    ({"type": []}, "at type: [] is not a JSON Schema type"),
    ({"type": "object", "properties": {"id": "string"}},
     "at properties.id: a schema must be an object or a boolean, got 'string'"),
    ({"type": "object", "properties": ["id"]}, 'at properties: must map names to schemas, got ["id"]'),
    ({"type": "object", "required": "id"}, "at required: must be a list of property names, got 'id'"),
    ({"type": "object", "required": [1]}, "at required: must be a list of property names, got [1]"),
    ({"properties": {"l": {"type": "array", "items": {"maxLength": -1}}}},
     "at properties.l.items.maxLength: must be a non-negative integer, got -1"),
    ({"properties": {"t": {"items": [{"type": "strin"}]}}},
     "at properties.t.items[0].type: 'strin' is not a JSON Schema type"),
    ({"anyOf": []}, "at anyOf: must be a non-empty list of schemas, got []"),
    ({"oneOf": [{"type": "string"}, {"minimum": "0"}]}, "at oneOf[1].minimum: must be a number, got '0'"),
    ({"properties": {"d": {"description": 5}}}, "at properties.d.description: must be a string, got 5"),
    ({"enum": "abc"}, "at enum: must be a list, got 'abc'"),
    ({"properties": {"s": {"maxLength": 5.5}}}, "at properties.s.maxLength: must be a non-negative integer"),
    ("an object", "a schema must be an object or a boolean, got 'an object'"),
])
def test_invalid_schemas_say_where(schema: Any, problem: str) -> None:
    found = schema_problem(schema)
    assert found is not None and found.startswith(problem), found


def test_a_tools_file_with_an_invalid_schema_names_the_file_and_tool(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(
        '[{"name": "ok"}, {"name": "lookup", "inputSchema": {"type": "object",'
        ' "properties": {"id": {"type": "uuid"}}}}]', encoding="utf-8")
    clear_cache()
    try:
        with pytest.raises(ServerError) as err:
            discover(ServerSpec(name="builtins", tools_file="tools.json"), tmp_path)
    finally:
        clear_cache()
    assert str(err.value).startswith(
        f"{tmp_path / 'tools.json'}: server 'builtins': the input schema of tool 'lookup' is not valid"
        " JSON Schema: at properties.id.type: 'uuid' is not a JSON Schema type")
