"""Hardening suite: `make stress` and its parts (README, Hardening)."""
