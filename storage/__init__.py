"""Durable state: the SQLite catalog, uploads, artifact layout and schemas, DuckDB reads."""
