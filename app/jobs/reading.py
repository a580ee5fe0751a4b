"""What a review's agents read beside the diff, fetched from GitHub before its units fan out.

The repository's guidance comes from the base commit, like its config: a pull request cannot
write the rules it is reviewed by. The code around the changes comes from the head commit,
the code under review. Both are read together, in as few requests as GitHub allows
(:meth:`app.github.client.Installation.texts`); a file GitHub cannot give is left out of the
context (and named to the agents as not read), never a reason to fail the review. The files
read are parsed off the event loop, each within a budget (:mod:`app.parsing`).
"""

from agents.context import Reading, changed_files
from agents.diff import Diff
from app.events import PullKey
from app.github.blobs import FileAt
from app.github.client import Installation
from app.github.models import PullRequest
from app.parsing import Parsing
from policies.config import RepoConfig
from policies.guidance import Guidance

MAX_CONTEXT_FILES = 300
"""Changed files whose head text is read for context; the rest get none."""


async def reading_for(
    github: Installation,
    ref: PullKey,
    pull: PullRequest,
    config: RepoConfig,
    diff: Diff,
    parsing: Parsing,
) -> Reading:
    """The guidance of `config` with its guideline files from the base commit, and each file
    of `diff` at the head, parsed by `parsing` (unless the config turns context off)."""
    guidelines = [FileAt(pull.base_sha, path) for path in config.guidelines]
    sources = (
        [FileAt(pull.head_sha, f.path) for f in changed_files(diff)][:MAX_CONTEXT_FILES]
        if config.context.enabled
        else []
    )
    texts = await github.texts(ref, guidelines + sources)
    guidance = Guidance.of(
        config.instructions, config.path_instructions, {f.path: texts[f] for f in guidelines}
    )
    if not config.context.enabled:
        return Reading(guidance=guidance)
    read = {f.path: text for f in sources if (text := texts[f])}
    return Reading(read, config.context.max_tokens, guidance, await parsing.outlines(read))
