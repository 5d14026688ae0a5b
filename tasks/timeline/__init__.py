"""Stage 6, timeline: events in causal time order, and refresh markers."""
