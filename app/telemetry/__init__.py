"""What Tiebreak tells its operators: structured logs without secrets, and the fleet's counters."""
