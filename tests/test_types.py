"""The package type-checks under ``mypy --strict``, as pyproject.toml's [tool.mypy] configures it.

CI installs mypy with the dev extra and sets CI=true, where a missing mypy fails the test
instead of skipping it. mypy keeps its cache in the project's .mypy_cache (git ignores it):
a fresh clone checks everything once (30-50 s, mostly reading the SDKs' own types), a
second run only what changed (about a second).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolselect.terms.vocabulary import Status, Verdict

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pytest_toolselect"


def _required() -> bool:
    return os.environ.get("CI") == "true" or os.environ.get("TOOLSELECT_REQUIRE_MYPY") == "1"


def _no_mypy(reason: str) -> None:
    if _required():
        pytest.fail(f"{reason} (CI=true or TOOLSELECT_REQUIRE_MYPY=1 requires the type check to run)")
    pytest.skip(reason)


def test_a_missing_mypy_skips_unless_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TOOLSELECT_REQUIRE_MYPY", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no mypy"):
        _no_mypy("no mypy")
    for name, value in (("CI", "true"), ("TOOLSELECT_REQUIRE_MYPY", "1")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            with pytest.raises(pytest.fail.Exception, match="requires the type check to run"):
                _no_mypy("no mypy")


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_mypy_is_configured_strict_over_the_package_and_installed_by_the_dev_extra() -> None:
    data = _pyproject()
    mypy = data["tool"]["mypy"]  # type: ignore[index]
    assert mypy["strict"] is True
    assert mypy["files"] == [PACKAGE]
    dev = data["project"]["optional-dependencies"]["dev"]  # type: ignore[index]
    for needed in ("mypy", "types-PyYAML", "types-jsonschema"):
        assert any(d.startswith(f"{needed}>=") for d in dev), needed


def test_only_modules_that_ship_no_types_are_let_off() -> None:
    # ignore_missing_imports hides a missing stub: it is for a library with no types at all
    for override in _pyproject()["tool"]["mypy"].get("overrides", []):  # type: ignore[index]
        if not (override.get("ignore_missing_imports") or override.get("follow_untyped_imports")):
            continue
        assert not any(m.startswith(PACKAGE) for m in override["module"]), override
        for module in override["module"]:
            top = module.split(".")[0]
            spec = importlib.util.find_spec(top)
            assert spec is not None and spec.origin is not None, f"{top} is not installed"
            assert not (Path(spec.origin).parent / "py.typed").exists(), f"{top} ships its types now"


def test_the_package_is_clean_under_mypy_strict() -> None:
    if importlib.util.find_spec("mypy") is None:
        _no_mypy("no mypy: pip install -e '.[dev]'")
    # the configuration names the files; --strict once more, so a config that lost it still fails
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-color-output"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout


# -- one spelling of a verdict ---------------------------------------------------------------------

_WORDS = frozenset(str(w) for vocabulary in (Verdict, Status) for w in vocabulary)
_PACKAGE_DIR = ROOT / PACKAGE


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(_PACKAGE_DIR.rglob("*.py"))]


def _is_word_member(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in ("Verdict", "Status"))


def test_a_verdict_has_no_second_name() -> None:
    # `REGRESSION = Verdict.REGRESSION` would make `gate.REGRESSION` another spelling of it
    aliases = [f"{path}:{node.lineno}" for path, tree in _modules() for node in tree.body
               if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
               and (_is_word_member(node.value) or (isinstance(node.value, ast.Tuple)
                                                    and any(map(_is_word_member, node.value.elts))))]
    assert aliases == []


def _mentions_a_word_holder(node: ast.expr) -> bool:
    return any((isinstance(n, ast.Name) and ("verdict" in n.id.lower() or "status" in n.id.lower()))
               or (isinstance(n, ast.Attribute) and n.attr in ("verdict", "status"))
               for n in ast.walk(node))


def test_verdicts_and_statuses_are_compared_as_members_not_as_text() -> None:
    # a string compared with a verdict or a status is the enum's word written again
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            texts = [n.value for side in sides for n in ast.walk(side)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in _WORDS]
            if texts and any(_mentions_a_word_holder(s) for s in sides):
                found.append(f"{path}:{node.lineno}: {texts}")
    assert found == []
