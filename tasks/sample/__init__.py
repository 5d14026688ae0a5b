"""Stage 2, sample: decode once, keep sample_fps frames as files, mark scene changes."""
