"""``python -m stress.load``: the part in full (see ``stress.load.run``)."""

from stress.load.run import main

main()
