"""Discovery from an MCP server reached over streamable HTTP, with the config's headers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_toolselect.inputs.envrefs import resolve, resolve_value
from pytest_toolselect.messages.errors import ServerError

from .failures import _describe, _Probe
from .found import ServerTools
from .mcp_session import _guarded, _list

if TYPE_CHECKING:
    from pytest_toolselect.inputs.config import ServerSpec


async def _discover_http(spec: ServerSpec, probe: _Probe) -> ServerTools:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    assert spec.url is not None
    # The SDK takes headers only through a client of its own httpx flavour (httpx2);
    # the timeouts mirror its defaults, and our own deadline bounds the whole run anyway.
    headers = resolve(spec.headers, _describe(spec), f"servers.{spec.name}.headers")
    url = resolve_value(spec.url, _describe(spec), f"servers.{spec.name}.url")
    if not url.startswith(("http://", "https://")):
        # the value read may be a secret: the message names the variable's place, not it
        raise ServerError(f"{_describe(spec)}: servers.{spec.name}.url is not an http:// or "
                          "https:// URL once its ${NAME} is read",
                          fix="set the variable to the endpoint's full URL, e.g. https://host/mcp")
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0),
                                event_hooks={"response": [probe.on_response]})
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        return await _guarded(probe, _list(spec, session, probe))
