"""Rug pulls: a tool whose description or schema changed since the baseline was accepted.

The baseline keeps, per linted server, each tool's description and schema fingerprint
(``lint_tools``); a tool that reads otherwise now is an error-level finding with the word
diff, until a run with ``--toolselect-update-baseline`` accepts the new text. Its id holds
the new text's fingerprint, so an accepted change never covers a later one.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .findings import ERROR, Finding
from .poisoning import SYSTEM
from .text import escaped

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool

RULE = "rug-pull"
#: a description longer than this is kept cut (a diff then shows the start's changes)
MAX_TEXT = 4000
#: words of context either side of a change in the diff
CONTEXT = 4


def _fingerprint(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def snapshot(tools: tuple[Tool, ...], instructions: str | None = None) -> dict[str, dict[str, str]]:
    """What the baseline keeps of a server's tools: by name, its description and the
    fingerprints of its schema and of both; and its instructions (the system prompt) under
    SYSTEM, kept even when there are none, so that instructions a server adds later show."""
    kept = {t.name: {"description": t.description[:MAX_TEXT], "schema": _fingerprint(t.input_schema),
                     "text": _fingerprint([t.description, t.input_schema])}
            for t in tools}
    said = instructions or ""
    kept[SYSTEM] = {"description": said[:MAX_TEXT], "schema": _fingerprint(None),
                    "text": _fingerprint(said)}
    return kept


def word_diff(old: str, new: str) -> str:
    """The changes from old to new, word by word: [-removed-] {+added+}, with a little
    context either side (hidden characters escaped, so a change of them shows)."""
    a, b = escaped(old).split(), escaped(new).split()
    out: list[str] = []
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    for i, (op, a0, a1, b0, b1) in enumerate(ops):
        if op == "equal":
            words = a[a0:a1]
            if len(words) > 2 * CONTEXT:
                head = words[:CONTEXT] if i else []
                tail = words[-CONTEXT:] if i < len(ops) - 1 else []
                words = [*head, "...", *tail]
            out.extend(words)
            continue
        if a1 > a0:
            out.append("[-" + " ".join(a[a0:a1]) + "-]")
        if b1 > b0:
            out.append("{+" + " ".join(b[b0:b1]) + "+}")
    return " ".join(out)


def rug_pulls(server: str, tools: tuple[Tool, ...],
              accepted: Mapping[str, Mapping[str, str]] | None,
              instructions: str | None = None) -> list[Finding]:
    """The server's tools, and its instructions, that changed since their accepted snapshot
    (snapshot()'s, as the baseline keeps it; None: none kept yet). A snapshot that holds no
    instructions entry was accepted before they were kept: they are not compared."""
    if not accepted:
        return []
    found = []
    now = snapshot(tools, instructions)
    for name, entry in now.items():
        before = accepted.get(name)
        if not isinstance(before, Mapping) or before.get("text") == entry["text"]:
            continue
        old = str(before.get("description", ""))
        changed, diff = [], ""
        system = name == SYSTEM
        if old != entry["description"]:
            changed.append("instructions" if system else "description")
            diff = word_diff(old, entry["description"])
        if before.get("schema") != entry["schema"] and not system:
            changed.append("input schema")
        what = " and ".join(changed) or "text"
        called = f"server {server}'s instructions (its system prompt)" if system else f"{name}'s {what}"
        found.append(Finding(
            RULE, ERROR, (server,), (name,),
            f"{called} changed since the baseline was accepted"
            + (f": {diff}" if diff else "")
            + (f" (schema fingerprint {before.get('schema')} -> {entry['schema']})"
               if "input schema" in changed else ""),
            "review the change (a server that rewrites its descriptions after approval can steer "
            "the model); accept it with --toolselect-update-baseline",
            {"changed": changed, "diff": diff, "before": dict(before), "after": entry},
            subject=entry["text"]))
    return found
