"""The cap on one text stored in a record. A model (or a faulty server) can send an answer of tens
of megabytes, and a record keeps the answer twice (the transcript's assistant message and the turn's
`response`) besides reasoning, tool output and call arguments: without a cap, two tasks made
210 MB of records. `cap_trajectory` cuts every such text longer than `MAX_STORED_TEXT` characters
to its head and tail around a marker that says how much was cut. It runs before scoring, so a score
computed during the run and a re-score of the stored record read the same text."""

from __future__ import annotations

from toolsight.log.messages import TextPart
from toolsight.log.trajectory import Trajectory

#: the most characters of one text a record keeps (an answer, reasoning, tool output, arguments)
MAX_STORED_TEXT = 1_000_000


def cap_text(text: str, limit: int = MAX_STORED_TEXT) -> str:
    """`text`, or its first and last `limit // 2` characters around a marker naming the cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[… {cut:,} characters cut: a record keeps at most {limit:,} of one text …]\n{text[-half:]}"


def cap_trajectory(traj: Trajectory, limit: int = MAX_STORED_TEXT) -> int:
    """Cap, in place, every model- or tool-written text of `traj`; the number of texts cut."""
    cut = 0

    def cap(text: str) -> str:
        nonlocal cut
        if len(text) <= limit:
            return text
        cut += 1
        return cap_text(text, limit)

    for msg in traj.messages:
        for part in msg.content:
            if isinstance(part, TextPart):
                part.text = cap(part.text)
        if msg.reasoning is not None:
            msg.reasoning = cap(msg.reasoning)
        for call in msg.tool_calls:
            call.arguments = cap(call.arguments)
    for turn in traj.turns:
        turn.response = cap(turn.response)
        if turn.scored_response is not None:
            turn.scored_response = cap(turn.scored_response)
        if turn.answer is not None:
            turn.answer = cap(turn.answer)
    for rec in traj.tool_calls:
        rec.text = cap(rec.text)
        rec.arguments = cap(rec.arguments)
    return cut
