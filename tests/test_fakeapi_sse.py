"""The fake API answers a streaming Anthropic request with server-sent events, read by the
real SDK's stream parser; a request without `stream` gets the JSON message as before."""

from __future__ import annotations

import anthropic
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from hypothesis import given
from hypothesis import strategies as st

ARGS = {"name": "Acme \"Widgets\"", "n": [1, 2, {"deep": None}]}


def _client(fake_api: FakeAPI) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake_api.url, api_key="k", max_retries=0)


def test_stream_carries_text_tool_calls_stop_and_usage(fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(text="let me look", tool_calls=[("find_company", ARGS), ("lookup_vat", {})],
                         input_tokens=321, output_tokens=17, cache_read_tokens=4))
    with _client(fake_api).messages.stream(model="claude-test", max_tokens=50,
                                           messages=[{"role": "user", "content": "q"}]) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "input_json" in kinds  # the SDK saw input_json_delta events
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[0].text == "let me look"
    assert (message.content[1].name, message.content[1].input) == ("find_company", ARGS)
    assert message.content[2].input == {}
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens == 321 and message.usage.output_tokens == 17
    assert message.usage.cache_read_input_tokens == 4
    assert fake_api.requests[0].body["stream"] is True


def test_query_string_path_and_plain_request_unchanged(fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(tool_calls=[("find_company", {"name": "x"})]))
    # what Claude Code posts to: the path with ?beta=true, and no stream flag here
    message = _client(fake_api).messages.create(
        model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "q"}],
        extra_query={"beta": "true"})
    assert fake_api.requests[0].path == "/v1/messages?beta=true"
    assert message.content[0].input == {"name": "x"}


def test_a_streaming_request_gets_an_error_status_as_json(fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(status=400, error="bad tools"))
    with pytest.raises(anthropic.BadRequestError, match="bad tools"):
        _client(fake_api).messages.create(model="claude-test", max_tokens=10, stream=True,
                                          messages=[{"role": "user", "content": "q"}])


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                           lambda kids: st.lists(kids, max_size=3)
                           | st.dictionaries(st.text(max_size=5), kids, max_size=3), max_leaves=8)


@given(calls=st.lists(st.tuples(st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,20}", fullmatch=True),
                                st.dictionaries(st.text(max_size=8), json_values, max_size=4)),
                      max_size=3),
       text=st.text(max_size=30))
def test_any_scripted_reply_streams_back_as_scripted(calls: list[tuple[str, dict]], text: str) -> None:
    api = FakeAPI().start()
    try:
        api.queue(Reply(text=text, tool_calls=calls))
        with _client(api).messages.stream(model="claude-test", max_tokens=50,
                                          messages=[{"role": "user", "content": "q"}]) as stream:
            message = stream.get_final_message()
    finally:
        api.stop()
    got = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert got == calls
    texts = [b.text for b in message.content if b.type == "text"]
    assert texts == ([text] if text else [])
