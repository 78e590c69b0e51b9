"""Read queries: every SQL the API and the CLI run against a snapshot. Routes stay thin: each
builds one query here (a ``ListQuery``) or calls one read function.

    listing.py            the list query model and its SQL (filters, order, page, total, hint)
    accelerator_names.py  what people type for an accelerator, resolved to ids
    builders.py           one builder per list resource (results, ratios, costs, …)
    items.py              reads of one item (a result, a claim, a source snapshot, meta)
    accelerator_catalogue.py  the accelerator catalogue, one accelerator, name coverage

DuckDB answers every query; values are always bound parameters.
"""

from warehouse.queries.accelerator_catalogue import (
    accelerator_detail,
    accelerators,
    coverage,
)
from warehouse.queries.accelerator_names import accelerator_aliases, resolve_accelerators
from warehouse.queries.builders import (
    ObservationFilter,
    ResultFilter,
    claim_checks_query,
    claim_observations_query,
    claims_query,
    costs_query,
    energy_query,
    frontier_query,
    hardware_query,
    latency_query,
    models_query,
    observations_query,
    per_accelerator_query,
    price_history_query,
    prices_query,
    ratios_query,
    results_query,
    rules_query,
    sources_query,
    trends_query,
)
from warehouse.queries.items import (
    claim_detail,
    current_price,
    meta,
    price_places,
    result_detail,
    source_snapshot,
    validation_results,
)
from warehouse.queries.listing import (
    Accelerators,
    AnyOf,
    Caveat,
    Empty,
    Known,
    ListQuery,
    ListSQL,
    caveat_hint,
    empty_hint,
    list_sql,
    quote_name,
    relation_columns,
    run_list,
    run_list_arrow,
    run_list_json,
    serving_source,
)

__all__ = [
    "Accelerators", "AnyOf", "Caveat", "Empty", "Known", "ListQuery", "ListSQL", "ObservationFilter", "ResultFilter",
    "accelerator_aliases", "accelerator_detail", "accelerators", "claim_checks_query",
    "claim_detail", "claim_observations_query", "claims_query", "costs_query", "coverage",
    "caveat_hint", "current_price", "empty_hint", "energy_query", "frontier_query", "hardware_query",
    "observations_query",
    "latency_query", "list_sql", "meta", "price_places", "models_query", "per_accelerator_query",
    "price_history_query", "prices_query", "quote_name", "ratios_query", "relation_columns",
    "resolve_accelerators", "result_detail", "results_query", "rules_query", "run_list",
    "run_list_arrow", "run_list_json", "serving_source",
    "source_snapshot", "sources_query", "trends_query", "validation_results",
]
