"""A UK-style company registry as an MCP server (stdio by default, ``--http PORT`` for
streamable HTTP on 127.0.0.1).

pytest-toolselect only lists these tools, it never calls them, so the bodies return a
little canned data. What matters is the wording: some tools are deliberately close
neighbours (find_company / search_officers: both search by a name; get_company /
lookup_vat: both return a company profile from an identifier), so a case can check
that a model tells them apart.

    python examples/companies/server.py              # stdio
    python examples/companies/server.py --http 8765  # http://127.0.0.1:8765/mcp
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

INSTRUCTIONS = """\
Companies registry for England & Wales, Scotland and Northern Ireland.
A company is identified by its company number: 8 characters, either 8 digits
(e.g. 04138203; keep the leading zero) or a 2-letter prefix and 6 digits
(SC for Scotland, NI for Northern Ireland, e.g. SC123456). When the user gives only
a company name, search for it first with find_company and use the company_number it
returns; never guess or reconstruct a company number. A VAT number (GB and 9 digits)
is not a company number."""

CompanyNumber = Annotated[
    str,
    Field(
        description="Company number as registered: 8 digits with leading zeros "
        "(04138203) or a 2-letter prefix and 6 digits (SC123456, NI012345).",
        pattern=r"^(?:[0-9]{8}|[A-Z]{2}[0-9]{6})$",
    ),
]

server = MCPServer("companies", instructions=INSTRUCTIONS)


def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Registers fn as a tool, its docstring (dedented) as the description models read."""
    return server.tool(description=inspect.cleandoc(fn.__doc__ or ""))(fn)


_ROYAL_MAIL: dict[str, Any] = {
    "company_number": "04138203",
    "company_name": "ROYAL MAIL GROUP LIMITED",
    "company_status": "active",
    "type": "ltd",
    "date_of_creation": "2001-01-04",
    "registered_office_address": {
        "address_line_1": "185 Farringdon Road",
        "locality": "London",
        "postal_code": "EC1A 1AA",
    },
    "sic_codes": ["53100"],
}


@tool
def find_company(
    query: Annotated[str, Field(description="Company name, or part of it, e.g. 'Royal Mail'.")],
    include_dissolved: Annotated[
        bool, Field(description="Also return dissolved and closed companies.")
    ] = False,
    limit: Annotated[int, Field(ge=1, le=100, description="Maximum results.")] = 10,
) -> list[dict[str, Any]]:
    """Search the companies register by company name.

    Returns matching companies with their company number, status, incorporation date
    and registered office. Use this when you know a company's name but not its company
    number; the other tools need the number. Does not search people: to find a director
    or secretary by their own name, use search_officers.
    """
    return [{k: _ROYAL_MAIL[k] for k in ("company_number", "company_name", "company_status")}]


@tool
def get_company(company_number: CompanyNumber) -> dict[str, Any]:
    """Get a company's profile from the register by its company number.

    Returns the registered name, status (active, dissolved, in liquidation...), company
    type, incorporation date, registered office address, SIC codes and accounts and
    confirmation statement due dates. Needs the company number, not a VAT number: to
    check a VAT registration use lookup_vat.
    """
    return {**_ROYAL_MAIL, "company_number": company_number}


@tool
def list_officers(
    company_number: CompanyNumber,
    include_resigned: Annotated[bool, Field(description="Also list officers who have resigned.")] = False,
) -> list[dict[str, Any]]:
    """List a company's officers: its directors and secretaries.

    For each officer: name, role, appointment date (and resignation date), nationality,
    country of residence and month/year of birth. For one company, given its number; to
    find every company a person is an officer of, use search_officers.
    """
    return [{"name": "SMITH, Jane", "officer_role": "director", "appointed_on": "2019-05-01"}]


@tool
def list_filings(
    company_number: CompanyNumber,
    category: Annotated[
        Literal[
            "accounts",
            "confirmation-statement",
            "officers",
            "capital",
            "charges",
            "incorporation",
            "insolvency",
        ]
        | None,
        Field(description="Only filings of this category."),
    ] = None,
    since: Annotated[
        date | None, Field(description="Only filings made on or after this date (YYYY-MM-DD).")
    ] = None,
) -> list[dict[str, Any]]:
    """List the documents a company has filed at the registry, newest first.

    Annual accounts, confirmation statements, appointments and resignations, changes of
    address, share allotments, charges and insolvency notices, each with its date,
    category, a description and a link to the document.
    """
    return [{"date": "2024-07-01", "category": "accounts", "description": "Full accounts"}]


@tool
def list_charges(company_number: CompanyNumber) -> list[dict[str, Any]]:
    """List the charges (mortgages and other security) registered against a company.

    For each charge: who holds it (the lender), when it was created and registered, what
    it secures and whether it is outstanding, partly or fully satisfied. Useful to see
    whether a company's assets are pledged; it is not a credit score.
    """
    return [{"charge_code": "041382030042", "status": "outstanding", "persons_entitled": "HSBC"}]


@tool
def lookup_vat(
    vat_number: Annotated[
        str,
        Field(
            description="UK VAT registration number: 'GB' and 9 digits, e.g. GB123456789 (spaces allowed).",
            pattern=r"^(?:GB)?\s?[0-9]{3}\s?[0-9]{4}\s?[0-9]{2}$",
        ),
    ],
) -> dict[str, Any]:
    """Check a UK VAT registration number and return the business it is registered to.

    Confirms whether the VAT number is valid and returns the registered trading name and
    address, as HMRC holds them. Takes a VAT number, not a company number; for a
    company's registry profile use get_company.
    """
    return {"valid": True, "vat_number": vat_number, "name": "ROYAL MAIL GROUP LIMITED"}


@tool
def search_officers(
    name: Annotated[str, Field(description="The person's name, e.g. 'Jane Smith'.")],
    limit: Annotated[int, Field(ge=1, le=100, description="Maximum results.")] = 10,
) -> list[dict[str, Any]]:
    """Search for company officers (directors and secretaries) by the person's name.

    Returns matching people with their month/year of birth and the companies they are or
    were officers of, with company numbers and roles. Searches people, not companies: to
    find a company by its name use find_company.
    """
    return [{"name": "SMITH, Jane", "appointments": [{"company_number": "04138203"}]}]


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
