"""What Tiebreak posts on a pull request, computed without I/O: reviews, summaries, checks."""
