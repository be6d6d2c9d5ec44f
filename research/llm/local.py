"""Which models are served locally: a local provider prefix, or an endpoint on this machine or a
private network.

A model is *local* when

* its provider prefix is one of ``LOCAL_PROVIDERS`` (``ollama/``, ``ollama_chat/``,
  ``lm_studio/``, ``hosted_vllm/``, ``llamafile/``, ``vllm/``): servers people run themselves; or
* the base URL litellm will send it to (``API_BASE_VARS``: ``OPENAI_API_BASE`` /
  ``OPENAI_BASE_URL`` for ``openai/`` models, ``{PROVIDER}_API_BASE`` for the others) names a
  loopback, private, link-local or unique-local address, ``localhost`` / ``*.localhost`` /
  ``*.local``, or a single-label host name (a container or intranet name such as ``ollama``).

What follows (``docs/local-models.md``): such a model is priced at zero when neither
``RESEARCH_MODEL_PRICES`` nor litellm's price table names it (``research.llm.models``), and its
calls run one at a time unless ``RESEARCH_LLM_CONCURRENCY`` says otherwise
(``research.llm.slots``): a llama.cpp or Ollama server answers one request at a time by default.
Host names are never resolved (no DNS look-up on the call path).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from research.config import env_value

_NAME_RE = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
LOCAL_PROVIDERS = ("ollama", "ollama_chat", "lm_studio", "hosted_vllm", "llamafile", "vllm")
API_BASE_VARS = {  # provider → the variables litellm reads its base URL from, first found wins
    "openai": ("OPENAI_API_BASE", "OPENAI_BASE_URL"),
    "text-completion-openai": ("OPENAI_API_BASE", "OPENAI_BASE_URL"),
    "ollama": ("OLLAMA_API_BASE",),
    "ollama_chat": ("OLLAMA_API_BASE",),
    "lm_studio": ("LM_STUDIO_API_BASE",),
    "hosted_vllm": ("HOSTED_VLLM_API_BASE",),
    "llamafile": ("LLAMAFILE_API_BASE",),
}


def provider_prefix(model: str) -> str:
    """The ``provider/`` part of a litellm model string (``"openai"`` for ``openai/smollm2``;
    ``"openai"`` for a bare name, litellm's default provider)."""
    return model.split("/", 1)[0].strip().lower() if "/" in model else "openai"


def api_base(model: str) -> str | None:
    """The base URL litellm sends ``model``'s calls to, from the provider's variable
    (``API_BASE_VARS``; environment, else secrets.toml), or None when none is set."""
    provider = provider_prefix(model)
    for var in API_BASE_VARS.get(provider, (f"{provider.upper()}_API_BASE",)):
        value = env_value(var)
        if value:
            return value.strip()
    return None


def local_host(host: str) -> bool:
    """True for a loopback, private, link-local or unique-local IP address, ``localhost``
    (``*.localhost``, ``*.local``) or a single-label name; False for any other name or address."""
    host = host.strip().strip("[]").lower().rstrip(".")
    if not host:
        return False
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not _NAME_RE.fullmatch(host):
            return False
        return (
            host == "localhost"
            or host.endswith((".localhost", ".local"))
            or ("." not in host and ":" not in host)
        )
    return ip.is_loopback or ip.is_private or ip.is_link_local


def local_url(url: str) -> bool:
    """True when ``url``'s host is local (``local_host``); False for a URL without a host."""
    try:
        host = urlsplit(url if "//" in url else f"//{url}").hostname
    except ValueError:
        return False
    return bool(host) and local_host(host or "")


def is_local(model: str) -> bool:
    """True when ``model`` is served locally (module doc): a local provider prefix, or a base URL
    on this machine or a private network."""
    if provider_prefix(model) in LOCAL_PROVIDERS:
        return True
    base = api_base(model)
    return bool(base) and local_url(base or "")


def all_local(models: dict[str, str]) -> bool:
    """True when every model of ``models`` (role → model, ``research.llm.models.resolve_models``)
    is served locally (``is_local``); False for an empty map."""
    return bool(models) and all(is_local(m) for m in models.values())
