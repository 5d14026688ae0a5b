"""`make stress`: the hardening suite, one folder per part (fuzz, media, kills, isolation, load,
slow_clients, dependency_audit); short versions run in `make test` (tests/stress/)."""
