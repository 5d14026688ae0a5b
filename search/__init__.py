"""Workspace search: every published run of a tenant searched at once (REST, Ask, MCP, dashboard).

``filters`` (what is searched), ``reader`` (free text read as Ask reads a question), ``sql`` and
``engine`` (the catalog's pruning, then one DuckDB query over the runs' hits), ``ask`` (questions
put to the whole workspace).
"""
