"""One redaction for every URL that leaves perfledger: in messages, records, logs and responses.

A URL keeps its scheme, host, port and path; its userinfo (``user:password@``) is dropped and
the value of every secret-looking query parameter becomes ``***``. Secret-looking names are
those of the common clouds' signed URLs (AWS SigV4 ``X-Amz-*``, Azure SAS ``sig``/``se``/``sp``,
GCS ``X-Goog-*``) and any name containing token, secret, key, password or signature, starting
with auth or session, or equal to code. ``redact_text`` does the same to every URL inside a
piece of text (an exception message, say), and ``redact_deep`` to every string inside a record.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

_SECRET_NAME = re.compile(
    r"^(?:x-amz-.*|x-goog-.*|sig|se|sp|code|auth.*|session.*|.*(?:token|secret|key|password|"
    r"passwd|signature|credential).*)$", re.IGNORECASE)
_PARAM = re.compile(r"(?<![^&;])([^&;=]*)=([^&;]*)")
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+")


def secret_name(name: str) -> bool:
    """True when a query parameter's name says its value is a secret."""
    return bool(_SECRET_NAME.match(unquote(name).strip()))


def redact(url: str) -> str:
    """A URL safe to print: credentials and secret-looking query values removed."""
    try:
        parts = urlsplit(url)
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
    except ValueError:  # not a URL we can take apart: keep only what cannot hold a secret
        return url.split("?", 1)[0].split("@")[-1]
    if parts.username is None and parts.password is None and not parts.query \
            and not parts.fragment:
        return url
    return urlunsplit((parts.scheme, netloc if parts.netloc else "", parts.path,
                       _PARAM.sub(_mask, parts.query), _PARAM.sub(_mask, parts.fragment)))


def _mask(m: re.Match) -> str:
    return f"{m.group(1)}=***" if secret_name(m.group(1)) else m.group(0)


def redact_text(text: str) -> str:
    """``text`` with every URL in it redacted."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact(m.group(0)), text)


_NAME_SEP = re.compile(r"([A-Za-z_][\w.-]*)(\s*[=:]\s*)")
_VALUE = re.compile(r"\"[^\"]*\"?|'[^']*'?|[^\s,;&]+")


def redact_excerpt(text: str, limit: int = 60) -> str:
    """A short piece of an upstream body fit for an operator's eyes (the CLI, the server log;
    never a public endpoint): at most ``limit`` characters on one line, URLs redacted, and the
    value of every ``name=value`` or ``name: value`` whose name looks secret masked."""
    short = redact_text(" ".join(text.split())[:limit])
    out, pos = [], 0
    for m in _NAME_SEP.finditer(short):
        if m.start() < pos or not secret_name(m.group(1)):
            continue
        value = _VALUE.match(short, m.end())
        out.append(short[pos:m.end()] + "***")
        pos = value.end() if value else m.end()
    return "".join(out) + short[pos:]


def redact_deep(value: object) -> object:
    """A copy of a JSON-like value with every string passed through ``redact_text``."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_deep(v) for v in value]
    return value
