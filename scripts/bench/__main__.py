"""`python3 scripts/bench` (what `make bench` runs)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.main import main

sys.exit(main())
