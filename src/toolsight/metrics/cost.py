"""What a run's tokens cost: a price table per model and the cost of each call, with the saving.

toolsight ships a price table (`prices.toml` beside this module: list prices in USD per million
tokens, each with the date it was checked and its source — stored copies of the providers' pricing
pages, not the live pages; its header says which). A
user's file (`--prices FILE`, JSON or TOML) merges over it model by model: a field it gives replaces
the built-in one, a model it adds must give `input` and `output`. A model matches by its full name
(`anthropic/claude-sonnet-4-5`), then by the part after the provider prefix, then without a date or
`-latest` suffix (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`).

The cost of one call (`call_cost`), with *U* = input tokens not read from or written to the cache:

    (U × input + cache reads × cached_input + cache writes × cache_write + output × output) / 10⁶

times (1 − batch_discount) for a call sent through a batch API — except its cache reads, priced at
`batch_cached_input` when the table gives it (Gemini's batch mode bills cache hits at the on-line cache
price, with no batch discount); plus, undiscounted, `container` for each hosted code-interpreter
container the call's reply named (OpenAI's `code_interpreter`: TIR-Bench's hosted rows). Output
includes reasoning tokens, as
providers bill them. A call replayed from toolsight's own response cache reached no provider and
costs nothing. The *list cost* of the same tokens (`list_cost`) is what they would cost on-line
without any cache: (all input × input + output × output) / 10⁶, plus its containers; the saving is list cost − cost,
split into what the prompt cache saved and what the batch discount saved (`Costing`).
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from toolsight.errors import ToolsightError

PER_TOKENS = 1_000_000
BUILTIN = "prices.toml"


class PriceError(ToolsightError, ValueError):
    """A price table that cannot be read (the message names the file, model and field)."""


class Price(BaseModel):
    """A model's prices in USD per million tokens."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    input: float = Field(ge=0, description="uncached input")
    output: float = Field(ge=0, description="output (reasoning included)")
    cached_input: float | None = Field(default=None, ge=0, validation_alias=AliasChoices("cached_input", "cache_read"),
                                       description="input read from the prompt cache (None: input's price)")
    cache_write: float | None = Field(default=None, ge=0, description="input written to the prompt cache "
                                      "(None: input's price)")
    batch_discount: float = Field(default=0.0, ge=0, le=1, description="share taken off a batch call (0.5: half)")
    batch_cached_input: float | None = Field(default=None, ge=0, description="input read from the prompt cache "
                                             "in a batch call (None: cached_input less batch_discount)")
    container: float | None = Field(default=None, ge=0, description="USD per hosted code-interpreter container "
                                    "a reply names (None: not priced)")
    taken: date | None = Field(default=None, description="when these prices were read")
    source: str | None = Field(default=None, description="where they were read")


PriceTable = Mapping[str, Price]


@dataclass(frozen=True)
class CallTokens:
    """The billed tokens of one model call (`input` counts all input, cache reads and writes included)."""

    model: str
    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0
    batch: bool = False
    replayed: bool = False  # served by toolsight's response cache: no provider saw it
    containers: int = 0  # hosted code-interpreter containers the reply named (billed per container)


def call_cost(price: Price, t: CallTokens) -> float:
    """What the call cost (see the module docstring)."""
    if t.replayed:
        return 0.0
    if not t.batch:
        return _online(price, t)
    off = 1 - price.batch_discount
    if price.batch_cached_input is None:
        return _tokens(price, t) * off + _fees(price, t)
    rest = _tokens(price, CallTokens(t.model, t.input - t.cache_read, t.output, 0, t.cache_write))
    return rest * off + t.cache_read * price.batch_cached_input / PER_TOKENS + _fees(price, t)


def _fees(price: Price, t: CallTokens) -> float:
    """What the call cost besides tokens: its hosted containers (never batch-discounted)."""
    return t.containers * price.container if t.containers and price.container else 0.0


def _online(price: Price, t: CallTokens) -> float:
    return _tokens(price, t) + _fees(price, t)


def _tokens(price: Price, t: CallTokens) -> float:
    read, write = t.cache_read, t.cache_write
    plain = max(0, t.input - read - write)
    cached = price.input if price.cached_input is None else price.cached_input
    written = price.input if price.cache_write is None else price.cache_write
    return (plain * price.input + read * cached + write * written + t.output * price.output) / PER_TOKENS


def list_cost(price: Price, t: CallTokens) -> float:
    """What the same call costs on-line without any cache (0 for a replayed call)."""
    if t.replayed:
        return 0.0
    return (t.input * price.input + t.output * price.output) / PER_TOKENS + _fees(price, t)


class Costing(BaseModel):
    """The cost of a set of calls, and what caching and batching saved against the list cost."""

    cost_usd: float = 0.0
    list_cost_usd: float = Field(default=0.0, description="the same tokens on-line, without any cache")
    cache_saving_usd: float = Field(default=0.0, description="list cost − cost on-line with the cache")
    batch_saving_usd: float = Field(default=0.0, description="cost on-line with the cache − cost")
    calls: int = 0
    priced_calls: int = 0
    batch_calls: int = 0
    replayed_calls: int = Field(default=0, description="served by toolsight's response cache (cost 0)")
    unpriced_models: list[str] = Field(default_factory=list, description="models of calls with no price")

    @property
    def saving_usd(self) -> float:
        return self.cache_saving_usd + self.batch_saving_usd

    def add(self, other: Costing) -> None:
        self.cost_usd += other.cost_usd
        self.list_cost_usd += other.list_cost_usd
        self.cache_saving_usd += other.cache_saving_usd
        self.batch_saving_usd += other.batch_saving_usd
        self.calls += other.calls
        self.priced_calls += other.priced_calls
        self.batch_calls += other.batch_calls
        self.replayed_calls += other.replayed_calls
        self.unpriced_models = sorted(set(self.unpriced_models) | set(other.unpriced_models))


def cost_of(calls: Iterable[CallTokens], prices: PriceTable) -> Costing:
    """The cost of `calls` under `prices`; calls of a model without a price are counted, not priced."""
    c = Costing()
    unpriced: set[str] = set()
    for t in calls:
        c.calls += 1
        c.batch_calls += t.batch
        c.replayed_calls += t.replayed
        price = price_for(t.model, prices)
        if price is None:
            unpriced.add(t.model)
            continue
        c.priced_calls += 1
        if t.replayed:
            continue
        online = _online(price, t)
        paid = call_cost(price, t)
        c.cost_usd += paid
        c.list_cost_usd += list_cost(price, t)
        c.cache_saving_usd += list_cost(price, t) - online
        c.batch_saving_usd += online - paid
    c.unpriced_models = sorted(unpriced)
    return c


_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def price_for(model: str, prices: PriceTable | None) -> Price | None:
    """The price of `model`: by full name, by the name after the provider prefix, then undated."""
    if not prices:
        return None
    short = model.split("/", 1)[-1]
    for name in (model, short, _DATED.sub("", model), _DATED.sub("", short)):
        if name in prices:
            return prices[name]
    by_short = {k.split("/", 1)[-1]: v for k, v in prices.items()}
    return by_short.get(short) or by_short.get(_DATED.sub("", short))


def cost_usd(price: Price, input_tokens: int, output_tokens: int) -> float:
    """Input and output tokens priced on-line without cache (the list cost of one call)."""
    return list_cost(price, CallTokens("", input_tokens, output_tokens))


# --- reading tables -----------------------------------------------------------------------------

def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PriceError(f"price table not found: {path}") from None
    except OSError as exc:
        raise PriceError(f"price table {path}: cannot read it ({exc.strerror})") from None
    if path.suffix.lower() == ".toml":
        try:
            raw: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PriceError(f"{path}: not valid TOML ({exc})") from None
    else:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PriceError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(raw, dict):
        raise PriceError(f"{path}: expected a table of models, e.g. {{\"openai/gpt-4o\": {{\"input\": 2.5, "
                         "\"output\": 10}}")
    return raw


def _entries(raw: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(defaults, model -> raw entry): a TOML table's `[defaults]` and `[models.NAME]`, or a flat JSON map."""
    found_defaults, found_models = raw.get("defaults"), raw.get("models")
    defaults: dict[str, Any] = found_defaults if isinstance(found_defaults, dict) else {}
    models: dict[str, Any] = found_models if isinstance(found_models, dict) else {
        k: v for k, v in raw.items() if k != "defaults"}
    for model, entry in models.items():
        if not isinstance(entry, dict):
            raise PriceError(f"{where}: {model}: expected a table of prices (input, output, ...), got {entry!r}")
    return dict(defaults), models


def _validate(entry: dict[str, Any], where: str, model: str) -> Price:
    try:
        return Price.model_validate(entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "(entry)"
        raise PriceError(f"{where}: {model}: {field}: {err['msg']} (prices are USD per million tokens; fields: "
                         "input, output, cached_input, cache_write, batch_discount, batch_cached_input, container, taken, source)") from None


@functools.cache
def builtin_table() -> Mapping[str, Price]:
    """The built-in table, read once (do not change it: `builtin_prices()` returns a copy)."""
    return builtin_prices()


def builtin_prices() -> dict[str, Price]:
    """toolsight's own table (prices.toml)."""
    text = resources.files("toolsight.metrics").joinpath(BUILTIN).read_text(encoding="utf-8")
    defaults, models = _entries(tomllib.loads(text), BUILTIN)
    return {m: _validate({**defaults, **e}, BUILTIN, m) for m, e in models.items()}


def load_prices(path: Path | None = None, *, builtin: bool = True) -> dict[str, Price]:
    """The built-in table with `path` merged over it (per model, field by field); `builtin=False`
    reads `path` alone. Errors name the file, the model and the field."""
    table = builtin_prices() if builtin else {}
    if path is None:
        return table
    defaults, models = _entries(_read(path), str(path))
    for model, entry in models.items():
        base = table.get(model)
        kept = base.model_dump(exclude_none=True, exclude_defaults=True) if base else {}
        if set(entry) - {"taken", "source"}:  # new prices: the built-in date and source no longer describe them
            kept = {k: v for k, v in kept.items() if k not in ("taken", "source")}
        merged = {**kept, **defaults, **entry}
        table[model] = _validate(merged, str(path), model)
    return table
