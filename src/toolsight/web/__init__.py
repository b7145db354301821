"""The web layer: search, page text, reverse image search and fetched bytes behind one interface.

`WebSession` (see `session.py`) is what tools use; backends are live (`live.py`), offline corpus
(`offline.py`, `corpus.py`, `server.py`) and record/replay (`cassette.py`). `docs/web.md` has the
full story, including how to add a tool of your own on top of a session.
"""

from toolsight.web.policy import Limits
from toolsight.web.session import (
    HOSTED_PREFIX,
    WebSession,
    current_session,
    maybe_session,
    open_session,
    parse_web_spec,
    use_session,
)
from toolsight.web.types import (
    BudgetExceeded,
    Fetched,
    ImageHit,
    PageText,
    ReplayMiss,
    SearchHit,
    UrlRefused,
    WebCallError,
    WebError,
)

__all__ = [
    "HOSTED_PREFIX",
    "BudgetExceeded",
    "Fetched",
    "ImageHit",
    "Limits",
    "PageText",
    "ReplayMiss",
    "SearchHit",
    "UrlRefused",
    "WebCallError",
    "WebError",
    "WebSession",
    "current_session",
    "maybe_session",
    "open_session",
    "parse_web_spec",
    "use_session",
]
