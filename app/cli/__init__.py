"""The `tiebreak` command line: serve, review a local diff, set up the App, watch the fleet."""
