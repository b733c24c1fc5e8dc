"""A tool as a model is offered it: name, description, input schema, and where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)
    server: str = ""
    #: the tool's name on its server, when tool_name_format renamed it for the model
    original_name: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict, hash=False)
    #: set when the provider sent arguments that are not a JSON object
    raw_arguments: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.raw_arguments is not None:
            d["raw_arguments"] = self.raw_arguments
        return d
