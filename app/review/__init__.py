"""A review run's steps, below the jobs that run them: its plan, the fleet's debates, what it
publishes and its check run; and what the jobs that change a finished review share with it."""
