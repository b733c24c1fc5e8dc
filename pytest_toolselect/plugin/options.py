"""The --toolselect-* options registered with pytest: a flag and an ini key each."""

from __future__ import annotations

import pytest

from pytest_toolselect.inputs.option_table import OPTIONS


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
