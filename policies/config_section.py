"""The base of every section of `.github/tiebreak.yml`: frozen, refusing a key it does not
know (a misspelt option is said to be wrong, never ignored), each field's docstring its
description in the config's reference and JSON Schema."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict


class ConfigSection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


Switch = Annotated[bool, Strict()]
"""An option that is on or off: a YAML boolean (`true`, `false`), never text that reads like
one (`"true"`), which would be a value the file's writer did not mean as written."""
