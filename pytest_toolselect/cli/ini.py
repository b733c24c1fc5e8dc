"""``required_plugins = pytest-toolselect`` in the pytest configuration ``toolselect init`` sets up.

Without it, a run where the plugin is not loaded (``-p no:toolselect``,
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, an environment without the package) collects no case
and can pass; with it pytest refuses to start ("Missing required plugins"). The file pytest
reads is found as pytest finds it (the first of pytest.ini, .pytest.ini, pyproject.toml with
a pytest table, tox.ini with [pytest], setup.cfg with [tool:pytest], in the folder or above);
a line is added to its pytest section, or a pytest.ini (or a pyproject.toml table) is
written when there is none. A required_plugins line of the user's own is never rewritten:
the message says what to add.
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_toolselect.gate.atomic import write_text

DISTRIBUTION = "pytest-toolselect"

#: (file name, its pytest section's header, the line to add)
_INI_LINE = f"required_plugins = {DISTRIBUTION}"
_TOML_LINE = f'required_plugins = ["{DISTRIBUTION}"]'
_CANDIDATES = (("pytest.ini", "[pytest]", _INI_LINE), (".pytest.ini", "[pytest]", _INI_LINE),
               ("pyproject.toml", "[tool.pytest.ini_options]", _TOML_LINE),
               ("tox.ini", "[pytest]", _INI_LINE), ("setup.cfg", "[tool:pytest]", _INI_LINE))
_KEY = re.compile(r"^\s*required_plugins\s*[=:]")


def _section(lines: list[str], header: str) -> tuple[int, int] | None:
    """The section's header line and the index after its last line, or None."""
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
               len(lines))
    return start, end


def with_required(text: str, header: str, line: str) -> tuple[str | None, bool]:
    """``text`` with ``line`` added under ``header`` (None: nothing to change), and whether
    the section already names the plugin. A required_plugins key that does not is left as
    it is (None, False): the user's own list, which they extend."""
    lines = text.splitlines(keepends=True)
    found = _section(lines, header)
    if found is None:
        return None, False
    start, end = found
    for i in range(start + 1, end):
        if _KEY.match(lines[i]):
            # its value, continuation lines included, up to the next key
            value = [lines[i]]
            for later in lines[i + 1:end]:
                if later.strip() and not later[:1].isspace():
                    break
                value.append(later)
            return None, DISTRIBUTION in "".join(value)
    newline = "\r\n" if lines[start].endswith("\r\n") else "\n"
    if not lines[start].endswith(("\n", "\r")):
        lines[start] += newline
    lines.insert(start + 1, line + newline)
    return "".join(lines), False


def _governing(folder: Path) -> tuple[Path, str, str] | None:
    """The file pytest would read its configuration from, as pytest looks for it."""
    for where in (folder, *folder.parents):
        for name, header, line in _CANDIDATES:
            path = where / name
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if name in ("pytest.ini", ".pytest.ini") or _section(text.splitlines(), header):
                return path, header, line
    return None


def require_plugin(folder: Path) -> str:
    """Make the pytest configuration that governs ``folder`` require this plugin: one line
    that says what was done (or what to add by hand)."""
    found = _governing(folder)
    if found is None:
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            text = pyproject.read_text(encoding="utf-8")
            if "[tool.pytest]" not in text:
                sep = "" if text.endswith("\n") or not text else "\n"
                write_text(pyproject, f"{text}{sep}\n[tool.pytest.ini_options]\n{_TOML_LINE}\n")
                return f"added {_TOML_LINE} to {pyproject} ([tool.pytest.ini_options])"
            return (f"{pyproject} has a [tool.pytest] table: add {_TOML_LINE} to it, so a run "
                    "without the plugin fails")
        path = folder / "pytest.ini"
        write_text(path, f"[pytest]\n{_INI_LINE}\n")
        return f"wrote {path}: {_INI_LINE}"
    path, header, line = found
    text = path.read_text(encoding="utf-8")
    if _section(text.splitlines(), header) is None:  # a pytest.ini without its section
        sep = "" if text.endswith("\n") or not text else "\n"
        write_text(path, f"{text}{sep}{header}\n{line}\n")
        return f"added {header} {line} to {path}"
    changed, named = with_required(text, header, line)
    if changed is not None:
        write_text(path, changed)
        return f"added {line} to {path} ({header})"
    if named:
        return f"{path} already requires {DISTRIBUTION}"
    return (f"{path} has its own required_plugins under {header}: add {DISTRIBUTION} to it, so "
            "a run without the plugin fails")
