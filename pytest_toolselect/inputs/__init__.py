"""The user's inputs and their loading: case, groups and config files, the options table."""

from pathlib import PurePath

#: toolselect_cases.v1 files: pytest collects them, ``toolselect lint`` reads them
CASE_SUFFIXES = (".toolselect.yaml", ".toolselect.yml", ".toolselect.json")
#: tool_preference_groups.v1 files: pytest collects them as groups files (by suffix only:
#: reading every JSON file in a repository to look for a schema_version would cost every run)
GROUPS_SUFFIXES = (".groups.json", ".groups.yaml", ".groups.yml")


# One rule for every reader (collection, the loaders, the lint): the suffix as written, case
# and all, as pytest matches its own file patterns on POSIX.
def is_case_file(path: PurePath) -> bool:
    """True for ``*.toolselect.yaml``, ``*.toolselect.yml`` and ``*.toolselect.json``."""
    return path.name.endswith(CASE_SUFFIXES)


def is_groups_file(path: PurePath) -> bool:
    """True for ``*.groups.json``, ``*.groups.yaml`` and ``*.groups.yml``."""
    return path.name.endswith(GROUPS_SUFFIXES)
