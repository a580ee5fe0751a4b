"""Everything Tiebreak keeps in Redis: the queue, live runs, pull requests' memory, budgets."""
