"""The shared kernel, importing nothing of the project: settings, errors, ids, clock, plans, the
network guard, signing primitives, webhook signatures and the detector mode."""

__version__ = "0.1.0"
