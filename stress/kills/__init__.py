"""Kill -9 trials against the whole service as make run starts it."""
