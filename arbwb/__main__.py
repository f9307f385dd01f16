"""``python -m arbwb``: the same as the ``arbwb`` command."""

import sys

from arbwb.cli import main

sys.exit(main())
