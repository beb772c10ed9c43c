"""What TYPE puts into a typed input: the value as the task words it, in the input's format.

A browser's ``<input type="date">`` takes only ``YYYY-MM-DD`` (Playwright refuses anything
else, and a page's script setting ``value`` to ``02/04/2012`` leaves the field empty without
a word), ``type="time"`` only ``HH:MM[:SS]``, ``type="number"`` only a number. A task says
"Enter 02/04/2012 as the date" or "9:37 PM". :func:`input_value` converts such a value to the
input's format, or raises :class:`InvalidValue` with a reason the agent reads in its next
prompt. Pure: the executor (Playwright) and the BrowserGym mapping both use it. Text fields
are typed key by key (:func:`keyed`), since some pages read the keys, not the value.

Dates are read as people in the tasks write them: ``MM/DD/YYYY`` (a first number over 12 is
the day: ``DD/MM/YYYY``), ``YYYY-MM-DD``, ``YYYY/MM/DD``, ``DD.MM.YYYY``, and with month
names (``February 4, 2012``, ``4 Feb 2012``). Two-digit years are 19xx above 50, else 20xx.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, time

#: the input types whose value has a format of its own
TYPED_INPUTS = frozenset({"date", "time", "datetime-local", "month", "week", "number", "range"})
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_NUMERIC_DATE = re.compile(r"^(\d{1,4})\s*([/.\-])\s*(\d{1,2})\s*\2\s*(\d{1,4})$")
_WORDS = re.compile(r"[a-z]+|\d+", re.I)
_TIME = re.compile(
    r"^(\d{1,2})(?:\s*[:.h]\s*(\d{2}))?(?:\s*:\s*(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?$", re.I
)
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")
_MONTH_VALUE = re.compile(r"^(\d{4})-(\d{2})$")
_WEEK_VALUE = re.compile(r"^(\d{4})-W(\d{2})$", re.I)


#: the inputs a TYPE types into key by key (the others are filled, in their format)
KEYED_INPUTS = frozenset({"text", "search", "email", "url", "tel", "password", ""})


def keyed(tag: str, input_type: str, value: str) -> bool:
    """Whether TYPE types ``value`` key by key (a text field, a text area, an editable
    element: pages may listen for the keys) rather than filling it (a typed input, or a line
    break in a one-line field, where the Enter key would submit the form)."""
    if tag == "input":
        return input_type in KEYED_INPUTS and "\n" not in value and "\r" not in value
    return True  # a textarea or an editable element


class InvalidValue(ValueError):
    """A value the input cannot hold, with the format it wants, in words for the agent."""


def input_value(input_type: str, value: str) -> str:
    """``value`` in the format of an ``<input type=input_type>`` (other types: as it is)."""
    kind = input_type.strip().lower()
    convert = _CONVERTERS.get(kind)
    if convert is None or value == "":
        return value  # a text field takes what was written; an empty value clears any field
    try:
        return convert(value.strip())
    except InvalidValue:
        raise
    except ValueError as exc:  # an impossible date or time: 02/30/2012, 25:00
        raise InvalidValue(f"{value!r} is not a valid {kind}: {exc}") from exc


def _date(value: str) -> str:
    return _parse_date(value).isoformat()


def _parse_date(value: str) -> date:
    numeric = _NUMERIC_DATE.match(value)
    if numeric:
        first, separator, second, third = numeric.groups()
        return _numeric_date(int(first), int(second), third, separator, len(first) == 4)
    words = _WORDS.findall(value.lower())
    month = next((_MONTHS[w] for w in words if w in _MONTHS), None)
    numbers = [int(w) for w in words if w.isdigit()]
    if month is None or len(numbers) != 2:
        raise InvalidValue(
            f'{value!r} is not a date: write it as MM/DD/YYYY, YYYY-MM-DD or "February 4, 2012"'
        )
    day, year = (numbers[0], numbers[1]) if numbers[0] <= 31 else (numbers[1], numbers[0])
    return date(_year(str(year)), month, day)


def _numeric_date(first: int, second: int, third: str, separator: str, iso: bool) -> date:
    if iso:  # YYYY-MM-DD, YYYY/MM/DD
        return date(first, second, int(third))
    if separator == "." or (first > 12 >= second):  # DD.MM.YYYY, or a day that must be first
        return date(_year(third), second, first)
    return date(_year(third), first, second)  # MM/DD/YYYY, as US forms and MiniWoB write it


def _year(text: str) -> int:
    year = int(text)
    if len(text) <= 2:
        return year + (1900 if year > 50 else 2000)
    return year


def _parse_time(value: str) -> time:
    match = _TIME.match(value.strip())
    if not match:
        raise InvalidValue(f'{value!r} is not a time: write it as HH:MM (24 h) or "9:37 PM"')
    hours, minutes, seconds, half = match.groups()
    hour = int(hours)
    if half:
        if not 1 <= hour <= 12:
            raise InvalidValue(f"{value!r}: with AM/PM the hour is 1 to 12")
        hour = hour % 12 + (12 if half.lower().startswith("p") else 0)
    return time(hour, int(minutes or 0), int(seconds or 0))


def _time(value: str) -> str:
    parsed = _parse_time(value)
    return parsed.isoformat("seconds" if parsed.second else "minutes")


def _datetime(value: str) -> str:
    parts = re.split(r"\s*(?:T|,|\bat\b)\s*|\s+(?=\d{1,2}[:.]\d{2})", value.strip(), maxsplit=1)
    if len(parts) != 2:
        raise InvalidValue(f'{value!r} is not a date and time: write it as "MM/DD/YYYY HH:MM"')
    return f"{_parse_date(parts[0]).isoformat()}T{_time(parts[1])}"


def _month(value: str) -> str:
    if _MONTH_VALUE.match(value):
        return value
    words = _WORDS.findall(value.lower())
    month = next((_MONTHS[w] for w in words if w in _MONTHS), None)
    numbers = [w for w in words if w.isdigit()]
    if month is None and len(numbers) == 2:  # 02/2012
        month, numbers = int(numbers[0]), numbers[1:]
    if month is None or len(numbers) != 1 or not 1 <= month <= 12:
        raise InvalidValue(f'{value!r} is not a month: write it as YYYY-MM or "February 2012"')
    return f"{_year(numbers[0]):04d}-{month:02d}"


def _week(value: str) -> str:
    match = _WEEK_VALUE.match(value)
    if not match:
        raise InvalidValue(f"{value!r} is not a week: write it as YYYY-Www, e.g. 2012-W05")
    return f"{match.group(1)}-W{match.group(2)}"


def _number(value: str) -> str:
    text = value.replace(" ", "")
    if _THOUSANDS.match(text):  # 1,000.5
        text = text.replace(",", "")
    if not _NUMBER.match(text):
        raise InvalidValue(f"{value!r} is not a number: this field takes digits only")
    return text


_CONVERTERS: dict[str, Callable[[str], str]] = {
    "date": _date,
    "time": _time,
    "datetime-local": _datetime,
    "month": _month,
    "week": _week,
    "number": _number,
    "range": _number,
}
