"""The words and names every part shares: statuses, verdicts, checks, gate rules."""
