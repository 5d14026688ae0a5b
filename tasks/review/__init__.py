"""The review copy: the run's video in a form every browser plays, kept with its artifacts."""
