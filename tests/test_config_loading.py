"""toolselect.yaml / [tool.toolselect] / explicit config: where it is found, what it holds,
and clear errors (file, line, path, key, fix) for every malformed input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_toolselect.inputs.cases import IdentifierSettings
from pytest_toolselect.inputs.config import Config, ServerSpec, load_config
from pytest_toolselect.inputs.option_table import OPTIONS
from pytest_toolselect.messages.allerrors import Mistakes
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.scoring.contradictions import load_case_file

FULL = """\
model: anthropic/claude-haiku-4-5
baseline: .toolselect/main.json
update_baseline: false
reps: 3
fail_on_still_failing: true
fail_on_flaky: true
bm25_threshold: 2
discovery_timeout: 12.5
tool_name_format: "mcp__{server}__{tool}"
system: You are a helpful agent.
identifiers: {params: [vat], ignore_params: [page], leading_zeros: false}
servers:
  companies:
    command: python
    args: [examples/companies/server.py, "--port", "8080"]
    env: {COMPANIES_API_KEY: placeholder}
    cwd: examples
    timeout: 5
  docs:
    url: http://127.0.0.1:8765/mcp
    headers: {Authorization: Bearer placeholder}
  builtins:
    tools_file: tools/builtins.yaml
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def error_of(rootdir: Path, explicit: Path | None = None) -> ToolselectError:
    with pytest.raises(ToolselectError) as info:
        load_config(rootdir, explicit)
    return info.value


def check(err: ToolselectError, path: Path, *, line: int | None, place: str | None,
          has: tuple[str, ...] = (), fix: tuple[str, ...] = ()) -> None:
    text = str(err)
    assert err.file == str(path), text
    assert err.line == line, text
    assert err.place == place, text
    assert text.startswith(str(path) + (f":{line}: " if line else ": ")), text
    for part in has:
        assert part in err.message, text
    assert err.fix, text
    for part in fix:
        assert part in err.fix, text


# -- where the config comes from ----------------------------------------------------------------


def test_full_toolselect_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", FULL)
    cfg = load_config(tmp_path)
    assert cfg.path == path
    assert cfg.root == tmp_path
    assert cfg.servers == {
        "companies": ServerSpec(
            name="companies", command="python",
            args=("examples/companies/server.py", "--port", "8080"),
            env=(("COMPANIES_API_KEY", "placeholder"),), cwd="examples", timeout=5.0,
        ),
        "docs": ServerSpec(name="docs", url="http://127.0.0.1:8765/mcp",
                           headers=(("Authorization", "Bearer placeholder"),)),
        "builtins": ServerSpec(name="builtins", tools_file="tools/builtins.yaml"),
    }
    assert [s.kind for s in cfg.servers.values()] == ["stdio", "http", "tools_file"]
    assert cfg.tool_name_format == "mcp__{server}__{tool}"
    assert cfg.system == "You are a helpful agent."
    assert cfg.identifiers == IdentifierSettings(params=("vat",), ignore_params=("page",),
                                                 leading_zeros=False)


def test_options_are_typed(tmp_path: Path) -> None:
    write(tmp_path, "toolselect.yaml", FULL)
    options = load_config(tmp_path).options
    assert options == {
        "model": "anthropic/claude-haiku-4-5",
        "baseline": ".toolselect/main.json",
        "update_baseline": False,
        "reps": 3,
        "fail_on_still_failing": True,
        "fail_on_flaky": True,
        "bm25_threshold": 2.0,
        "discovery_timeout": 12.5,
    }
    assert type(options["reps"]) is int
    assert type(options["bm25_threshold"]) is float  # written as 2


def test_toolselect_yml(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yml", "model: local/bm25\n")
    cfg = load_config(tmp_path)
    assert (cfg.path, cfg.options) == (path, {"model": "local/bm25"})


def test_yaml_and_yml_both_present(tmp_path: Path) -> None:
    write(tmp_path, "toolselect.yaml", "reps: 1\n")
    path = write(tmp_path, "toolselect.yml", "reps: 2\n")
    check(error_of(tmp_path), path, line=None, place=None,
          has=("toolselect.yaml and toolselect.yml",), fix=("keep one",))


def test_empty_toolselect_yaml_means_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "# nothing set yet\n")
    assert load_config(tmp_path) == Config(path=path, root=tmp_path)


def test_pyproject(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", """\
[project]
name = "x"

[tool.toolselect]
model = "local/bm25"
reps = 2
fail_on_flaky = true
tool_name_format = "{tool}"
identifiers = { params = ["ref"] }

[tool.toolselect.servers.companies]
command = "python"
args = ["server.py"]
env = { KEY = "placeholder" }

[tool.toolselect.servers.static]
tools_file = "tools.json"
""")
    cfg = load_config(tmp_path)
    assert cfg.path == path and cfg.root == tmp_path
    assert cfg.options == {"model": "local/bm25", "reps": 2, "fail_on_flaky": True}
    assert cfg.servers["companies"] == ServerSpec(
        name="companies", command="python", args=("server.py",), env=(("KEY", "placeholder"),))
    assert cfg.servers["static"].tools_file == "tools.json"
    assert cfg.identifiers.params == ("ref",)
    assert cfg.tool_name_format == "{tool}"


def test_pyproject_without_table_gives_empty_config(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n[tool.other]\na = 1\n")
    assert load_config(tmp_path) == Config(path=None, root=tmp_path)


def test_no_config_at_all(tmp_path: Path) -> None:
    cfg = load_config(tmp_path)
    assert cfg == Config(path=None, root=tmp_path)
    assert cfg.servers == {} and cfg.options == {} and cfg.identifiers == IdentifierSettings()


def test_toolselect_yaml_wins_over_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.toolselect]\nreps = 5\n")
    path = write(tmp_path, "toolselect.yaml", "reps: 2\n")
    cfg = load_config(tmp_path)
    assert (cfg.path, cfg.options) == (path, {"reps": 2})


def test_explicit_path_wins_and_sets_root(tmp_path: Path) -> None:
    write(tmp_path, "toolselect.yaml", "reps: 2\n")
    path = write(tmp_path, "ci/other.yaml", "reps: 4\nservers: {s: {tools_file: t.yaml}}\n")
    cfg = load_config(tmp_path, path)
    assert cfg.path == path and cfg.root == tmp_path / "ci"
    assert cfg.options == {"reps": 4}
    # relative paths stay as written; they resolve against cfg.root later
    assert cfg.servers["s"].tools_file == "t.yaml"


def test_explicit_json_and_toml(tmp_path: Path) -> None:
    j = write(tmp_path, "c.json", json.dumps({"reps": 3, "servers": {"a": {"url": "https://x/mcp"}}}))
    assert load_config(tmp_path, j).servers["a"].url == "https://x/mcp"
    t = write(tmp_path, "x/pyproject.toml", "[tool.toolselect]\nreps = 6\n")
    assert load_config(tmp_path, t).options == {"reps": 6}


def test_explicit_missing(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    check(error_of(tmp_path, path), path, line=None, place=None, has=("not found",),
          fix=("--toolselect-config",))


def test_explicit_toml_without_table(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    check(error_of(tmp_path, path), path, line=None, place=None,
          has=("no [tool.toolselect] table",), fix=("[tool.toolselect]",))


def test_no_toml_reader_skips_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Python 3.10 without tomli: pyproject is skipped quietly, an explicit .toml is an error
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    path = write(tmp_path, "pyproject.toml", "[tool.toolselect]\nreps = 5\n")
    assert load_config(tmp_path) == Config(path=None, root=tmp_path)
    check(error_of(tmp_path, path), path, line=None, place=None, has=("tomli",),
          fix=("pip install tomli",))


def test_identifiers_from_config_merge_under_case(tmp_path: Path) -> None:
    write(tmp_path, "toolselect.yaml", "identifiers: {params: [vat], leading_zeros: false}\n")
    cfg = load_config(tmp_path)
    cases = write(tmp_path, "a.toolselect.yaml", """\
schema_version: toolselect_cases.v1
cases:
  - {id: a, question: q, why: w, identifiers: {leading_zeros: true}}
  - {id: b, question: q, why: w}
""")
    a, b = load_case_file(cases, cfg.identifiers).cases
    assert a.identifiers == IdentifierSettings(params=("vat",), leading_zeros=True)
    assert b.identifiers == IdentifierSettings(params=("vat",), leading_zeros=False)


def test_schema_lists_every_option_and_is_closed() -> None:
    import jsonschema

    schema = load_schema("toolselect_config.v1")
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    kinds = {"str": "string", "path": "string", "int": "integer", "float": "number",
             "bool": "boolean"}
    for opt in OPTIONS:
        if opt.name == "config":
            assert "config" not in props  # a config file cannot point to another one
        else:
            assert props[opt.name]["type"] == kinds[opt.kind], opt.name
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["server"]["additionalProperties"] is False
    assert schema["$defs"]["identifiers"]["additionalProperties"] is False


# -- errors ----------------------------------------------------------------------------------


def test_bad_yaml(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "model: a\nservers:\n  x: [1\n")
    err = error_of(tmp_path)
    assert err.file == str(path) and err.line in (3, 4)
    assert "invalid YAML" in err.message


def test_top_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "- model\n")
    check(error_of(tmp_path), path, line=1, place=None, has=("must be a mapping", "got a list"),
          fix=("model:",))


def test_binary_and_huge_config(tmp_path: Path) -> None:
    path = tmp_path / "toolselect.yaml"
    path.write_bytes(b"\x00\x01")
    check(error_of(tmp_path), path, line=1, place=None, has=("binary",), fix=("text",))
    with path.open("wb") as f:
        f.truncate(11 * 1024 * 1024)
    check(error_of(tmp_path), path, line=None, place=None, has=("10 MB",), fix=("split",))


def test_misspelled_top_key(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "model: x\nrep: 3\n")
    check(error_of(tmp_path), path, line=2, place="rep",
          has=("unknown key 'rep'; did you mean 'reps'?",), fix=("rename it to reps",))


def test_misspelled_server_key(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    command: x\n    arg: [y]\n")
    check(error_of(tmp_path), path, line=4, place="servers.a.arg",
          has=("did you mean 'args'?",), fix=("rename it to args",))


def test_config_key_in_config(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "reps: 1\nconfig: other.yaml\n")
    check(error_of(tmp_path), path, line=2, place="config",
          has=("cannot be set inside the config file",), fix=("--toolselect-config",))


@pytest.mark.parametrize(("text", "place", "has", "fix"), [
    ("reps: three\n", "reps", ("reps must be a whole number", "'three'"), ("reps: 3",)),
    ("reps: '3'\n", "reps", ("reps must be a whole number",), ("without quotes",)),
    ("reps: 0\n", "reps", ("1 or more", "got 0"), ("reps: 3",)),
    ("reps: 2.5\n", "reps", ("whole number",), None),
    ("bm25_threshold: -1\n", "bm25_threshold", ("0 or more",), None),
    ("fail_on_flaky: 'yes'\n", "fail_on_flaky", ("true or false",), ("true or false",)),
    ("model: 3\n", "model", ("model must be a model string",), ('"3"',)),
    ("model: ''\n", "model", ("model must not be empty",), ()),
    ("system: [a]\n", "system", ("system must be a string",), ("give system a string",)),
])
def test_option_types(tmp_path: Path, text: str, place: str, has: tuple[str, ...],
                      fix: tuple[str, ...] | None) -> None:
    path = write(tmp_path, "toolselect.yaml", "# options\n" + text)
    err = error_of(tmp_path)
    assert (err.file, err.line, err.place) == (str(path), 2, place), str(err)
    for part in has:
        assert part in err.message, str(err)
    assert err.fix, str(err)
    if fix is not None:
        for part in fix:
            assert part in err.fix, str(err)


def test_server_with_two_sources(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    command: x\n    url: http://h/mcp\n")
    check(error_of(tmp_path), path, line=2, place="servers.a",
          has=("'command' and 'url'", "exactly one of command, url or tools_file"),
          fix=("keep one",))


def test_server_with_no_source(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    timeout: 3\n")
    check(error_of(tmp_path), path, line=2, place="servers.a",
          has=("none of command, url or tools_file",), fix=("command:", "url:", "tools_file:"))


def test_server_args_without_command(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    url: http://h/mcp\n    args: [x]\n")
    check(error_of(tmp_path), path, line=4, place="servers.a.args",
          has=("'args' only applies together with 'command'",), fix=("remove args",))


def test_bad_server_name(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  my docs:\n    url: http://h/mcp\n")
    check(error_of(tmp_path), path, line=2, place='servers["my docs"]',
          has=("server name 'my docs' is not valid",), fix=("my-docs",))


def test_env_value_not_a_string(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    command: x\n    env: {PORT: 8080}\n")
    check(error_of(tmp_path), path, line=4, place="servers.a.env.PORT",
          has=("PORT must be a string", "8080"), fix=('PORT: "8080"',))


def test_server_url_and_timeout(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    url: ftp://h\n")
    check(error_of(tmp_path), path, line=3, place="servers.a.url",
          has=("'ftp://h' is not valid", "http://"), fix=("url: http://127.0.0.1:8765/mcp",))
    write(tmp_path, "toolselect.yaml", "servers:\n  a:\n    tools_file: t\n    timeout: 0\n")
    err = error_of(tmp_path)
    assert (err.line, err.place) == (4, "servers.a.timeout")
    assert "number of seconds" in err.message


def test_servers_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "toolselect.yaml", "servers: [companies]\n")
    check(error_of(tmp_path), path, line=1, place="servers",
          has=("servers must be a mapping of server names",), fix=("e.g. servers: {companies:",))


@pytest.mark.parametrize(("fmt", "has", "fix"), [
    ("mcp__{server}", "must contain {tool}", "mcp__{server}__{tool}"),
    ("{srv}__{tool}", "uses {srv}", "did you mean {server}?"),
    ("{tool", "not a valid format string", "double any literal brace"),
    ("{}{tool}", "uses {}", "mcp__{server}__{tool}"),
    ("{tool.name}", "uses {tool.name}", "did you mean {tool}?"),
])
def test_tool_name_format(tmp_path: Path, fmt: str, has: str, fix: str) -> None:
    path = write(tmp_path, "toolselect.yaml", f"reps: 1\ntool_name_format: '{fmt}'\n")
    check(error_of(tmp_path), path, line=2, place="tool_name_format", has=(has,), fix=(fix,))


def test_pyproject_schema_error_names_line_and_table(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", """\
[project]
name = "x"

[tool.toolselect]
model = "local/bm25"
reps = "3"

[tool.toolselect.servers.a]
command = "python"
url = "http://h/mcp"
""")
    both = error_of(tmp_path)  # both mistakes at once, in file order
    assert isinstance(both, Mistakes) and len(both.errors) == 2, str(both)
    check(both.errors[0], path, line=6, place="tool.toolselect.reps",
          has=("reps must be a whole number",), fix=("without quotes",))
    check(both.errors[1], path, line=8, place="tool.toolselect.servers.a",
          has=("'command' and 'url'",), fix=("keep one",))
    path.write_text(path.read_text().replace('reps = "3"', "reps = 3"))
    check(error_of(tmp_path), path, line=8, place="tool.toolselect.servers.a",
          has=("'command' and 'url'",), fix=("keep one",))
    path.write_text(path.read_text().replace('url = "http://h/mcp"', "envs = {}"))
    check(error_of(tmp_path), path, line=10, place="tool.toolselect.servers.a.envs",
          has=("unknown key 'envs'; did you mean 'env'?",), fix=("rename it to env",))


def test_pyproject_bad_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", '[tool.toolselect]\nmodel = "local/bm25\nreps = 1\n')
    check(error_of(tmp_path), path, line=2, place=None, has=("invalid TOML",), fix=("quoting",))


def test_pyproject_table_not_a_table(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", '[tool]\ntoolselect = "yes"\n')
    check(error_of(tmp_path), path, line=2, place="tool.toolselect",
          has=("must be a table",), fix=("[tool.toolselect]",))


def test_a_server_timeout_written_as_the_default_still_wins(tmp_path: Path) -> None:
    # `timeout: 30` is the user's choice, not the default: --toolselect-discovery-timeout must
    # not override it, while a server with no timeout takes the option's value
    write(tmp_path, "toolselect.yaml",
          "servers:\n  a:\n    tools_file: t\n    timeout: 30\n  b:\n    tools_file: t\n")
    servers = load_config(tmp_path).servers
    assert (servers["a"].timeout, servers["a"].limit) == (30.0, 30.0)
    assert servers["b"].timeout is None and servers["b"].limit == 30.0
