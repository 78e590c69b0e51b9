"""One vocabulary: parsers, validation suites, derived views and API parameters read the same
sets from ``warehouse.model.vocabulary``, and no other module spells them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from api.params import CHOICES
from ingest.azure_prices import suite as price_suite
from ingest.azure_prices.parse import parse as parse_prices
from ingest.curated.files import ClaimEntry, ModelEntry, Spec
from ingest.http import Raw
from ingest.mlperf import rows as mlperf_parse
from ingest.mlperf import suite as mlperf_suite
from ingest.refresh import all_rules
from tests.helpers import REPO
from warehouse.model import vocabulary as v
from warehouse.quality.suites import provenance


def in_set_values(rules, column: str, table: str) -> set:
    [rule] = [r for r in rules if r.kind == "in_set" and r.column == column and r.table == table]
    return set(rule.values)


def test_validation_suites_check_the_vocabulary_sets():
    rules = all_rules()
    assert in_set_values(rules, "units", "mlperf_result") == set(v.KNOWN_UNITS)
    assert in_set_values(rules, "scenario", "mlperf_result") == set(v.SCENARIOS)
    assert in_set_values(rules, "division", "mlperf_result") == set(v.DIVISIONS)
    assert in_set_values(rules, "availability", "mlperf_result") == set(v.AVAILABILITY)
    assert in_set_values(rules, "unit_of_measure", "azure_price") == set(v.HOURLY_UNITS)
    assert in_set_values(rules, "offer", "azure_price") == set(v.OFFERS)
    assert in_set_values(rules, "os", "azure_price") == set(v.OPERATING_SYSTEMS)
    power = [r for r in mlperf_suite.rules() if "power units only on power rows" in r.name]
    assert power and all(f"'{u}'" in power[0].sql for u in v.POWER_UNITS)
    for table, labels in v.TABLE_LABELS.items():
        allowed = [r for r in provenance.rules() if r.table == table and r.kind == "in_set"
                   and "may hold" in r.name]
        assert set(allowed[0].values) == {e.value for e in labels}, table
    assert {r.table for r in price_suite.rules()} == {"azure_price"}


def test_the_mlperf_parser_reads_power_units_from_the_vocabulary():
    assert mlperf_parse.POWER_UNITS is v.POWER_UNITS
    assert "Watts (per query)" in v.POWER_UNITS  # the suite used to refuse what the parser wrote


def price_item(unit: str, **over) -> dict:
    item = {"currencyCode": "USD", "retailPrice": 98.32, "unitPrice": 98.32,
            "armRegionName": "eastus2", "effectiveStartDate": "2026-01-01T00:00:00Z",
            "meterId": "m", "skuId": "s", "productName": "NDisr H100 v5 Series",
            "skuName": "ND96isr H100 v5", "unitOfMeasure": unit, "type": "Consumption",
            "armSkuName": "Standard_ND96isr_H100_v5", "meterName": "ND96isr H100 v5"}
    return {**item, **over}


def parse_one(item: dict) -> dict:
    import json
    raw = Raw(source="azure_prices", url="u", body=json.dumps({"Items": [item]}).encode(),
              fetched_at=datetime.now(UTC))
    [row] = parse_prices(raw, page=1, snapshot_id="s", observed_at=datetime.now(UTC))
    return row


@pytest.mark.parametrize("unit", v.HOURLY_UNITS)
def test_every_hourly_unit_the_suite_accepts_gets_an_hourly_price(unit):
    assert parse_one(price_item(unit))["hourly_price"] == 98.32


@pytest.mark.parametrize("over", [
    {}, {"skuName": "ND96isr H100 v5 Spot"}, {"meterName": "ND96isr H100 v5 Low Priority"},
    {"type": "DevTestConsumption"}, {"type": "Reservation", "reservationTerm": "1 Year"},
    {"productName": "NDisr H100 v5 Series Windows"}])
def test_parsed_offers_and_os_are_vocabulary_terms(over):
    row = parse_one(price_item("1 Hour", **over))
    assert row["offer"] in v.OFFERS and row["os"] in v.OPERATING_SYSTEMS
    assert row["price_type"] in v.PRICE_TYPES


def test_api_parameters_accept_exactly_the_vocabulary_sets():
    assert CHOICES["scenario"] == v.SCENARIOS and CHOICES["division"] == v.DIVISIONS
    assert CHOICES["availability"] == v.AVAILABILITY and CHOICES["offer"] == v.OFFERS
    assert CHOICES["os"] == v.OPERATING_SYSTEMS and CHOICES["type"] == v.PRICE_TYPES
    assert set(CHOICES["evidence"]) == {e.value for e in v.Evidence}


def test_curated_files_accept_the_labels_their_tables_may_hold():
    """The curated schemas refuse exactly what the provenance suite would reject."""
    source = {"title": "t", "url": "https://example.org", "checked_on": "2026-01-01",
              "quote": "the quoted words"}  # a vendor_spec figure must quote its source
    for label in v.Evidence:
        claim = {"id": "c", "vendor": "v", "metric": "m", "value": 1, "unit": "u",
                 "evidence": label.value, "claimed_on": "2026-01-01", "source": source}
        spec = {"metric": "m", "value": 1, "unit": "u", "evidence": label.value, "source": source}
        shape = {"id": "m", "name": "n", "evidence": label.value, "source": source}
        for model, entry, table in ((ClaimEntry, claim, "claim"), (Spec, spec, "hardware_spec"),
                                    (ModelEntry, shape, "model_shape")):
            allowed = label in v.TABLE_LABELS[table]
            try:
                model.model_validate(entry)
                accepted = True
            except ValueError:
                accepted = False
            assert accepted == allowed, (table, label)


def test_basis_lists_labels_strongest_first_in_vocabulary_order():
    assert v.basis("assumption", "measured") == "derived: measured + assumption"
    assert v.basis("benchmark_rule", "measured") == "derived: measured + benchmark_rule"
    assert v.basis("list_price", "measured", "list_price") == "derived: measured + list_price"


def test_normalisation():
    assert v.normalise_model("Llama3_1-8B") == "llama3.1-8b"
    assert v.model_family("llama2-70b-99.9") == "llama2-70b" == v.model_family("llama2-70b-99")
    assert v.normalise_scenario(" single_stream ") == "SingleStream"
    assert v.normalise_scenario("offline") == "Offline" and v.normalise_scenario("nope") is None


# Terms that only the vocabulary may spell (as a string literal); other modules import them.
ONLY_IN_VOCABULARY = ["Watts", "millijoules", "1 Hour", "1/Hour", "1 Hours", "SingleStream",
                      "MultiStream", "Samples/s", "Queries/s", "Latency (ms)", "3 Years"]


def test_no_other_module_spells_the_vocabulary():
    offenders = []
    for package in ("ingest", "warehouse", "api", "cli"):
        for path in (REPO / package).rglob("*.py"):
            if path.name == "vocabulary.py":
                continue
            text = path.read_text()
            for term in ONLY_IN_VOCABULARY:
                if re.search(r"[\"']" + re.escape(term) + r"[\"']", text):
                    offenders.append(f"{path.relative_to(REPO)}: {term!r}")
    assert offenders == []
