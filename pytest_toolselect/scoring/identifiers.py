"""Identifiers: which argument values are identifiers, and whether each is grounded.

An identifier with no checksum looks no more wrong when it is invented, so grounding
(grounding.py) is exact both ways: a verbatim copy always grounds, a derived value never
does. Decoys match loosely on purpose (any separators, case, prefix). Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.exchange.json_value import JSONObject
from pytest_toolselect.exchange.schema_paths import alternatives
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.inputs.cases import IdentifierSettings

from .grounding import OWN_LENGTH, QuestionGrounding, Unit, units
from .matchers import Segment, dotted, iter_leaves, property_schema, schema_any
from .words import is_id_char, normalize

_TOKEN = re.compile(r"[^\W_]+")
_DIGIT = re.compile(r"\d")
_NON_ALNUM = re.compile(r"[\W_]+")
# a normal form that starts with a 1-3 letter prefix then a digit: the prefix may be left off
_PREFIXED = re.compile(r"[^\W\d_]{1,3}(\d\w*)")
# leading zeros of the digit part, after any 1-3 letter prefix
_LEADING_ZEROS = re.compile(r"^([^\W\d_]{0,3})0+(?=\d)")
#: the path shown for arguments that are not a JSON object
RAW = "(raw arguments)"
_JSON_KEY_COLON = re.compile(r'"\s*:\s*')
_JSON_PUNCTUATION = re.compile(r'[{}\[\]",]')

# Quantities inside free text, masked before spans are found: their inner
# separators (",", ":", "T") would otherwise split them into identifier-like pieces.
_QUANTITY_IN_TEXT = re.compile(
    r"(?<![\w.,/:-])(?:"
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"  # a time of day
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # an amount with thousands separators
    r"|(?:0?[1-9]|[12]\d|3[01])[./](?:0?[1-9]|[12]\d|3[01])[./](?:19|20)\d\d"  # 15/01/2024
    r")(?!\w|[.,/:-]\w)"
)
# A span that is a plain quantity, not an identifier: a count or year of at most four
# digits without a leading zero, a decimal, an ISO date, an ordinal, a small measure,
# a range of years.
_PLAIN_QUANTITY = re.compile(
    r"(?:0|[1-9]\d{0,3})"
    r"|(?:0|[1-9]\d*)\.\d+"
    r"|\d{4}-\d{2}-\d{2}"
    r"|(?:0|[1-9]\d{0,3})(?:st|nd|rd|th)"
    r"|(?:0|[1-9]\d{0,3})(?:\.\d+)?"
    r"(?:k|m|bn|kg|g|mg|km|cm|mm|ml|l|kb|mb|gb|tb|px|pt|h|hr|hrs|min|mins|s|ms|x|am|pm)"
    r"|(?:19|20)\d\d[-/](?:19|20)?\d\d"
    r"|q[1-4](?: (?:19|20)\d\d)?",  # a quarter
    re.IGNORECASE,
)
# A version segment of a URL or path ("/v2/", "v1.3"): the API's, not the question's
_VERSION = re.compile(r"[vV]\d{1,3}(?:\.\d{1,3}){0,2}")
# A word of two or three letters and digits in a search text ("s3", "ec2", "mp3", "4k"):
# a name of a thing, too short to name one record
_SHORT_WORD = re.compile(r"(?=[0-9]*[A-Za-z])(?=[A-Za-z]*[0-9])[A-Za-z0-9]{2,3}")
# A name that is an identifier by its "number" ending alone (dice_number, pageNumber)
_NUMBER_NAME = re.compile(r"(?i:[_-]numbers?$)|(?<=[a-z0-9])Numbers?$")
# A small count (dice_number: 2, from "two dice")
_SMALL_COUNT = re.compile(r"[1-9]?[0-9]")
#: digits an object key holds before it is read as an identifier (``{"7731023": true}``)
KEY_DIGITS = 4
# Parameter names that declare an identifier: id, *_id, *Id, *_number, *Number,
# *_ref, *Ref, ref, reference, code, *_code (and their plurals, uuid, guid).
_ID_NAME = re.compile(
    r"(?i:^(?:ids?|refs?|references?|codes?|uuid|guid)$)"
    r"|(?i:[_-](?:ids?|numbers?|refs?|references?|codes?|uuid|guid)$)"
    r"|(?<=[a-z0-9])(?:Ids?|IDs?|Numbers?|Refs?|References?|Codes?|Uuid|UUID|Guid|GUID)$"
)


# --- spans --------------------------------------------------------------------------


#: an identifier-like span of a text: a digit-bearing unit
Span = Unit


def spans(text: str, *, upper_prefix_only: bool = False) -> list[Span]:
    """The digit-bearing units of ``text`` (grounding.units): its non-space runs, with
    runs of digit groups joined by single spaces, after one short letter prefix.

    ``upper_prefix_only`` takes a separate prefix token only when it is upper case
    (``GB 745``, not ``in 2024``); used on argument values, where lower-case short
    words before a number are prose rather than a claimed prefix.
    """
    if _DIGIT.search(text) is None:
        # every span holds a digit: a long text without one (a huge argument) costs nothing
        return []
    return [u for u in units(normalize(text), upper_prefix_only=upper_prefix_only)
            if _DIGIT.search(u.text)]


def _letter_words(text: str) -> Iterator[str]:
    # digit-free units ("GB", "ACME-UK"): only a digit-free value can equal one
    for u in units(normalize(text)):
        if _DIGIT.search(u.text) is None and normal_form(u.text):
            yield u.text


def normal_form(value: str) -> str:
    """Casefolded, with spaces and separators dropped, every digit in ASCII."""
    return _NON_ALNUM.sub("", normalize(value).casefold())


def bare_form(form: str) -> str | None:
    """The normal form without its 1-3 letter prefix, when a digit follows the prefix."""
    m = _PREFIXED.fullmatch(form)
    return m.group(1) if m else None


def zero_key(form: str) -> str:
    """The normal form with the leading zeros of its digit part dropped."""
    return _LEADING_ZEROS.sub(r"\1", form, count=1)


def span_forms(span_text: str) -> tuple[str, ...]:
    """The 1-2 normal forms a span grounds: the whole, and the whole less its prefix."""
    form = normal_form(span_text)
    bare = bare_form(form)
    return (form, bare) if bare else (form,)


def is_plain_quantity(span_text: str) -> bool:
    return _PLAIN_QUANTITY.fullmatch(span_text) is not None


# --- grounding ----------------------------------------------------------------------


class Grounding:
    """The forms a text (the question, or the decoys) grounds, ready for lookups."""

    __slots__ = ("_keys", "leading_zeros", "tokens")

    def __init__(self, texts: Iterable[str], *, leading_zeros: bool = True,
                 letter_words: bool = True, whole: bool = False) -> None:
        self.leading_zeros = leading_zeros
        self._keys: dict[str, str] = {}  # key -> the text (span) that grounds it
        self.tokens: set[str] = set()  # casefolded tokens, to recognise a reused prefix
        for text in texts:
            for span in spans(text):
                for form in span_forms(span.text):
                    self._add(form, span.text)
            if letter_words:
                for word in _letter_words(text):
                    self._add(normal_form(word), word)
            if whole:
                # a decoy names one value: its whole form counts even if it is not one span
                self._add(normal_form(text), text)
            self.tokens.update(t.casefold() for t in _TOKEN.findall(text))

    def _add(self, form: str, source: str) -> None:
        if form:
            self._keys.setdefault(self.key(form), source)

    def key(self, form: str) -> str:
        return zero_key(form) if self.leading_zeros else form

    def find(self, form: str) -> str | None:
        """The span that grounds this normal form, or None."""
        return self._keys.get(self.key(form)) if form else None

    def grounds(self, value: str) -> bool:
        return self.find(normal_form(value)) is not None


def question_grounding(question: str, settings: IdentifierSettings) -> QuestionGrounding:
    return QuestionGrounding(question, leading_zeros=settings.leading_zeros)


def decoy_grounding(decoys: Iterable[str], settings: IdentifierSettings) -> Grounding:
    return Grounding(decoys, leading_zeros=settings.leading_zeros,
                     letter_words=False, whole=True)


# --- identifiers in arguments -------------------------------------------------------


@dataclass(frozen=True)
class Identifier:
    """One identifier passed in a call."""

    call_index: int  # 0-based position of the call in the turn
    tool: str
    path: str  # dotted argument path
    value: str  # the whole value (declared parameter) or the span found in free text
    declared: bool
    #: free text only: the separate upper-case prefix token the span starts with
    prefix: str | None = None

    @property
    def form(self) -> str:
        return normal_form(self.value)

    @property
    def rest_form(self) -> str | None:
        """Free text only: the form without its separate prefix token."""
        if not self.prefix:
            return None
        return normal_form(self.value[len(self.prefix):])

    def describe(self) -> str:
        where = f"{self.tool} (call {self.call_index + 1})"
        shown = _visible(self.value)
        if self.declared:
            return f'{where} {self.path}="{shown}"'
        return f'{where} {self.path} contains "{shown}"'


def _visible(value: str) -> str:
    """The value with each format character (zero-width, direction marks) written escaped."""
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c
                   for c in value)


def _has_format(value: str) -> bool:
    return not value.isascii() and any(unicodedata.category(c) == "Cf" for c in value)


def _format_inside(word: str) -> bool:
    """A format character between two letters or digits of the word."""
    return any(unicodedata.category(c) == "Cf" and any(x.isalnum() for x in word[:i])
               and any(x.isalnum() for x in word[i + 1:]) for i, c in enumerate(word))


def _no_identifier(piece: str) -> bool:
    """A piece of a path, URL or search text that names no record: a quantity, an API
    version segment (``v2``), a short word of letters and digits (``s3``, ``ec2``)."""
    return (_is_quantity(piece) or _VERSION.fullmatch(piece) is not None
            or _SHORT_WORD.fullmatch(piece) is not None)


def grounded_by(ident: Identifier, grounding: QuestionGrounding) -> str | None:
    """The question's text that grounds the identifier, or None."""
    if _has_format(ident.value) and ident.value not in grounding.raw:
        # normalizing drops a zero-width character, but the tool receives it: unless the
        # question holds the very same string, it is another value
        return None
    found = grounding.find(ident.value)
    if found is not None:
        return found
    # a path, URL or search pattern: each of its identifier pieces must be grounded; in a
    # search text every word stands apart ("04138203's", "order:448120")
    found = grounding.find_pieces(ident.value, every_word=not ident.declared,
                                  skip=_no_identifier)
    if found is not None:
        return found
    # "VAT 745938421" in a search string: the number grounds, and "VAT" is a word the
    # question used; a prefix the question never wrote ("FR 745...") is a claim, not prose
    if ident.prefix and ident.prefix.casefold() in grounding.tokens:
        return grounding.find(ident.value[len(ident.prefix):].strip())
    return None


def decoy_matched(ident: Identifier, decoys: Grounding) -> str | None:
    """The decoy the identifier names, or None. A changed or added prefix does not
    escape a decoy: the identifier's digit part is compared too."""
    for form in (ident.form, ident.rest_form, bare_form(ident.form)):
        if form:
            found = decoys.find(form)
            if found is not None:
                return found
    return None


def listed_by_tool(ident: Identifier, tool: Tool | None) -> str | None:
    """The tool's own listing of the value, or None: an ``enum`` / ``const`` / ``default``
    value of its parameter, or a short code (fewer than OWN_LENGTH characters) its description or a
    parameter's names (``1 for cleaning, 2 for ironing``). A longer value in a description
    is an example, and an example copied is invented."""
    if tool is None:
        return None
    schema = tool.input_schema
    node = property_schema(schema, _split_path(ident.path))
    form = normal_form(ident.value)
    if node is not None and form:
        for alt in alternatives(node, schema):
            enum = alt.get("enum")
            listed: list[Any] = list(enum) if isinstance(enum, list) else []
            # its const, and its default: the value the tool takes when none is passed
            listed += [alt[k] for k in ("const", "default") if k in alt]
            for v in listed:
                if (isinstance(v, (str, int, float)) and not isinstance(v, bool)
                        and normal_form(_number_text(v) if not isinstance(v, str) else v) == form):
                    return str(v)
    if sum(is_id_char(c) for c in normalize(ident.value)) >= OWN_LENGTH:
        return None
    text = "\n".join([tool.description, *_descriptions(schema)])
    return QuestionGrounding(text).find(ident.value) if text.strip() else None


def _descriptions(node: Any, depth: int = 0) -> Iterator[str]:
    """Every description string in a schema, nested ones included (bounded)."""
    if depth > 8:
        return
    if isinstance(node, Mapping):
        if isinstance(node.get("description"), str):
            yield node["description"]
        for v in node.values():
            yield from _descriptions(v, depth + 1)
    elif isinstance(node, list):
        for v in node:
            yield from _descriptions(v, depth + 1)


def in_identifier_param(ident: Identifier) -> bool:
    """Whether the identifier was passed as one: under an identifier parameter, or in
    arguments that are not a JSON object (which parameter cannot be told)."""
    return ident.declared or ident.path == RAW


def guards(params: Sequence[str], ident: Identifier) -> bool:
    """Whether a decoy naming ``params`` (none: the identifier parameters) guards ``ident``."""
    if not params:
        return in_identifier_param(ident)
    return _listed(params, _split_path(ident.path), ancestors=False)


def _leaf_name(segments: Sequence[Segment]) -> str:
    for seg in reversed(segments):
        if isinstance(seg, str) and not seg.isdigit():
            return seg
    return ""


def _listed(entries: Sequence[str], segments: Sequence[Segment], ancestors: bool) -> bool:
    if not entries:
        return False
    names = [s for s in segments if isinstance(s, str) and not s.isdigit()]
    candidates = {dotted(segments), ".".join(names), _leaf_name(segments)}
    if ancestors:
        # ignoring "filters" ignores everything under it
        for i in range(1, len(names)):
            candidates.add(".".join(names[:i]))
            candidates.add(names[i - 1])
    return any(e in candidates for e in entries)


def _schema_declares(node: Mapping[str, Any] | None, root: Any) -> bool:
    if not node:
        return False
    return schema_any(node, root if root is not None else node,
                      lambda n: "pattern" in n or n.get("format") == "uuid")


def _kind(segments: Sequence[Segment], schema: Mapping[str, Any] | None, root: Any,
          settings: IdentifierSettings) -> str:
    """'ignored', 'declared' or 'free' for the argument at ``segments``."""
    if _listed(settings.ignore_params, segments, ancestors=True):
        return "ignored"
    if _listed(settings.params, segments, ancestors=False):
        return "declared"
    if _ID_NAME.search(_leaf_name(segments)) or _schema_declares(schema, root):
        return "declared"
    return "free"


def _split_path(name: str) -> list[Segment]:
    return [int(s) if s.isdigit() else s for s in name.split(".")]


def declared_in(name: str, input_schema: Mapping[str, Any],
                settings: IdentifierSettings) -> bool | None:
    """Whether the parameter at ``name`` (a dotted path) is an identifier parameter of a tool
    with this input schema; None when the schema has no such parameter."""
    segments = _split_path(name)
    node = property_schema(input_schema, segments)
    if node is None:
        return None
    return _kind(segments, node, input_schema, settings) == "declared"


def identifier_param(name: str, schema: JSONObject | None,
                     settings: IdentifierSettings) -> bool:
    """Whether the parameter (a name or dotted path; ``schema`` its property schema)
    is declared an identifier: by its name, by a schema ``pattern`` or ``format: uuid``,
    or by ``settings.params`` — and is not in ``settings.ignore_params``."""
    return _kind(_split_path(name), schema, None, settings) == "declared"


def _number_text(v: int | float) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _is_quantity(text: str) -> bool:
    return is_plain_quantity(text) or _QUANTITY_IN_TEXT.fullmatch(text) is not None


def _free_text_spans(text: str) -> Iterator[Span]:
    for span in spans(text, upper_prefix_only=True):
        if _is_quantity(span.text) or (span.prefix is None and _SHORT_WORD.fullmatch(span.text)):
            continue
        groups = span.text.split(" ")
        if span.prefix is None and len(groups) > 1 and all(
                len(g) >= OWN_LENGTH or _is_quantity(g) for g in groups):
            # "merge 661203 990145": long numbers side by side are identifiers of their own
            at = span.start
            for group in groups:
                if not _is_quantity(group):
                    yield Span(group, at, at + len(group))
                at += len(group) + 1
            continue
        yield span


def identifiers_in_value(value: Any, kind: str) -> Iterator[tuple[str, bool, str | None]]:
    """(text, declared, prefix) for each identifier in one argument leaf."""
    if kind == "ignored" or value is None or isinstance(value, bool):
        return
    if kind == "declared":
        text = _number_text(value) if isinstance(value, (int, float)) else str(value).strip()
        if normal_form(text):
            yield text, True, None
        return
    if isinstance(value, (int, float)):
        # a bare number is a quantity unless it is long enough to name something
        if isinstance(value, float) and not value.is_integer():
            return
        text = _number_text(value)
        if sum(c.isdigit() for c in text) >= 5:
            yield text, False, None
        return
    text = str(value)
    for span in _free_text_spans(text):
        yield span.text, False, span.prefix
    if _has_format(text):
        # "0413\u200b8203": normalized, the span reads 04138203; the tool receives the
        # zero-width character too, so the word as written is an identifier of its own
        for word in text.split():
            core = word.strip("".join(c for c in set(word) if not c.isalnum()
                                      and unicodedata.category(c) != "Cf"))
            if _format_inside(core) and any(c.isdigit() for c in core):
                yield core, False, None


def _counted(segments: Sequence[Segment], value: Any, node: Mapping[str, Any] | None,
             root: Any, settings: IdentifierSettings) -> bool:
    """A small count passed as a JSON number under a name that is an identifier by its
    "number" ending alone (``dice_number: 2`` from "two dice"): a quantity, not a record's
    number. A string is written as one ("07"), and judged as an identifier."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    text = str(int(value))
    return (_SMALL_COUNT.fullmatch(text) is not None
            and _NUMBER_NAME.search(_leaf_name(segments)) is not None
            and not _listed(settings.params, segments, ancestors=False)
            and not _schema_declares(node, root))


def _key_identifiers(value: Any, schema: Mapping[str, Any] | None,
                     prefix: tuple[Segment, ...] = ()) -> Iterator[tuple[tuple[Segment, ...], str]]:
    """Object keys the schema does not declare that read as identifiers
    (``{"accounts": {"7731023": true}}``): the model chose them, as it chooses a value. The
    arguments' own keys are parameter names (no_undeclared_arguments judges those)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            at = (*prefix, str(k))
            if (prefix and sum(c.isdigit() for c in str(k)) >= KEY_DIGITS and not _is_quantity(str(k))
                    and not _names_property(schema, prefix, str(k))):
                yield at, str(k)
            yield from _key_identifiers(v, schema, at)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _key_identifiers(v, schema, (*prefix, i))


def _names_property(schema: Mapping[str, Any] | None, prefix: tuple[Segment, ...],
                    key: str) -> bool:
    """Whether the schema names ``key`` among the properties of the object at ``prefix``
    (a typed map's ``additionalProperties`` names none: its keys are the model's)."""
    parent = schema if not prefix else property_schema(schema, prefix)
    if not parent or schema is None:
        return False
    return any(isinstance(alt.get("properties"), Mapping) and key in alt["properties"]
               for alt in alternatives(parent, schema))


def call_identifiers(call: ToolCall, index: int, schema: Mapping[str, Any] | None,
                     settings: IdentifierSettings) -> list[Identifier]:
    """Every identifier passed in one call."""
    found: list[Identifier] = []
    for segments, value in iter_leaves(call.arguments):
        node = property_schema(schema, segments)
        kind = _kind(segments, node, schema, settings)
        if kind == "declared" and _counted(segments, value, node, schema, settings):
            continue
        for text, declared, prefix in identifiers_in_value(value, kind):
            found.append(Identifier(index, call.name, dotted(segments), text, declared, prefix))
    for segments, key in _key_identifiers(call.arguments, schema):
        if not _listed(settings.ignore_params, segments, ancestors=True):
            found.append(Identifier(index, call.name, dotted(segments), key, True))
    if call.raw_arguments:
        # unparseable arguments still carry whatever the model meant to pass
        # JSON's own punctuation is no part of a value: '{"id":"04138204"}' holds 04138204
        raw = _JSON_PUNCTUATION.sub(" ", _JSON_KEY_COLON.sub('" ', call.raw_arguments))
        for text, declared, prefix in identifiers_in_value(raw, "free"):
            found.append(Identifier(index, call.name, RAW, text, declared, prefix))
    return found


def find_identifiers(calls: Sequence[ToolCall], tools: Sequence[Tool],
                     settings: IdentifierSettings) -> list[Identifier]:
    """Every identifier passed in the turn, in call order."""
    schemas: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        schemas.setdefault(tool.name, tool.input_schema)
    found: list[Identifier] = []
    for i, call in enumerate(calls):
        found.extend(call_identifiers(call, i, schemas.get(call.name), settings))
    return found
