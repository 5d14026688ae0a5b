"""Long videos in chunks: where to split (plan), each chunk sampled and detected (stage), joined."""
