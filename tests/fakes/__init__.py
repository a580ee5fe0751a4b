"""Local stand-ins for the services Tiebreak talks to, for tests and benchmarks."""
