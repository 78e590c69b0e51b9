"""The sources file (``sources.toml``): where each source is fetched from.

An operator or a test points the warehouse at mirrors or local files by writing one file.
URLs may be ``https://``, ``http://``, ``file://`` or plain paths (relative to the file).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from warehouse.exceptions import ConfigError

DEFAULT_MLPERF_ROUNDS = {
    "v6.1": "https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/summary.csv",
}
DEFAULT_RULES_URL = (
    "https://raw.githubusercontent.com/mlcommons/inference_policies/master/inference_rules.adoc"
)
DEFAULT_AZURE_URL = "https://prices.azure.com/api/retail/prices"
DEFAULT_AZURE_FILTER = "serviceName eq 'Virtual Machines' and startswith(armSkuName, 'Standard_N')"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MlperfSource(_Strict):
    """MLPerf Inference summary CSVs, one URL per round."""

    rounds: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_MLPERF_ROUNDS))
    enabled: bool = True


class RulesSource(_Strict):
    """The MLPerf Inference rules document, and optional per-round pins to a document sha256."""

    url: str = DEFAULT_RULES_URL
    round_pins: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True


class AzureSource(_Strict):
    """Azure Retail Prices API scope."""

    url: str = DEFAULT_AZURE_URL
    api_version: str = "2023-01-01-preview"
    currency: str = "USD"
    filter: str = DEFAULT_AZURE_FILTER
    regions: list[str] = Field(default_factory=list)
    max_pages: int = Field(5000, ge=1)
    # Pages fetched at once when pages mostly wait on the network (predicted from
    # NextPageLink's $skip; 1 = strictly one by one).
    concurrency: int = Field(4, ge=1, le=16)
    enabled: bool = True


class CuratedSource(_Strict):
    """Curated files reviewed like code (claims, hardware, models, aliases)."""

    dir: str = "data"
    enabled: bool = True


class SourcesConfig(_Strict):
    """Every source perfledger knows, as declared in the sources file."""

    mlperf: MlperfSource = Field(default_factory=MlperfSource)
    mlperf_rules: RulesSource = Field(default_factory=RulesSource)
    azure_prices: AzureSource = Field(default_factory=AzureSource)
    curated: CuratedSource = Field(default_factory=CuratedSource)

    base_dir: Path = Path(".")

    def resolve(self, url: str) -> str:
        """A URL as given, or a relative plain path made absolute against the sources file."""
        if "://" in url:
            return url
        p = Path(url)
        return str(p if p.is_absolute() else (self.base_dir / p).resolve())

    @property
    def names(self) -> list[str]:
        """Source names in refresh order (curated first: MLPerf parsing uses its aliases)."""
        return ["curated", "mlperf", "mlperf_rules", "azure_prices"]


def load_sources(path: Path) -> SourcesConfig:
    """Read and check the sources file; a missing file means all defaults."""
    if not path.exists():
        return SourcesConfig(base_dir=path.parent.resolve())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    try:
        cfg = SourcesConfig.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"{path}: [{where}] {first['msg']}") from e
    cfg.base_dir = path.parent.resolve()
    return cfg
