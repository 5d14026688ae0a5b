"""The test suite: tests/<folder>/ mirrors each top-level folder; end-to-end tests at the top."""
