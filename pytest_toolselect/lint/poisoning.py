"""Tool poisoning: hidden text, instructions to the model, secret-seeking parameters and
tools that tell the model how to use other servers' tools. Pure functions of the tool set."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import patterns
from .decode import decoded
from .findings import ERROR, WARNING, Finding
from .text import escaped, find_hidden, normal, readings, strings
from .tool_rules import _properties

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool

    from .tool_rules import ToolSet


#: what a finding on a server's instructions names in place of a tool (brackets and a space:
#: no valid tool name, so it never meets one)
SYSTEM = "(system prompt)"


@dataclass(frozen=True)
class Readable:
    """One thing of a server a model reads: a tool (its name, description and schema), or the
    server's instructions, which reach the model as the system prompt."""

    server: str
    #: the tool's name, or SYSTEM
    name: str
    #: (place, text) of every text of it
    texts: tuple[tuple[str, str], ...]

    @property
    def system(self) -> bool:
        return self.name == SYSTEM

    @property
    def subject(self) -> str:
        # one server's instructions apart from another's in the findings' ids
        return self.server if self.system else ""

    @property
    def called(self) -> str:
        return f"server {self.server}'s instructions (its system prompt)" if self.system else self.name

    def read(self) -> str:
        """Everything a model reads of it but the schema's keys, as one text."""
        return " \n ".join(t for place, t in self.texts if not place.endswith("(key)"))


def _texts(tool: Tool) -> Iterator[tuple[str, str]]:
    """(place, text) of everything of a tool a model reads: its name, description, schema."""
    yield "name", tool.name
    yield "description", tool.description
    for place, text in strings(tool.input_schema):
        yield f"schema {place}", text


def readables(toolset: ToolSet) -> list[Readable]:
    """Every tool of the set, then every server's instructions."""
    out = [Readable(server, tool.name, tuple(_texts(tool))) for server, tool in toolset.all_tools()]
    out += [Readable(server, SYSTEM, (("instructions", text),))
            for server, text in toolset.instructions.items() if text and text.strip()]
    return out


# --- hidden text -------------------------------------------------------------------------


def hidden_text(toolset: ToolSet) -> list[Finding]:
    found = []
    for item in readables(toolset):
        for place, text in item.texts:
            h = find_hidden(text)
            if h is None:
                continue
            spelled = f"; its tag characters spell {h.tags[:120]!r}" if h.tags else ""
            found.append(Finding(
                "hidden-text", ERROR, (item.server,), (item.name,),
                f"{escaped(item.called)}: its {place} holds {len(h.chars)} invisible character(s) "
                f"({', '.join(h.to_dict()['kinds'])}) a reviewer does not see and a model reads: "
                f"{h.excerpt}{spelled}",
                "remove them: the text a model reads should be the text a reviewer approved",
                {"place": place, **h.to_dict()}, subject=":".join(filter(None, (place, item.subject)))))
    return found


# --- instructions to the model -------------------------------------------------------------


def model_instructions(toolset: ToolSet) -> list[Finding]:
    found = []
    for item in readables(toolset):
        text = item.read()
        hits = patterns.matches(readings(text), decoded(text))
        total = patterns.score(hits)
        if total < patterns.SCORE:
            continue
        counted = patterns.counts(hits)
        said = "; ".join(f"{m.pattern.says} ({m.text[:80]!r}{m.how}, {m.pattern.weight:g})"
                         for m in counted)
        speaks = ("holds instructions no server's system prompt has cause to give" if item.system
                  else "speaks to the model rather than describing the tool")
        found.append(Finding(
            "model-instructions", ERROR, (item.server,), (item.name,),
            f"{item.called}'s text {speaks} (score {total:g}, threshold {patterns.SCORE:g}): {said}",
            "describe what the tool does and returns; a description that instructs the model is "
            "how a poisoned tool steers it (review the server before trusting it)",
            {"score": total, "threshold": patterns.SCORE,
             "matched": [{"pattern": m.pattern.name, "text": m.text, "weight": m.pattern.weight,
                          **({"read_as": m.reading} if m.reading else {})} for m in counted]},
            subject=item.subject))
    return found


# --- secret-seeking parameters ---------------------------------------------------------------

#: (what is asked, a parameter name's words, a description's phrases, a purpose that needs it)
_ASKS = (
    ("credentials", r"password|passwd|pwd|secret|apikey|api key|token|credentials?|private key|"
     r"privatekey|ssh key|access key|cookie|mnemonic|seed phrase|bearer",
     # "secret" alone is often a kind of thing (a Kubernetes Secret, a CI secret's name)
     r"\b(?:password|passwd|(?:your|client|app) secret|secret (?:key|value|token)|api[ _-]?key|"
     r"access[ _-]?token|auth\w* token|bearer|credentials?|private[ _-]?key|ssh key|mnemonic|"
     r"seed phrase|cookie)s?\b",
     r"\b(?:password|credential|log ?in|sign ?in|auth\w*|token|api key|secret|keys?|session)"),
    ("file contents", r"file contents?|contents of", patterns.SECRET_FILES
     + r"|\bcontents? of (?:the |any |a |your |every )?(?:files?\b|~|/|\.)|\b(?:read|cat) (?:the )?files?\b",
     r"\b(?:files?|path|documents?|upload\w*|attach\w*)\b"),
    ("conversation history", r"conversation|chat history|transcript|previous messages|history",
     r"\bconversation\b|\bchat history\b|\btranscript\b|\b(?:previous|prior|earlier|all) messages\b|"
     r"\beverything the user (?:said|wrote|typed)\b",
     r"\b(?:conversation|chat|history|transcript|messages?|summar\w*)\b"),
    # a parameter named "instructions" is how many tools take their task: its name alone is no ask
    ("system prompt", r"system prompt", r"\bsystem prompt\b|\byour instructions\b|"
     r"\binstructions you (?:were|have been) given\b", r"\bprompts?\b"),
)


#: a value of these types cannot carry a secret
_NOT_TEXT = frozenset({"boolean", "integer", "number", "null"})
#: a phrase after one of these in its sentence is one the parameter must not hold
_NEGATION = re.compile(r"\b(?:not|never|no|without|avoid|excluding|except|don't|dont|nor)\b")
#: past a description's first sentence, a phrase asks for a secret only after such a word
_ASKING = re.compile(r"\b(?:your|the user's|paste|put|enter|provide|give|include|attach|send|insert|"
                     r"add|pass)\b")
_CLAUSE = re.compile(r"(?<=[.!?;])\s+")
#: a parameter named for HTTP headers is where a request's credentials go by nature
_HEADERS = re.compile(r"\bheaders?\b")


def _holds_text(schema: dict[str, Any]) -> bool:
    """Can the parameter hold free text (and so a secret)? Not a boolean, a number, or one of
    a fixed set of values."""
    if "enum" in schema or "const" in schema:
        return False
    kind = schema.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()
    return not kinds or not kinds <= _NOT_TEXT


def _asked(by_text: str, described: str) -> re.Match[str] | None:
    """The phrase a description asks for: in its first sentence, or after an asking word in
    a later one; never one it says not to give ("do not include API keys")."""
    for i, sentence in enumerate(_CLAUSE.split(described)):
        for m in re.finditer(by_text, sentence):
            before = sentence[:m.start()]
            if _NEGATION.search(before):
                continue
            if i == 0 or _ASKING.search(before[-60:]):
                return m
    return None


def _words(name: str) -> str:
    return normal(re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " "))


def secret_seeking_parameters(toolset: ToolSet) -> list[Finding]:
    found = []
    for server, tool in toolset.all_tools():
        purpose = _words(tool.name) + " " + normal(tool.description)
        for path, schema in _properties(tool.input_schema):
            if not _holds_text(schema):
                continue
            name = _words(path.rsplit(".", 1)[-1])
            described = normal(". ".join(str(schema.get(k) or "") for k in ("title", "description")
                                         if schema.get(k)))
            for what, by_name, by_text, needs in _ASKS:
                named = re.search(rf"\b(?:{by_name})\b", name)
                said = _asked(by_text, described)
                if not (named or said):
                    continue
                always = what == "file contents" and said and re.search(patterns.SECRET_FILES, described)
                if not always and (re.search(needs, purpose)
                                   or (what == "credentials" and _HEADERS.search(name))):
                    continue  # what the tool (or the parameter) is for asks for it
                evidence = (f"its name {path!r}" if named else "") + (" and " if named and said else "") \
                    + (f"its description ({escaped(said.group(0))!r})" if said else "")
                found.append(Finding(
                    "secret-seeking-parameter", ERROR, (server,), (tool.name,),
                    f"{tool.name}: parameter {path!r} asks for {what} ({evidence}), which nothing "
                    f"in the tool's name or description needs",
                    "drop the parameter, or say in the description why the tool needs it; a "
                    "parameter a model fills with secrets is how a poisoned tool takes them",
                    {"parameter": path, "asks_for": what}, subject=path))
                break
    return found


# --- shadowing: instructions about other tools --------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?;:\n])\s+")
#: a sentence about a named tool that tells the model how to call it
_HOWTO = re.compile(r"\b(?:always|must|whenever|every time|make sure|be sure to|ensure|never call)\b")
#: how to use tools at large, or one kind of tool, with no name given
_OTHERS = re.compile(
    r"\b(?:when|whenever|every time|before|after|if)\b\s+(?:\w+\s+){0,3}?(?:send|sending|call|"
    r"calling|use|using|invok\w+|run|running|writ\w+)\b.{0,40}\b(?:e-?mails?|mail|messages?|"
    r"payments?|transfers?|tools?|functions?|servers?|commands?|files?)\b.{0,80}\b(?:always|also|"
    r"must|instead|bcc|cc|change|replace|redirect|add|set|include)\b"
    r"|\b(?:all|any|every|each)\s+(?:other\s+)?(?:tools?|tool calls?|functions?)\b.{0,60}\b(?:must|"
    r"should|always|never)\b"
    r"|\bal enviar (?:un )?correo\b|\blors de l'envoi d'un (?:e-?mail|courriel)\b"
    r"|\bbeim (?:senden|versenden) (?:einer|von) e-?mails?\b|\bao enviar (?:um )?e-?mail\b")
_TOKEN = re.compile(r"[\w-]+")
#: a name a description may use as a word: only names with _, -, a digit or capitals inside
_DISTINCT = re.compile(r"[_\-0-9]|[a-z][A-Z]")


def _names(toolset: ToolSet) -> dict[str, set[str]]:
    """Each mentionable tool name (as given and as offered, casefolded) -> the servers owning it."""
    owners: dict[str, set[str]] = {}
    for server, tool in toolset.all_tools():
        for name in {tool.name, toolset.offered_name(server, tool)}:
            if _DISTINCT.search(name) and len(name) >= 3:
                owners.setdefault(normal(name), set()).add(server)
    return owners


def cross_server_shadowing(toolset: ToolSet) -> list[Finding]:
    owners = _names(toolset)
    # a name of letters, digits, _ and - is a whole token of a sentence: looked up, not
    # scanned for (a scan for thousands of names costs as much as the names); the few
    # other names are scanned for
    odd = sorted((n for n in owners if not _TOKEN.fullmatch(n)), key=len, reverse=True)
    scan = re.compile("(?<![\\w-])(" + "|".join(map(re.escape, odd)) + ")(?![\\w-])") if odd else None

    def mentioned(sentence: str) -> list[str]:
        names = [tok for tok in _TOKEN.findall(sentence) if tok in owners]
        return names + (scan.findall(sentence) if scan is not None else [])
    found = []
    for item in readables(toolset):
        server = item.server
        own = {normal(item.name)} | {normal(toolset.offered_name(server, t))
                                     for t in toolset.servers.get(server, ()) if t.name == item.name}
        sentences = [s for r in readings(item.read()) for s in _SENTENCE.split(r)]
        named: dict[str, str] = {}
        for sentence in sentences if owners else ():
            for name in dict.fromkeys(mentioned(sentence)):
                if name in own or name in named:
                    continue
                # a server's instructions are where it says how to use its own tools
                if server not in owners[name] or (_HOWTO.search(sentence) and not item.system):
                    named[name] = sentence
        for name, sentence in sorted(named.items()):
            others = sorted(owners[name] - {server})
            if server in owners[name]:
                found.append(Finding(
                    "cross-server-shadowing", WARNING, (server,), (item.name,),
                    f"{item.called} tells the model how to use {name}, another tool of its server: "
                    f"{sentence[:160]!r}",
                    f"say when to use {name} instead, not how to call it; the way to call a tool "
                    "belongs in that tool's own description", {"names": name, "sentence": sentence},
                    subject=name))
            else:
                found.append(Finding(
                    "cross-server-shadowing", ERROR, (server,), (item.name,),
                    f"{item.called} ({server}) names {name}, a tool of server "
                    f"{', '.join(others)} it does not own: {sentence[:160]!r}",
                    "a tool's description speaks of its own server's tools only; one that steers "
                    "another server's tools can change what they do (remove the sentence)",
                    {"names": name, "owners": others, "sentence": sentence},
                    subject=":".join(filter(None, (name, item.subject)))))
        for sentence in sentences:
            m = _OTHERS.search(sentence)
            if m and not re.search(r"\bthis (?:tool|function)\b", sentence):
                found.append(Finding(
                    "cross-server-shadowing", ERROR, (server,), (item.name,),
                    f"{item.called} tells the model how to use tools it does not own: "
                    f"{sentence[:160]!r}",
                    "describe this tool only; instructions for other tools (or all tools) change "
                    "what the model does with them", {"sentence": sentence, "matched": m.group(0)},
                    subject=":".join(filter(None, ("other-tools", item.subject)))))
                break
    return found
