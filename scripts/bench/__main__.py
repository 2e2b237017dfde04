"""`python3 scripts/bench` (what `make bench` runs)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.variants import VariantError

try:
    from bench.main import main
except VariantError as e:  # a malformed BENCH_*MIDDLEWARE: one line, nothing run
    print(f"error: {e}", file=sys.stderr)
    sys.exit(2)

sys.exit(main())
