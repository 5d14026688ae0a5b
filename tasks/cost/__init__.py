"""Stage 8, cost: cost.json, what the run did and what it cost."""
