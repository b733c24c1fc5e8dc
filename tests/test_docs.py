"""The docs and the CI workflows stay true to the code.

The configuration reference is generated from the option table and the config schema,
and the committed page must equal what the generator makes now; every option must be in
it and every option it lists must exist. Every ``--toolselect-*`` flag named in the
README, the docs or a workflow must exist, with a value its option accepts. Links
between the pages resolve. The project's CI runs exactly the README's commands, and the
gate workflow the docs show is the real file.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_toolselect.cli import reference
from pytest_toolselect.inputs.config import load_config
from pytest_toolselect.inputs.option_table import BY_NAME, OPTIONS
from pytest_toolselect.run.settings import convert

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CONFIGURATION = DOCS / "configuration.md"
CI = ROOT / ".github" / "workflows" / "ci.yml"
GATE = DOCS / "workflows" / "toolselect-gate.yml"

FLAG = re.compile(r"--toolselect-[a-z0-9-]+\*?")
#: a row of the reference's options table: flag, ini key, config key
OPTION_ROW = re.compile(
    r"\| `(--toolselect-[a-z0-9-]+)` \| `([a-z0-9_]+)` \| (`[a-z0-9_]+`|\(not in the file\)) \|")
BY_FLAG = {o.flag: o for o in OPTIONS}


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def workflow_files() -> list[Path]:
    return [CI, GATE]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# -- the configuration reference ----------------------------------------------------------


def test_configuration_reference_is_up_to_date() -> None:
    committed = CONFIGURATION.read_text(encoding="utf-8")
    assert committed == reference.render(), (
        "docs/configuration.md is out of date with the options or the config schema: "
        f"regenerate it with `{reference.REGENERATE}` from the repository root"
    )


def option_rows(text: str) -> dict[str, tuple[str, str]]:
    """flag -> (ini key, config key) from the reference's options table."""
    rows: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        m = OPTION_ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} is listed twice"
            rows[m.group(1)] = (m.group(2), m.group(3).strip("`"))
    return rows


def test_reference_lists_every_option_and_only_options() -> None:
    rows = option_rows(CONFIGURATION.read_text(encoding="utf-8"))
    flags = {o.flag for o in OPTIONS}
    assert flags - set(rows) == set(), (
        f"options missing from docs/configuration.md; regenerate with `{reference.REGENERATE}`")
    assert set(rows) - flags == set(), "docs/configuration.md lists flags that do not exist"
    for flag, (ini, key) in rows.items():
        opt = BY_FLAG[flag]
        assert ini == opt.ini
        assert key == ("(not in the file)" if opt.name == "config" else opt.name)


def test_reference_lists_every_other_config_key() -> None:
    schema = reference._schema()
    text = CONFIGURATION.read_text(encoding="utf-8")
    keys = set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE))
    others = {k for k in schema["properties"] if k not in BY_NAME}
    assert others == {"servers", "servers_from", "tool_name_format", "system", "identifiers", "prices",
                      "lint_allow"}
    nested = (set(schema["$defs"]["server"]["properties"])
              | set(schema["$defs"]["identifiers"]["properties"])
              | set(schema["properties"]["prices"]["additionalProperties"]["properties"]))
    assert (others | nested) - keys == set()


def test_reference_regenerates_with_write(tmp_path: Path) -> None:
    out = tmp_path / "configuration.md"
    assert reference.main(["--write", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == reference.render()


def test_reference_examples_load_as_configs(tmp_path: Path) -> None:
    (tmp_path / "toolselect.yaml").write_text(reference.EXAMPLE_YAML, encoding="utf-8")
    config = load_config(tmp_path)
    assert list(config.servers) == ["companies", "docs", "builtins"]
    assert [s.kind for s in config.servers.values()] == ["stdio", "http", "tools_file"]
    assert config.options["reps"] == 3 and config.options["max_cost_usd"] == 2.5
    assert config.tool_name_format == "mcp__{server}__{tool}"
    assert config.identifiers.params == ("company_number",)
    assert config.prices["openai/qwen2.5:7b"]["input_per_mtok"] == 0.0

    toml = tmp_path / "toml"
    toml.mkdir()
    (toml / "pyproject.toml").write_text(reference.EXAMPLE_TOML, encoding="utf-8")
    config = load_config(toml)
    assert config.options["model"] == "anthropic/claude-haiku-4-5"
    assert config.servers["companies"].args == ("mcp_servers/companies.py",)


def test_markdown_escaping_keeps_code_spans_and_tables_intact() -> None:
    text = reference._md("anthropic/<model> and `## <server>` or a|b and *_KEY")
    assert text == "anthropic/&lt;model&gt; and `## <server>` or a\\|b and \\*_KEY"


# -- flags named anywhere ----------------------------------------------------------------------


def named_flags() -> Iterator[tuple[Path, str]]:
    for path in (*markdown_files(), *workflow_files()):
        for flag in FLAG.findall(path.read_text(encoding="utf-8")):
            yield path, flag


def test_every_flag_named_in_the_docs_and_workflows_exists() -> None:
    found = list(named_flags())
    assert len(found) > 50  # the scan reads the files it should
    unknown = []
    for path, flag in found:
        if flag.endswith(("*", "-")):
            # `--toolselect-fail-on-*` names a family of flags
            ok = any(f.startswith(flag.rstrip("*")) for f in BY_FLAG)
        else:
            ok = flag in BY_FLAG
        if not ok:
            unknown.append(f"{rel(path)}: {flag}")
    assert unknown == []


def pytest_commands() -> Iterator[tuple[str, list[str]]]:
    """Every pytest command line in the docs' sh blocks and the workflows' run steps."""
    for path in markdown_files():
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
            for line in block.replace("\\\n", " ").splitlines():
                yield from _pytest_parts(f"{rel(path)}: {line.strip()}", line)
    for path in workflow_files():
        for run in workflow_runs(load_workflow(path)):
            for line in run.splitlines():
                yield from _pytest_parts(f"{rel(path)}: {line.strip()}", line)


def _pytest_parts(where: str, line: str) -> Iterator[tuple[str, list[str]]]:
    for part in re.split(r"&&|;", line.split("#")[0]):
        words = shlex.split(part)
        if words and words[0].endswith("pytest"):
            yield where, words[1:]


def test_every_pytest_command_shown_passes_values_its_options_accept() -> None:
    commands = list(pytest_commands())
    assert len(commands) > 15
    checked = 0
    for where, args in commands:
        i = 0
        while i < len(args):
            word = args[i]
            flag, _, inline = word.partition("=")
            opt = BY_FLAG.get(flag)
            i += 1
            if opt is None:
                continue
            if opt.kind == "bool":
                assert not inline, f"{where}: {flag} takes no value"
            else:
                value = inline or (args[i] if i < len(args) else "")
                assert value and not value.startswith("--"), f"{where}: {flag} needs a value"
                if not inline:
                    i += 1
                # raises pytest.UsageError for a value the option refuses
                convert(opt, value, where)
                if opt.name == "cache_mode":
                    from pytest_toolselect.run.cache import check_mode

                    check_mode(value)
            checked += 1
    assert checked > 40


def test_a_bad_value_in_a_command_would_be_caught() -> None:
    with pytest.raises(pytest.UsageError):
        convert(BY_FLAG["--toolselect-reps"], "three", "a doc")
    with pytest.raises(pytest.UsageError):
        convert(BY_FLAG["--toolselect-rule"], "fisher-0.5", "a doc")


# -- links ------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def test_links_between_the_pages_resolve() -> None:
    broken = []
    count = 0
    for path in markdown_files():
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            count += 1
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                broken.append(f"{rel(path)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{rel(path)}: {target} (no such heading)")
    assert count > 30
    assert broken == []


def test_every_page_is_reachable_from_the_index() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([a-z-]+\.md)\)", index))
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert pages - linked == set()


# -- the workflows ----------------------------------------------------------------------------


def load_workflow(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{rel(path)} is not a mapping"
    # YAML 1.1 reads the key `on` as true
    if True in data:
        data["on"] = data.pop(True)
    return data


def workflow_runs(data: dict[str, Any]) -> Iterator[str]:
    for job in data["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                yield str(step["run"])


@pytest.mark.parametrize("path", workflow_files(), ids=rel)
def test_workflows_parse_and_have_jobs_with_steps(path: Path) -> None:
    data = load_workflow(path)
    assert data["on"]["push"]["branches"] == ["main"]
    assert "pull_request" in data["on"]
    for name, job in data["jobs"].items():
        assert job["runs-on"] == "ubuntu-latest", name
        assert job["steps"], name
        for step in job["steps"]:
            assert ("run" in step) != ("uses" in step), f"{name}: {step}"


def readme_setup_commands() -> list[str]:
    """The two commands under the README's set-up heading."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)]


def test_ci_runs_exactly_the_readme_commands() -> None:
    setup, tests = readme_setup_commands()
    assert tests == ".venv/bin/pytest tests -n 2"
    assert setup.startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'")
    job = load_workflow(CI)["jobs"]["test"]
    runs = [str(s["run"]).strip() for s in job["steps"] if "run" in s]
    assert setup in runs
    assert tests in runs
    # set up before testing, and the test command is the job's last step
    assert runs.index(setup) < runs.index(tests) == len(runs) - 1


def test_ci_covers_every_supported_python_and_lints() -> None:
    data = load_workflow(CI)
    versions = data["jobs"]["test"]["strategy"]["matrix"]["python-version"]
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    minimum = re.search(r'requires-python = ">=([0-9.]+)"', pyproject)
    assert minimum is not None and versions[0] == minimum.group(1)
    lint = [str(s["run"]) for s in data["jobs"]["lint"]["steps"] if "run" in s]
    assert "ruff check ." in lint
    # the HTML report's browser test finds Chromium through CHROMIUM, and must not skip
    test_runs = " ".join(workflow_runs({"jobs": {"test": data["jobs"]["test"]}}))
    assert 'echo "CHROMIUM=' in test_runs and "$GITHUB_ENV" in test_runs
    assert data["jobs"]["test"]["env"]["TOOLSELECT_REQUIRE_BROWSER"] == "1"


def gate_command(job: dict[str, Any]) -> list[str]:
    (command,) = [shlex.split(str(s["run"])) for s in job["steps"]
                  if str(s.get("run", "")).startswith("pytest")]
    return command


def flag_values(command: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for i, word in enumerate(command):
        opt = BY_FLAG.get(word)
        if opt is not None:
            out[word] = None if opt.kind == "bool" else command[i + 1]
    return out


def test_gate_workflow_records_on_main_and_gates_pull_requests() -> None:
    data = load_workflow(GATE)
    baseline, gate = data["jobs"]["baseline"], data["jobs"]["gate"]
    assert baseline["if"] == "github.event_name != 'pull_request'"
    assert gate["if"] == "github.event_name == 'pull_request'"

    on_main = flag_values(gate_command(baseline))
    assert "--toolselect-update-baseline" in on_main
    assert on_main["--toolselect-cache-mode"] == "refresh"

    on_pr = flag_values(gate_command(gate))
    assert "--toolselect-update-baseline" not in on_pr
    assert on_pr["--toolselect-reps"] == on_main["--toolselect-reps"] == "3"
    for flag in ("--toolselect-model", "--toolselect-baseline", "--toolselect-cache"):
        assert on_pr[flag] == on_main[flag], flag  # one subject, one baseline, one cache
    outputs = {on_pr["--toolselect-json"], on_pr["--toolselect-markdown"], on_pr["--toolselect-html"]}
    assert outputs == {"results.json", "comment.md", "report.html"}

    uses = {s["uses"].split("@")[0]: s for s in gate["steps"] if "uses" in s}
    assert uses["marocchino/sticky-pull-request-comment"]["with"]["path"] == "comment.md"
    uploaded = uses["actions/upload-artifact"]["with"]["path"].split()
    assert uploaded == ["results.json", "report.html"]
    assert gate["permissions"]["pull-requests"] == "write"
    cache_paths = {s["with"]["path"] for s in gate["steps"]
                   if s.get("uses", "").startswith("actions/cache/")}
    assert cache_paths == {on_pr["--toolselect-baseline"], on_pr["--toolselect-cache"]}
    # the key comes from a repository secret, never from the file
    for job in (baseline, gate):
        (step,) = [s for s in job["steps"] if str(s.get("run", "")).startswith("pytest")]
        assert step["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}"


def test_ci_page_shows_the_real_gate_workflow() -> None:
    page = (DOCS / "ci.md").read_text(encoding="utf-8")
    assert "```yaml\n" + GATE.read_text(encoding="utf-8") + "```" in page


def _test_functions(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")}


def test_every_test_the_reliability_table_names_exists() -> None:
    """Each row of docs/reliability.md names a test; a renamed or deleted test fails here."""
    page = (DOCS / "reliability.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| fault")]
    assert len(rows) >= 40
    named = re.findall(r"(tests/[\w/]+\.py)::(test_\w+)", page)
    for row in rows:
        assert re.search(r"tests/[\w/]+\.py::test_\w+", row), f"a row names no test: {row[:80]}"
    missing = [f"{file}::{name}" for file, name in sorted(set(named))
               if not (ROOT / file).is_file() or name not in _test_functions(ROOT / file)]
    assert not missing, f"docs/reliability.md names tests that do not exist: {missing}"
