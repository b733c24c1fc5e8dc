"""Reading a saved run (tool_selection.v1) and writing what a command renders."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_toolselect.gate.atomic import write_text
from pytest_toolselect.gate.baseline import MAX_BYTES
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.bounded import NotRegularFile, read_bounded
from pytest_toolselect.report.printable import printable

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


# -- input -------------------------------------------------------------------------------------------

def load_results(path: str) -> dict[str, Any]:
    """A tool_selection.v1 document from a file, checked against the shipped schema."""
    try:
        raw = read_bounded(Path(path), MAX_BYTES)
    except FileNotFoundError:
        raise ToolselectError("no such file", file=path, fix=WRITE_RESULTS) from None
    except NotRegularFile as e:
        raise ToolselectError(f"is {e.kind}, not a results file", file=path, fix=WRITE_RESULTS) from None
    except OSError as e:
        raise ToolselectError(f"cannot read the file: {e.strerror}", file=path) from None
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        raise ToolselectError("not valid JSON: not UTF-8 text", file=path, fix=WRITE_RESULTS) from None
    except json.JSONDecodeError as e:
        raise ToolselectError(f"not valid JSON: {e.msg} (column {e.colno}); the file may be truncated",
                              file=path, line=e.lineno, fix=WRITE_RESULTS) from None
    return _validate(data, path)


def _validate(data: Any, path: str) -> dict[str, Any]:
    found = data.get("schema_version") if isinstance(data, dict) else None
    if found in OTHER_FILES:
        what, hint = OTHER_FILES[found]
        raise ToolselectError(f"this is a {found} file ({what}), not a run's results ({SCHEMA_VERSION})",
                              file=path, fix=WRITE_RESULTS + hint)
    if not isinstance(data, dict) or found != SCHEMA_VERSION:
        what = f"schema_version {found!r}" if isinstance(data, dict) else f"a JSON {_json_type(data)}"
        raise ToolselectError(f"not a {SCHEMA_VERSION} results file ({what})", file=path,
                              fix=WRITE_RESULTS)

    from importlib.resources import files

    import jsonschema

    # the probe's document inside is checked against its own schema, as its renderers read it
    parts: list[tuple[str, Any, tuple[str, ...]]] = [(SCHEMA_VERSION, data, ())]
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
    return data


def _json_type(data: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if data is None else names.get(type(data), type(data).__name__)


# -- output ------------------------------------------------------------------------------------------

def emit(text: str, out: str, inputs: Sequence[str]) -> None:
    """Write to stdout (out is "-") or atomically to a file (never over an input)."""
    if out == "-":
        sys.stdout.write(printable(text))
        sys.stdout.flush()
        return
    path = Path(out)
    if any(_same_file(path, Path(i)) for i in inputs):
        raise ToolselectError("would overwrite an input file", file=out,
                              fix="choose another path for the report")

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
