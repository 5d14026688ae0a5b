"""The shared kernel of the Video Evidence Service: settings, errors, ids and the command line."""

__version__ = "0.1.0"
