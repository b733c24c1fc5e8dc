"""The gate rules' names and defaults, as data: the options table names them, the gate defines them.

The rules themselves (statistics) live in :mod:`pytest_toolselect.gate.verdict_rules`, whose ``RULES``
has exactly these names (a test checks it).
"""

from __future__ import annotations

from typing import Any

#: runs per case a baseline keeps when updated (--toolselect-history)
DEFAULT_HISTORY = 5

RULE_NAMES = ("legacy", "clean-break", "fisher-0.05", "fisher-0.01", "fisher-0.005", "fisher-0.001",
              "beta-0.99", "beta-0.995", "beta-0.999")


#: chosen by benchmarks/gate_validity.py: at reps 3 on a 50-case suite, the lowest miss
#: rate among the rules whose false-block rate per pull request is at most 1%; fisher-0.01
#: ties it at reps 3 but blocks 2.9% of harmless pull requests at reps 5 (docs/gate.md)
DEFAULT_RULE = "fisher-0.005"
#: extra reps per case at most (--toolselect-max-extra-reps); with the bounds below,
#: chosen by benchmarks/gate_validity.py (docs/gate.md)
DEFAULT_MAX_EXTRA_REPS = 30


def rule_problem(name: Any) -> str | None:
    """For the --toolselect-rule option: a misspelled rule fails loudly, naming the valid ones."""
    if name in RULE_NAMES:
        return None
    return f"is not a gate rule; valid rules: {', '.join(RULE_NAMES)}"
