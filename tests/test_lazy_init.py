"""A model SDK's top package defers only imports nothing can tell apart, and then reads the same."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import itertools
import json
import keyword
import re
import subprocess
import sys
import textwrap
import types
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_toolselect.providers.lazy_init import InitLoader, defer
from pytest_toolselect.providers.sdk_source import statements

# the names a generated package binds: ASCII and beyond (every letter category Python accepts
# at the start of a name), kept to what the tokenizer reads as one word
_START = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl")
bound_names = st.builds(lambda first, rest: first + rest,
                        st.characters(categories=_START),
                        st.text(st.characters(categories=(*_START, "Nd")), max_size=6),
                        ).filter(lambda s: s.isidentifier() and not keyword.iskeyword(s)
                                 and re.fullmatch(r"\w+", s) is not None)


def _nfkc(name: str) -> str:
    return unicodedata.normalize("NFKC", name)  # the name Python binds for it


@st.composite
def package(draw: st.DrawFn) -> dict[str, str]:
    """A top package's files: plain re-exporting subpackages and modules of classes, and an
    ``__init__`` that mixes imports of them with statements that read some of their names."""
    pool = draw(st.lists(bound_names, min_size=4, max_size=14, unique_by=_nfkc))
    pool = [n for n in pool if not re.fullmatch(r"(Plain|mod|sub)\d*|m", _nfkc(n))]
    files: dict[str, str] = {}
    counter = itertools.count()
    statements_: list[str] = []
    bound: list[str] = []
    for name in pool:
        kind = draw(st.sampled_from(["module", "as", "star", "star_all", "star_module", "nested"]))
        at = next(counter)
        if kind in ("module", "as", "nested"):
            files[f"mod{at}.py"] = f"class {name}:\n    pass\n"
            alias = f"{name}_{at}" if kind == "as" else name
            text = f"from .mod{at} import {name}" + (f" as {alias}" if kind == "as" else "")
            statements_.append(f"if True:\n    {text}" if kind == "nested" else text)
            bound.append(alias)
        elif kind in ("star", "star_all"):
            files[f"sub{at}/m.py"] = f"class {name}:\n    pass\nclass Plain{at}:\n    pass\n"
            init = f"from .m import {name} as {name}\nfrom .m import Plain{at}\n"
            if kind == "star_all":
                init += f"__all__ = [{_nfkc(name)!r}]\n"
            files[f"sub{at}/__init__.py"] = init
            statements_.append(f"from .sub{at} import *")
            bound += [name] if kind == "star_all" else [name, f"Plain{at}"]
        else:  # a star import of a module, not a package: run as usual
            files[f"mod{at}.py"] = f"class {name}:\n    pass\n"
            statements_.append(f"from .mod{at} import *")
            bound.append(name)
    bound = [_nfkc(n) for n in bound]  # what __all__ must spell: strings are not normalised
    order = draw(st.permutations(statements_))
    exported = draw(st.lists(st.sampled_from(bound), unique=True, max_size=4)) if bound else []
    read = draw(st.lists(st.sampled_from(bound), unique=True, max_size=3)) if bound else []
    lines = []
    if read and draw(st.booleans()):
        lines.append(f'"""Says {read[0]} in its docstring."""')
    lines += order
    lines.append(f"__all__ = {exported!r}")
    if read:
        lines.append(f"_reads = [{', '.join(read)}]")
    lines.append("def _later():\n    return 1")
    files["__init__.py"] = "\n".join(lines) + "\n"
    return files


_made = itertools.count()


def _write(root: Path, files: dict[str, str]) -> str:
    name = f"gensdk_{next(_made)}"
    for path, text in files.items():
        target = root / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for folder in [root / name, *(p for p in (root / name).rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch()
    return name


def _load(root: Path, name: str, lazy: bool) -> types.ModuleType:
    init = root / name / "__init__.py"
    real = importlib.machinery.SourceFileLoader(name, str(init))
    spec = importlib.util.spec_from_file_location(
        name, init, loader=InitLoader(real) if lazy else real, submodule_search_locations=[str(root / name)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _shape(value: Any, top: str) -> str:
    """A value as its defining module (below the top package) and name, or its type."""
    if isinstance(value, types.ModuleType):
        return "module " + value.__name__.split(".", 1)[-1]
    if isinstance(value, type):
        return value.__module__.split(".", 1)[-1] + ":" + value.__qualname__
    return type(value).__name__


def _public(module: types.ModuleType) -> set[str]:
    return {n for n in vars(module) if not n.startswith("__")}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(package())
def test_a_deferred_top_package_reads_as_the_eager_one(tmp_path: Path, files: dict[str, str]) -> None:
    sys.path.insert(0, str(tmp_path))
    try:
        plain_name, lazy_name = _write(tmp_path, files), _write(tmp_path, files)
        plain = _load(tmp_path, plain_name, lazy=False)
        lazy = _load(tmp_path, lazy_name, lazy=True)
        # nothing the file itself reads, nor __all__, is deferred: its own code ran the same
        assert lazy.__all__ == plain.__all__
        assert lazy._later() == 1
        # a deferred name's module is not loaded until the name is read, and reading one loads no other
        deferred = sorted(n for n in _public(plain) if n not in _public(lazy)
                          and isinstance(getattr(plain, n), type))
        origin = {n: f"{lazy_name}." + _shape(getattr(plain, n), plain_name).split(":")[0] for n in deferred}
        assert not any(origin[n] in sys.modules for n in deferred)
        if deferred:
            getattr(lazy, deferred[0])
            assert [origin[n] in sys.modules for n in deferred].count(True) == \
                sum(origin[n] == origin[deferred[0]] for n in deferred)
        star_plain: dict[str, Any] = {}
        star_lazy: dict[str, Any] = {}
        exec(f"from {plain_name} import *", star_plain)
        exec(f"from {lazy_name} import *", star_lazy)
        assert {k: _shape(v, plain_name) for k, v in star_lazy.items() if k != "__builtins__"} == \
            {k: _shape(v, plain_name) for k, v in star_plain.items() if k != "__builtins__"}
        assert set(dir(lazy)) >= _public(plain)
        for name in sorted(_public(plain)):
            assert _shape(getattr(lazy, name), lazy_name) == _shape(getattr(plain, name), plain_name), name
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("gensdk_")]:
            del sys.modules[name]


@given(package())
def test_a_deferral_keeps_every_other_line_where_it_was(files: dict[str, str]) -> None:
    source = files["__init__.py"]
    root = {p.removesuffix("/__init__.py"): t for p, t in files.items() if p.endswith("/__init__.py")}
    from pytest_toolselect.providers.sdk_source import reexports

    deferral = defer(source, "pkg", lambda target: (
        reexports(root[target.split(".", 1)[1]]) if target.split(".", 1)[1] in root else None))
    if deferral is None:
        return
    before, after = source.split("\n"), deferral.source.split("\n")
    assert len(before) == len(after)
    assert all(a in ("", b) for a, b in zip(after, before, strict=True))
    read = statements(deferral.source)
    assert read is not None
    words = {t.string for s in read for t in s.tokens}
    # a deferred name occurs nowhere in what runs (so the file's own code never reads it)
    assert not words & set(deferral.names)
    assert "__all__" in words


def test_a_reloaded_package_reads_its_deferred_names_again(tmp_path: Path) -> None:
    files = {"mod0.py": "class A:\n    pass\n", "mod1.py": "class B:\n    pass\n",
             "__init__.py": "from .mod0 import A\nfrom .mod1 import B\n__all__ = ['B']\n"}
    sys.path.insert(0, str(tmp_path))
    try:
        name = _write(tmp_path, files)
        lazy = _load(tmp_path, name, lazy=True)
        assert "A" not in vars(lazy) and "B" in vars(lazy)
        first = lazy.A
        reloaded = importlib.reload(lazy)
        assert reloaded.A is first and reloaded.B.__name__ == "B"
        with pytest.raises(AttributeError, match="has no attribute 'C'"):
            reloaded.C  # noqa: B018 - the read is the test
    finally:
        sys.path.remove(str(tmp_path))
        for loaded in [n for n in sys.modules if n.startswith("gensdk_")]:
            del sys.modules[loaded]


FILE_SHAPES = [
    # __all__ built up or computed: import * could not be told apart, so nothing is deferred
    "from .a import X\n__all__ = ['Y']\n__all__ += ['Z']\n",
    "from .a import X\n__all__ = [n for n in dir()]\n",
    "from .a import X\n",
    "from .a import X\n__all__ = ['Y']\n__all__.append('Z')\n",
    "from .a import X\n__all__ = ['Y']\ndel __all__\n",
    "from .a import X\n__all__ = ['Y']\n__all__ = ['Y', 'X']\n",
]


def test_a_file_whose_all_is_not_one_literal_defers_nothing() -> None:
    for source in FILE_SHAPES:
        assert defer(source, "pkg", lambda target: None) is None, source


def test_what_a_name_in_the_file_or_a_string_reads_stays_eager() -> None:
    source = textwrap.dedent('''\
        """The X client."""
        from .a import X
        from .b import Y
        from .c import Z as W
        from ..d import V
        from .e import *
        __all__ = []
        ''')
    deferral = defer(source, "pkg", lambda target: None)
    assert deferral is not None
    assert deferral.names == {"Y": ("pkg.b", "Y"), "W": ("pkg.c", "Z")}
    assert [load[0] for load in deferral.loads] == ["pkg.b", "pkg.c"]


def test_the_anthropic_sdk_defers_its_platform_clients_and_hands_them_out_on_first_read() -> None:
    code = """
        import json, sys
        from pytest_toolselect.providers.preload import import_sdk
        import_sdk("anthropic")
        import anthropic
        before = {m: m in sys.modules for m in ("anthropic.lib.vertex", "anthropic.lib.foundry",
                                               "anthropic.resources.beta.beta")}
        count = len([n for n in sys.modules if n.startswith("anthropic")])
        from anthropic.lib.vertex import AnthropicVertex
        same = anthropic.AnthropicVertex is AnthropicVertex and "AnthropicBedrock" in dir(anthropic)
        client = anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9")
        from anthropic import *
        print(json.dumps({"before": before, "count": count, "same": same,
                          "client": type(client).__module__, "star": "AsyncAnthropic" in globals()}))
    """
    plain = """
        import json, sys
        import anthropic
        print(json.dumps(len([n for n in sys.modules if n.startswith("anthropic")])))
    """
    lazy = _run(code)
    assert lazy["before"] == {"anthropic.lib.vertex": False, "anthropic.lib.foundry": False,
                              "anthropic.resources.beta.beta": False}
    assert lazy["same"] is True and lazy["star"] is True and lazy["client"] == "anthropic"
    assert lazy["count"] < _run(plain) / 2


def _run(code: str) -> Any:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
