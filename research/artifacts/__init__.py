"""Artifacts: every raw tool output saved on disk and compressed into a summary card
(docs/design.md § Tool-result compression)."""

from research.artifacts.tool_results import (
    MAX_PART,
    MAX_SEQ,
    ArtifactStore,
    PreparedCall,
    artifact_filename,
    artifact_path,
    artifacts_dir,
    context_message,
    read_artifact,
    slug,
)

__all__ = [
    "ArtifactStore",
    "MAX_PART",
    "MAX_SEQ",
    "PreparedCall",
    "artifact_filename",
    "artifact_path",
    "artifacts_dir",
    "context_message",
    "read_artifact",
    "slug",
]
