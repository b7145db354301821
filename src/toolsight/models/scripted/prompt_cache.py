"""The scripted server's prompt cache: cached input tokens reported the way each provider reports them.

One `PromptCache` per server remembers the prefixes of the requests it has served (as hashes of the
request's pieces in order — tools, system prompt, then messages — with their token counts from
tokens.py) and splits each new request's input tokens into cached and uncached:

- **OpenAI** (Chat Completions `usage.prompt_tokens_details.cached_tokens`, Responses
  `usage.input_tokens_details.cached_tokens`): automatic. For a prompt of at least 1024 tokens, the
  longest prefix (in whole messages) an earlier request sent, rounded down to a multiple of 128
  tokens; 0 when that prefix is shorter than 1024 tokens. Prompt tokens still count every token.
- **Anthropic** (`cache_read_input_tokens`, `cache_creation_input_tokens`, `input_tokens` the rest):
  only at `cache_control` breakpoints (content blocks, system blocks or tools that carry one). A
  request reads the longest stored prefix that ends at one of its breakpoints or at most 20 blocks
  before one (Anthropic's look-back); it writes the prefix up to its last breakpoint when that is at
  least 1024 tokens (the cache write counts the tokens after what it read). Without breakpoints
  nothing is cached. A change of `tool_choice` (absent = `auto`) invalidates the message blocks but
  not the tools and system prompt before them, as Anthropic documents.
- **Gemini** (`usageMetadata.cachedContentTokenCount`): implicit. The longest earlier prefix (in
  whole contents) when it is at least 1024 tokens, not rounded.

The cache never expires (a test or bench run is shorter than the providers' 5-minute lifetimes) and
prefixes are per model name. Pieces are compared exactly: one changed byte in an earlier message, or
an image sent in a different size, ends the shared prefix there — which is what the toolsight loop's
prefix-stability tests rely on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from toolsight.models.scripted.tokens import node_tokens

#: the shortest prefix a provider caches
MIN_CACHED_TOKENS = 1024
#: OpenAI caches in steps of this many tokens beyond the minimum
OPENAI_STEP = 128
#: how many blocks before a breakpoint Anthropic looks for an earlier cache entry
ANTHROPIC_LOOKBACK = 20
#: framing tokens per message (as `tokens.request_tokens` counts them)
_FRAMING = 4


@dataclass(frozen=True)
class CacheUse:
    """Of a request's input tokens: how many were read from the cache, how many written to it."""

    read: int = 0
    write: int = 0


@dataclass(frozen=True)
class _Piece:
    digest: str  # hash of the prefix that ends with this piece
    tokens: int  # tokens of the prefix that ends with this piece
    breakpoint: bool  # an Anthropic `cache_control` mark on this piece


@dataclass(frozen=True)
class _ToolChoice:
    """Anthropic's `tool_choice` as a piece of the cache order: hashed, but no tokens of the prompt."""

    value: Any


def _plain(node: Any) -> bytes:
    """A piece as bytes to hash, without its cache mark (marks move; the content is what is cached)."""
    if isinstance(node, _ToolChoice):
        return b"tool_choice:" + orjson.dumps(node.value, option=orjson.OPT_SORT_KEYS)
    if isinstance(node, dict) and "cache_control" in node:
        node = {k: v for k, v in node.items() if k != "cache_control"}
    return orjson.dumps(node, option=orjson.OPT_SORT_KEYS)


def _marked(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("cache_control"), dict)


def _layout(body: dict[str, Any], wire: str) -> list[tuple[Any, int]]:
    """The request's pieces in cache order, each with the framing tokens counted before it.

    Anthropic pieces are content blocks (breakpoints sit on blocks); the others are whole messages."""
    out: list[tuple[Any, int]] = []
    for tool in body.get("tools") or []:
        out.append((tool, 0))
    system = body.get("system") or body.get("systemInstruction") or body.get("system_instruction") \
        or body.get("instructions")
    if isinstance(system, list):
        out.extend((b, 0) for b in system)
    elif system is not None:
        out.append((system, 0))
    if wire == "anthropic":  # only what follows it (the messages) depends on it
        out.append((_ToolChoice(body.get("tool_choice") or {"type": "auto"}), 0))
    messages = body.get("messages") or body.get("contents") or body.get("input") or []
    if isinstance(messages, str):
        return [*out, (messages, 0)]
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if wire == "anthropic" and isinstance(content, list) and content:
            out.append((content[0], _FRAMING))
            out.extend((b, 0) for b in content[1:])
        else:
            out.append((m, _FRAMING if wire != "responses" else 0))
    return out


class PromptCache:
    """The prefixes one scripted server has seen; `use()` splits a request's input tokens."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}  # prefix digest -> its tokens

    def _pieces(self, body: dict[str, Any], wire: str, model: str) -> list[_Piece]:
        h = hashlib.sha256(f"{wire}\x00{model}\x00".encode())
        tokens = 0
        out: list[_Piece] = []
        for node, framing in _layout(body, wire):
            h.update(_plain(node))
            h.update(b"\x00")
            if not isinstance(node, _ToolChoice):
                tokens += framing + node_tokens(node, "openai" if wire == "responses" else wire, model)
            out.append(_Piece(h.copy().hexdigest(), tokens, _marked(node)))
        return out

    def use(self, body: dict[str, Any], wire: str, model: str, total: int) -> CacheUse:
        """What this request reads from and writes to the cache (`total`: its input tokens)."""
        pieces = self._pieces(body, wire, model)
        if wire == "anthropic":
            return self._anthropic(pieces, total)
        hit = max((self._seen.get(p.digest, 0) for p in pieces), default=0)
        for p in pieces:
            self._seen[p.digest] = p.tokens
        if hit < MIN_CACHED_TOKENS or total < MIN_CACHED_TOKENS:
            return CacheUse()
        if wire in ("openai", "responses"):
            hit = hit // OPENAI_STEP * OPENAI_STEP
        return CacheUse(read=min(hit, total))

    def _anthropic(self, pieces: list[_Piece], total: int) -> CacheUse:
        marks = [i for i, p in enumerate(pieces) if p.breakpoint]
        if not marks:
            return CacheUse()
        read = 0
        for i in marks:
            for j in range(i, max(-1, i - ANTHROPIC_LOOKBACK - 1), -1):
                read = max(read, self._seen.get(pieces[j].digest, 0))
        last = pieces[marks[-1]]
        write = 0
        if last.tokens >= MIN_CACHED_TOKENS and last.tokens > read:
            write = last.tokens - read
        for i in marks:
            if pieces[i].tokens >= MIN_CACHED_TOKENS:
                self._seen[pieces[i].digest] = pieces[i].tokens
        read, write = min(read, total), min(write, max(0, total - read))
        return CacheUse(read=read, write=write)
