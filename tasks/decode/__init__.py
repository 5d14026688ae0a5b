"""Stage 1, decode: bring the source next to the worker, hash it, probe it, enforce the bounds."""
