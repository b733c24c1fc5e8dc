"""Pure: checks, identifiers, matchers."""
