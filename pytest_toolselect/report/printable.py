"""Untrusted text made harmless to show: control and bidirectional characters as code points.

Questions, tool names and descriptions, a model's arguments and a server's stderr reach
the terminal, CI logs and the reports. An escape sequence there can clear the screen,
hide or recolour a line, or forge a link; a carriage return can overwrite a line; a
bidirectional control can show a name reversed. Each such character is shown as
``<U+XXXX>``, which reads as what it is and does nothing. Line breaks and tabs are kept.
"""

from __future__ import annotations

import re

#: C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional controls
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every hidden character replaced by its code point, ``<U+001B>``."""
    return HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
