"""The rules of a behaviour change shown to be intended: a proven finding is a fact, whether
it is a defect is still judged.

A finding's test that fails at the head and passes at the base proves that behaviour changed,
not that the change is wrong: a pull request that moves a rule on purpose changes what the
old rule's test sees. The coder may answer such a finding `intended`, citing evidence *in the
pull request* (:class:`agents.protocol.Citation`):

* a phrase quoted word for word from its title or description;
* lines of a file its diff adds or changes: a changelog, docs, a docstring;
* a test it adds or changes, as asserting the new behaviour.

What can be checked is: a quote must be in the description, cited lines must be lines the
pull request's diff adds or changes (in whichever review unit's slice: a unit is handed the
whole pull request's changed lines, :mod:`agents.pull_changes`), and a cited test of the pull
request, in any unit, is run at the head, where it must pass
(:class:`agents.debate.needs.OwnTest`). An `intended` answer that cites nothing checkable is
refused with the reason, as is one with a patch (it keeps the code). Where tests are not run,
the citations' existence is all that is checked, and the agents are told so.

The tester may accept the intent (the finding ends `intended`), or reject it; on a deadlock
the arbiter may rule `intended`, but only on a proven finding whose latest answer is
`intended` with evidence that checked out (every cited test that ran passed). A dispute "on
the facts" of a proven finding stays refused (:mod:`agents.debate.proofs`): the test's
failure is not argued away, only shown to be the change the pull request means to make.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agents.conventions import test_kind
from agents.outcome import IntendedBy, Message, MessageKind
from agents.protocol import (
    Answer,
    Citation,
    Decision,
    Evaluation,
    Finding,
    Ruling,
    RulingKind,
    Stance,
)
from agents.pull_changes import PullChanges
from agents.verification import OwnTestRun

NO_EVIDENCE = (
    "an intended answer must cite the pull request's evidence: a phrase quoted from its "
    "description, or lines its diff adds or changes (a changelog, docs, a docstring, a test)"
)
"""Why an `intended` answer that cites nothing is refused."""
TESTS_OFF = "tests are not run: only that the citations are in the pull request was checked"
CHECKED = "Evidence of intent checked"
"""How the thread's notice of what was checked of an intended answer begins."""
"""What a check of cited evidence says when the cited tests could not be run."""

_SPACE = re.compile(r"\s+")


@dataclass
class Intents:
    """What the coder cited to show each finding's behaviour change intended, and what
    Tiebreak checked of it."""

    changes: PullChanges
    """What the whole pull request adds or changes, whichever unit's slice holds it."""
    description: str = ""
    """The pull request's title and description, as its agents read them."""
    tests_run: bool = False
    """Whether the pull request's cited tests are run at the head."""
    raised: dict[str, Finding] = field(default_factory=dict)
    """The findings raised, by id: the lines a finding is on are the change, not its intent."""
    answers: dict[str, Answer] = field(default_factory=dict)
    """Each finding's latest `intended` answer, by finding id, while it is the latest."""
    runs: dict[str, OwnTestRun] = field(default_factory=dict)
    """What each of the pull request's cited tests showed at the head, by its path."""

    # -- the rules ----------------------------------------------------------------------

    def answer_problem(self, answer: Answer) -> str | None:
        """Why an answer's citations cannot be taken, if they cannot."""
        if answer.stance is not Stance.INTENDED:
            return None  # citations beside a dispute or a concession are only words
        if answer.patch is not None:
            return "an intended answer keeps the code: it carries no patch"
        if not answer.citations:
            return NO_EVIDENCE
        finding = self.raised.get(answer.finding_id)
        problems = [p for c in answer.citations if (p := self.citation_problem(c, finding))]
        return "; ".join(problems) if problems else None

    def citation_problem(self, citation: Citation, finding: Finding | None = None) -> str | None:
        """Why `citation` is not evidence in the pull request (for `finding`), or None."""
        if citation.quote is not None and citation.path is None:
            return self._quote_problem(citation.quote)
        if citation.path is not None and citation.quote is None:
            return self._lines_problem(citation) or _own_lines_problem(citation, finding)
        return "a citation is either a quote from the description or lines of a changed file"

    def evaluation_problem(self, evaluation: Evaluation) -> str | None:
        """Why a tester may not accept an intended answer: a test it cites fails at the head."""
        answer = self.answers.get(evaluation.finding_id)
        if answer is None or evaluation.decision is not Decision.ACCEPT:
            return None
        if failing := self.failing(answer):
            return f"the pull request's test {failing} fails at the head: it shows no intent"
        return None

    def ruling_problem(self, ruling: Ruling, *, proven: bool) -> str | None:
        """Why the arbiter may not rule a finding `intended`, if it may not."""
        if ruling.ruling is not RulingKind.INTENDED:
            return None
        if ruling.patch is not None:
            return "an intended ruling keeps the code: it carries no patch"
        if not proven:
            return "only a proven finding is ruled intended: rule accept_with_warning or force_fix"
        answer = self.answers.get(ruling.finding_id)
        if answer is None:
            return "the coder has not shown, with evidence in the pull request, that it is intended"
        if failing := self.failing(answer):
            return f"the pull request's test {failing} fails at the head: the intent is not shown"
        return None

    # -- the evidence -------------------------------------------------------------------

    def take(self, answer: Answer) -> None:
        """Keep the coder's latest answer on a finding: an intended one is its evidence."""
        if answer.stance is Stance.INTENDED:
            self.answers[answer.finding_id] = answer
        else:
            self.answers.pop(answer.finding_id, None)

    def cited_tests(self, answer: Answer) -> list[str]:
        """The pull request's tests `answer` cites (files of its diff, in any unit, that are
        tests)."""
        cited = (c.path for c in answer.citations if c.path is not None)
        return list(dict.fromkeys(p for p in cited if test_kind(p) is not None and self._kept(p)))

    def unrun(self, answer: Answer) -> list[str]:
        """The tests `answer` cites that have not been run yet, when tests are run."""
        return [t for t in self.cited_tests(answer) if self.tests_run and t not in self.runs]

    def failing(self, answer: Answer) -> str | None:
        """The first test `answer` cites that ran at the head and does not pass."""
        for test in self.cited_tests(answer):
            run = self.runs.get(test)
            if run is not None and run.passed is False:
                return test
        return None

    def ran(self, answer: Answer) -> list[OwnTestRun]:
        """The runs at the head of the tests `answer` cites, of those that ran."""
        return [self.runs[t] for t in self.cited_tests(answer) if t in self.runs]

    def shown(self, finding_id: str) -> IntendedBy:
        """The evidence of intent on a finding, for its outcome."""
        answer = self.answers[finding_id]
        return IntendedBy(citations=list(answer.citations), tests=self.ran(answer))

    def restore(self, finding: Finding, coder_said: Sequence[Message]) -> None:
        """Take a finished debate's evidence of intent on `finding` back from the record, for
        a ruling asked for later: the coder's last answer on its thread, when it is
        `intended` with citations that still check out (a transcript kept before citations
        were put on the record has none: its intent is not restored)."""
        self.raised[finding.id] = finding
        last = coder_said[-1] if coder_said else None
        if last is None or last.kind is not MessageKind.INTENDED or not last.citations:
            return
        answer = Answer(
            finding_id=finding.id,
            stance=Stance.INTENDED,
            argument=last.text,
            citations=list(last.citations),
        )
        if self.answer_problem(answer) is None:
            self.answers[finding.id] = answer

    def restore_runs(self, messages: Sequence[Message]) -> None:
        """Take back what the pull request's cited tests showed at the head in a finished
        debate, from the notices that told it: a failing one still backs no intent."""
        for message in messages:
            for run in message.tests:
                self.runs[run.test] = run

    def told(self, answer: Answer) -> str:
        """What Tiebreak checked of an intended answer's evidence, as its thread tells it."""
        cited = len(answer.citations)
        said = [f"{CHECKED}: {cited} citation(s) found in the pull request"]
        for test in self.cited_tests(answer):
            run = self.runs.get(test)
            if run is not None:
                said.append(f"its test {test} run at the head: {run.reason}")
            elif not self.tests_run:
                said.append(f"its test {test} not run ({TESTS_OFF})")
        return "; ".join(said) + "."

    def _quote_problem(self, quote: str) -> str | None:
        wanted = _words(quote)
        if not wanted:
            return "an empty quote cites nothing"
        if not self.description:
            return "the pull request has no description to quote"
        if wanted not in _words(self.description):
            return f"the pull request's description does not say {quote[:120]!r}"
        return None

    def _lines_problem(self, citation: Citation) -> str | None:
        path, start, end = citation.path or "", citation.start_line, citation.end_line
        if start is None or end is None or start > end:
            return f"{path}: cite its lines (start_line..end_line)"
        changed = self.changes.file(path)
        if changed is None:
            return f"{path} is not a file this change adds or changes"
        if not changed.adds_any(start, end):
            return f"{path}:{start}-{end} are not lines this change adds or changes"
        if not changed.shows_all(start, end):
            return f"{path}:{start}-{end} are not all lines the diff shows"
        return None

    def _kept(self, path: str) -> bool:
        return self.changes.file(path) is not None


def _own_lines_problem(citation: Citation, finding: Finding | None) -> str | None:
    """Why lines the finding is on cannot be cited: they are the change, not its intent."""
    if finding is None or citation.path != finding.path:
        return None
    start, end = citation.start_line or 0, citation.end_line or 0
    if start <= finding.end_line and finding.start_line <= end:
        return (
            f"{finding.path}:{start}-{end} are the lines the finding is on, not evidence of intent"
        )
    return None


def _words(text: str) -> str:
    """`text` with its blank space made single spaces, in lower case: a quote is found in the
    description whatever its line breaks."""
    return _SPACE.sub(" ", text).strip().lower()
