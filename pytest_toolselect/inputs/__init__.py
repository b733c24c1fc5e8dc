"""The user's inputs and their loading: case, groups and config files, the options table."""

#: toolselect_cases.v1 files: pytest collects them, ``toolselect lint`` reads them
CASE_SUFFIXES = (".toolselect.yaml", ".toolselect.yml", ".toolselect.json")
#: tool_preference_groups.v1 files: pytest collects them as groups files (by suffix only:
#: reading every JSON file in a repository to look for a schema_version would cost every run)
GROUPS_SUFFIXES = (".groups.json", ".groups.yaml", ".groups.yml")
