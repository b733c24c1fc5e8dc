"""``toolselect lint``: the linter from the command line (no pytest, no key, no network)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pytest_toolselect.lint.findings import ERROR, WARNING

from .tools import add_config

#: exit statuses: clean, findings at the --fail-on level (bad input is the CLI's own 2)
CLEAN, FINDINGS = 0, 1

EPILOG = """\
examples:
  toolselect lint                                  # toolselect.yaml here, case files below it
  toolselect lint --config ci/toolselect.yaml --fail-on warning
  toolselect lint --json lint.json --markdown comment.md

exit status: 0 no finding at the --fail-on level (default: error), 1 otherwise,
             2 bad input (a bad config or case file, a server that does not start)
"""


def add_parser(commands: Any, formatter: Any) -> None:
    lint = commands.add_parser(
        "lint", formatter_class=formatter, epilog=EPILOG,
        help="find confusable tools and weak descriptions, before any call is paid for",
        description="Discover every server in the config (stdio, HTTP, tools files) as the gate "
                    "does and check the tool set alone: confusable pairs, descriptions, parameters, "
                    "names, size, and the tools no case tests. No model is called. The rules are in "
                    "docs/lint.md.")
    add_config(lint)
    lint.add_argument("--json", metavar="OUT", help="write the findings as JSON to OUT ('-': stdout)")
    lint.add_argument("--markdown", metavar="OUT",
                      help="write the findings as a markdown PR comment to OUT ('-': stdout)")
    lint.add_argument("--fail-on", choices=(ERROR, WARNING), default=ERROR,
                      help="the least severe finding that fails (exit 1); default: error")
    lint.add_argument("--model", metavar="MODEL",
                      help="price the tool list at this model (default: the config's model)")
    lint.set_defaults(run=run)


def build_report(config_path: str | None, model: str | None = None) -> dict[str, Any]:
    """Discover, lint and return the report as plain data (the JSON document)."""
    from pytest_toolselect.inputs.option_table import DEFAULT_MODEL
    from pytest_toolselect.lint.decorated import find_decorated
    from pytest_toolselect.lint.run import (
        CASE_SUFFIXES,
        instructions_of,
        lint,
        load_cases,
        project_files,
        toolset_of,
    )

    from .tools import discovered, discovery_timeout

    config, tools = discovered(config_path, None)
    # the servers are discovered once: their instructions come from the same cache
    instructions = instructions_of(config, discovery_timeout(config))
    files = project_files(config.root)
    cases = load_cases([p for p in files if p.name.endswith(CASE_SUFFIXES)], config)
    chosen = model or str(config.options.get("model") or DEFAULT_MODEL)
    toolset = toolset_of(config, tools, cases, chosen, find_decorated(files), instructions)
    return lint(toolset, config.identifiers, allow=config.lint_allow).to_dict()


def run(args: argparse.Namespace) -> int:
    from pytest_toolselect.lint.document import LintView
    from pytest_toolselect.lint.render import markdown, text_lines

    from .saved_run import emit

    doc = build_report(args.config, args.model)
    view = LintView.read(doc)
    outputs = [(out, render) for out, render in (
        (args.json, lambda: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"),
        (args.markdown, lambda: markdown(view) + "\n")) if out is not None]
    for out, render in outputs:
        emit(render(), out, [])
    if not any(out == "-" for out, _ in outputs):
        emit("\n".join(text_lines(view)) + "\n", "-", [])
    failing = {ERROR} if args.fail_on == ERROR else {ERROR, WARNING}
    return FINDINGS if any(f["severity"] in failing for f in doc["findings"]) else CLEAN
