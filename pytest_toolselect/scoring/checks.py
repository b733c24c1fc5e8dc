"""The checks of a selection case, and ``score()`` that runs those that apply.

Pure functions over one captured first turn: the calls in order and the tools that
were offered (whose input schemas tell number-typed and identifier parameters apart).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.exchange.clip import clip_text
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.inputs.cases import Case, Decoy
from pytest_toolselect.terms.check_names import CHECK_NAMES as CHECK_NAMES  # re-exported

from . import argschema, undeclared
from .identifiers import (
    Identifier,
    decoy_grounding,
    decoy_matched,
    find_identifiers,
    grounded_by,
    guards,
    in_identifier_param,
    listed_by_tool,
    question_grounding,
)
from .matchers import evaluate

NOT_CALLED = "not checked: the expected tool was not called"


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    #: a sentence; on failure it says what was wrong (tool, path, value)
    detail: str


@dataclass(frozen=True)
class ScoreResult:
    #: every applicable check passed
    passed: bool
    #: only the checks that apply to the case, in CHECK_NAMES order
    checks: dict[str, CheckResult]

    @property
    def failing(self) -> list[str]:
        return [name for name, result in self.checks.items() if not result.passed]


def _names(tools: Sequence[str]) -> str:
    return ", ".join(tools)


def _at(call: ToolCall, index: int) -> str:
    return f"{call.name} (call {index + 1})"


def check_tool_choice(case: Case, calls: Sequence[ToolCall],
                      tools: Sequence[Tool] = ()) -> CheckResult:
    expect = case.expect_tool
    if expect is None:
        return CheckResult(True, "no tool expectation")
    if not calls:
        if not expect:
            return CheckResult(True, "no tool was called, as expected")
        if case.allow_no_tool:
            return CheckResult(True, "no tool was called, which this case allows")
        return CheckResult(False, f"no tool was called; expected one of: {_names(expect)}")
    first = calls[0].name
    shown = clip_text(first)
    if tools and all(t.name != first for t in tools):
        # a name the model made up: say so, or it reads like a real tool that was wrongly chosen
        shown += " (not one of the tools offered)"
    if not expect:
        return CheckResult(False, f"{shown} was called; expected no tool call")
    if first in expect:
        made = sum(1 for c in calls if c.name in expect)
        if case.expect_calls is not None and made != case.expect_calls:
            return CheckResult(False, f"first call is {first}, as expected, but the turn calls "
                                      f"{_names(expect)} {_times(made)}; expected exactly "
                                      f"{_times(case.expect_calls)}")
        return CheckResult(True, f"first call is {first}, as expected")
    return CheckResult(False, f"first call is {shown}; expected one of: {_names(expect)}")


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def check_no_forbidden_tools(case: Case, calls: Sequence[ToolCall]) -> CheckResult:
    forbidden = set(case.forbid_tools)
    hits = [_at(c, i) for i, c in enumerate(calls) if c.name in forbidden]
    if hits:
        return CheckResult(False, f"forbidden tool called: {'; '.join(hits)}")
    return CheckResult(True, f"none of {_names(case.forbid_tools)} was called")


def _target_call(case: Case, calls: Sequence[ToolCall]) -> tuple[int, ToolCall] | None:
    for i, call in enumerate(calls):
        if not case.expect_tool or call.name in case.expect_tool:
            return i, call
    return None


def check_arguments(case: Case, calls: Sequence[ToolCall],
                    tools: Sequence[Tool] = ()) -> CheckResult:
    target = _target_call(case, calls)
    if target is None:
        # tool_choice already reports the missing call; failing twice would double count
        return CheckResult(True, NOT_CALLED)
    index, call = target
    if call.raw_arguments is not None:
        raw = call.raw_arguments if len(call.raw_arguments) <= 200 else (
            call.raw_arguments[:197] + "...")
        return CheckResult(False, f"{_at(call, index)} sent arguments that are not a JSON "
                                  f"object: {raw!r}")
    schema = _schema(call.name, tools)
    misses: list[str] = []
    hits: list[str] = []
    for matcher in case.expect_args:
        ok, detail = evaluate(matcher, call.arguments, schema)
        (hits if ok else misses).append(detail)
    if misses:
        return CheckResult(False, f"{_at(call, index)}: {'; '.join(misses)}")
    return CheckResult(True, f"{_at(call, index)}: {'; '.join(hits)}")


def _schema(name: str, tools: Sequence[Tool]) -> Mapping[str, Any] | None:
    for tool in tools:
        if tool.name == name:
            return tool.input_schema
    return None


#: offenders an identifier check names; the rest are counted (huge arguments stay readable)
MAX_OFFENDERS = 10


def _identifiers_check(idents: Sequence[Identifier], offenders: list[str], what: str,
                       ok: str) -> CheckResult:
    if offenders:
        shown = [clip_text(o) for o in offenders[:MAX_OFFENDERS]]
        if len(offenders) > MAX_OFFENDERS:
            shown.append(f"and {len(offenders) - MAX_OFFENDERS:,} more")
        return CheckResult(False, f"{what}: {'; '.join(shown)}")
    if not idents:
        return CheckResult(True, "no identifier was passed")
    return CheckResult(True, ok.format(n=len(idents)))


def _params_to_ground(case: Case, idents: Sequence[Identifier]) -> list[Identifier]:
    """What no_identifier_invented checks: every identifier under forbid_ungrounded: true,
    else (by default) the digit-bearing values of identifier parameters."""
    if case.forbid_ungrounded:
        return list(idents)
    if not case.grounds_params:
        return []
    return [i for i in idents if i.declared and any(c.isdigit() for c in i.value)]


def check_no_identifier_invented(case: Case, calls: Sequence[ToolCall],
                                 tools: Sequence[Tool] = (),
                                 idents: Sequence[Identifier] | None = None) -> CheckResult:
    if idents is None:
        idents = find_identifiers(calls, tools, case.identifiers)
    idents = _params_to_ground(case, idents)
    if case.context:
        return _grounded_in_sources(case, idents, tools)
    grounding = question_grounding(case.question, case.identifiers)
    offered = {t.name: t for t in tools}
    # a value the tool lists itself (its enum, a code in its description) is no invention
    offenders: list[str] = []
    listed = 0
    for ident in idents:
        if grounded_by(ident, grounding) is None:
            if listed_by_tool(ident, offered.get(ident.tool)) is None:
                offenders.append(ident.describe())
            else:
                listed += 1
    return _identifiers_check(idents, offenders, "identifier not in the question",
                              "all {n} identifier(s) are grounded in the question" if not listed
                              else f"all {{n}} identifier(s) are grounded: {listed} listed by "
                                   "the tool itself, the rest in the question")


def _grounded_in_sources(case: Case, idents: Sequence[Identifier],
                         tools: Sequence[Tool]) -> CheckResult:
    """no_identifier_invented for a case with context: each identifier is grounded in the
    question or a given result, and the detail names where ("04138203 from find_company's
    result, turn 1"); one in no source is invented."""
    from .sources import case_sources, source_of

    sources = case_sources(case)
    offered = {t.name: t for t in tools}
    offenders: list[str] = []
    found: list[str] = []
    for ident in idents:
        hit = source_of(ident, sources)
        if hit is not None:
            found.append(f"{ident.value} from {hit[1]}")
        elif listed_by_tool(ident, offered.get(ident.tool)) is not None:
            found.append(f"{ident.value} listed by {ident.tool} itself")
        else:
            offenders.append(ident.describe())
    named = "; ".join(clip_text(f) for f in found[:MAX_OFFENDERS])
    if len(found) > MAX_OFFENDERS:
        named += f"; and {len(found) - MAX_OFFENDERS:,} more"
    return _identifiers_check(idents, offenders,
                              "identifier in no source (not in the question nor in any "
                              "given result)", "all {n} identifier(s) are grounded: "
                              + named.replace("{", "{{").replace("}", "}}"))


def _decoy_source(case: Case, ident: Identifier) -> str:
    """Where a decoy the model used came from, for a case with context: ", from X"."""
    if not case.context:
        return ""
    from .sources import case_sources, source_of

    hit = source_of(ident, case_sources(case))
    return f", found in {hit[1]}" if hit is not None else ", found in no source"


def check_no_any_identifier(case: Case, calls: Sequence[ToolCall],
                            tools: Sequence[Tool] = (),
                            idents: Sequence[Identifier] | None = None) -> CheckResult:
    if idents is None:
        idents = find_identifiers(calls, tools, case.identifiers)
    # a search text is not an identifier use: only identifier parameters count
    idents = [i for i in idents if in_identifier_param(i)]
    offenders = [i.describe() for i in idents]
    return _identifiers_check(
        idents, offenders, "identifier passed where the question holds none valid", "")


def check_no_decoy_identifier(case: Case, calls: Sequence[ToolCall],
                              tools: Sequence[Tool] = (),
                              idents: Sequence[Identifier] | None = None) -> CheckResult:
    if idents is None:
        idents = find_identifiers(calls, tools, case.identifiers)
    decoys = [(d, decoy_grounding([d.value], case.identifiers))
              for d in map(Decoy.of, case.decoys)]
    offenders = []
    guarded = [i for i in idents if any(guards(d.params, i) for d, _ in decoys)]
    for ident in guarded:
        for decoy, grounding in decoys:
            found = decoy_matched(ident, grounding) if guards(decoy.params, ident) else None
            if found is not None:
                offenders.append(f'{ident.describe()} matches decoy "{found}"'
                                 + _decoy_source(case, ident))
                break
    return _identifiers_check(guarded, offenders, "decoy used as an identifier",
                              "none of {n} identifier(s) matches a decoy")


def check_valid_arguments(case: Case, calls: Sequence[ToolCall],
                          tools: Sequence[Tool] = ()) -> CheckResult | None:
    """Every call to an offered tool validates against its input schema; None when the
    turn calls no offered tool (nothing to validate) or the case turns the check off."""
    if not case.valid_arguments:
        return None
    found = argschema.check_valid_arguments(calls, tools)
    return None if found is None else CheckResult(*found)


def check_no_undeclared_arguments(case: Case, calls: Sequence[ToolCall],
                                  tools: Sequence[Tool] = ()) -> CheckResult | None:
    """No call to an offered tool passes a parameter its schema does not declare; None
    when the turn calls no offered tool or the case turns the check off."""
    if not case.undeclared_arguments:
        return None
    found = undeclared.check_undeclared(calls, tools)
    return None if found is None else CheckResult(*found)


def score(case: Case, calls: Sequence[ToolCall], tools: Sequence[Tool] = (), *,
          arguments_filled: bool = True) -> ScoreResult:
    """Run the checks that apply to the case on one first turn.

    ``arguments_filled`` False: the model fills no arguments by design (local/bm25), so
    there is nothing of its own to validate against the schemas."""
    calls = list(calls)
    checks: dict[str, CheckResult] = {}
    if case.expect_tool is not None:
        checks["tool_choice"] = check_tool_choice(case, calls, tools)
    if case.forbid_tools:
        checks["no_forbidden_tools"] = check_no_forbidden_tools(case, calls)
    if case.expect_args:
        checks["arguments"] = check_arguments(case, calls, tools)
    valid = check_valid_arguments(case, calls, tools) if arguments_filled else None
    if valid is not None:
        checks["valid_arguments"] = valid
    extra = check_no_undeclared_arguments(case, calls, tools) if arguments_filled else None
    if extra is not None:
        checks["no_undeclared_arguments"] = extra
    if case.grounds_params or case.forbid_any_identifier or case.decoys:
        # found once, shared by the three identifier checks
        idents = find_identifiers(calls, tools, case.identifiers)
        # by default the check applies to a turn that passes an identifier parameter
        if case.forbid_ungrounded or _params_to_ground(case, idents):
            checks["no_identifier_invented"] = check_no_identifier_invented(
                case, calls, tools, idents)
        if case.forbid_any_identifier:
            checks["no_any_identifier"] = check_no_any_identifier(case, calls, tools, idents)
        if case.decoys:
            checks["no_decoy_identifier"] = check_no_decoy_identifier(
                case, calls, tools, idents)
    return ScoreResult(all(c.passed for c in checks.values()), checks)
