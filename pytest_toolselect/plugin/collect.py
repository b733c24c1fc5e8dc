"""pytest collection: case files become a File node with one CaseItem per case."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate.keys import family_of, key_for, split
from pytest_toolselect.inputs.find_config import server_refusals
from pytest_toolselect.inputs.groups import load_groups_file
from pytest_toolselect.inputs.labels import OWN, labelled, refused, registered_at_run_time, run_time_refusals
from pytest_toolselect.messages.allerrors import raise_all
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.run_records import GroupRecord
from pytest_toolselect.run.probe_items import group_record, regression_text
from pytest_toolselect.run.session import RUN_SESSION
from pytest_toolselect.scoring.contradictions import load_case_file
from pytest_toolselect.terms.vocabulary import Verdict

from .options import DECLARED_MARKS
from .shown import shown
from .verdict import ORDER, RECORD, CaseFailed, conclude_case, setup_case

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.inputs.groups import Group


#: (how many `markers` lines there were, the marks registered at run time among them)
_RUN_TIME_MARKS = pytest.StashKey[tuple[int, dict[str, str]]]()
#: the labels whose mark this run registered already (each once, not once per item)
_OWN_MARKS = pytest.StashKey[set[str]]()


def run_time_marks(config: pytest.Config) -> dict[str, str]:
    """Marks pytest, a plugin or a conftest registered (inputs.labels.registered_at_run_time)."""
    lines = config.getini("markers")
    cached = config.stash.get(_RUN_TIME_MARKS, None)
    if cached is None or cached[0] != len(lines):
        # a conftest in a subfolder registers its marks before that folder is collected
        declared: frozenset[str] = config.stash.get(DECLARED_MARKS, frozenset())
        cached = (len(lines), registered_at_run_time(lines, declared))
        config.stash[_RUN_TIME_MARKS] = cached
    return cached[1]


def label_refusals(config: pytest.Config, case: Case) -> list[ToolselectError]:
    """A case's labels that name a mark registered at run time: one error each."""
    problems = run_time_refusals(labelled(case.category, case.intent, case.tags), run_time_marks(config))
    return [ToolselectError(message, file=case.source or None, line=case.line,
                            place=f"case {case.id!r}", fix=fix) for message, fix in problems]


def label_item(item: pytest.Item, case: Case) -> None:
    """category, intent and tags select with -k and (registered) -m markers."""
    add_labels(item, (case.category, case.intent, *case.tags))


def add_labels(item: pytest.Item, labels: Iterable[str | None]) -> None:
    config = item.config
    own = config.stash.setdefault(_OWN_MARKS, set())
    for label in labels:
        if label:
            item.extra_keyword_matches.add(label)
            # refused at load, or a mark some code acts on (refused at collection): a label
            # never becomes a mark that changes the outcome
            if refused(label) or (label not in own and label in run_time_marks(config)):
                continue
            if label not in own:
                own.add(label)
                config.addinivalue_line("markers", f"{label}: {OWN}")
            item.add_marker(label)


class _PlainErrors:
    """The plugin's own errors show as their message: a traceback through it adds nothing."""

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        # an xfail's long report is thrown away by pytest: building its traceback (which
        # parses the source of the plugin's modules) only costs time
        if isinstance(excinfo.value, (CaseFailed, ToolselectError, pytest.xfail.Exception)):
            return shown(str(excinfo.value))
        return super().repr_failure(excinfo)  # type: ignore[misc, no-any-return]


class CaseFile(_PlainErrors, pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        session = self.config.stash[RUN_SESSION]
        config = session.settings.config_for(self.path)
        case_file = load_case_file(self.path, config.identifiers)
        raise_all([*(e for case in case_file.cases for e in label_refusals(self.config, case)),
                   *server_refusals(session.settings.configs, config, case_file)])
        define_keys(self, [case.id for case in case_file.cases])
        for case in case_file.cases:
            yield CaseItem.from_parent(self, name=case.id, case=case)


def define_keys(file: pytest.File, names: Iterable[str]) -> None:
    """Every case the file defines, before any filtering (--lf, node ids): what is gone
    from the baseline is decided from this, never from the items pytest keeps."""
    session = file.config.stash[RUN_SESSION]
    anchor = session.settings.config_for(file.path).root
    keys = {key_for(file.path, f"{file.nodeid}::{name}", anchor) for name in names}
    if keys:
        session.state.define(split(next(iter(keys)))[0], keys, anchor)



def define_families(session: Any, nodes: Iterable[Any]) -> None:
    """Every parameter set of a parametrized @case function, as its module or class made
    them, before any filtering (node ids, -k), by the function's key: an entry of such a
    function that is not among them is gone (its question reworded, or the parameter set
    removed), and one gone beside one new is that case reworded (run/lineage.reworded)."""
    for node in nodes:
        if (isinstance(node, pytest.Function) and hasattr(node, "callspec")
                and node.get_closest_marker("toolselect_case") is not None):
            key = key_for(node.path, node.nodeid, session.settings.config_for(node.path).root)
            session.state.define(family_of(key), {key})


class CaseItem(_PlainErrors, pytest.Item):
    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        label_item(self, case)

    def setup(self) -> None:
        setup_case(self, self.case)

    def runtest(self) -> None:
        conclude_case(self, self.case)


    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.case.line - 1 if self.case.line else None
        return self.path, line, f"toolselect case {self.case.id}"


class GroupsFile(_PlainErrors, pytest.File):
    """A tool_preference_groups.v1 file: one GroupItem per group."""

    def collect(self) -> Iterator[pytest.Item]:
        groups = load_groups_file(self.path)
        define_keys(self, [group.id for group in groups])
        for group in groups:
            yield GroupItem.from_parent(self, name=group.id, group=group)



class GroupItem(_PlainErrors, pytest.Item):
    """A preference group: all its cells x reps; fails only when a control starts over-calling."""

    def __init__(self, *, group: Group, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.group = group
        add_labels(self, ("preference", "control" if group.is_control else "pair", group.domain))

    def setup(self) -> None:
        session = self.config.stash[RUN_SESSION]
        session.calls.prefetch(self)
        calls = session.calls.run_group(self.nodeid, self.group)
        base = session.baselines.baseline_group(self.nodeid)
        rec = group_record(self.nodeid, self.stash.get(ORDER, 0), self.path, self.group, calls, base,
                           key=session.baselines.key_of(self.nodeid))
        self.stash[RECORD] = rec
        if calls and all(c.skipped for c in calls):
            self.stash[RECORD] = replace(rec, verdict=Verdict.SKIPPED)
            pytest.skip(str(calls[0].error or "cost cap reached"))
        if calls and not rec.entry:
            self.stash[RECORD] = replace(rec, verdict=Verdict.ERROR)
            errors = [c.error for c in calls if c.error]
            cut = sum(1 for c in calls if c.inconclusive)
            if errors:
                why = plural(len(errors), "error")
                why += f", {cut} inconclusive" if cut else ""
                raise ToolselectError(f"no call of group {self.group.id} was scored ({why}); "
                                      f"first: {errors[0]}")
            # the gate's rule: a case with every rep cut is an error too
            raise ToolselectError(f"no call of group {self.group.id} was scored: all {cut} "
                                  "replies were cut at max_tokens before any tool call "
                                  "(inconclusive)", fix="raise max_tokens")

    def runtest(self) -> None:
        rec = self.stash[RECORD]
        session = self.config.stash[RUN_SESSION]
        if (isinstance(rec, GroupRecord) and rec.verdict == Verdict.REGRESSION
                and not session.settings.flag("update_baseline")):
            raise CaseFailed(regression_text(rec, session.baselines.baseline_group(self.nodeid)))


    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.group.line - 1 if self.group.line else None
        return self.path, line, f"toolselect group {self.group.id}"

