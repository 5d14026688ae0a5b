"""`make bench`: the scripts behind every figure the docs quote, each against a same-run base."""
