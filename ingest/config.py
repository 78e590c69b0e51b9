"""The sources file (``sources.toml``): where each source is fetched from.

One section per registered source (``[mlperf]``, ``[azure_prices]``…), each checked against that
source's own ``SourceConfig`` model; a section for a source perfledger does not know is an
error naming the known ones. An operator or a test points the warehouse at mirrors or local
files by writing one file. URLs may be ``https://``, ``http://``, ``file://`` or plain paths
(relative to the file).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ingest.context import SourceConfig
from ingest.registry import BY_NAME, SOURCES
from warehouse.exceptions import ConfigError


@dataclass
class SourcesConfig:
    """Every registered source's section, as declared in the sources file (or its defaults)."""

    sections: dict[str, SourceConfig] = field(
        default_factory=lambda: {s.name: s.config() for s in SOURCES})
    base_dir: Path = Path(".")

    def __getitem__(self, name: str) -> SourceConfig:
        return self.sections[name]

    @property
    def names(self) -> list[str]:
        """Source names in refresh order (the registry's order)."""
        return [s.name for s in SOURCES]


def load_sources(path: Path) -> SourcesConfig:
    """Read and check the sources file; a missing file means all defaults."""
    base = path.parent.resolve()
    if not path.exists():
        return SourcesConfig(base_dir=base)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    unknown = sorted(set(data) - set(BY_NAME))
    if unknown:
        raise ConfigError(f"{path}: [{unknown[0]}] is not a source; known: {', '.join(BY_NAME)}")
    sections: dict[str, SourceConfig] = {}
    for name, spec in BY_NAME.items():
        try:
            sections[name] = spec.config.model_validate(data.get(name, {}))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join([name, *(str(x) for x in first["loc"])])
            raise ConfigError(f"{path}: [{where}] {first['msg']}") from e
    return SourcesConfig(sections=sections, base_dir=base)
