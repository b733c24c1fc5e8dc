"""The checks' and lint rules' names: data the scoring, the gate, the config and the baseline share."""

from __future__ import annotations

#: every check this version runs where it applies, in the order a score lists them
CHECK_NAMES = (
    "tool_choice",
    "no_forbidden_tools",
    "arguments",
    "valid_arguments",
    "no_undeclared_arguments",
    "no_identifier_invented",
    "no_any_identifier",
    "no_decoy_identifier",
)

#: what a baseline entry without a ``checks`` list was evaluated with: the checks that
#: existed before the list was recorded (valid_arguments came with it)
CHECKS_BEFORE_LIST = (
    "tool_choice",
    "no_forbidden_tools",
    "arguments",
    "no_identifier_invented",
    "no_any_identifier",
    "no_decoy_identifier",
)

#: every lint rule (docs/lint.md's table): what ``lint_allow`` in the config may silence
LINT_RULES = (
    "confusable-pair", "ranking-collision", "missing-description", "thin-description",
    "parameter-without-description", "identifier-without-format", "unsatisfiable-schema",
    "invalid-name",
    "name-collision", "shadows-builtin", "too-many-tools", "tool-list-size", "untested-tool",
    "case-names-unknown", "hidden-text", "model-instructions", "secret-seeking-parameter",
    "cross-server-shadowing", "rug-pull",
)
