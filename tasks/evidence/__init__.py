"""Stage 7, evidence: spans with thumbnails, hashes and review notes."""
