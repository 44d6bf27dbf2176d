"""Finding and consolidating near-duplicate skills (see `DeduplicationManager`)."""

from ace.deduplication.manager import (
    DeduplicationConfig,
    DeduplicationManager,
    DeduplicationReport,
    DuplicatePair,
)

__all__ = ["DeduplicationConfig", "DeduplicationManager", "DeduplicationReport", "DuplicatePair"]
