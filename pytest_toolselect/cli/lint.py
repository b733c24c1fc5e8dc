"""``toolselect lint``: the linter from the command line (no pytest, no key, no network)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from pytest_toolselect.inputs.option_table import DEFAULT_MODEL
from pytest_toolselect.lint.decorated import find_decorated
from pytest_toolselect.lint.document import LintView
from pytest_toolselect.lint.findings import ERROR, WARNING
from pytest_toolselect.lint.render import markdown, text_lines
from pytest_toolselect.lint.run import (
    instructions_of,
    lint,
    load_cases,
    project_files,
    toolset_of,
)

from .saved_run import emit
from .tools import add_config, discovered, discovery_timeout

#: exit statuses: clean, findings at the --fail-on level (bad input is the CLI's own 2)
CLEAN, FINDINGS = 0, 1
#: a lint that has run this long says its steps on stderr
PROGRESS_AFTER_S = 3.0

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
    from pytest_toolselect.inputs import is_case_file


    config, tools = discovered(config_path, None)
    # the servers are discovered once: their instructions come from the same cache
    instructions = instructions_of(config, discovery_timeout(config))
    files = project_files(config.root)
    cases = load_cases([p for p in files if is_case_file(p)], config)
    chosen = model or str(config.options.get("model") or DEFAULT_MODEL)
    toolset = toolset_of(config, tools, cases, chosen, find_decorated(files), instructions)
    progress = Progress(sys.stderr)
    try:
        return lint(toolset, config.identifiers, allow=config.lint_allow, progress=progress).to_dict()
    finally:
        progress.done()


class Progress:
    """Says a lint's steps on a stream once it has run ``after`` seconds (a quick lint says
    nothing): then the step under way, and each step after it as it starts, with the
    seconds so far. A timer says the first, so a long step is said while it runs."""

    def __init__(self, stream: TextIO, after: float = PROGRESS_AFTER_S) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.step = ""
        self.speaking = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(after, self._begin)
        self.timer.daemon = True
        self.timer.start()

    def _say(self, step: str) -> None:
        self.stream.write(f"toolselect lint: {step} ({time.monotonic() - self.start:.0f} s)\n")
        self.stream.flush()

    def _begin(self) -> None:
        with self.lock:
            self.speaking = True
            if self.step:
                self._say(self.step)

    def __call__(self, step: str) -> None:
        with self.lock:
            self.step = step
            if self.speaking:
                self._say(step)

    def done(self) -> None:
        self.timer.cancel()


def run(args: argparse.Namespace) -> int:
    doc = build_report(args.config, args.model)
    view = LintView.read(doc)
    renderers: tuple[tuple[str | None, Callable[[], str]], ...] = (
        (args.json, lambda: json.dumps(doc, indent=2, ensure_ascii=False) + "\n"),
        (args.markdown, lambda: markdown(view) + "\n"))
    outputs = [(out, render) for out, render in renderers if out is not None]
    for out, render in outputs:
        emit(render(), out, [])
    if not any(out == "-" for out, _ in outputs):
        emit("\n".join(text_lines(view)) + "\n", "-", [])
    failing = {ERROR} if args.fail_on == ERROR else {ERROR, WARNING}
    return FINDINGS if any(f["severity"] in failing for f in doc["findings"]) else CLEAN
