"""Repositories' snapshots at a commit, downloaded once and kept on the worker's disk."""
