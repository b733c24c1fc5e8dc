"""The SDKs' type packages load name by name, give the SDKs' own classes, and fall back whole."""

from __future__ import annotations

import json
import keyword
import re
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.providers.sdk_source import Reexports, reexports

#: identifiers from the whole of Unicode (every category Python accepts in a name)
_START = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl")
names = st.builds(lambda first, rest: first + rest,
                  st.characters(categories=_START) | st.just("_"),
                  st.text(st.characters(categories=(*_START, "Mn", "Mc", "Nd", "Pc")), max_size=10),
                  ).filter(lambda s: s.isidentifier() and not keyword.iskeyword(s))
modules = st.lists(names, min_size=1, max_size=3).map(".".join)


@st.composite
def reexport(draw: st.DrawFn) -> tuple[str, dict[str, tuple[str, str | None]], set[str]]:
    """One re-export statement, what it should add to the table, and the words it spells."""
    if draw(st.booleans()):  # from . import a, b as c
        pairs = draw(st.lists(st.tuples(names, st.none() | names), min_size=1, max_size=4))
        text = "from . import " + ", ".join(n if a is None else f"{n} as {a}" for n, a in pairs)
        return text, {a or n: (n, None) for n, a in pairs}, {w for p in pairs for w in p if w}
    module = draw(modules)
    pairs = draw(st.lists(st.tuples(names, st.none() | names), min_size=1, max_size=5))
    items = [n if a is None else f"{n} as {a}" for n, a in pairs]
    if draw(st.booleans()):
        trailing = "," if draw(st.booleans()) else ""
        body = "(\n    " + ",\n    ".join(items) + trailing + "\n)"
    else:
        body = ", ".join(items)
    return (f"from .{module} import {body}", {a or n: (module, n) for n, a in pairs},
            {*module.split("."), *(w for p in pairs for w in p if w)})


def _nfkc(name: str) -> str:
    return unicodedata.normalize("NFKC", name)  # the name Python binds (PEP 3131)


def _bound(table: dict[str, tuple[str, str | None]]) -> dict[str, tuple[str, str | None]]:
    """A table as Python binds it: every name in its NFKC form."""
    return {_nfkc(key): (".".join(map(_nfkc, sub.split("."))), attr and _nfkc(attr))
            for key, (sub, attr) in table.items()}


Drawn = tuple[list[str], dict[str, tuple[str, str | None]], "tuple[str, ...] | None", set[str]]


@st.composite
def init_file(draw: st.DrawFn) -> Drawn:
    """An __init__'s lines, the table as written, its __all__ (spelled as Python binds the
    names) and every name the lines spell."""
    statements = draw(st.lists(reexport(), max_size=8))
    lines: list[str] = []
    table: dict[str, tuple[str, str | None]] = {}
    if draw(st.booleans()):
        lines.append('"""' + draw(st.text().filter(lambda s: '"' not in s and "\\" not in s)) + '"""')
    if draw(st.booleans()):
        lines.append("from __future__ import annotations")
    spelled: set[str] = set()
    for text, adds, words in statements:
        spelled |= words
        if draw(st.booleans()):
            lines.append("# " + draw(st.text().filter(lambda s: "\n" not in s and "\r" not in s)))
        lines.append(text)
        table.update(adds)
    exported: tuple[str, ...] | None = None
    if table and draw(st.booleans()):  # an __all__ of some of the names, spelled any way Python allows
        exported = tuple(draw(st.lists(st.sampled_from(sorted(_bound(table))), max_size=6)))
        quote = draw(st.sampled_from(["'", '"']))
        items = [quote + n + quote for n in exported]
        opening, closing = draw(st.sampled_from([("[", "]"), ("(", ")")]))
        trailing = "," if items and draw(st.booleans()) else ""
        separator = draw(st.sampled_from([", ", ",\n    ", ","]))
        lines.insert(draw(st.integers(0, len(lines))) if not lines or not lines[0].startswith('"""') else
                     draw(st.integers(1, len(lines))),
                     f"__all__ = {opening}{separator.join(items)}{trailing}{closing}")
    return lines, table, exported, spelled



@given(init_file())
def test_an_init_of_reexports_reads_as_its_table(drawn: Drawn) -> None:
    lines, table, exported, spelled = drawn
    read = reexports("\n".join(lines) + "\n")
    # tokenize reads a name as r"\w+": a name outside that (a few combining marks Python
    # accepts) leaves the file to be run as usual, never read into a wrong table
    if all(re.fullmatch(r"\w+", w) for w in spelled):
        assert read == Reexports(_bound(table), exported)
    else:
        assert read is None


@given(init_file(), names)
def test_an_all_naming_what_the_file_does_not_import_is_run_as_usual(drawn: Drawn, stranger: str) -> None:
    lines, table, _, _ = drawn
    if _nfkc(stranger) in _bound(table):
        return
    assert reexports("\n".join([*lines, f"__all__ = [{stranger!r}]"]) + "\n") is None


OTHER_STATEMENTS = ["x = 1", "import os", "from .. import parent", "from ..pkg import thing",
                    "from os import path", "from .mod import *", "if True:\n    pass",
                    "def f():\n    pass", "print('hi')", "__all__ = ['a'] + more", "__all__ += ['a']",
                    "del thing",
                    "from .mod import a; x = 1", "try:\n    from .a import b\nexcept ImportError:\n    pass"]


@given(init_file(), st.sampled_from(OTHER_STATEMENTS), st.data())
def test_an_init_that_does_anything_else_is_run_as_usual(
        drawn: Drawn, other: str, data: st.DataObject) -> None:
    lines, _, _, _ = drawn
    at = data.draw(st.integers(0, len(lines)))
    assert reexports("\n".join([*lines[:at], other, *lines[at:]]) + "\n") is None


def _run(code: str, *, cwd: Path | None = None) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=120, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_lazy_sdks_hand_out_their_own_classes_and_load_fewer_modules() -> None:
    result = _run("""
        import json, sys
        from pytest_toolselect.providers.preload import import_sdk
        import_sdk("openai"); import_sdk("anthropic")
        import anthropic, openai
        from anthropic.types import Message, ToolUseBlock
        from openai.types.chat import ChatCompletion
        from anthropic.types.message import Message as direct
        lazy = {m: len([n for n in sys.modules if n.startswith(m + ".types")])
                for m in ("anthropic", "openai")}
        unread = "openai.types.eval_create_params" in sys.modules
        same = (Message is direct and ChatCompletion is openai.types.chat.chat_completion.ChatCompletion
                and ToolUseBlock is anthropic.types.tool_use_block.ToolUseBlock)
        from openai.types import *  # the whole package, the real way
        everything = "eval_create_params" in dir(openai.types) and "EvalCreateParams" in globals()
        print(json.dumps({"lazy": lazy, "unread": unread, "same": same, "everything": everything}))
    """)
    plain = _run("""
        import json, sys
        import anthropic, openai
        print(json.dumps({m: len([n for n in sys.modules if n.startswith(m + ".types")])
                          for m in ("anthropic", "openai")}))
    """)
    assert result["same"] is True and result["everything"] is True
    assert result["unread"] is False  # a type no import of the client path reads
    lazy = result["lazy"]
    assert isinstance(lazy, dict)
    assert lazy["openai"] < plain["openai"] / 2  # type: ignore[operator]
    assert lazy["anthropic"] < plain["anthropic"]  # type: ignore[operator]


def test_an_sdk_the_lazy_import_breaks_is_imported_plainly(tmp_path: Path) -> None:
    # an SDK whose own __init__ reads its types package's namespace directly: the lazy
    # package has no such entry, the import fails, and the plain import that follows works
    sdk = tmp_path / "fakesdk"
    (sdk / "types").mkdir(parents=True)
    (sdk / "__init__.py").write_text("from . import types\nThing = types.__dict__['Thing']\n")
    (sdk / "types" / "__init__.py").write_text("from .thing import Thing as Thing\n")
    (sdk / "types" / "thing.py").write_text("class Thing:\n    pass\n")
    result = _run("""
        import json, sys
        from pytest_toolselect.providers import lazy_types, preload
        lazy_types.PACKAGES = (*lazy_types.PACKAGES, "fakesdk.types")
        preload.import_sdk("fakesdk")
        import fakesdk
        print(json.dumps({"thing": fakesdk.Thing.__module__, "plain": "fakesdk" in lazy_types._disabled,
                          "lazy_type": type(fakesdk.types).__name__}))
    """, cwd=tmp_path)
    assert result == {"thing": "fakesdk.types.thing", "plain": True, "lazy_type": "module"}


def test_a_package_read_whole_after_a_lazy_start_keeps_what_it_gave(tmp_path: Path) -> None:
    # a name the table does not hold runs the real __init__: here it defines more than re-exports
    sdk = tmp_path / "fakesdk2"
    (sdk / "types").mkdir(parents=True)
    (sdk / "__init__.py").write_text("")
    (sdk / "types" / "__init__.py").write_text("from .thing import Thing as Thing\n")
    (sdk / "types" / "thing.py").write_text("class Thing:\n    pass\nclass Hidden:\n    pass\n")
    result = _run("""
        import json
        from pytest_toolselect.providers import lazy_types
        lazy_types.PACKAGES = ("fakesdk2.types",)
        lazy_types.install()
        import fakesdk2.types as t
        first = t.Thing
        lazy = type(t).__name__
        try:
            t.Hidden
            missing = False
        except AttributeError:
            missing = True
        print(json.dumps({"lazy": lazy, "missing": missing, "same": t.Thing is first,
                          "module": t.thing.__name__}))
    """, cwd=tmp_path)
    assert result == {"lazy": "_LazyPackage", "missing": True, "same": True, "module": "fakesdk2.types.thing"}
