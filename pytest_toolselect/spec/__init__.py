"""Data loaded and validated: cases, groups, config, tools, source maps, env references, errors."""
