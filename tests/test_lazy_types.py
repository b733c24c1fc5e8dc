"""The SDKs' type packages load name by name, give the SDKs' own classes, and fall back whole."""

from __future__ import annotations

import json
import keyword
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.providers.lazy_types import reexports

#: identifiers from the whole of Unicode (every category Python accepts in a name)
_START = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl")
names = st.builds(lambda first, rest: first + rest,
                  st.characters(categories=_START) | st.just("_"),
                  st.text(st.characters(categories=(*_START, "Mn", "Mc", "Nd", "Pc")), max_size=10),
                  ).filter(lambda s: s.isidentifier() and not keyword.iskeyword(s))
modules = st.lists(names, min_size=1, max_size=3).map(".".join)


@st.composite
def reexport(draw: st.DrawFn) -> tuple[str, dict[str, tuple[str, str | None]]]:
    """One re-export statement and what it should add to the table."""
    if draw(st.booleans()):  # from . import a, b as c
        pairs = draw(st.lists(st.tuples(names, st.none() | names), min_size=1, max_size=4))
        text = "from . import " + ", ".join(n if a is None else f"{n} as {a}" for n, a in pairs)
        return text, {a or n: (n, None) for n, a in pairs}
    module = draw(modules)
    pairs = draw(st.lists(st.tuples(names, st.none() | names), min_size=1, max_size=5))
    items = [n if a is None else f"{n} as {a}" for n, a in pairs]
    if draw(st.booleans()):
        trailing = "," if draw(st.booleans()) else ""
        body = "(\n    " + ",\n    ".join(items) + trailing + "\n)"
    else:
        body = ", ".join(items)
    return f"from .{module} import {body}", {a or n: (module, n) for n, a in pairs}


@st.composite
def init_file(draw: st.DrawFn) -> tuple[list[str], dict[str, tuple[str, str | None]]]:
    statements = draw(st.lists(reexport(), max_size=8))
    lines, table = [], {}
    if draw(st.booleans()):
        lines.append('"""' + draw(st.text().filter(lambda s: '"' not in s and "\\" not in s)) + '"""')
    if draw(st.booleans()):
        lines.append("from __future__ import annotations")
    for text, adds in statements:
        if draw(st.booleans()):
            lines.append("# " + draw(st.text().filter(lambda s: "\n" not in s and "\r" not in s)))
        lines.append(text)
        table.update(adds)
    return lines, table


@given(init_file())
def test_an_init_of_reexports_reads_as_its_table(
        drawn: tuple[list[str], dict[str, tuple[str, str | None]]]) -> None:
    lines, table = drawn
    read = reexports("\n".join(lines) + "\n")
    # tokenize reads a name as r"\w+": a name outside that (a few combining marks Python
    # accepts) leaves the file to be run as usual, never read into a wrong table
    words = {w for key, (sub, attr) in table.items() for w in (key, *sub.split("."), attr or "")} - {""}
    if all(re.fullmatch(r"\w+", w) for w in words):
        assert read == table
    else:
        assert read is None


OTHER_STATEMENTS = ["x = 1", "import os", "from .. import parent", "from ..pkg import thing",
                    "from os import path", "from .mod import *", "if True:\n    pass",
                    "def f():\n    pass", "print('hi')", "__all__ = ['a']", "del thing",
                    "from .mod import a; x = 1", "try:\n    from .a import b\nexcept ImportError:\n    pass"]


@given(init_file(), st.sampled_from(OTHER_STATEMENTS), st.data())
def test_an_init_that_does_anything_else_is_run_as_usual(
        drawn: tuple[list[str], dict[str, tuple[str, str | None]]], other: str, data: st.DataObject) -> None:
    lines, _ = drawn
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
