"""The run reads its options once, typed: one field per option of the table, of its kind."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.inputs.option_table import BY_NAME, OPTIONS
from pytest_toolselect.run.settings import Options, Resolved, convert

KIND_TYPE = {"str": str, "path": str, "int": int, "float": float, "bool": bool}


def test_options_has_one_field_per_option_of_the_table_typed_by_its_kind() -> None:
    fields = dataclasses.fields(Options)
    assert [f.name for f in fields] == [o.name for o in OPTIONS]
    for f in fields:
        opt = BY_NAME[f.name]
        wanted = KIND_TYPE[opt.kind].__name__
        # an option without a default is None until it is given
        assert f.type == (f"{wanted} | None" if opt.default is None else wanted), f.name


def test_the_defaults_read_as_their_types() -> None:
    options = Options.read(lambda name: Resolved(BY_NAME[name].default, "default"))
    for opt in OPTIONS:
        value = getattr(options, opt.name)
        assert value is None or type(value) is KIND_TYPE[opt.kind], (opt.name, value)


RAW = {
    "int": st.integers(min_value=1, max_value=10_000).map(str),
    "float": st.floats(min_value=1.0, max_value=1e6, allow_nan=False).map(repr),
    "bool": st.sampled_from(["1", "true", "yes", "on", "0", "false", "no", "off", "TRUE", " On "]),
}


@given(st.data())
def test_any_value_a_flag_can_give_reads_as_the_fields_type(data: st.DataObject) -> None:
    given_values: dict[str, Any] = {}
    for opt in OPTIONS:
        if opt.kind in RAW:  # values of 1 or more pass every check the table has
            given_values[opt.name] = data.draw(RAW[opt.kind], label=opt.name)

    def resolved(name: str) -> Resolved:
        opt = BY_NAME[name]
        if name in given_values:
            return Resolved(convert(opt, given_values[name], opt.flag), opt.flag)
        return Resolved(opt.default, "default")

    options = Options.read(resolved)
    for name in given_values:
        assert type(getattr(options, name)) is KIND_TYPE[BY_NAME[name].kind], name
    assert given_values  # the table has options of each of these kinds without a check
