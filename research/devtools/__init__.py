"""Developer tools: loopback servers and scale generators for tests and benchmarks."""
