"""`python -m pytest_toolselect.cli`: the toolselect command."""

import sys

from pytest_toolselect.cli import main

sys.exit(main())
