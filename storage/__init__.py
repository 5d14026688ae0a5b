"""Durable state in two rooms: ``catalog/`` (the SQL catalog), ``artifacts/`` (blobs, Parquet)."""
