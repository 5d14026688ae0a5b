"""Stage 5, world state: objects, zones, events and relations from the tracks."""
