"""The GitHub App: everything of Tiebreak that does I/O, in packages that name its parts
(docs/architecture.md)."""
