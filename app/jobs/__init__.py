"""The arq jobs and the worker that runs them: reviews, units, commands, hearings, the janitor."""
