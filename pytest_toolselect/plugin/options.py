"""The --toolselect-* options registered with pytest: a flag and an ini key each."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_toolselect.inputs.option_table import OPTIONS

#: the marks the ini file declares under `markers`, read before any plugin or conftest
#: registers its own (plugin.pytest_load_initial_conftests)
DECLARED_MARKS = pytest.StashKey[frozenset[str]]()
#: what runs after every hook and every other cleanup (the machinery's last word on the exit status)
FINAL = pytest.StashKey[list[Callable[[], None]]]()


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolselect", "tool selection gate (pytest-toolselect)")
    for opt in OPTIONS:
        if opt.kind == "bool":
            group.addoption(opt.flag, action="store_true", default=None, dest=opt.ini, help=opt.help)
            parser.addini(opt.ini, opt.help, type="bool", default=None)
        else:
            group.addoption(opt.flag, action="store", default=None, dest=opt.ini,
                            metavar=opt.name.split("_")[-1].upper(), help=opt.help)
            parser.addini(opt.ini, opt.help, type="string", default=None)
