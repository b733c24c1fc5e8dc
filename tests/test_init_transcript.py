"""`toolselect init --from-transcript`: a case past the first call started from a recorded
conversation, a Claude Code session file or an OpenAI-style messages JSON. The written file
is read back with the case files' own YAML reader and its shape checked: the user's question,
the calls and results before the chosen call as `context`, that call as the expectation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_toolselect.cli import main
from pytest_toolselect.cli.context_case import context_file, masked
from pytest_toolselect.cli.transcripts import read_transcript
from pytest_toolselect.positions.yamlmap import parse_yaml

QUESTION = "Who are the directors of Royal Mail Group?"
SEARCH = '[{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"}]'
KEY = "sk-ant-" + "api03-" + "x" * 30  # built: no key-shaped literal


def session(*entries: dict[str, Any]) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def user(content: Any, **more: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **more}


def assistant(message_id: str, *blocks: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "assistant", "message": {"id": message_id, "role": "assistant",
                                             "content": list(blocks)}, **more}


def use(tool_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": args}


def result(tool_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}


#: a Claude Code session as the CLI writes it: each streamed block its own entry (the text
#: and the call of one message share its id), its own reminders and entries beside the
#: conversation, a sub-agent's side chain, and a tool search before the choice
SESSION = session(
    {"type": "queue-operation", "operation": "enqueue", "content": "x"},
    user("Hello there, I need some help."),
    assistant("m0", {"type": "text", "text": "Sure."}),
    user([{"type": "text", "text": "<system-reminder>\nnot the user\n</system-reminder>"},
          {"type": "text", "text": QUESTION}]),
    user("<command-name>/cost</command-name>", isMeta=True),
    assistant("m1", {"type": "thinking", "thinking": "search first"}),
    assistant("m1", use("t0", "ToolSearch", {"query": "select:mcp__registry__find_company"})),
    user([result("t0", "loaded")]),
    assistant("m2", {"type": "text", "text": "Let me search the register."}),
    assistant("m2", use("t1", "mcp__registry__find_company", {"name": "Royal Mail Group"})),
    user([result("t1", [{"type": "text", "text": SEARCH}])]),
    assistant("side", use("s1", "Read", {"file_path": "/x"}), isSidechain=True),
    assistant("m3", use("t2", "mcp__registry__list_officers", {"company_number": "4138203"}),
              use("t3", "mcp__registry__lookup_vat", {"vat_number": "GB745938421"})),
    user([result("t2", "company_number must have 8 digits", is_error=True),
          result("t3", "VAT registered")]),
    assistant("m4", use("t4", "mcp__registry__list_officers",
                        {"company_number": "04138203", "register": {"kind": "uk", "page": 1}})),
    user([result("t4", "[]")]),
)


def _written(tmp_path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> Any:
    out = tmp_path / "out.toolselect.yaml"
    assert main(["init", *args, "-o", str(out)]) == 0
    assert "review each expectation" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    return parse_yaml(text, str(out)).data, text


def test_a_claude_code_session_starts_a_case_with_the_calls_before_the_last(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.jsonl").write_text(SESSION)
    data, text = _written(tmp_path, "--from-transcript", str(tmp_path / "s.jsonl"), capsys=capsys)
    assert data["schema_version"] == "toolselect_cases.v1" and data["servers"] == ["registry"]
    (case,) = data["cases"]
    assert case["question"] == QUESTION  # the last real user text, not a reminder or a command
    assert case["context"] == [
        {"call": {"name": "find_company", "arguments": {"name": "Royal Mail Group"}},
         "result": [{"type": "text", "text": SEARCH}], "text": "Let me search the register."},
        {"calls": [
            {"call": {"name": "list_officers", "arguments": {"company_number": "4138203"}},
             "result": "company_number must have 8 digits", "is_error": True},
            {"call": {"name": "lookup_vat", "arguments": {"vat_number": "GB745938421"}},
             "result": "VAT registered"}]},
    ]
    assert case["expect_tool"] == ["list_officers"]
    assert case["expect_args"] == [{"path": "company_number", "equals": "04138203"},
                                   {"path": "register", "equals": {"kind": "uk", "page": 1}}]
    assert "review it" in text and "keep those that must hold" in text  # marked for review
    assert case["why"] and case["category"] == "transcript"


def test_each_chosen_call_is_a_case_of_its_own(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.jsonl").write_text(SESSION)
    data, _ = _written(tmp_path, "--from-transcript", str(tmp_path / "s.jsonl"), "--at", "1",
                       "--at", "3", capsys=capsys)
    first, third = data["cases"]
    assert (first["question"], first["expect_tool"]) == (QUESTION, ["find_company"])
    assert "context" not in first  # the first call after the question: nothing before it
    # the second call of a turn: the turn's first call, answered, is its context
    assert third["expect_tool"] == ["lookup_vat"]
    assert [t["call"]["name"] for t in third["context"]] == ["find_company", "list_officers"]
    assert len({first["id"], third["id"]}) == 2


MESSAGES = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": QUESTION},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "find_company", "arguments": json.dumps({"name": "Royal Mail"})}},
        {"id": "c2", "type": "function",
         "function": {"name": "lookup_vat", "arguments": '{"vat_number": "GB745938421"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": SEARCH},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "registered"}]},
    {"role": "assistant", "content": "The first match.", "tool_calls": [
        {"id": "c3", "type": "function",
         "function": {"name": "list_officers", "arguments": '{"company_number": "04138203"}'}}]},
]


def test_an_openai_messages_file_starts_a_case(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chat.json").write_text(json.dumps({"messages": MESSAGES}, indent=1))
    data, text = _written(tmp_path, "--from-transcript", str(tmp_path / "chat.json"), capsys=capsys)
    (case,) = data["cases"]
    assert "servers:" not in text.replace("# servers:", "")  # no MCP name: the author adds them
    assert case["question"] == QUESTION
    assert case["context"] == [{"calls": [
        {"call": {"name": "find_company", "arguments": {"name": "Royal Mail"}}, "result": SEARCH},
        {"call": {"name": "lookup_vat", "arguments": {"vat_number": "GB745938421"}},
         "result": [{"type": "text", "text": "registered"}]}]}]
    assert case["expect_tool"] == ["list_officers"]
    assert case["expect_args"] == [{"path": "company_number", "equals": "04138203"}]


def test_secrets_in_the_transcript_never_reach_the_case(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    token = "plain-looking-" + "value-4711"  # no key shape: masked by its name alone
    messages = [
        {"role": "user", "content": f"Use key {KEY} to fetch the invoices"},
        {"role": "assistant", "content": f"Calling with {KEY}", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": json.dumps(
                {"api_key": token, "auth": {"token": token}, "note": f"Bearer {KEY}"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": f'{{"password": "{token}", "echo": "{KEY}"}}'},
        {"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {
            "name": "pay", "arguments": json.dumps({"api_key": token, "amount": 5})}}]},
    ]
    (tmp_path / "chat.json").write_text(json.dumps(messages))
    data, text = _written(tmp_path, "--from-transcript", str(tmp_path / "chat.json"), capsys=capsys)
    assert KEY not in text and token not in text
    (case,) = data["cases"]
    assert case["expect_args"] == [{"path": "api_key", "equals": "***"},
                                   {"path": "amount", "equals": 5}]
    assert case["context"][0]["call"]["arguments"]["auth"] == {"token": "***"}


@pytest.mark.parametrize(("name", "content", "said"), [
    ("s.jsonl", session(user("hi")) + '{"type": "user", "message": \n', "s.jsonl:2: not JSON"),
    ("s.jsonl", session(user("hi"), {"type": "assistant"}), "s.jsonl:2: a assistant entry has no message"),
    ("s.jsonl", session(user("hi"), assistant("m", use("t", "f", {}))) + "[1, 2]\n",
     "s.jsonl:3: a session entry is not a JSON object"),
    ("c.json", '[{"role": "user", "content": "hi"},\n {"role": "assistant", "tool_calls": [\n'
               '  {"id": "1", "function": {"name": "f", "arguments": "{not json"}}]}]',
     "c.json:2: the arguments of the call to 'f' are not JSON"),
    ("c.json", '[{"role": "user",\n "content": "hi"},\n {"role": ]', "c.json:3"),
    ("c.json", '{"conversation": []}', "c.json:1: no list of messages"),
    ("c.json", '[{"role": "user", "content": "hi"}]', "c.json: the transcript holds no tool call"),
    ("s.jsonl", session(assistant("m", use("t", "f", {}))), "s.jsonl:1: no user text before the call"),
    ("s.jsonl", session(user("hi"), assistant("m", use("t", "f", {})),
                        assistant("n", use("u", "g", {}))),
     "s.jsonl:2: the call to 'f' has no recorded result"),
    ("e.jsonl", "", "e.jsonl: the transcript is empty"),
])
def test_a_bad_transcript_is_one_error_naming_the_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, said: str) -> None:
    (tmp_path / name).write_text(content)
    out = tmp_path / "out.toolselect.yaml"
    assert main(["init", "--from-transcript", str(tmp_path / name), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err and err.startswith("toolselect: error: ") and err.count("\n") == 1, err
    assert not out.exists()


def test_a_call_out_of_range_lists_the_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.jsonl").write_text(SESSION)
    assert main(["init", "--from-transcript", str(tmp_path / "s.jsonl"), "--at", "9",
                 "-o", str(tmp_path / "o.yaml")]) == 2
    err = capsys.readouterr().err
    assert "--at 9: the transcript holds 4 tool calls" in err and "give --at 1 to 4" in err
    assert "2: list_officers (line 13)" in err


# -- any text, any JSON value, either format, round-trips --------------------------------------

#: every Unicode category, lone surrogates included (a JSON escape can hold one)
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | texts, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6)
arguments = st.dictionaries(texts, json_values, max_size=3)


#: a result as each format carries it: text, or (Claude Code) a list of text blocks
results = texts | st.lists(st.builds(lambda t: {"type": "text", "text": t}, texts), min_size=1,
                           max_size=3)


def held(value: Any) -> Any:
    """What a JSON transcript holds of a value (an escaped surrogate pair reads as one
    character), with a lone surrogate, which is no text, as U+FFFD."""
    import re

    def clean(v: Any) -> Any:
        if isinstance(v, str):
            return re.sub("[\ud800-\udfff]", "\ufffd", v)
        if isinstance(v, dict):
            return {clean(k): clean(x) for k, x in v.items()}
        return [clean(x) for x in v] if isinstance(v, list) else v

    return clean(json.loads(json.dumps(value)))


@settings(max_examples=60)
@given(question=texts, text=texts, args=arguments, returned=results, error=st.booleans(),
       last=arguments, claude=st.booleans())
def test_any_text_round_trips_into_the_case_and_back(
        tmp_path_factory: pytest.TempPathFactory, question: str, text: str, args: dict[str, Any],
        returned: Any, error: bool, last: dict[str, Any], claude: bool) -> None:
    """Whatever the question, the assistant's text, the arguments (any JSON) and the result:
    the written case reads back, with the case files' own reader, as the transcript held it."""
    from pytest_toolselect.cli.transcripts import _said

    assume(_said(held(question)) and held(text).strip())
    # a value shaped like a secret is masked (tested above): the property is for the rest
    assume(masked([question, text, args, returned, last]) == [question, text, args, returned, last])
    folder = tmp_path_factory.mktemp("t")
    if claude:
        path = folder / "s.jsonl"
        path.write_text(session(
            user(question), assistant("m1", {"type": "text", "text": text}),
            assistant("m1", use("t1", "mcp__srv__first", args)),
            user([result("t1", returned, error)]), assistant("m2", use("t2", "second", last))),
            encoding="utf-8")
    else:
        error = False  # the OpenAI wire has no error flag
        if not isinstance(returned, str):
            returned = [{**b, "type": "text"} for b in returned]  # the same parts, OpenAI's way
        path = folder / "c.json"
        path.write_text(json.dumps([
            {"role": "user", "content": question},
            {"role": "assistant", "content": text, "tool_calls": [
                {"id": "t1", "function": {"name": "mcp__srv__first", "arguments": json.dumps(args)}}]},
            {"role": "tool", "tool_call_id": "t1", "content": returned},
            {"role": "assistant", "tool_calls": [
                {"id": "t2", "function": {"name": "second", "arguments": json.dumps(last)}}]}]),
            encoding="utf-8")
    written = context_file(read_transcript(path), [-1])
    (case,) = parse_yaml(written, "x.yaml").data["cases"]
    assert case["question"] == held(question)
    turn = {"call": {"name": "first", "arguments": held(args)}, "result": held(returned),
            "text": held(text)}
    if error:
        turn["is_error"] = True
    assert case["context"] == [turn]
    assert case["expect_tool"] == ["second"]
    matched = {k: v for k, v in held(last).items() if k and k != "any" and "." not in k}
    assert {m["path"]: m["equals"] for m in case.get("expect_args", [])} == matched


def test_a_missing_transcript_and_a_lone_at_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--from-transcript", str(tmp_path / "gone.jsonl")]) == 2
    assert "gone.jsonl: cannot read the transcript" in capsys.readouterr().err
    assert main(["init", "--at", "2"]) == 2
    assert "--at chooses a call of a transcript (give --from-transcript FILE)" in capsys.readouterr().err
