"""The `tiebreak` command line: its commands, each imported only when it runs.

A command's module imports what the command needs (the model's SDK, the web server, GitHub's
client), which costs a large part of a second; `tiebreak --help` lists the commands from
:data:`COMMANDS` and imports none of them, and each command pays for its own imports alone.
"""

import importlib
from dataclasses import dataclass

import click


@dataclass(frozen=True)
class CommandEntry:
    """Where a command is defined (`module:attribute`), and its line in `tiebreak --help`."""

    target: str
    summary: str
    """The first sentence of the command's help, which `--help` shortens as click does."""
    hidden: bool = False


COMMANDS = {
    "serve": CommandEntry(
        "app.cli.servers:serve", "Run the web server and a worker in one process."
    ),
    "web": CommandEntry(
        "app.cli.servers:web", "Run the web server alone, on the Redis at REDIS_URL."
    ),
    "worker": CommandEntry(
        "app.cli.servers:worker",
        "Run a worker alone, on the Redis at REDIS_URL (run as many as you like).",
    ),
    "review": CommandEntry(
        "app.cli.review:review",
        "Review a unified diff (a file, or - for standard input) with the three agents.",
    ),
    "setup": CommandEntry(
        "app.cli.registering:setup",
        "Register Tiebreak's GitHub App (app.yml) and write its credentials to .env.",
    ),
    "status": CommandEntry(
        "app.cli.status:status",
        "Show the live review runs on the Redis at REDIS_URL: their units, agents, states, "
        "heartbeats, rounds and tokens, redrawn every SECONDS until Ctrl-C.",
    ),
    "check-config": CommandEntry(
        "app.cli.config_commands:check_config",
        "Check a config file (default .github/tiebreak.yml) as the App reads it.",
    ),
    "config-docs": CommandEntry(
        "app.cli.config_commands:config_docs_command",
        "Generate the config's JSON Schema and reference page from the model.",
        hidden=True,
    ),
    "learnings": CommandEntry("app.cli.learnings:learnings", "What repositories taught Tiebreak."),
    "verify-workflow": CommandEntry(
        "app.cli.config_commands:verify_workflow",
        "Print the workflow that runs findings' tests in a repository's GitHub Actions.",
    ),
    "demo": CommandEntry(
        "app.cli.demo:demo",
        "Review a small bundled pull request with scripted agents: no key, no network.",
    ),
    "eval": CommandEntry(
        "app.cli.evaluate:evaluate",
        "Measure whether the debate finds real bugs with fewer false alarms than one reviewer.",
    ),
}
"""Every command, by name. Each entry's summary and hidden flag
are its command's own (a test holds them equal), written here so that listing the commands
imports none of them. `config-docs` is the maintainers' (it rewrites a docs page): hidden."""


class LazyGroup(click.Group):
    """A group that imports a command's module when the command runs, not when it is listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, _, attribute = entry.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command), entry.target
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # As click lists a group's commands, from the summaries rather than the commands.
        shown = [name for name in self.list_commands(ctx) if not COMMANDS[name].hidden]
        limit = formatter.width - 6 - max(map(len, shown))
        rows = [
            (name, click.Command(name, help=COMMANDS[name].summary).get_short_help_str(limit))
            for name in shown
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tiebreak")
def main() -> None:
    """Tiebreak: pull request reviews by a tester, a coder and an arbiter who debate."""
