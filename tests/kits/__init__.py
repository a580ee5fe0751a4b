"""What several tests share, one module per subject: reviews and commands run by a real worker
(`review`), people's replies heard (`hearing`), a look into Redis (`store`), transcripts for the
page (`transcript`) and a real browser to read it in (`browser`), panels (`panel`), reviews to
publish (`plan`), the setup flow's browser (`setup_flow`), the verifier's surroundings
(`project`), scripted reviewers for `tiebreak eval` (`reviewers`), the Messages API's answers
(`messages`), the clouds' credentials (`clouds`), a worker that dies mid-debate (`crash`),
the workflow template run as a runner runs it (`workflow`),
reviews whose tests run in the fake GitHub's Actions (`actions`) and a pull request whose
findings its author tries to dismiss (`dismissal`).

Kits are the tests' own: the benchmarks use only `tests.fakes` and `tests.scenarios` (the
import contracts in pyproject.toml say so). The fakes' own tests keep theirs beside the fakes
(`tests/fakes/github_api_kit.py`).
"""
