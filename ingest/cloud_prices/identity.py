"""data/cloud_accelerators.yaml: which accelerator (and how many) a catalog row rents.

``Rules.match`` answers (accelerator id, count, match, candidates) for one row; the file is
checked when read (pydantic), and a bad file names its entry and field. See the file's header
for how rules apply; the most specific rules (GpuInfo memory, instance pattern, then cloud)
decide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from warehouse.exceptions import ConfigError
from warehouse.model.vocabulary import CloudMatch

# GpuInfo's per-GPU memory: a Python-literal dict in most clouds' files, JSON in some
GPU_MEMORY = re.compile(r"""['"]SizeInMiB['"]\s*:\s*(\d+)""")


class Rule(BaseModel):
    """One rule of the file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    clouds: list[str] = []
    instance: str | None = None
    gpu_memory_mib: int | None = None
    accelerator_id: str | None = None
    candidates: list[str] = []
    count: float | None = None
    count_if_missing: float | None = None
    count_in_name: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> Rule:
        if bool(self.accelerator_id) == bool(self.candidates):
            raise ValueError("give accelerator_id or candidates (ambiguous), exactly one")
        if self.instance:
            re.compile(self.instance)
        return self

    @property
    def rank(self) -> int:
        """How specific the rule is: a GpuInfo memory, an instance pattern, then a cloud list."""
        return 4 * bool(self.gpu_memory_mib) + 2 * bool(self.instance) + bool(self.clouds)


class RulesFile(BaseModel):
    """The whole file."""

    model_config = ConfigDict(extra="forbid")

    rules: list[Rule]
    gcp_hosts: dict[str, list[str]] = {}
    price_is_spot: dict[str, str] = {}  # cloud -> why its catalog's Price is a spot price


@dataclass(frozen=True)
class Match:
    """What one row rents, as the rules say."""

    accelerator_id: str | None
    count: float | None
    match: CloudMatch
    candidates: str | None = None


@dataclass
class Rules:
    """The parsed file, indexed by lower-cased accelerator name."""

    file: RulesFile
    sha256: str

    @cached_property
    def by_name(self) -> dict[str, list[Rule]]:
        out: dict[str, list[Rule]] = {}
        for rule in self.file.rules:
            out.setdefault(rule.name.lower(), []).append(rule)
        return out

    def match(self, cloud: str, instance: str, name: str | None, count: float | None,
              gpu_info: str | None = None) -> Match:
        """The accelerator of one catalog row (``none`` when it names no accelerator)."""
        if not name:
            return Match(None, None, CloudMatch.none)
        memory = gpu_memory_mib(gpu_info)
        fits = [r for r in self.by_name.get(name.lower(), [])
                if (not r.clouds or cloud in r.clouds)
                and (not r.instance or re.search(r.instance, instance))
                and (not r.gpu_memory_mib or r.gpu_memory_mib == memory)]
        if not fits:
            return Match(None, count, CloudMatch.unmapped)
        best = max(r.rank for r in fits)
        fits = [r for r in fits if r.rank == best]
        ids = sorted({i for r in fits for i in ([r.accelerator_id] if r.accelerator_id
                                                 else r.candidates)})
        if len(ids) > 1 or any(r.candidates for r in fits):
            return Match(None, count, CloudMatch.ambiguous, ",".join(ids))
        rule = fits[0]
        if rule.count_in_name:
            count = float(re.findall(r"\d+", name)[-1])
        return Match(ids[0], rule.count or count or rule.count_if_missing, CloudMatch.mapped)


def gpu_memory_mib(gpu_info: str | None) -> int | None:
    """The per-GPU memory (MiB) a row's GpuInfo states, when it states exactly one size."""
    sizes = {int(m) for m in GPU_MEMORY.findall(gpu_info or "")}
    return sizes.pop() if len(sizes) == 1 else None


def read_rules(path: Path) -> Rules:
    """Read and check the rules file; a bad one is a ``ConfigError`` naming entry and field."""
    import hashlib

    body = path.read_bytes()
    try:
        data = yaml.safe_load(body)
        return Rules(RulesFile.model_validate(data), hashlib.sha256(body).hexdigest())
    except yaml.YAMLError as e:
        raise ConfigError(f"{path.name}: not valid YAML: {e}") from e
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"{path.name}: {where}: {first['msg']}") from e
