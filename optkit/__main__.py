"""``python -m optkit`` is the ``optkit`` command."""

import sys

from optkit.cli import main

# Guarded: the harness's worker processes (forkserver/spawn) import the parent's main module
# under the name ``__mp_main__``, and must not run the command line again.
if __name__ == "__main__":
    sys.exit(main())
