"""`tiebreak demo`: one real review, without a key or the network, of the small pull request
shipped with Tiebreak (:mod:`app.cli.demo_project`).

The engine is the one `tiebreak review` drives (:func:`agents.review.review_units`, each unit
a :class:`agents.debate.engine.Debate`); only the model is replaced, by the scripted agents of
:mod:`app.cli.demo_script`. The review is shown as `review` shows one (the terminal view, or
`--json`), and its transcript page is written to a file and opened in a browser. With
`--verify`, the tester's test runs in bubblewrap's sandbox at the base and the head, and the
coder's fix against it, as `review --verify` runs tests (:mod:`app.cli.verifying`). Everything
it prints says it is a demo. This module holds the command's options alone, so that its help
loads nothing else; its work is :mod:`app.cli.demoing`.
"""

import click


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the review as JSON, as review does.")
@click.option(
    "--verify/--no-verify",
    default=None,
    help="Run the tester's test in bubblewrap's sandbox at the base and the head, and the "
    "coder's fix against it, as `review --verify` does (needs bubblewrap and git). Default: "
    "where the sandbox can run here; elsewhere the review goes on without it, saying why.",
)
@click.option("--no-browser", is_flag=True, help="Do not open the transcript page in a browser.")
def demo(as_json: bool, verify: bool | None, no_browser: bool) -> None:
    """Review a small bundled pull request with scripted agents: no key, no network.

    The review is real — Tiebreak's debate engine, its rules and budgets, the terminal view,
    the transcript page and the findings' tests in the sandbox — but the
    tester, the coder and the arbiter answer from a script written for this pull request:
    no model is called, nothing is billed.
    """
    from app.cli import demoing

    demoing.run(as_json=as_json, verify=verify, no_browser=no_browser)
