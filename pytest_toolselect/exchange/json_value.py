"""What is arbitrary JSON by nature, named so a reader sees it is meant to be.

A JSON Schema, a tool call's arguments, a tool's definition as a server or a user wrote it
and the data a fingerprint hashes have no fixed shape: they are the user's or a server's
JSON, passed through. Every other value that crosses from one part to another is typed
(`tests/test_typed_boundaries.py` names an untyped mapping in such a signature); these
aliases are the explicit, greppable exemption.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

#: a JSON object as read (a schema, arguments, a tool definition): not changed by its reader
JSONObject: TypeAlias = Mapping[str, Any]
#: a JSON object as built, to be written or hashed
JSONDict: TypeAlias = dict[str, Any]
