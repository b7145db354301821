"""VisBrowse-Bench scoring and data decryption.

Decryption (reference `decrypt_data.py`): key = SHA-256(canary) digest repeated to the ciphertext
length; plaintext = base64-decode(ciphertext) XOR key, UTF-8. Applied to `question` and to each
element of `answer`.

Scoring (reference `eval.py` + the answer regex of `infer.py`), in `toolsight.scoring.semantic`:
- `official`: the answer is the **first** `<answer>(.*?)</answer>` match (DOTALL, case-sensitive,
  not stripped); no match → the sentinel `'No answer'` (wrong, no judge call); exact raw match with
  the gold (several golds joined with "; ") → right; otherwise the judge, right only on a reply
  of exactly `'yes'`.
- `corrected`: the last complete `<answer>` pair, stripped (no tag → no answer); whitespace/case
  normalised shortcut; judge reply read case-insensitively; unreadable replies → `Score.error`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from toolsight.errors import ToolsightError
from toolsight.scoring.extract import answer_tag
from toolsight.scoring.semantic import Mode, SemanticJudgeScorer

_FIRST_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


class VisBrowseDataError(ToolsightError, ValueError):
    """A VisBrowse-Bench record that cannot be decrypted (bad base64, wrong canary, bad field)."""


def derive_key(password: str, length: int) -> bytes:
    """SHA-256(password) repeated and cut to `length` bytes."""
    key = hashlib.sha256(password.encode()).digest()
    return key * (length // len(key)) + key[: length % len(key)]


def decrypt(ciphertext_b64: str, password: str) -> str:
    """One field: base64-decode, XOR with the derived key, UTF-8 decode."""
    try:
        encrypted = base64.b64decode(ciphertext_b64)
    except (binascii.Error, ValueError) as exc:
        raise VisBrowseDataError(f"not valid base64 ({exc})") from None
    key = derive_key(password, len(encrypted))
    try:
        return bytes(a ^ b for a, b in zip(encrypted, key, strict=True)).decode()
    except UnicodeDecodeError:
        raise VisBrowseDataError("decrypted bytes are not UTF-8: wrong canary, or the field is not encrypted") from None


def decrypt_record(record: dict[str, Any], where: str = "record") -> dict[str, Any]:
    """A copy of one JSONL record with `question` and every `answer` decrypted with its `canary`."""
    for key in ("canary", "question", "answer"):
        if key not in record:
            raise VisBrowseDataError(f"{where}: missing field {key!r}")
    if not isinstance(record["answer"], list) or not all(isinstance(a, str) for a in record["answer"]):
        raise VisBrowseDataError(f"{where}: 'answer' must be a list of strings")
    out = dict(record)
    password = str(record["canary"])
    try:
        out["question"] = decrypt(str(record["question"]), password)
        out["answer"] = [decrypt(a, password) for a in record["answer"]]
    except VisBrowseDataError as exc:
        raise VisBrowseDataError(f"{where} (id {record.get('id')}): {exc}") from None
    return out


def load_decrypted(path: Path) -> list[dict[str, Any]]:
    """Every record of an encrypted VisBrowse-Bench JSONL file, decrypted (errors name file and line)."""
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise VisBrowseDataError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise VisBrowseDataError(f"{path}:{n}: expected a JSON object")
            rows.append(decrypt_record(rec, f"{path}:{n}"))
    return rows


def official_extract(response: str) -> str | None:
    """`infer.py`: group 1 of the first `<answer>(.*?)</answer>` (DOTALL), unstripped; None if absent."""
    m = _FIRST_TAG.search(response)
    return m.group(1) if m else None


def make_scorer(mode: Mode = "official") -> SemanticJudgeScorer:
    """The VisBrowse-Bench scorer in `official` or `corrected` mode."""
    return SemanticJudgeScorer(mode=mode, name="visbrowse",
                               extract=official_extract if mode == "official" else answer_tag)


SCORERS = {"visbrowse": make_scorer}
