"""Slow clients: connections sending a byte a second beside normal clients."""
