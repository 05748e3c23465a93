"""``python -m optkit`` is the ``optkit`` command."""

import sys

from optkit.cli import main

sys.exit(main())
