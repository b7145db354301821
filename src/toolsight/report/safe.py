"""Neutralising model- and tool-supplied strings for the report formats that are not HTML.

A model can name a tool `<svg onload=…>` or `=HYPERLINK(…)`, and answers carry `|` and backticks:
markdown cells get them escaped (`tables.md_escape`), CSV cells that a spreadsheet would run as a
formula get a leading apostrophe (OWASP's advice for CSV injection). HTML goes through jinja2's
autoescape or `html.escape`.
"""

from __future__ import annotations

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def csv_cell(value: object) -> object:
    """A value safe to write into a CSV cell: strings a spreadsheet would evaluate get a leading `'`.

    Numbers (also negative ones, e.g. a delta of -3.2) are left alone: they are data, not formulas.
    """
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _is_number(value):
        return "'" + value
    return value
