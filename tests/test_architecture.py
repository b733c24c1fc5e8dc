"""The rules of the house, read from every module's imports (module level and lazy alike).

docs/architecture.md explains the parts and why the arrows point the way they do.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_toolselect

PKG = "pytest_toolselect"
ROOT = Path(pytest_toolselect.__file__).parent

#: parts that must stay pure: no I/O, no pytest, nothing that talks to the world or runs a run
PURE = ("scoring", "probe", "report")
PURE_FORBIDDEN = (
    "pytest", "_pytest", "xdist", "os", "subprocess", "socket", "sqlite3", "threading",
    f"{PKG}.providers", f"{PKG}.discovery", f"{PKG}.run", f"{PKG}.plugin", f"{PKG}.cli",
    f"{PKG}.gate.baseline", f"{PKG}.gate.atomic",
)
#: the parts that hold data: what the user wrote, what a run produces, what every part shares
DATA = ("inputs", "records", "positions", "exchange", "terms", "messages")
#: providers and discovery know no pytest and are driven by the run, never the other way
WORLD = ("providers", "discovery")
WORLD_FORBIDDEN = ("pytest", "_pytest", "xdist", f"{PKG}.plugin", f"{PKG}.run")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # a dotted name it imports (a module, or module.name)
    line: int

    def __str__(self) -> str:
        return f"{self.module} (line {self.line}) imports {self.target}"


def sources(root: Path = ROOT) -> dict[str, str]:
    """Every module of the package by dotted name ('pytest_toolselect.run.session') -> source."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f.read_text()
    return out


def _from(mod: str, node: ast.ImportFrom, mods: Mapping[str, str]) -> str:
    """The dotted module a `from ... import` in mod reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    is_pkg = any(m.startswith(mod + ".") for m in mods) or mod == PKG
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(mods: Mapping[str, str]) -> Iterator[Import]:
    """Every import of every module; `from a import b` yields a, and a.b too when that is a module."""
    for mod, src in mods.items():
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                for a in node.names:
                    yield Import(mod, a.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                name = _from(mod, node, mods)
                yield Import(mod, name, node.lineno)
                for a in node.names:
                    if f"{name}.{a.name}" in mods:
                        yield Import(mod, f"{name}.{a.name}", node.lineno)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _part(module: str) -> str:
    """'pytest_toolselect.run.session' -> 'run'; the top package -> ''."""
    rest = module.split(".")[1:]
    return rest[0] if rest else ""


def broken_rules(mods: Mapping[str, str]) -> list[str]:
    """One line per import that breaks a rule of the house, naming the module and the import."""
    problems = []
    for imp in imports(mods):
        part = _part(imp.module)
        if part in PURE:
            bad = [p for p in PURE_FORBIDDEN if _under(imp.target, p)]
            if bad:
                problems.append(f"{imp}: {part} is pure (no I/O, pytest, providers, discovery, run, "
                                f"plugin, cli, baseline file)")
        if (part in DATA and _under(imp.target, PKG) and imp.target != PKG
                and _part(imp.target) not in DATA):
            problems.append(f"{imp}: {part} is data and imports nothing of the package outside "
                            f"the data parts ({', '.join(DATA)})")
        if part in WORLD and any(_under(imp.target, p) for p in WORLD_FORBIDDEN):
            problems.append(f"{imp}: {part} knows no pytest and does not drive the run or the plugin")
        if part == "run" and _under(imp.target, f"{PKG}.plugin"):
            problems.append(f"{imp}: the run never imports the plugin (the plugin drives the run)")
    return problems


def circles(mods: Mapping[str, str]) -> list[list[str]]:
    """Strongly connected groups of modules that import each other (through any chain).

    A module's import of its own parent package does not count: a package's ``__init__``
    re-exporting its children is not a circle with them.
    """
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for imp in imports(mods):
        target = imp.target if imp.target in mods else imp.target.rpartition(".")[0]
        if target in mods and target != imp.module and not _under(imp.module, target):
            graph[imp.module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


SESSION = f"{PKG}.run.session"


def _names_in(mod: str, tree: ast.Module, mods: Mapping[str, str]) -> dict[str, str]:
    """A module's top-level class names and from-imported names -> their dotted names."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _from(mod, node, mods)
            names.update({a.asname or a.name: f"{source}.{a.name}" for a in node.names})
    names.update({c.name: f"{mod}.{c.name}" for c in tree.body if isinstance(c, ast.ClassDef)})
    return names


def session_parts(mods: Mapping[str, str]) -> set[str]:
    """The classes RunSession builds in its __init__ (`self.x = Part(...)`), and RunSession."""
    tree = ast.parse(mods[SESSION])
    names = _names_in(SESSION, tree, mods)
    parts = {f"{SESSION}.RunSession"}
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name == "RunSession":
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                    parts |= {names.get(n.value.func.id, n.value.func.id) for n in ast.walk(fn)
                              if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                              and isinstance(n.value.func, ast.Name)}
    return parts


def inherited_parts(mods: Mapping[str, str]) -> list[str]:
    """One line per class of the run that is a session part with a base class, or that
    builds on one: the parts are composed (each given the parts it uses), never a chain."""
    parts = session_parts(mods)
    problems = []
    for mod, src in mods.items():
        if not _under(mod, f"{PKG}.run"):
            continue
        tree = ast.parse(src)
        names = _names_in(mod, tree, mods)
        for cls in (c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)):
            bases = [names.get(b.id, b.id) if isinstance(b, ast.Name) else ast.unparse(b)
                     for b in cls.bases]
            bases = [b for b in bases if b != "object"]
            if f"{mod}.{cls.name}" in parts and bases:
                problems.append(f"{mod}.{cls.name} (line {cls.lineno}) is a part of the run session "
                                f"and subclasses {', '.join(bases)}: give it the parts it uses "
                                "in its constructor instead")
            elif f"{mod}.{cls.name}" not in parts and any(b in parts for b in bases):
                problems.append(f"{mod}.{cls.name} (line {cls.lineno}) subclasses the session part "
                                f"{next(b for b in bases if b in parts)}: hold it as a collaborator")
    return problems


def test_every_rule_of_the_house_holds() -> None:
    problems = broken_rules(sources())
    assert not problems, "\n".join(problems)


def test_the_run_session_is_composed_of_parts_not_a_chain_of_layers() -> None:
    parts = session_parts(sources())
    # the session builds its parts (settings, wiring, baselines, calls, records, summary, state)
    assert len(parts) >= 8, sorted(parts)
    problems = inherited_parts(sources())
    assert not problems, "\n".join(problems)


def test_no_module_imports_itself_back_through_others() -> None:
    found = circles(sources())
    assert not found, "\n".join(" <-> ".join(group) for group in found)


def test_the_layout_has_its_parts() -> None:
    parts = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert {"plugin", "run", *DATA, "discovery", "providers", "scoring", "probe", "gate", "report",
            "cli"} <= parts
    assert "spec" not in parts
    flat = sorted(p.name for p in ROOT.glob("*.py") if p.name != "__init__.py")
    assert flat == [], f"modules outside any part: {flat}"


#: a module one reader can hold in mind; past this it is split by concern
MAX_LINES = 600


def too_long(mods: Mapping[str, str], limit: int = MAX_LINES) -> list[str]:
    """One line per module over the limit, naming it and its length."""
    return [f"{mod}: {n} lines (at most {limit}: split it by concern)"
            for mod, src in mods.items() if (n := len(src.splitlines())) > limit]


def documented_arrows(text: str | None = None) -> dict[str, set[str]]:
    """The arrows block of docs/architecture.md: part -> the parts it may import.

    A line ``name = a, b`` names a group of parts; an arrow to the name is an arrow to each."""
    if text is None:
        text = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## The arrows", 1)[1].split("```")[1]
    allowed: dict[str, set[str]] = {}
    groups: dict[str, set[str]] = {}
    for line in block.strip().splitlines():
        if "──►" not in line:
            name, _, members = line.partition("=")
            groups[name.strip()] = {m.strip() for m in members.split(",") if m.strip()}
            continue
        left, _, right = line.partition("──►")
        named = {t.strip().split(" ")[0] for t in right.split(",") if t.strip()}
        targets = set().union(*(groups.get(t, {t}) for t in named))
        for part in (p.strip() for p in left.split(",")):
            allowed.setdefault(part, set()).update(targets - {"nothing"})
    return allowed


def part_arrows(mods: Mapping[str, str]) -> dict[tuple[str, str], Import]:
    """Each import between two parts of the package (one example per pair of parts)."""
    found: dict[tuple[str, str], Import] = {}
    for imp in imports(mods):
        if not _under(imp.target, PKG) or imp.target == PKG:
            continue
        pair = (_part(imp.module), _part(imp.target))
        if pair[0] and pair[1] and pair[0] != pair[1]:
            found.setdefault(pair, imp)
    return found


def test_every_import_between_parts_is_an_arrow_the_architecture_page_draws() -> None:
    allowed = documented_arrows()
    assert set(allowed) >= {"plugin", "run", *DATA, "report", "lint"}
    undrawn = [f"{imp}: no arrow {a} ──► {b} in docs/architecture.md"
               for (a, b), imp in sorted(part_arrows(sources()).items())
               if b not in allowed.get(a, set())]
    assert not undrawn, "\n".join(undrawn)


def test_an_undrawn_arrow_is_named_with_its_import() -> None:
    mods = {f"{PKG}.probe.x": f"from {PKG}.lint import rules\n", f"{PKG}.lint.tool_rules": ""}
    pairs = part_arrows(mods)
    assert ("probe", "lint") in pairs and "probe.x (line 1)" in str(pairs[("probe", "lint")])
    assert "lint" not in documented_arrows().get("probe", set())


def test_a_group_of_parts_in_the_arrows_stands_for_each_of_them() -> None:
    text = "## The arrows\n```\ndata = inputs, terms\nplugin ──►  run, data\nterms ──► nothing\n```\n"
    assert documented_arrows(text) == {"plugin": {"run", "inputs", "terms"}, "terms": set()}
    assert documented_arrows()["report"] >= set(DATA)


def test_no_module_is_over_600_lines() -> None:
    found = too_long(sources())
    assert not found, "\n".join(found)


#: a module this short with one reader belongs in that reader (size by cohesion, not a cap)
SMALL = 30
#: short modules with one reader that stand on a boundary of their own, and why
BOUNDARIES = {
    f"{PKG}.plugin.hookspecs": "pytest reads it whole as the hook specs (add_hookspecs)",
    f"{PKG}.plugin.options": "the option table's one meeting point with pytest's parser",
}


def folded_too_little(mods: Mapping[str, str], limit: int = SMALL) -> list[str]:
    """One line per module under `limit` lines that one module alone imports (a package's
    ``__init__`` and the named boundaries aside): it is folded into that reader."""
    readers: dict[str, set[str]] = {}
    for imp in imports(mods):
        if imp.target in mods and imp.target != imp.module:
            readers.setdefault(imp.target, set()).add(imp.module)
    packages = {m for m in mods if any(o.startswith(m + ".") for o in mods)} | {PKG}
    return [f"{mod}: {n} lines, read by {next(iter(readers[mod]))} alone (fold it in there)"
            for mod, src in mods.items()
            if (n := len(src.splitlines())) < limit and mod not in packages
            and not mod.endswith("__main__") and mod not in BOUNDARIES
            and len(readers.get(mod, ())) == 1]


def test_a_short_module_with_one_reader_is_folded_into_it() -> None:
    found = folded_too_little(sources())
    assert not found, "\n".join(found)


# -- the checks themselves catch what they are for -------------------------------------------

FAKE = {
    PKG: "",
    f"{PKG}.scoring": "",
    f"{PKG}.scoring.checks": "import os\nfrom pytest_toolselect.run import session\n",
    f"{PKG}.inputs": "",
    f"{PKG}.inputs.cases": "def f():\n    from ..scoring.checks import score\n",
    f"{PKG}.discovery": "",
    f"{PKG}.discovery.servers": "import pytest\n",
    f"{PKG}.run": "",
    f"{PKG}.run.session": "from ..plugin.decorator import case_from_item\n",
    f"{PKG}.plugin": "from .decorator import case\n",
    f"{PKG}.plugin.decorator": "from pytest_toolselect.run.session import RUN_SESSION\n",
}


@pytest.mark.parametrize(("needle", "module"), [
    ("imports os", f"{PKG}.scoring.checks"),
    (f"imports {PKG}.run.session", f"{PKG}.scoring.checks"),
    (f"imports {PKG}.scoring.checks", f"{PKG}.inputs.cases (line 2)"),
    ("imports pytest", f"{PKG}.discovery.servers"),
    (f"imports {PKG}.plugin.decorator", f"{PKG}.run.session"),
])
def test_a_broken_rule_is_named_with_its_module_and_import(needle: str, module: str) -> None:
    assert any(module in p and needle in p for p in broken_rules(FAKE)), broken_rules(FAKE)


def test_a_circle_is_found_and_a_package_reexport_is_not_one() -> None:
    assert circles(FAKE) == [[f"{PKG}.plugin.decorator", f"{PKG}.run.session"]]
    # plugin/__init__ imports its child decorator; the child importing the parent is no circle
    fake = {**FAKE, f"{PKG}.plugin.decorator": "from pytest_toolselect import plugin\n",
            f"{PKG}.run.session": ""}
    assert circles(fake) == []



CHAIN = {
    PKG: "",
    f"{PKG}.run": "",
    f"{PKG}.run.wiring": "class Settings:\n    pass\n",
    f"{PKG}.run.baseline_access": "from .wiring import Settings\n\n\n"
                                  "class BaselineAccess(Settings):\n    pass\n",
    f"{PKG}.run.extra": "from pytest_toolselect.run.wiring import Settings as S\n\n\n"
                        "class Later(S):\n    pass\n",
    f"{PKG}.run.session": (
        "from .baseline_access import BaselineAccess\nfrom .wiring import Settings\n\n\n"
        "class RunSession:\n    def __init__(self, config):\n        self.settings = Settings(config)\n"
        "        self.baselines = BaselineAccess(self.settings)\n"),
}


def test_a_part_built_on_another_part_is_named_with_its_base() -> None:
    assert session_parts(CHAIN) == {f"{PKG}.run.session.RunSession", f"{PKG}.run.wiring.Settings",
                                    f"{PKG}.run.baseline_access.BaselineAccess"}
    problems = inherited_parts(CHAIN)
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"{PKG}.run.baseline_access.BaselineAccess (line 4) is a part of the "
                                  f"run session and subclasses {PKG}.run.wiring.Settings")
    # an alias does not hide that a class of the run builds on a part
    assert problems[1].startswith(f"{PKG}.run.extra.Later (line 4) subclasses the session part "
                                  f"{PKG}.run.wiring.Settings")
    composed = {**CHAIN, f"{PKG}.run.baseline_access": "class BaselineAccess:\n    pass\n",
                f"{PKG}.run.extra": ""}
    assert inherited_parts(composed) == []
    # the session itself may not become a layer on top of the others either
    on_top = {**composed, f"{PKG}.run.session": CHAIN[f"{PKG}.run.session"].replace(
        "class RunSession:", "class RunSession(BaselineAccess):")}
    assert any("RunSession (line 5) is a part of the run session and subclasses" in p
               for p in inherited_parts(on_top)), inherited_parts(on_top)


def test_a_long_module_is_named_with_its_length() -> None:
    mods = {f"{PKG}.run.session": "x = 1\n" * (MAX_LINES + 1), f"{PKG}.run.settings": "x = 1\n" * MAX_LINES}
    assert too_long(mods) == [f"{PKG}.run.session: {MAX_LINES + 1} lines (at most {MAX_LINES}: "
                              "split it by concern)"]

def test_the_gate_defines_exactly_the_rules_the_options_name() -> None:
    from pytest_toolselect.gate import verdict_rules as rules
    from pytest_toolselect.terms.rule_names import DEFAULT_RULE, RULE_NAMES

    assert tuple(rules.RULES) == RULE_NAMES
    assert DEFAULT_RULE in rules.RULES


def test_a_short_module_with_one_reader_is_named_with_it() -> None:
    mods = {PKG: "", f"{PKG}.cli": "from .compare import run\n", f"{PKG}.cli.compare": "x = 1\n",
            f"{PKG}.cli.merge": "from . import report\n", f"{PKG}.cli.report": "x = 1\n" * SMALL,
            f"{PKG}.cli.saved_run": "x = 1\n", f"{PKG}.cli.tools": "from .saved_run import x\n",
            f"{PKG}.cli.init": "from .saved_run import x\n"}
    assert folded_too_little(mods) == [f"{PKG}.cli.compare: 1 lines, read by {PKG}.cli alone "
                                       "(fold it in there)"]
