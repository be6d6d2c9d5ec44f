"""``python -m research.cli``: the ``research`` command."""

import sys

from research.cli.commands import main

sys.exit(main())
