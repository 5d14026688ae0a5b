"""``python -m stress.kills``: the part in full (see ``stress.kills.run``)."""

from stress.kills.run import main

main()
