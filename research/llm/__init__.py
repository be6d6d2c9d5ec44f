"""LLM plumbing for the litellm engine: one call function with retries and rate
limits (``client``), error mapping (``errors``), accounting (``accounting``), budgets
(``budget``), record/replay (``cassette``), model/price resolution (``models``) and the usage
report (``usage``)."""

from research.config import set_library_default

set_library_default("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price map at import
