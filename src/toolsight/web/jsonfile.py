"""Reading the web layer's JSON files (a corpus's manifest.json, its weather.json) into pydantic models.

Every problem is one `WebError` naming the file and the line (bad JSON) or the field (bad content),
never a traceback, so a user can fix a hand-written corpus file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from toolsight.web.types import WebError

M = TypeVar("M", bound=BaseModel)


def read_model(path: Path, model: type[M], hint: str = "") -> M:
    """`path` parsed and checked as `model`; `hint` ends the message for a field problem (e.g. where the
    format is documented)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise WebError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except OSError as exc:
        raise WebError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(x) for x in e["loc"])
        raise WebError(f"{path}: {loc}: {e['msg']} ({len(exc.errors())} problem(s)){hint}") from None
