"""An order desk as an MCP server (stdio), for the valid_arguments tests.

Built with the SDK's typed tools, so its input schemas are what real Python servers
offer: required fields, integer and boolean types, enums (a ``Literal``), ``anyOf`` (an
optional field), nested objects and arrays of them reached by ``$ref`` into ``$defs``,
and a closed object (``extra="forbid"``: ``additionalProperties: false``). Its tools are
only listed, never called.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict, Field

server = MCPServer("orders")


def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    return server.tool(description=inspect.cleandoc(fn.__doc__ or ""))(fn)


class Address(BaseModel):
    """Where an order goes; nothing but these keys."""

    model_config = ConfigDict(extra="forbid")
    street: str
    postcode: str
    country: Literal["GB", "IE", "FR"] = "GB"


class Line(BaseModel):
    sku: Annotated[str, Field(pattern=r"^[A-Z]{2}-[0-9]{4}$")]
    quantity: Annotated[int, Field(ge=1)]


@tool
def place_order(
    customer_id: Annotated[int, Field(description="The customer's number.")],
    lines: Annotated[list[Line], Field(min_length=1, description="What to send.")],
    ship_to: Address,
    priority: Literal["standard", "express"] = "standard",
    gift_note: str | None = None,
) -> str:
    """Place an order for a customer: the lines to send, where to, how fast."""
    return "ok"


@tool
def get_order(order_id: Annotated[int, Field(description="The order's number.")],
              include_lines: bool = False) -> str:
    """Get one order by its number."""
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
