"""Read an accelerator spelling as the chip it names and the decorations around it.

MLPerf submitters write the same chip many ways: ``NVIDIA H200-SXM-141GB-CTS``,
``Virtualized NVIDIA H200-SXM-141GB``, ``AMD Instinct MI300X-NPS1-SPX-192GB-750W``,
``AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)``, ``[MAXSUN] MS-Intel Arc Pro B60 Dual 48G
Turbo``. ``parse`` splits a spelling into

* its **identity**: vendor, product words, variant/form factor (SXM, PCIe, NVL, OAM,
  superchip), memory size and type — what decides which chip it is; and
* its **decorations**, which do not change the chip: a power cap or a power figure, GPU
  partition and memory (NPS) modes, cooling/thermal variants, MaxQ/MaxP, virtualisation,
  count and instance markers, reseller and part prefixes, registered marks and filler words.

Decorations are stripped in a fixed order with the patterns learnt from MLPerf's own rounds
v4.0-v6.1 (the forms are listed beside each pattern). Two spellings name the same chip when
their identities agree; a part one spelling leaves out (no memory, no form factor, no vendor)
is compatible with any value (``compatible``), which is how ``NVIDIA H100`` fits three ids and
is reported ambiguous rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_I = re.IGNORECASE

# (pattern, what it is); each is removed from the spelling once read, in this order.
RESELLER = re.compile(r"\s*\[([^\]]+)\]\s*")                        # [MAXSUN] MS-Intel ... (v5.1)
PART_PREFIX = re.compile(r"(?:^|(?<=\s))(MS-)(?=Intel)", _I)         # MS-Intel Arc Pro ... (v6.0)
MARKS = re.compile(r"\((?:R|TM)\)|®|™", _I)                          # Intel(R) Arc(TM), Intel® Gaudi®
VIRTUALIZED = re.compile(r"\bVirtuali[sz]ed\b\s*", _I)               # Virtualized NVIDIA L40S (v4.0)
POWER_CAP = re.compile(r"\s*\(\s*Power[\s-]*Cap(?:ped)?(?:\s+at)?\s*(\d{2,5})\s*W\s*\)", _I)  # (v6.0)
POWER_FIGURE = re.compile(                                           # MI300X-...-192GB-750W (v4.1)
    r"(?:[\s_-]|\()(\d{2,5})\s?W(?:\s*(?:TDP|TBP|TGP))?\)?(?=$|[\s_)-])", _I)
INSTANCES = re.compile(r"\s*\(\s*(x[\dx]+|\d+\s*instances?)\s*\)", _I)  # (x87) (x2x8) (2 instances)
PARTITION = re.compile(r"(?:^|(?<=[\s_-]))(NPS[1248]|SPX|DPX|QPX|CPX)(?=$|[\s_-])", _I)  # NPS1-SPX
COOLING = re.compile(r"(?:[\s_-])(CTS|liquid[\s-]?cooled|air[\s-]?cooled|\(liquid\)|liquid)"
                     r"(?=$|[\s_)-])", _I)                           # H200-SXM-141GB-CTS (v4.0/v4.1)
MAX_QP = re.compile(r"[\s_-]Max([QP])(?=$|[\s_-])", _I)             # ..._MaxQ (system names)
FILLER = re.compile(r"\b(?:Tensor\s+Core(?:\s+GPU)?|AI\s+Accelerator|GPU|Graphics)\b", _I)
MEMORY_TYPE = re.compile(r"\b(HBM3E|HBM3|HBM2E|HBM2|GDDR7|GDDR6X|GDDR6|LPDDR5X|LPDDR5)\b", _I)
MEMORY = re.compile(r"(?<![A-Za-z0-9])(\d{1,4})\s?G(?:B)?(?![A-Za-z0-9])", _I)  # 192GB 64G 48G
FORM = re.compile(r"(?<![A-Za-z0-9])(SXM\d?|PCIe|NVL|OAM|Superchip)(?![A-Za-z0-9])", _I)

# The first word of a spelling, when it names a vendor, and how the warehouse writes it.
VENDORS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "google": "Google",
           "qualcomm": "Qualcomm", "untetherai": "UntetherAI", "cerebras": "Cerebras",
           "groq": "Groq", "sambanova": "SambaNova"}
# Brand words that say no more than the vendor does (AMD MI300X = AMD Instinct MI300X), and
# the vendor a vendor-less spelling's first word implies (Tesla T4, TPU v5e).
BRAND_WORDS = {"instinct": "AMD", "tesla": "NVIDIA"}
IMPLIED_VENDOR = {"tpu": "Google"}


@dataclass(frozen=True)
class Identity:
    """The chip a spelling names. ``product`` is the product words without vendor, brand,
    form factor and memory, lower-case and joined without separators, so ``GraceHopper`` and
    ``Grace Hopper``, ``RTX-PRO-4500`` and ``RTX PRO 4500`` are the same product."""

    vendor: str | None
    product: str
    form_factor: str | None = None
    memory_gb: int | None = None
    memory_type: str | None = None
    words: tuple[str, ...] = field(default=(), compare=False)

    def key(self) -> str:
        """One readable line: ``NVIDIA h200 | SXM | 141GB`` (memory type left out: the size
        already tells the parts apart, and submitters write HBM3e and HBM3E alike)."""
        return " | ".join([f"{self.vendor or '?'} {self.product}", self.form_factor or "-",
                           f"{self.memory_gb}GB" if self.memory_gb else "-"])

    def exact(self) -> tuple:
        return (self.vendor, self.product, self.form_factor, self.memory_gb)


def compatible(a: Identity, b: Identity) -> bool:
    """Same product, and vendor, form factor and memory equal wherever both spellings say."""
    def agree(x: object, y: object) -> bool:
        return x is None or y is None or x == y
    return (a.product == b.product and agree(a.vendor, b.vendor)
            and agree(a.form_factor, b.form_factor) and agree(a.memory_gb, b.memory_gb))


@dataclass
class Decorations:
    """What a spelling says besides the chip. ``other`` keeps the rest (reseller and part
    prefixes, registered marks, filler words), so the spelling can be read back."""

    power_cap_w: int | None = None
    power_w: int | None = None
    partition_mode: str | None = None
    cooling: str | None = None
    virtualized: bool = False
    instances: str | None = None
    power_mode: str | None = None
    other: list[str] = field(default_factory=list)

    def text(self) -> str | None:
        """Every decoration in words, ``; ``-separated; None when there is none."""
        parts = []
        if self.power_cap_w is not None:
            parts.append(f"power cap {self.power_cap_w} W")
        if self.power_w is not None:
            parts.append(f"power figure {self.power_w} W (role not stated)")
        if self.partition_mode:
            parts.append(f"partition/memory mode {self.partition_mode}")
        if self.cooling:
            parts.append(f"cooling {self.cooling}")
        if self.virtualized:
            parts.append("virtualized")
        if self.instances:
            parts.append(f"instances {self.instances}")
        if self.power_mode:
            parts.append(f"power mode {self.power_mode}")
        parts.extend(self.other)
        return "; ".join(parts) or None


def _form(token: str) -> str:
    t = token.lower()
    if t.startswith("sxm"):
        return "SXM"
    return {"pcie": "PCIe", "nvl": "NVL", "oam": "OAM", "superchip": "superchip"}[t]


def _memory_type(token: str) -> str:
    t = token.upper()
    return t[:-1] + "e" if t.endswith("E") and t.startswith("HBM") else t


def _take(pattern: re.Pattern[str], s: str) -> tuple[list[str], str]:
    """Every match of ``pattern`` (its first group), and ``s`` without them."""
    found = [m.group(1) for m in pattern.finditer(s)]
    return found, pattern.sub(" ", s) if found else s


def parse(name: str) -> tuple[Identity, Decorations]:
    """The identity and the decorations of one accelerator spelling."""
    d = Decorations()
    s = _decorations(name.strip(), d)
    memory_type = None
    if m := MEMORY_TYPE.search(s):
        memory_type = _memory_type(m.group(1))
        s = s[:m.start()] + " " + s[m.end():]
    memory = None
    if m := MEMORY.search(s):
        memory = int(m.group(1))
        s = s[:m.start()] + " " + s[m.end():]
    form = None
    if m := FORM.search(s):
        form = _form(m.group(1))
        s = FORM.sub(" ", s)
    vendor, kept = _vendor_and_words(s)
    return Identity(vendor=vendor, product="".join(kept), form_factor=form, memory_gb=memory,
                    memory_type=memory_type, words=tuple(kept)), d


def _vendor_and_words(s: str) -> tuple[str | None, list[str]]:
    """The vendor (named first, implied by the product, or by a brand word) and the words
    left of what remains of a spelling."""
    words = [w for w in re.split(r"[\s\-_/,()\[\]]+", s.lower()) if w]
    vendor = None
    if words and words[0] in VENDORS:
        vendor = VENDORS[words.pop(0)]
    elif words and words[0] in IMPLIED_VENDOR:
        vendor = IMPLIED_VENDOR[words[0]]
    kept = []
    for w in words:
        brand_of = BRAND_WORDS.get(w)
        if brand_of is not None and vendor in (None, brand_of):
            vendor = brand_of
            continue
        kept.append(w)
    return vendor, kept


def _decorations(s: str, d: Decorations) -> str:
    """Take the decorations off spelling ``s`` into ``d``; what is left."""
    found, s = _take(RESELLER, s)
    d.other += [f"reseller [{x}]" for x in found]
    found, s = _take(PART_PREFIX, s)
    d.other += [f"part prefix {x}" for x in found]
    marks = MARKS.findall(s)
    if marks:
        d.other.append("marks " + " ".join(marks))
        s = MARKS.sub("", s)
    if VIRTUALIZED.search(s):
        d.virtualized = True
        s = VIRTUALIZED.sub(" ", s)
    found, s = _take(POWER_CAP, s)
    if found:
        d.power_cap_w = int(found[0])
    found, s = _take(INSTANCES, s)
    if found:
        d.instances = ", ".join(re.sub(r"\s+", " ", x.lower()) for x in found)
    found, s = _take(POWER_FIGURE, s)
    if found:
        d.power_w = int(found[0])
    found, s = _take(PARTITION, s)
    if found:
        d.partition_mode = "-".join(x.upper() for x in found)
    found, s = _take(COOLING, s)
    if found:
        kinds = [x.strip("()").replace(" ", "-") for x in found]
        d.cooling = ", ".join("CTS" if k.upper() == "CTS" else k.lower() for k in kinds)
    found, s = _take(MAX_QP, s)
    if found:
        d.power_mode = ", ".join("Max" + x.upper() for x in found)
    filler = FILLER.findall(s)
    if filler:
        d.other.append("filler " + ", ".join(re.sub(r"\s+", " ", f) for f in filler))
        s = FILLER.sub(" ", s)
    return s
