"""The base of every section of `.github/tiebreak.yml`: frozen, refusing a key it does not
know (a misspelt option is said to be wrong, never ignored), each field's docstring its
description in the config's reference and JSON Schema."""

from pydantic import BaseModel, ConfigDict


class ConfigSection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
