"""Redis state: connection and embedded server, key schema, runs and events, the seed 000
source collector."""
