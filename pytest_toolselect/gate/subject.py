"""What a baseline belongs to: the provider, the model and what moves their answers.

A provider names its subject as JSON (``Provider.subject()``): the provider and the model,
and whatever of its own moves answers (its sampling settings, a harness and its version).
Those other fields are each provider's own, so they are kept as the provider wrote them;
``Subject`` reads them once, where the provider or the baseline file hands them over, and
gives them back key for key with ``to_json``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict

#: subject fields older baselines hold that no longer decide whose baseline it is: the
#: config's system prompt is now gated per case (in each case's tools fingerprint)
IGNORED_FIELDS = frozenset({"system_hash"})


@dataclass(frozen=True)
class Subject:
    """A run's or a baseline's subject: an immutable value, its fields in the order written."""

    #: every field by name (provider, model, settings, harness...): a read-only copy
    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        # a private copy behind a read-only view: whoever holds the value cannot change it
        if not isinstance(self.fields, MappingProxyType):
            object.__setattr__(self, "fields", MappingProxyType(copy.deepcopy(dict(self.fields))))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Subject:
        """A subject as a provider names it or a baseline file holds it."""
        return cls(fields=data)

    def to_json(self) -> JSONDict:
        """The subject as written, key for key."""
        return copy.deepcopy(dict(self.fields))

    @property
    def provider(self) -> str | None:
        return self.fields.get("provider")

    @property
    def model(self) -> str | None:
        return self.fields.get("model")

    def value(self, name: str) -> Any:
        """A field's value (None when the subject does not name it)."""
        return self.fields.get(name)

    def differing(self, other: Subject) -> list[str]:
        """The fields whose values differ, in name order (empty: the same subject)."""
        names = sorted((set(self.fields) | set(other.fields)) - IGNORED_FIELDS)
        return [k for k in names if self.value(k) != other.value(k)]
