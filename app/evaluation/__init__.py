"""`tiebreak eval`: Tiebreak measured on real bugs, against one reviewer and a vote.

The cases and the scoring are pure (`cases`, `results`, `voting`, `scoring`, `report`); the
runner drives the engine over them (`case_runner`, `result_files`); `szz` and `history` build
cases from a repository's own git history.
"""
