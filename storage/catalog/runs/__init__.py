"""Runs in the catalog: their store and states, admission by plan, measured costs, live windows."""
