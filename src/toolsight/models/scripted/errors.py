"""Error replies of the scripted server in each provider's shape (on-line and batch endpoints)."""

from __future__ import annotations

from typing import Any


def error_body(wire: str, status: int) -> dict[str, Any]:
    msg = f"scripted error {status}"
    if wire == "anthropic":
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": msg}}
    if wire == "google":
        st = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
        return {"error": {"code": status, "message": msg, "status": st}}
    return {"error": {"message": msg, "type": "scripted_error", "code": status}}
