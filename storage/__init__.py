"""Durable state: the SQLite catalog, uploaded sources, artifact layout and schemas, DuckDB reads."""
