"""``python -m stress.fuzz``: the part in full (see ``stress.fuzz.run``)."""

import sys

from stress.fuzz.run import main

sys.exit(main())
