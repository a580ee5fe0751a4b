"""Scenarios shared by the tests and the benchmarks: the sample pull request and shorthand for
scripting debates over it (`debates`), panels of testers debating it (`panels`), the App's test
identity on the fake GitHub with a real worker's wiring (`reviews`), a scripted verifier of
findings' tests (`proofs`), and GitHub's webhook payload examples as signed deliveries
(`webhooks`).

Benchmarks import these and the fakes of `tests.fakes`, nothing else from the tests (the
import contracts in pyproject.toml say so).
"""
