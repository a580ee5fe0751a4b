"""The debate: agent roles and prompts, the LLM boundary, and the engine that runs rounds.

Pure given an LLM client: nothing here talks to GitHub, Redis or the network by itself.
"""
