"""The user's inputs and their loading: case, groups and config files, the options table."""
