"""Known vulnerabilities in the pinned dependency set, by pip-audit."""
