"""The rules the debate engine obeys: budgets, loop detection, arbitration, routing, safety.

Pure functions and small state holders. Nothing here performs I/O or imports the app side.
"""
