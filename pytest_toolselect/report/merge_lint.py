"""Shards' lint joined: the ``lint`` sections of N results documents as the one run's.

A ``--toolselect-lint`` item is one server, sharded by its node id like an ordinary
test, so each server is linted whole in one shard. Every shard lints the whole tool set
against every collected case before its share is taken, so a server's findings, its
coverage and the heatmap do not depend on the shard that reported them. The merge reads
each server's part back as the item's record and builds the section as the unsharded
run does, from the records. Pure: sections in, a section out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.lint.findings import merged_document
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.records.run_records import LintRecord

from .merge_probe import RERUN

#: what describes the whole tool set, the same in every shard of one run
_WHOLE = (("threshold", "similarity threshold"), ("heatmap", "heatmap of the confusable tools"))


def merge_lint(sections: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The lint section of the whole run (None: no shard linted a server); ToolselectError
    naming the files when the shards' lints are not one run's."""
    if not sections:
        return None
    first_path, first = sections[0]
    records: dict[str, LintRecord] = {}
    owner: dict[str, str] = {}
    for path, section in sections:
        if set(section.get("entries") or ()) != set(section["servers"]):
            raise ToolselectError("its lint section has no baseline entries: the file was written "
                                  "by an older version", file=path, fix=RERUN)
        for key, what in _WHOLE:
            if section[key] != first[key]:
                raise ToolselectError(
                    f"its lint's {what} differs from {first_path}'s: the servers gave these jobs "
                    "other tools, so they are not shards of one run", file=path,
                    fix="run every shard on the same commit, with the same servers and config")
        for server in section["servers"]:
            record = server_record(section, server)
            other = owner.get(server)
            if other is None:
                owner[server], records[server] = path, record
            elif record != records[server]:
                raise ToolselectError(
                    f"server {server} was linted in two shards with different results (also in "
                    f"{other})", file=path,
                    fix="merge the results of one suite run, every shard with the same servers")
    merged = merged_document(records)
    return merged.to_json() if merged is not None else None


def server_record(section: Mapping[str, Any], server: str) -> LintRecord:
    """One server's item record, read back from a results document's lint section."""
    mine = [f for f in section["findings"] if server in f["servers"]]
    return LintRecord(
        server=server, entry=list(section["entries"][server]),
        findings=[{k: v for k, v in f.items() if k != "new"} for f in mine],
        new=[f["id"] for f in mine if f["new"]], tools=list(section["servers"][server]),
        coverage=(section.get("coverage") or {}).get(server), heatmap=section["heatmap"],
        threshold=section["threshold"], snapshot=(section.get("snapshots") or {}).get(server, {}))
