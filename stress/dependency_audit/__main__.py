"""``python -m stress.dependency_audit``: the part in full (see ``stress.dependency_audit.run``)."""

from stress.dependency_audit.run import main

main()
