"""InferenceX observations: third-party measured, power only with its verdict, NULL not 0."""

from __future__ import annotations

from warehouse.figures import reconcile
from warehouse.model.vocabulary import INFERENCEX_MEASURER, POWER_STATUSES
from warehouse.quality.suites import WARNING, Rule, in_set, not_null, rows

T = "inferencex_observation"


def rules() -> list[Rule]:
    """The inferencex_observation rules."""
    return [
        in_set("inferencex_observation: power status is in the vocabulary", T, "power_status",
               POWER_STATUSES),
        rows("inferencex_observation: power figures only on rows whose power_valid is 1", T,
             "SELECT id, power_valid, avg_power_w, joules_per_output_token FROM {batch} "
             "WHERE (avg_power_w IS NOT NULL OR joules_per_output_token IS NOT NULL) "
             "AND power_valid IS DISTINCT FROM 1"),
        rows("inferencex_observation: a valid power status has power_valid 1 and schema 2", T,
             "SELECT id, power_valid, power_metric_schema_version FROM {batch} "
             "WHERE power_status = 'valid' AND NOT (power_valid = 1 "
             "AND power_metric_schema_version = 2)"),
        rows("inferencex_observation: throughput and interactivity are not negative", T,
             "SELECT id, interactivity, tput_per_gpu, output_tput_per_decode_gpu FROM {batch} "
             "WHERE interactivity < 0 OR tput_per_gpu < 0 OR output_tput_per_decode_gpu < 0 "
             "OR input_tput_per_prefill_gpu < 0"),
        rows("inferencex_observation: every row's GPUs are counted (a positive count)", T,
             "SELECT id, disagg, decode_tp, num_prefill_gpu, num_decode_gpu, gpus FROM ("
             + reconcile.observation_sql("(SELECT * FROM {batch})") + ") WHERE gpus IS NULL OR gpus <= 0"),
        rows("inferencex_observation: a possible observation (concurrency above 0, a date no "
             "later than its fetch)", T,
             "SELECT id, conc, observed_on, first_seen_at FROM {batch} "
             "WHERE conc <= 0 OR observed_on > CAST(first_seen_at AS DATE)"),
        rows("inferencex_observation: one current version per observation", T,
             "SELECT observation_key, count(*) AS versions FROM {batch} WHERE valid_to IS NULL "
             "GROUP BY observation_key HAVING count(*) > 1"),
        *[rows(f"inferencex_observation: the publisher's invariant holds ({name}); a row that "
               "breaks it is flagged and left off the frontier", T,
               "SELECT id, gpus, gpu_count_basis, physical_ratio, invariant_failures FROM ("
               + reconcile.observation_sql("(SELECT * FROM {batch})") + ") WHERE contains(invariant_failures, "
               + "'" + name.replace("'", "''") + "')", severity=WARNING)
          for name in reconcile.INVARIANTS],
        rows("inferencex_observation: the measurer is SemiAnalysis InferenceX", T,
             "SELECT id, measurer FROM {batch} WHERE measurer <> '"
             + INFERENCEX_MEASURER.replace("'", "''") + "'"),
        not_null("inferencex_observation: every row has an observation date", T, "observed_on"),
        rows("inferencex: every hardware key in observations is listed in the alias file", T,
             "SELECT DISTINCT hardware_base FROM {batch} WHERE hardware_base NOT IN "
             "(SELECT key FROM inferencex_alias WHERE kind = 'hardware')", severity=WARNING),
        rows("inferencex: every model key in observations is listed in the alias file", T,
             "SELECT DISTINCT model FROM {batch} WHERE model NOT IN "
             "(SELECT key FROM inferencex_alias WHERE kind = 'model')", severity=WARNING),
    ]
