"""Keys of other reviewers' configs that people paste into `.github/tiebreak.yml`, and what
Tiebreak reads in their place.

CodeRabbit's `.coderabbit.yaml` (`reviews`, `path_filters`, `auto_review`, `language`,
`tone_instructions`, …), pr-agent's `.pr_agent.toml` sections (`pr_reviewer`, `config`,
`github_app`, `ignore.glob`, …) and Copilot's path instructions (`applyTo`): an unknown key
found here is answered with Tiebreak's equivalent, or with the fact that it has none.
"""

from typing import Any

_EQUIVALENTS: dict[str, str] = {
    # CodeRabbit, .coderabbit.yaml
    "reviews": "CodeRabbit's section; Tiebreak's options sit at the top level",
    "reviews.path_filters": "use paths.include and paths.exclude",
    "path_filters": "use paths.exclude (and paths.include)",
    "reviews.path_instructions": "use path_instructions",
    "reviews.auto_review": "use enabled, triggers, review_drafts and ignore",
    "auto_review": "use enabled, triggers, review_drafts and ignore",
    "reviews.auto_review.enabled": "use enabled",
    "reviews.auto_review.drafts": "use review_drafts",
    "reviews.auto_review.base_branches": "use ignore.base_branches (the branches not reviewed)",
    "reviews.auto_review.ignore_title_keywords": "use ignore.title_patterns",
    "reviews.auto_review.labels": "use ignore.labels (the labels not reviewed)",
    "reviews.auto_review.ignore_usernames": "use ignore_authors",
    "ignore_title_keywords": "use ignore.title_patterns",
    "ignore_usernames": "use ignore_authors",
    "base_branches": "use ignore.base_branches (the branches not reviewed)",
    "reviews.profile": "use min_severity",
    "reviews.request_changes_workflow": "use review_event_on_unresolved",
    "knowledge_base": "use learnings",
    "language": "Tiebreak has no such option; say it in instructions",
    "tone_instructions": "use instructions",
    "early_access": "Tiebreak has no such option",
    "chat": "Tiebreak has no such option; people reply on a finding's thread",
    # pr-agent, .pr_agent.toml
    "pr_reviewer": "pr-agent's section; use instructions, min_severity and max_inline_comments",
    "pr_reviewer.extra_instructions": "use instructions",
    "pr_reviewer.num_max_findings": "use max_inline_comments",
    "pr_code_suggestions": "pr-agent's section; Tiebreak's coder answers findings with patches",
    "pr_description": "Tiebreak does not write descriptions",
    "config": "pr-agent's section; use models to choose the models",
    "config.model": "use models (tester, coder, arbiter)",
    "github_app": "pr-agent's section; use triggers",
    "github_app.pr_commands": "use triggers",
    "ignore.glob": "use paths.exclude",
    "ignore.regex": "use paths.exclude (globs)",
    # Copilot's .github/instructions/*.instructions.md front matter
    "applyTo": "use path_instructions (path: glob, instructions: text)",
    "excludeAgent": "Tiebreak has no such option",
}


def foreign_hint(path: tuple[str, ...], value: Any) -> str | None:
    """Tiebreak's equivalent of the unknown key at `path`, with those of the keys it holds
    when it is another reviewer's section, or None for a key no other reviewer uses."""
    dotted = ".".join(path)
    own = _EQUIVALENTS.get(dotted)
    inner = [f"for {key} {_EQUIVALENTS[key]}" for key in _inner_keys(dotted, value)]
    if own is None and not inner:
        return None
    return "; ".join([own, *inner] if own is not None else inner)


def _inner_keys(dotted: str, value: Any) -> list[str]:
    """The keys at any depth in `value`, the section at `dotted`, that have an equivalent."""
    if not isinstance(value, dict):
        return []
    found = []
    for key, inner in value.items():
        path = f"{dotted}.{key}"
        found += [path] if path in _EQUIVALENTS else []
        found += _inner_keys(path, inner)
    return found
