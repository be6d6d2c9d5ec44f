"""Settings: the one place that reads the process environment and ``.streamlit/secrets.toml``.

``load_settings()`` builds a :class:`Settings` (pydantic-settings) from the environment, then
``.streamlit/secrets.toml`` (the file is parsed once per change of its mtime), then the
defaults. A run carries its ``Settings`` on ``RunContext``; code outside a run calls
``load_settings()`` (cheap: ~0.1 ms) so that a changed environment — the CLI's flags, a test's
``monkeypatch`` — applies to the next call. No other module reads ``os.environ``
(``tests/test_boundaries.py``).

Secrets (API keys) are ``SecretStr`` here and never serialised: ``Settings.public()`` is the only
view that leaves this module, and ``secret(name)`` hands a key to the one caller that sends it.
Environment variables that libraries read themselves (``HF_HUB_OFFLINE``,
``TIKTOKEN_CACHE_DIR``…) are set through ``set_library_default``.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from research.errors import InputError

if TYPE_CHECKING:
    from pydantic import ValidationInfo, ValidatorFunctionWrapHandler

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_CORPUS = REPO_ROOT.parent / "shared" / "data" / "corpus" / "docs.jsonl"
SECRETS_FILE = REPO_ROOT / ".streamlit" / "secrets.toml"
_secrets_cache: dict[str, Any] = {"mtime": None, "data": {}}


def _secrets() -> dict[str, Any]:
    """``.streamlit/secrets.toml`` as a dict ({} when absent or unreadable); re-parsed only when
    the file's mtime changes."""
    try:
        mtime = SECRETS_FILE.stat().st_mtime_ns
    except OSError:
        return {}
    if _secrets_cache["mtime"] != mtime:
        try:
            data = tomllib.loads(SECRETS_FILE.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            data = {}
        _secrets_cache.update(mtime=mtime, data=data)
    return cast(dict[str, Any], _secrets_cache["data"])


def env_value(name: str, default: str | None = None) -> str | None:
    """A setting named at run time (``RESEARCH_MODEL_<ROLE>``, a backend's key variable): the
    environment, else secrets.toml, else ``default``; empty values count as unset."""
    value = os.environ.get(name)
    if value:
        return value
    value = _secrets().get(name)
    return str(value) if value not in (None, "") else default


def secret(name: str) -> SecretStr | None:
    """An API key (environment, else secrets.toml) as ``SecretStr``, or None when unset."""
    value = env_value(name)
    return SecretStr(value) if value else None


def in_environment(name: str) -> bool:
    """True when the variable is set (non-empty) in the process environment itself (litellm
    reads provider keys from there)."""
    return bool(os.environ.get(name))


def set_library_default(name: str, value: str) -> None:
    """``os.environ.setdefault`` for variables third-party libraries read (offline flags,
    tokenizer cache): set only when the operator has not set them."""
    os.environ.setdefault(name, value)


def set_env(name: str, value: str) -> None:
    """Set a variable for this process and its children (devtools that point a child process
    at a temporary data dir)."""
    os.environ[name] = value


def backend_url_overrides() -> dict[str, str]:
    """``{backend: url}`` from every ``RESEARCH_<BACKEND>_URL`` variable (tests point backends at
    a loopback server)."""
    out = {}
    for key, value in os.environ.items():
        if key.startswith("RESEARCH_") and key.endswith("_URL") and value.strip():
            out[key[len("RESEARCH_") : -len("_URL")].lower()] = value.strip()
    return out


class _SecretsToml(PydanticBaseSettingsSource):
    """pydantic-settings source: values from ``.streamlit/secrets.toml`` by the fields' variable names."""

    def get_field_value(
        self, field: FieldInfo, field_name: str
    ) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        data, out = _secrets(), {}
        for name, info in self.settings_cls.model_fields.items():
            alias = info.validation_alias
            names = (
                [str(a) for a in alias.choices]
                if isinstance(alias, AliasChoices)
                else [str(alias or name)]
            )
            for var in names:
                if data.get(var) not in (None, ""):
                    out[var] = str(data[var])
                    break
        return out


def _var(*names: str) -> Any:
    return AliasChoices(*names) if len(names) > 1 else names[0]


_LENIENT = (
    "job_backend",
    "vector_cache",
    "auto_resume",
    "preindex",
    "lease_ttl_ms",
    "llm_concurrency",
    "llm_timeout_s",
    "llm_deadline_s",
    "llm_queue_s",
    "llm_max_attempts",
    "llm_backoff_s",
    "llm_rpm",
    "local_gap_turns",
    "local_compress",
    "http_timeout_s",
    "http_retries",
    "api_rate_per_min",
    "api_stream_max_s",
    "notify_timeout_s",
    "notify_attempts",
    "notify_backoff_s",
)


class Settings(BaseSettings):
    """Resolved settings (env var in brackets; units in the names).

    Attributes:
        data_dir: root of all state [``RESEARCH_DATA_DIR``, default ``./data``], resolved.
        redis_url: [``REDIS_URL``] or None (then the embedded server is used).
        corpus: [``RESEARCH_CORPUS``]; see ``default_corpus``.
        llm_model: [``RESEARCH_LLM_MODEL``] litellm model string or None → extractive engine.
        index_dir_override: [``RESEARCH_INDEX_DIR``]; see ``index_dir``.
        job_backend: [``RESEARCH_JOB_BACKEND``] ``thread`` or ``rq`` (checked by ``job_backend``).
        auto_resume: [``RESEARCH_AUTO_RESUME``] the dashboard resumes interrupted runs at start.
        preindex: [``RESEARCH_PREINDEX``] the dashboard builds the default corpus's search index
            in the background when the server starts.
        lease_ttl_ms: [``RESEARCH_LEASE_TTL_MS``] a job's lease on its run (ms).
        embed_precision: [``RESEARCH_EMBED_PRECISION``] ``auto`` (= ``fp32``) / ``fp32`` / ``bf16``
            (opt-in; batch-dependent rounding, see ``research.search.embeddings``).
        vector_cache: [``RESEARCH_VECTOR_CACHE``] keep sentence vectors in
            ``{index_dir}/vectors.sqlite`` for every run and process (``research.search.vector_cache``).
        llm_concurrency, llm_rpm: [``RESEARCH_LLM_CONCURRENCY``, ``RESEARCH_LLM_RPM``] calls at once
            per model, shared by every run of the process (None: 1 for a local endpoint, else 4;
            ``research.llm.slots``); requests per minute per model.
        llm_timeout_s, llm_deadline_s, llm_backoff_s, llm_max_attempts: [``RESEARCH_LLM_TIMEOUT_S``,
            ``…_DEADLINE_S``, ``…_BACKOFF_S``, ``…_MAX_ATTEMPTS``] per-call retry policy (s): the
            timeout bounds each wait for the server's next bytes once a request is sent; the
            deadline bounds a call's attempts and backoffs, not its wait for a free slot.
        llm_queue_s: [``RESEARCH_LLM_QUEUE_S``] how long a call may wait for a free slot of its
            model (s) before it fails with ``queue_timeout``.
        local_gap_turns: [``RESEARCH_LOCAL_GAP_TURNS``] rounds of gap searches (0–5, default 0)
            of a run whose models are all local when the run names none (``--gap-turns``); a
            hosted run's default stays 2. A small model on 2 cores spends most of a run in gap
            rounds (each unmet question a turn: a question, a reply and its summary cards).
        local_compress: [``RESEARCH_LOCAL_COMPRESS``] who makes the summary cards when the
            compressor's model is local: ``offline`` (default: the offline extractive engine, by
            design, stated on the report, the run page and in ``research show --json``) or
            ``model``. Cards were a third of a local run's calls and time.
        llm_record, llm_replay: [``RESEARCH_LLM_RECORD`` / ``…_REPLAY``] process-wide cassette
            path (a run's own ``RunConfig.cassette`` takes precedence).
        http_timeout_s, http_retries: [``RESEARCH_HTTP_TIMEOUT``, ``RESEARCH_HTTP_RETRIES``] search APIs.
        api_rate_per_min: [``RESEARCH_API_RATE_PER_MIN``] HTTP API requests per minute per token
            (``research serve``; 0 = no limit).
        api_stream_max_s: [``RESEARCH_API_STREAM_MAX_S``] the longest a run's event stream stays
            open (s); then it ends with a ``reconnect`` event (its ``after`` resumes it).
        outbound_allow: [``RESEARCH_OUTBOUND_ALLOW``, or the older ``RESEARCH_SCRAPE_ALLOW_HOSTS``]
            host names, IP addresses or CIDR networks that webhooks, Apprise targets and the
            scraper may reach although internal (``research.net.guard``), separated by commas,
            spaces or newlines.
        corpus_roots: [``RESEARCH_CORPUS_ROOTS``] folders under which the HTTP API and the MCP
            server may name a local corpus path (``research.jobs.corpus_access``), separated by
            the path separator ``:`` or newlines; unset: none (named corpora only).
        searxng_url: [``RESEARCH_SEARXNG_URL`` or ``SEARXNG_URL``].
        ncbi_api_key: [``NCBI_API_KEY``] secret.
        dashboard_url: [``RESEARCH_DASHBOARD_URL``] the dashboard's public base URL
            (``https://research.example.org``); notifications link to the run's pages under it.
        webhook_urls, apprise_urls: [``RESEARCH_WEBHOOK_URLS``, ``RESEARCH_APPRISE_URLS``] secret:
            notification targets of every run, separated by spaces, commas or newlines
            (``research.notify``).
        webhook_secret: [``RESEARCH_WEBHOOK_SECRET``] secret: the HMAC-SHA256 key webhook bodies
            are signed with (``X-Research-Signature``).
        notify_on: [``RESEARCH_NOTIFY_ON``] which run ends notify: ``complete``, ``failed``,
            ``awaiting_review`` (comma-separated; default all three).
        notify_key: [``RESEARCH_NOTIFY_KEY``] secret: the key per-run notification targets are
            encrypted with in Redis (default: a key file in the data dir).
        notify_timeout_s, notify_attempts, notify_backoff_s: [``RESEARCH_NOTIFY_TIMEOUT_S``,
            ``…_ATTEMPTS``, ``…_BACKOFF_S``] per-delivery timeout (s), attempts and first backoff (s).
    A value that does not parse falls back to its default (as before this object existed).
    """

    model_config = SettingsConfigDict(
        frozen=True,
        extra="ignore",
        case_sensitive=True,
        env_ignore_empty=True,
        populate_by_name=True,
    )

    data_dir: Path = Field(Path("data"), validation_alias="RESEARCH_DATA_DIR")
    redis_url: str | None = Field(None, validation_alias="REDIS_URL")
    corpus: Path | None = Field(None, validation_alias="RESEARCH_CORPUS")
    llm_model: str | None = Field(None, validation_alias="RESEARCH_LLM_MODEL")
    index_dir_override: Path | None = Field(None, validation_alias="RESEARCH_INDEX_DIR")
    job_backend: str = Field("thread", validation_alias="RESEARCH_JOB_BACKEND")
    auto_resume: bool = Field(True, validation_alias="RESEARCH_AUTO_RESUME")
    preindex: bool = Field(True, validation_alias="RESEARCH_PREINDEX")
    lease_ttl_ms: int = Field(15_000, validation_alias="RESEARCH_LEASE_TTL_MS")
    embed_precision: str = Field("auto", validation_alias="RESEARCH_EMBED_PRECISION")
    vector_cache: bool = Field(True, validation_alias="RESEARCH_VECTOR_CACHE")
    llm_concurrency: int | None = Field(None, validation_alias="RESEARCH_LLM_CONCURRENCY")
    llm_rpm: float = Field(500.0, validation_alias="RESEARCH_LLM_RPM")
    llm_timeout_s: float = Field(60.0, validation_alias="RESEARCH_LLM_TIMEOUT_S")
    llm_deadline_s: float = Field(600.0, validation_alias="RESEARCH_LLM_DEADLINE_S")
    llm_queue_s: float = Field(3600.0, validation_alias="RESEARCH_LLM_QUEUE_S")
    llm_backoff_s: float = Field(1.0, validation_alias="RESEARCH_LLM_BACKOFF_S")
    llm_max_attempts: int = Field(6, validation_alias="RESEARCH_LLM_MAX_ATTEMPTS")
    local_gap_turns: int = Field(0, ge=0, le=5, validation_alias="RESEARCH_LOCAL_GAP_TURNS")
    local_compress: Literal["offline", "model"] = Field(
        "offline", validation_alias="RESEARCH_LOCAL_COMPRESS"
    )
    llm_record: str | None = Field(None, validation_alias="RESEARCH_LLM_RECORD")
    llm_replay: str | None = Field(None, validation_alias="RESEARCH_LLM_REPLAY")
    http_timeout_s: float = Field(15.0, validation_alias="RESEARCH_HTTP_TIMEOUT")
    http_retries: int = Field(3, validation_alias="RESEARCH_HTTP_RETRIES")
    api_rate_per_min: float = Field(120.0, validation_alias="RESEARCH_API_RATE_PER_MIN")
    api_stream_max_s: float = Field(3600.0, validation_alias="RESEARCH_API_STREAM_MAX_S")
    outbound_allow: str = Field(
        "", validation_alias=_var("RESEARCH_OUTBOUND_ALLOW", "RESEARCH_SCRAPE_ALLOW_HOSTS")
    )
    corpus_roots: str = Field("", validation_alias="RESEARCH_CORPUS_ROOTS")
    searxng_url: str | None = Field(
        None, validation_alias=_var("RESEARCH_SEARXNG_URL", "SEARXNG_URL")
    )
    ncbi_api_key: SecretStr | None = Field(None, validation_alias="NCBI_API_KEY", exclude=True)
    dashboard_url: str | None = Field(None, validation_alias="RESEARCH_DASHBOARD_URL")
    webhook_urls: SecretStr | None = Field(
        None, validation_alias="RESEARCH_WEBHOOK_URLS", exclude=True
    )
    apprise_urls: SecretStr | None = Field(
        None, validation_alias="RESEARCH_APPRISE_URLS", exclude=True
    )
    webhook_secret: SecretStr | None = Field(
        None, validation_alias="RESEARCH_WEBHOOK_SECRET", exclude=True
    )
    notify_on: str = Field(
        "complete,failed,awaiting_review,batch.complete", validation_alias="RESEARCH_NOTIFY_ON"
    )
    notify_key: SecretStr | None = Field(None, validation_alias="RESEARCH_NOTIFY_KEY", exclude=True)
    notify_timeout_s: float = Field(5.0, validation_alias="RESEARCH_NOTIFY_TIMEOUT_S")
    notify_attempts: int = Field(3, validation_alias="RESEARCH_NOTIFY_ATTEMPTS")
    notify_backoff_s: float = Field(1.0, validation_alias="RESEARCH_NOTIFY_BACKOFF_S")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Priority: explicit arguments, environment, ``.streamlit/secrets.toml``, defaults."""
        return init_settings, env_settings, _SecretsToml(settings_cls)

    @field_validator("data_dir", "corpus", "index_dir_override", mode="after")
    @classmethod
    def _resolve(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @field_validator(*_LENIENT, mode="wrap")
    @classmethod
    def _lenient(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        try:
            return handler(value.strip().lower() if isinstance(value, str) else value)
        except ValidationError:
            # a field validator's info always names its field
            return cls.model_fields[cast(str, info.field_name)].default

    @property
    def default_corpus(self) -> Path:
        """``RESEARCH_CORPUS``, else the shared corpus when present, else ``{data_dir}/corpus``."""
        if self.corpus:
            return self.corpus
        return SHARED_CORPUS if SHARED_CORPUS.is_file() else self.data_dir / "corpus"

    @property
    def artifacts_root(self) -> Path:
        """``{data_dir}/research_artifacts`` (docs/design.md § Artifacts on disk)."""
        return self.data_dir / "research_artifacts"

    @property
    def index_dir(self) -> Path:
        """Where local-corpus search indexes are cached: ``RESEARCH_INDEX_DIR`` or
        ``{data_dir}/indexes`` (tests share one across the session)."""
        return self.index_dir_override or self.data_dir / "indexes"

    @property
    def reports_dir(self) -> Path:
        return self.data_dir / "reports"

    @property
    def cassette(self) -> tuple[str, str] | None:
        """The process-wide LLM cassette: ``("replay", path)``, ``("record", path)`` or None."""
        if self.llm_replay:
            return "replay", self.llm_replay
        return ("record", self.llm_record) if self.llm_record else None

    def public(self) -> dict[str, str | None]:
        """Settings safe to show or store (no secrets)."""
        return {
            "data_dir": str(self.data_dir),
            "redis": "external" if self.redis_url else "embedded",
            "default_corpus": str(self.default_corpus),
            "llm_model": self.llm_model,
        }


def _variables() -> tuple[str, ...]:
    names: list[str] = []
    for info in Settings.model_fields.values():
        alias = info.validation_alias
        names += (
            [str(a) for a in alias.choices] if isinstance(alias, AliasChoices) else [str(alias)]
        )
    return tuple(names)


_VARIABLES = _variables()
_built: dict[tuple[object, ...], Settings] = {}


def load_settings() -> Settings:
    """The settings for the current environment: built once per process and rebuilt only when
    one of its variables (or secrets.toml) changed — so a CLI flag or a test's ``monkeypatch``
    applies to the next call. ~2 µs when nothing changed."""
    key = (
        tuple(os.environ.get(n) for n in _VARIABLES),
        SECRETS_FILE.is_file() and _secrets_key(),
        os.getcwd(),
    )
    settings = _built.get(key)
    if settings is None:
        settings = Settings()
        if len(_built) > 64:  # a long test session changes the env often; keep the cache small
            _built.clear()
        _built[key] = settings
    return settings


def _secrets_key() -> int | None:
    try:
        return SECRETS_FILE.stat().st_mtime_ns
    except OSError:
        return None


JOB_BACKENDS = ("thread", "rq")


def job_backend() -> str:
    """``RESEARCH_JOB_BACKEND``: ``thread`` (default) or ``rq`` (read through ``load_settings``).

    Raises:
        InputError: any other value (the message lists the valid ones).
    """

    name = load_settings().job_backend
    if name not in JOB_BACKENDS:
        raise InputError(
            f"RESEARCH_JOB_BACKEND={name[:40]!r} is not a job backend; use one of "
            f"{', '.join(JOB_BACKENDS)}.",
            code="invalid_config",
        )
    return name
