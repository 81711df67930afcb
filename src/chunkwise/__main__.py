"""``python -m chunkwise``: the same command line as the ``chunkwise`` script."""
from chunkwise.cli.main import main

raise SystemExit(main())
