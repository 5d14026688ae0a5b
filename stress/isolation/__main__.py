"""``python -m stress.isolation``: the part in full (see ``stress.isolation.run``)."""

import sys

from stress.isolation.run import main

sys.exit(main())
