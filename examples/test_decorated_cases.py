"""Selection cases written in Python: one case per parametrized question.

Useful when the phrasings come from somewhere (a support-ticket sample, a list kept
with the product docs) or when a case wants an extra assertion on the model's turn.
"""

import pytest

from pytest_toolselect import case


@pytest.mark.parametrize(
    "question",
    [
        "Which charges are registered against company 04138203?",
        "Is anything secured against the assets of company 04138203?",
        "Does any lender hold a mortgage over company 04138203?",
    ],
    ids=["charges", "secured", "mortgage"],
)
@case(
    servers=["companies"],
    expect_tool=["list_charges"],
    forbid_ungrounded=True,
    intent="charges-register",
    category="paraphrase",
    why="Security over a company's assets is recorded as a charge; only list_charges has them.",
)
def test_charges_phrasings(question, toolselect_result):
    # an extra assertion of the team's own: whatever was called, it was one call
    assert len(toolselect_result.calls) <= 1


@case(
    question="Search the register for the company Acme Widgets Ltd.",
    servers=["companies"],
    expect_tool=["find_company"],
    category="grounding",
    why="A name with no number: search first.",
)
def test_find_by_name(toolselect_result):
    assert toolselect_result.first_tool in (None, "find_company")
