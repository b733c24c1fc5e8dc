"""A business credit and finance data provider as an MCP server (stdio by default,
``--http PORT`` for streamable HTTP on 127.0.0.1).

Its tools overlap the companies registry server on purpose: company_lookup is a second
search by company name (next to find_company), vat_check a second VAT check (next to
lookup_vat), credit_report a second per-company report (next to get_company and
list_charges). Offered together, the two servers give what an agent with several MCP
servers really sees: no two tools share a name, but several share a purpose. The bodies
return canned data; pytest-toolselect never calls them.

    python examples/finance/server.py              # stdio
    python examples/finance/server.py --http 8766  # http://127.0.0.1:8766/mcp
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

INSTRUCTIONS = """\
Business credit data: credit reports and limits for UK companies, VAT checks, foreign
exchange rates and the status of invoices raised through our receivables service.
Credit reports are keyed by the company number (8 characters, e.g. 04138203 or
SC123456); look a company up by name with company_lookup first if you do not have its
number. Invoice references look like INV-2024-000123."""

server = MCPServer("finance", instructions=INSTRUCTIONS)


def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Registers fn as a tool, its docstring (dedented) as the description models read."""
    return server.tool(description=inspect.cleandoc(fn.__doc__ or ""))(fn)


@tool
def company_lookup(
    name: Annotated[str, Field(description="The company's name, or part of it.")],
    country: Annotated[
        str, Field(description="ISO 3166-1 alpha-2 country code.", pattern=r"^[A-Z]{2}$")
    ] = "GB",
) -> list[dict[str, Any]]:
    """Find a company in our credit database by name.

    Returns candidate companies with their company number, credit file id, trading status
    and postcode, best match first. Use it to get the company number a credit report
    needs.
    """
    return [{"company_number": "04138203", "name": "ROYAL MAIL GROUP LIMITED", "status": "trading"}]


@tool
def credit_report(
    company_number: Annotated[
        str,
        Field(
            description="Company number: 8 digits with leading zeros, or a 2-letter prefix and 6 digits.",
            pattern=r"^(?:[0-9]{8}|[A-Z]{2}[0-9]{6})$",
        ),
    ],
    include_financials: Annotated[
        bool, Field(description="Add the last three years' key financials.")
    ] = False,
) -> dict[str, Any]:
    """Get a company's credit report: credit score (0-100), recommended credit limit,
    risk band, payment behaviour (days beyond terms), county court judgments and
    outstanding charges.

    Use it to decide whether to trade with a company on credit terms and how much to
    extend.
    """
    return {"company_number": company_number, "score": 87, "risk_band": "very low", "limit_gbp": 250000}


@tool
def vat_check(
    vat_number: Annotated[
        str,
        Field(
            description="VAT number with its country prefix, e.g. GB123456789 or DE123456789.",
            pattern=r"^[A-Z]{2}[0-9A-Z ]{2,13}$",
        ),
    ],
) -> dict[str, Any]:
    """Validate a UK or EU VAT number and return the name and address it is registered to.

    Checks UK numbers with HMRC and EU numbers with VIES; returns whether the number is
    valid, the registered name and address, and the date of the check (keep it for your
    records when zero-rating an invoice).
    """
    return {"valid": True, "vat_number": vat_number, "checked_on": date.today().isoformat()}


@tool
def exchange_rate(
    base: Annotated[str, Field(description="Currency to convert from (ISO 4217, e.g. GBP).")],
    quote: Annotated[str, Field(description="Currency to convert to (ISO 4217, e.g. EUR).")],
    on: Annotated[date | None, Field(description="Date of the rate (YYYY-MM-DD); default: latest.")] = None,
) -> dict[str, Any]:
    """Get the exchange rate between two currencies: the latest, or the reference rate at
    the close of a given day."""
    return {"base": base, "quote": quote, "rate": 1.17}


@tool
def invoice_status(
    invoice_ref: Annotated[
        str,
        Field(
            description="Invoice reference, e.g. INV-2024-000123.",
            pattern=r"^INV-[0-9]{4}-[0-9]{6}$",
        ),
    ],
) -> dict[str, Any]:
    """Get the status of an invoice raised through our receivables service: amount,
    currency, due date, whether it is paid, partly paid or overdue, and payments received.
    """
    return {"invoice_ref": invoice_ref, "status": "overdue", "amount": "1200.00", "currency": "GBP"}


@tool
def payment_history(
    company_number: Annotated[
        str,
        Field(
            description="Company number: 8 digits with leading zeros, or a 2-letter prefix and 6 digits.",
            pattern=r"^(?:[0-9]{8}|[A-Z]{2}[0-9]{6})$",
        ),
    ],
    months: Annotated[int, Field(ge=1, le=36, description="How many months back.")] = 12,
) -> list[dict[str, Any]]:
    """Get how promptly a company has paid its suppliers, month by month: average days
    beyond terms and the share of invoices paid late, from trade data shared with us."""
    return [{"month": "2024-06", "days_beyond_terms": 4}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP")
    opts = parser.parse_args()
    if opts.http:
        server.run("streamable-http", host="127.0.0.1", port=opts.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
