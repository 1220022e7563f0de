"""``python -m torchwise.bench FILE:LINE ...``: the same as ``torchwise bench``."""

import sys

from torchwise.bench.cli import run_cli

sys.exit(run_cli(sys.argv[1:]))
