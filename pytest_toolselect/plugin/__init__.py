"""pytest hooks: the plugin's entry point, loaded in every pytest run of every user.

Importing this module must stay cheap, and so must a run of ordinary tests: it imports
pytest, the options table and nothing else of the package. The run's machinery
(``plugin/machinery.py``: the run session, its hooks, and through them every part a run
uses) is imported by `_start`, once the run turns out to concern toolselect: at configure
time when a config file or a toolselect option is there, or under xdist; otherwise when
collection meets a case file, a groups file or a test marked as a case (`Lookout`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.inputs import is_case_file, is_groups_file

from .options import DECLARED_MARKS, FINAL, add_options

if TYPE_CHECKING:
    from .machinery import SessionHooks

CASE_MARK = "toolselect_case"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    from pytest_toolselect.inputs.labels import registered_at_run_time

    # before any conftest or plugin registers a mark: these lines are the ini file's own
    early_config.stash[DECLARED_MARKS] = frozenset(
        registered_at_run_time(list(early_config.getini("markers")), ()))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{CASE_MARK}(**fields): this test is a tool-selection case (see @case)"
    )
    config.addinivalue_line("markers", "toolselect_lint: a --toolselect-lint item (one per server)")
    final: list[Callable[[], None]] = []
    config.stash[FINAL] = final
    # registered first, so what the machinery puts here runs last (after every hook and
    # every later cleanup)
    def run_final() -> None:
        for run in final:
            run()

    config.add_cleanup(run_final)
    if _distributed(config) or _in_use(config):
        _start(config)
    else:
        config.pluginmanager.register(Lookout(config), "toolselect-lookout")


def _in_use(config: pytest.Config) -> bool:
    """A toolselect config file at the rootdir, or a toolselect option given."""
    from pytest_toolselect.run.settings import in_use

    return in_use(config)


def _distributed(config: pytest.Config) -> bool:
    """An xdist controller or worker: the controller learns of the cases from its workers'
    reports, so it never sees collection start the machinery."""
    return (hasattr(config, "workerinput") or getattr(config.option, "dist", "no") != "no"
            or bool(getattr(config.option, "numprocesses", None)))


def _start(config: pytest.Config) -> SessionHooks:
    """The run's machinery, imported and started (once per config)."""
    from .machinery import start

    lookout = config.pluginmanager.get_plugin("toolselect-lookout")
    if isinstance(lookout, Lookout):
        config.pluginmanager.unregister(lookout)
        return start(config, pytest_session=lookout.pytest_session, failed=lookout.failed)
    return start(config)


class Lookout:
    """Watches a run that does not look like toolselect's until collection says otherwise."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.pytest_session: pytest.Session | None = None
        self.failed = 0  # files that failed to collect: they fail the run if cases turn up

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.pytest_session = session

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.failed += 1

    @pytest.hookimpl(wrapper=True)
    def pytest_pycollect_makeitem(self) -> Generator[None, Any, Any]:
        made = yield
        if isinstance(made, list) and any(isinstance(item, pytest.Item)
                                          and item.get_closest_marker(CASE_MARK) is not None
                                          for item in made):
            from .collect import define_families

            # the session's own hooks see the next functions; these they missed
            define_families(_start(self.config).session, made)
        return made


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_case_file(file_path):
        _start(parent.config)
        from .collect import CaseFile

        return CaseFile.from_parent(parent, path=file_path)
    if is_groups_file(file_path) and _declares_groups(file_path):
        _start(parent.config)
        from .collect import GroupsFile

        return GroupsFile.from_parent(parent, path=file_path)
    return None


def _declares_groups(path: Path) -> bool:
    """A *.groups.json may be anybody's file: collect only those that say they are groups.

    Any version counts (``tool_preference_groups.v2``, a typo in the digit): the loader
    then refuses it with a clear error instead of the file being passed over in silence.
    """
    from pytest_toolselect.positions.bounded import read_bounded

    try:  # a FIFO or a device named *.groups.json is no groups file (and never blocks)
        return b"tool_preference_groups" in read_bounded(path, 4096, head=True)
    except OSError:
        return False



@pytest.fixture
def toolselect_result(request: pytest.FixtureRequest) -> Any:
    """The decorated case's run: turns, scores and calls per rep, for extra assertions."""
    _start(request.config)
    from .collect import label_refusals
    from .decorator import case_from_item
    from .verdict import CASE, setup_case

    item = request.node
    case = case_from_item(item)
    refusals = label_refusals(item.config, case)
    if refusals:
        raise refusals[0]  # a label that names a mark some code acts on
    item.stash[CASE] = case
    return setup_case(item, case)
