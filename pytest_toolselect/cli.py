"""The ``toolselect`` command: render or compare saved runs, outside a pytest run.

It reads the ``tool_selection.v1`` documents that ``pytest --toolselect-json`` writes
and imports only what it needs for that (no pytest, no provider SDKs), so it starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .errors import ToolselectError
from .printable import printable

SCHEMA_VERSION = "tool_selection.v1"
#: exit statuses: done; bad input or usage (2, as argparse says a wrong flag)
OK, USAGE = 0, 2

WRITE_RESULTS = "pass the file that pytest --toolselect-json RESULTS.json writes"
#: other files of the plugin a user may pass by mistake: what each is, and where to look instead
OTHER_FILES = {
    "tool_preference.v1": ("the preference probe's results",
                           "; it holds the probe's results under 'preference'"),
    "toolselect_baseline.v1": ("a baseline, --toolselect-baseline", ""),
    "toolselect_cases.v1": ("a case file", ""),
    "tool_preference_groups.v1": ("a preference groups file", ""),
}

EPILOG = """\
examples:
  pytest --toolselect-json results.json          # save a run
  toolselect report results.json                 # its markdown on stdout
  toolselect report results.json --html report.html --markdown comment.md
  toolselect compare haiku.json sonnet.json      # two models on one suite, side by side
  toolselect merge results-*.json                # the shards of one run as one verdict

exit status: 0 done, 2 bad input (a missing or malformed file, a wrong flag)
"""


# -- input -------------------------------------------------------------------------------------------

def load_results(path: str) -> dict[str, Any]:
    """A tool_selection.v1 document from a file, checked against the shipped schema."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ToolselectError("no such file", file=path, fix=WRITE_RESULTS) from None
    except IsADirectoryError:
        raise ToolselectError("is a folder, not a results file", file=path, fix=WRITE_RESULTS) from None
    except OSError as e:
        raise ToolselectError(f"cannot read the file: {e.strerror}", file=path) from None
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        raise ToolselectError("not valid JSON: not UTF-8 text", file=path, fix=WRITE_RESULTS) from None
    except json.JSONDecodeError as e:
        raise ToolselectError(f"not valid JSON: {e.msg} (column {e.colno}); the file may be truncated",
                              file=path, line=e.lineno, fix=WRITE_RESULTS) from None
    _validate(data, path)
    return data


def _validate(data: Any, path: str) -> None:
    found = data.get("schema_version") if isinstance(data, dict) else None
    if found in OTHER_FILES:
        what, hint = OTHER_FILES[found]
        raise ToolselectError(f"this is a {found} file ({what}), not a run's results ({SCHEMA_VERSION})",
                              file=path, fix=WRITE_RESULTS + hint)
    if found != SCHEMA_VERSION:
        what = f"schema_version {found!r}" if isinstance(data, dict) else f"a JSON {_json_type(data)}"
        raise ToolselectError(f"not a {SCHEMA_VERSION} results file ({what})", file=path,
                              fix=WRITE_RESULTS)

    from importlib.resources import files

    import jsonschema

    # the probe's document inside is checked against its own schema, as its renderers read it
    parts = [(SCHEMA_VERSION, data, ())]
    if isinstance(data.get("preference"), dict):
        parts.append(("tool_preference.v1", data["preference"], ("preference",)))
    for name, part, prefix in parts:
        schema = json.loads(files("pytest_toolselect").joinpath(f"schemas/{name}.json").read_text())
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(part))
        if error is not None:
            where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}"
                            for p in (*prefix, *error.absolute_path))
            raise ToolselectError(f"the results file is malformed: {error.message}", file=path,
                                  place=where.lstrip(".") or None,
                                  fix="pass the file as pytest --toolselect-json wrote it")


def _json_type(data: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if data is None else names.get(type(data), type(data).__name__)


# -- output ------------------------------------------------------------------------------------------

def _emit(text: str, out: str, inputs: Sequence[str]) -> None:
    """Write to stdout (out is "-") or atomically to a file (never over an input)."""
    if out == "-":
        sys.stdout.write(printable(text))
        sys.stdout.flush()
        return
    path = Path(out)
    if any(_same_file(path, Path(i)) for i in inputs):
        raise ToolselectError("would overwrite an input file", file=out,
                              fix="choose another path for the report")
    from .atomic import write_text

    try:
        write_text(path, text)
    except OSError as e:
        raise ToolselectError(f"cannot write the report: {e.strerror or e}", file=out,
                              fix="choose a path in a folder you can write") from None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and a.samefile(b)
    except OSError:
        return False


# -- commands ----------------------------------------------------------------------------------------

def _report(args: argparse.Namespace) -> int:
    from .report.files import render

    document = load_results(args.results)
    wanted = [(kind, out) for kind, out in (("markdown", args.markdown), ("html", args.html))
              if out is not None]
    # every rendering first: a renderer that fails leaves no report half-written
    texts = [(render(kind, document), out) for kind, out in wanted or [("markdown", "-")]]
    for text, out in texts:
        _emit(text, out, [args.results])
    return OK


def _compare(args: argparse.Namespace) -> int:
    from .report.compare import render

    documents = [(path, load_results(path)) for path in args.results]
    _emit(render(documents, markdown=args.markdown), "-", args.results)
    return OK


# -- the parser --------------------------------------------------------------------------------------

class _Version(argparse.Action):
    """--version, looking the version up only when asked (startup stays cheap)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("pytest-toolselect")
        except PackageNotFoundError:
            found = "(not installed)"
        # on stdout, as argparse's own version action does
        sys.stdout.write(f"{parser.prog} {found}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    formatter: Callable[..., argparse.HelpFormatter] = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="toolselect", formatter_class=formatter, epilog=EPILOG,
        description="Render or compare saved pytest-toolselect runs (the tool_selection.v1 files "
                    "that pytest --toolselect-json writes), without running pytest.")
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    report = commands.add_parser(
        "report", formatter_class=formatter, help="render a saved run as markdown or HTML",
        description="Render a saved run with the plugin's own renderers: the markdown pull-request "
                    "comment and the self-contained HTML report. With neither flag, the markdown "
                    "goes to stdout.",
        epilog="example:\n  toolselect report results.json --markdown comment.md --html report.html")
    report.add_argument("results", metavar="RESULTS.json", help="a run's results (pytest --toolselect-json)")
    report.add_argument("--markdown", metavar="OUT",
                        help="write the markdown comment to OUT ('-': stdout)")
    report.add_argument("--html", metavar="OUT", help="write the HTML report to OUT ('-': stdout)")
    report.set_defaults(run=_report)

    compare = commands.add_parser(
        "compare", formatter_class=formatter, help="put several runs side by side (say, several models)",
        description="Put several runs of one suite side by side: held/scored per category and run, "
                    "then the cases whose status, first tool or verdict differ between the runs, then "
                    "the cases only some runs hold. Columns are named by each run's model (with its "
                    "file name when two runs share a model).",
        epilog="example:\n  toolselect compare haiku.json sonnet.json gpt.json --markdown > compare.md")
    compare.add_argument("results", metavar="RESULTS.json", nargs="+",
                         help="two or more runs' results (pytest --toolselect-json)")
    compare.add_argument("--markdown", action="store_true",
                         help="markdown tables (default: plain text, aligned columns)")
    compare.set_defaults(run=_compare, parser=compare)
    from .cli_merge import add_merge

    add_merge(commands, formatter)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return USAGE
    if args.command == "compare" and len(args.results) < 2:
        args.parser.error("compare needs at least two results files")
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # the reader went away (toolselect ... | head): not an error of ours, and no traceback
        # when Python flushes stdout on exit
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
    except ToolselectError as e:
        print(printable(f"toolselect: error: {e}"), file=sys.stderr)
        return USAGE


if __name__ == "__main__":
    sys.exit(main())
