"""`python -m cachelab.cli`: the `cachelab` command."""

import sys

from cachelab.cli.main import main

sys.exit(main())
