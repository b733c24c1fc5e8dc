"""What a run produces: the typed records its gate and reports read, and fingerprints."""
