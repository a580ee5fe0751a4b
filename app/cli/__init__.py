"""The `tiebreak` command line: serve, review a local diff, set up the App, watch the fleet."""


def main() -> None:
    """Run the `tiebreak` command (:data:`app.cli.main.main`).

    The program's entry script imports this package alone: a worker process that parses files
    (`app.parsing`) starts by running that script again, as multiprocessing does, and must not
    pay for the whole App — the web server, the GitHub and model clients — each time one
    starts.
    """
    from app.cli.main import main as command

    command()
