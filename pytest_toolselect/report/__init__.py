"""Reports: pure functions from run data to text."""
