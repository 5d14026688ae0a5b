"""Stage 3, detect: the detector plugins of the run's mode, motion first (it gates the others)."""
