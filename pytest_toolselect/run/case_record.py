"""The run session's records: one case's record and the gathered records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_toolselect.exchange.clip import clip_call, clip_text
from pytest_toolselect.exchange.context import context_lines
from pytest_toolselect.gate.baseline import fingerprint
from pytest_toolselect.gate.evidence import dropped_from
from pytest_toolselect.messages.masking import redact
from pytest_toolselect.records.run_records import GROUP_KIND, CaseRecord, CheckEntry, GroupRecord
from pytest_toolselect.terms.vocabulary import Verdict

from .case_run import first_tool
from .escalation import judged
from .lineage import tool_fields

if TYPE_CHECKING:
    from pytest_toolselect.exchange.turns import Turn
    from pytest_toolselect.inputs.cases import Case

    from .baseline_access import BaselineAccess
    from .case_calls import CaseCalls
    from .case_outcome import CaseOutcome
    from .settings import Settings
    from .state import RunState
    from .wiring import Wiring


def _sum_usage(usages: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for usage in usages:
        total.update(usage)
    return dict(sorted(total.items()))


#: characters of a turn's text a record keeps (enough for the reason, bounded per rep)
TEXT_CLIP = 500


class CaseRecords:
    """Builds each case's record and keeps the records the controller gathers."""

    def __init__(self, settings: Settings, wiring: Wiring, baselines: BaselineAccess,
                 calls: CaseCalls, state: RunState) -> None:
        self.settings = settings
        #: the provider's model, named in each record
        self.wiring = wiring
        #: what a case is judged against, and its key
        self.baselines = baselines
        #: the servers a case takes its tools from
        self.calls = calls
        #: writes records and group_records (the controller gathers them)
        self.state = state
        #: tool texts this process already put in a record (each travels once)
        self._sent_texts: set[str] = set()
        #: each distinct tool set (and order offered) the gathered records hold, held once:
        #: the cases of a server share one
        self._toolsets: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self._offered: dict[tuple[str, ...], list[str]] = {}

    def _masked(self, error: str | None) -> str | None:
        # a server's stderr or a provider's answer quoted in an error may hold credentials;
        # the record is what the terminal summary, the reports and the controller get
        if error is None:
            return None
        return redact(error, self.settings.server_secrets())

    def _texts(self, turns: Iterable[Turn]) -> list[str]:
        """What the model wrote on each turn: why it called nothing, or was cut, is often
        there. Masked before it is clipped, so no credential is left half."""
        secrets = self.settings.server_secrets()
        return [clip_text(redact(t.text, secrets), TEXT_CLIP) if t.text else "" for t in turns]

    def _context(self, case: Case) -> list[str]:
        """A case's given calls and results as the reports show them: masked, then clipped."""
        if not case.context:
            return []
        secrets = self.settings.server_secrets()
        return context_lines(case.context, lambda text: redact(text, secrets))

    def record(self, nodeid: str, order: int, case: Case, outcome: CaseOutcome | None,
               error: str | None = None, verdict: Verdict = Verdict.ERROR,
               billed: Sequence[Turn] = (), inconclusive: bool = False) -> CaseRecord:
        """The record of one case, the unit the controller gathers, built from its outcome
        (None: it did not run). ``billed``: the calls of a case that errored after they
        were paid for (every cost figure counts them); ``inconclusive``: they were every
        rep, each cut before any tool call."""
        identity = outcome.identity if outcome is not None else self.baselines.identity(nodeid,
                                                                                        case)
        case_fp = identity.fingerprint
        rec = CaseRecord(
            nodeid=nodeid,
            key=identity.key,
            order=order,
            case_id=case.id,
            question=case.question,
            category=case.category,
            intent=case.intent,
            why=case.why,
            expect_tool=list(case.expect_tool) if case.expect_tool is not None else None,
            allow_no_tool=case.allow_no_tool,
            case_fingerprint=case_fp,
            # not scored: the baseline keeps its entry for this case
            status=None, verdict=verdict, error=self._masked(error),
            context=self._context(case),
        )
        if outcome is None:
            if billed:
                rec = replace(rec, model=self.wiring.provider.model,
                              usage=_sum_usage(t.usage for t in billed),
                              costs=[t.cost_usd for t in billed], texts=self._texts(billed),
                              inconclusive=len(billed) if inconclusive else 0)
            return rec
        run = outcome.run
        firsts = [first_tool(t) for t in run.turns]
        modal = Counter(firsts).most_common(1)[0][0] if firsts else None
        failing: dict[str, str] = {}
        for s in run.scores:
            for name, check in s.checks.items():
                if not check.passed and name not in failing:
                    failing[name] = check.detail
        status = run.status
        base, renamed = identity.entry, identity.renamed_from
        verdict, unevaluated = judged(self, outcome)
        if verdict == Verdict.REGRESSION and run.attribution and run.attribution.outcome == Verdict.DRIFT:
            verdict = Verdict.DRIFT  # the baseline's own tools fail now too: the model moved
        tools_fp = fingerprint({"tools": [t.to_dict() for t in run.tools], "system": run.system})
        secrets = [v for n in self.calls.servers_for(case) if n in self.settings.config.servers
                   for v in self.settings.config.servers[n].secrets]
        return replace(
            rec,
            **tool_fields(run, tools_fp, base, self.baselines.baseline, self._sent_texts, secrets),
            renamed_from=renamed, dropped_from=dropped_from(verdict, base),
            in_baseline=base is not None,
            status=status,
            verdict=verdict,
            passes=run.passes,
            reps=len(run.scores),
            first_tools=firsts,
            model=self.wiring.provider.model,
            # every billed call: the scored reps, then the inconclusive ones
            usage=_sum_usage(t.usage for t in (*run.turns, *run.inconclusive)),
            costs=[t.cost_usd for t in (*run.turns, *run.inconclusive)],
            texts=self._texts((*run.turns, *run.inconclusive)),
            # a turn answered from the response cache was not asked again (attempts 0)
            cached=[getattr(t, "attempts", 1) == 0 for t in run.turns],
            inconclusive=len(run.inconclusive),
            truncated=sum(1 for t in run.turns if getattr(t, "truncated", False)),
            dropped_schema_keys=sorted({k for t in run.turns
                                        for k in getattr(t, "dropped_schema_keys", ())}),
            first_tool=modal,
            # bounded: a record travels to the controller and into every report
            calls=[[clip_call(c).to_dict() for c in t.calls] for t in run.turns],
            found_by=[getattr(t, "found_by", None) for t in run.turns],
            failing_checks=sorted(failing),
            failing_detail=failing,
            # every check of every rep, for the results document
            checks=[[CheckEntry(name, c.passed, c.detail) for name, c in s.checks.items()]
                    for s in run.scores],
            tools_fingerprint=tools_fp,
            # a report can say the tools (or the system prompt) moved under the case
            tools_changed=base is not None and base.tools_fingerprint not in (None, tools_fp),
            case_changed=base is not None and base.case_fingerprint not in (None, case_fp),
            error=None,
            escalation=run.escalation,
            attribution=run.attribution,
            unevaluated_checks=unevaluated,
        )

    # controller ------------------------------------------------------------------------
    def add_record(self, data: Mapping[str, Any]) -> None:
        """A record as it travelled on its test report (plain JSON), rebuilt."""
        if data.get("kind") == GROUP_KIND:
            group = GroupRecord.from_json(data)
            self.state.group_records[group.nodeid] = group
        else:
            rec = self._shared(CaseRecord.from_json(data))
            self.state.records[rec.nodeid] = rec

    def _shared(self, rec: CaseRecord) -> CaseRecord:
        """The record with its tool set and order offered the ones an earlier record holds
        (a run of 20,000 cases held 20,000 copies of a few)."""
        toolset, offered = rec.toolset, rec.offered
        if toolset is not None:
            toolset = self._toolsets.setdefault(tuple(toolset.items()), toolset)
        if offered is not None:
            offered = self._offered.setdefault(tuple(offered), offered)
        if toolset is rec.toolset and offered is rec.offered:
            return rec
        return replace(rec, toolset=toolset, offered=offered)

    def ordered_group_records(self) -> list[GroupRecord]:
        return sorted(self.state.group_records.values(), key=lambda r: (r.order, r.nodeid))

    def ordered_records(self) -> list[CaseRecord]:
        return sorted(self.state.records.values(), key=lambda r: (r.order or 0, r.nodeid))
