"""Query parameters as Pydantic models, one per route family (FastAPI's query parameter
models). Every model forbids extra fields, so a parameter a route does not take is FastAPI's
own 422, which ``api.errors`` words with the accepted names and the closest one.

Repeatable filters accept ``a=x&a=y`` and ``a=x,y`` alike (``listed``); values from a closed
vocabulary are checked case-insensitively (``choice``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, model_validator

from api.responses import Format
from warehouse.exceptions import QueryError
from warehouse.model.vocabulary import (
    AVAILABILITY,
    DIVISIONS,
    OFFERS,
    OPERATING_SYSTEMS,
    PRICE_BASES,
    PRICE_SOURCES,
    PRICE_STATUSES,
    PRICE_TYPES,
    SCENARIOS,
    Evidence,
    RunStatus,
    identity_text,
)
from warehouse.queries import ResultFilter
from warehouse.queries.builders import one_of, string_schema

# Values one repeatable parameter may carry (after splitting commas and dropping repeats):
# enough for any dashboard, and a bound on what one request makes a worker build.
MAX_VALUES = 50
# Tighter where each value multiplies the rows computed (every rate is a set of cost rows).
VALUE_CAPS = {"rate": 10}


class Params(BaseModel):
    """A route's query parameters: nothing else is accepted. A repeatable parameter's values
    (``a=x&a=y`` or ``a=x,y``) are split on commas, read as ``identity_text`` (NFKC, zero-width
    and bidi controls removed, stripped: as the parsers store names), repeats dropped (first
    kept) and counted: more than ``MAX_VALUES`` (``VALUE_CAPS`` for some) is a 422 naming the
    cap."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _bounded_lists(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name, value in data.items():
            if not isinstance(value, list):
                continue
            items = list(dict.fromkeys(identity_text(v) for item in value
                                       for v in str(item).split(",") if identity_text(v)))
            cap = VALUE_CAPS.get(name, MAX_VALUES)
            if len(items) > cap:
                raise QueryError(f"{name}: at most {cap} values in one request (got "
                                 f"{len(items)}); ask in several", param=name)
            out[name] = items
        return out


class NoParams(Params):
    """A route that takes no query parameter (any one is refused)."""


NoQuery = Annotated[NoParams, Query()]


def listed(values: list[str] | None) -> list[str]:
    """A repeatable filter as a list (the model already split its commas: ``Params``)."""
    return values or []


def check_choice(name: str, values: list[str], allowed: tuple[str, ...] | list[str]) -> list[str]:
    """Normalise values against a closed vocabulary set (case-insensitive); 422 naming the
    accepted ones."""
    by_key = {v.lower(): v for v in allowed}
    out = []
    for v in values:
        key = v.strip().lower()
        if key not in by_key:
            raise QueryError(f"{name}: {v!r} is not one of {', '.join(sorted(allowed))}",
                             param=name)
        out.append(by_key[key])
    return out


# The closed sets API parameters accept: the vocabulary's, nothing spelled here.
CHOICES: dict[str, tuple[str, ...]] = {
    "division": DIVISIONS, "availability": AVAILABILITY, "scenario": SCENARIOS,
    "offer": OFFERS, "os": OPERATING_SYSTEMS, "type": PRICE_TYPES, "basis": PRICE_BASES,
    "evidence": tuple(e.value for e in Evidence), "price_status": PRICE_STATUSES,
    "status": tuple(s.value for s in RunStatus), "source": PRICE_SOURCES,
}


def vocab(name: str, description: str, default: Any = None) -> Any:
    """A parameter from the closed set ``CHOICES[name]`` (read with ``choice``), listed in the
    OpenAPI schema."""
    return one_of(CHOICES[name], description, default)


def choice(name: str, values: list[str] | None) -> list[str]:
    """A repeatable parameter checked against its vocabulary set (``CHOICES[name]``)."""
    return check_choice(name, listed(values), CHOICES[name])


def bounded(name: str, low: float | None, high: float | None) -> None:
    """A 422 when ``min_<name>`` is above ``max_<name>`` (an answer no row could meet, not an
    empty page)."""
    if low is not None and high is not None and low > high:
        raise QueryError(f"min_{name} {low:g} is above max_{name} {high:g}", param=f"min_{name}")


def one_price_place(provider: bool, region: bool) -> None:
    """A 422 naming region when both are given: ``region`` picks an Azure region, ``provider``
    prices each provider at its cheapest region."""
    if provider and region:
        raise QueryError("region: not with provider (a provider is priced at its cheapest "
                         "region; region picks an Azure region without provider)",
                         param="region")


def buyer_choice(name: str, values: list[str] | None, default: str,
                 allowed: tuple[str, ...] | list[str] | None = None) -> list[str]:
    """A division/availability filter of a route that ranks systems: ``default`` (what a buyer
    can get) when absent, everything for ``all``; any other value one of ``allowed`` (the
    vocabulary of ``name`` unless given)."""
    given = listed(values)
    if not given:
        return [default]
    checked = check_choice(name, [v for v in given if v.strip().lower() != "all"],
                           CHOICES[name] if allowed is None else allowed)
    return [] if len(checked) < len(given) else checked


@dataclass
class Page:
    """Pagination, sorting, column selection and format of a list request."""

    limit: int
    offset: int
    sort: list[str]
    columns: list[str] | None
    format: Format | None
    csv_escape: bool = True


class PageParams(Params):
    """Pagination, sort, columns and format: every list route takes these."""

    limit: int = Field(100, ge=1, description="Rows per page (at most the server's "
                       "api_max_limit, 1000 by default).")
    offset: int = Field(0, ge=0, le=1_000_000_000, description="Rows to skip.")
    sort: list[str] | None = Field(None, description="Sort keys, repeatable or comma-separated; "
                                   "'-' for descending, e.g. sort=-ratio.")
    columns: list[str] | None = Field(None, description="Columns to return, repeatable or "
                                      "comma-separated (default: all).")
    format: Format | None = Field(None, description="json (default), csv, ndjson or parquet; "
                                  "Accept: text/csv etc. works too.")
    csv_raw: bool = Field(False, description="CSV: text cells as they are. By default a text "
                          "starting with = + - @, tab or CR gets a leading apostrophe, so a "
                          "spreadsheet shows it as text instead of running it as a formula.")

    def page(self, max_limit: int) -> Page:
        """The page asked for; a limit over ``max_limit`` is a 422 saying how to page."""
        if self.limit > max_limit:
            raise QueryError(f"limit must be at most {max_limit} (got {self.limit}); page with "
                             "offset or the next link", param="limit")
        return Page(limit=self.limit, offset=self.offset, sort=self.sort or [],
                    columns=self.columns or None, format=self.format,
                    csv_escape=not self.csv_raw)


# The ISO 8601 forms ``as_of`` takes (``api.routes.common.parse_as_of``), for the schema of
# clients that check a value before sending it: calendar days from 1970 on, an optional time
# and offset. Every value the server answers matches; 29 February matches in any year (a
# pattern cannot tell leap years), so 2023-02-29 matches and is then refused with a 422, as are
# days past 9999-12-30.
AS_OF_PATTERN = (r"^(19[7-9][0-9]|[2-9][0-9]{3})-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-9])|"
                 r"(0[13-9]|1[0-2])-30|(0[13578]|1[02])-31)([T ]([01][0-9]|2[0-3]):[0-5]"
                 r"[0-9](:[0-5][0-9](\.[0-9]{1,6})?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?)?$")


def as_of_param(description: str) -> Any:
    """An optional ``as_of`` parameter: a date or time (``AS_OF_PATTERN``)."""
    return Field(None, description=description,
                 json_schema_extra=string_schema(pattern=AS_OF_PATTERN))


AS_OF = ("Answer from the snapshot that was current at this date (YYYY-MM-DD, end of day UTC) "
         "or ISO 8601 time (YYYY-MM-DDThh:mm[:ss[.ffffff]], Z or +hh:mm, none: UTC); default: "
         "the current one.")
PRICES_AS_OF = ("Prices in effect at this date (YYYY-MM-DD, end of day UTC) or ISO 8601 time "
                "(YYYY-MM-DDThh:mm[:ss[.ffffff]], Z or +hh:mm, none: UTC); default: the current "
                "list.")


class ResultParams(ResultFilter, PageParams):
    """The filters every route over MLPerf results shares (results, per-accelerator, energy,
    ratios, costs, latency bounds, trends), with one vocabulary and one default: closed
    division and available systems, what a buyer can compare; ``all`` selects every system."""

    def filters(self) -> ResultFilter:
        """The filters, checked against the vocabulary, with the defaults applied."""
        return ResultFilter(
            round=listed(self.round),
            division=buyer_choice("division", self.division, "closed"),
            availability=buyer_choice("availability", self.availability, "available"),
            organization=listed(self.organization), model=listed(self.model),
            accelerator=listed(self.accelerator), scenario=choice("scenario", self.scenario),
            system=self.system or None)
