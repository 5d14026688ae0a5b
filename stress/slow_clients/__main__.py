"""``python -m stress.slow_clients``: the part in full (see ``stress.slow_clients.run``)."""

from stress.slow_clients.run import main

main()
