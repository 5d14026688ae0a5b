"""The shared kernel, importing nothing of the project: settings, errors, ids, clock, plans, the
network guard, signing primitives and webhook signatures."""

__version__ = "0.1.0"
