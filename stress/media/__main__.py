"""``python -m stress.media``: the part in full (see ``stress.media.run``)."""

import sys

from stress.media.run import main

sys.exit(main())
