"""API fuzzing with schemathesis over the served OpenAPI."""
