"""YAML and JSON read with the line of every path, within bounds, so errors name a place."""
