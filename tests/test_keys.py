"""Baseline keys: stable under where pytest runs; node ids of older baselines map back."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.gate.keys import defines_function, function_of, key_for, legacy_renames

segment = st.text(alphabet="abcdefghij_-", min_size=1, max_size=6)
folders = st.lists(segment, min_size=0, max_size=3)


@given(above=folders, anchor=st.lists(segment, min_size=1, max_size=3), inside=folders,
       name=segment, case_id=segment, rootdir_depth=st.integers(min_value=0, max_value=6))
def test_the_key_is_the_same_from_any_rootdir_and_node_ids_map_back(
        above: list[str], anchor: list[str], inside: list[str], name: str, case_id: str,
        rootdir_depth: int) -> None:
    top = Path("/", *above)
    anchor_dir = top.joinpath(*anchor)
    file = anchor_dir.joinpath(*inside, f"{name}.toolselect.yaml")
    # any rootdir between / and the file's folder gives a node id relative to it
    chain = [Path("/"), *[Path("/", *file.parts[1:i]) for i in range(2, len(file.parts))]]
    rootdir = chain[min(rootdir_depth, len(chain) - 1)]
    nodeid = f"{file.relative_to(rootdir).as_posix()}::{case_id}"
    key = key_for(file, nodeid, anchor_dir)
    assert key == f"{'/'.join([*inside, name + '.toolselect.yaml'])}::{case_id}"
    # an older baseline's node id, recorded from that rootdir, is read as the key
    file_part = key.split("::")[0]
    if nodeid != key:
        assert legacy_renames([nodeid], [key], {file_part: anchor_dir}) == {nodeid: key}


@given(foreign=st.lists(segment, min_size=1, max_size=3), name=segment, case_id=segment)
def test_a_key_from_another_suite_is_not_taken_for_a_node_id(foreign: list[str], name: str,
                                                             case_id: str) -> None:
    anchor = Path("/repo/suite")
    key = f"{name}.toolselect.yaml::{case_id}"
    stored = "/".join([*foreign, key])
    renames = legacy_renames([stored], [key], {key.split("::")[0]: anchor})
    assert renames == ({stored: key} if foreign == ["suite"] or foreign == ["repo", "suite"]
                       else {})


def test_a_node_id_matching_two_cases_is_left_alone() -> None:
    keys = ["a/x.toolselect.yaml::c", "b/x.toolselect.yaml::c"]
    assert legacy_renames(["x.toolselect.yaml::c"], keys) == {}


def test_decorated_keys_name_their_function() -> None:
    assert function_of("TestX::test_find[acme-1]") == "test_find"
    text = "import x\n\nasync def test_find(toolselect_result):\n    pass\n"
    assert defines_function(text, "test_find")
    assert not defines_function(text, "test_fin")
