"""Tests of the hardening suite (stress/)."""
