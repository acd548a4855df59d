"""``python -m tvbo``: the same command line as the ``tvbo`` console script."""

import sys

from tvbo.cli import main

sys.exit(main())
