"""Pure: the preference probe's cells, outcomes, statistics and bootstrap."""
