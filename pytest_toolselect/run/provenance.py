"""Where a run came from: time, plugin version, command line, and the git commit when in a repo."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_toolselect.messages.masking import redact


def git_state(root: Path) -> dict[str, Any] | None:
    """The commit checked out at root and whether the tree has changes (None: not a git repo)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                                  timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def provenance(root: Path, args: Sequence[str], exitstatus: int | None,
               failed_items: int | None = None, other_failed: int | None = None,
               stopped: str | None = None) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    import pytest


    try:
        plugin = version("pytest-toolselect")
    except PackageNotFoundError:
        plugin = None
    out = {
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "plugin_version": plugin,
        "pytest_version": pytest.__version__,
        "python_version": platform.python_version(),
        # a key pasted on the command line must not reach the report
        "command": ["pytest", *(redact(str(a)) for a in args)],
        "git": git_state(root),
        "exit_status": exitstatus,
    }
    if failed_items is not None:
        # the items pytest counted as failed: `toolselect merge` tells a shard's failed
        # items from its gates over its own share of the suite, which it decides again
        out["failed_items"] = failed_items
    if other_failed is not None:
        # what failed outside the gate's cases: `toolselect merge` adds them up
        out["other_failed"] = other_failed
    if stopped:
        out["stopped"] = stopped  # -x, --sw or Ctrl-C: items never ran
    return out
