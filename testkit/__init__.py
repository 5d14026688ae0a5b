"""The test kit shared by tests, benchmarks and stress: servers, topologies, truths and scorers."""
