"""What a linking run did: a plain value, importable without the model stack (the desk reads it from
its linking process without importing torch)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LinkSummary:
    documents: int = 0
    mentions: int = 0
    suggestions: int = 0
    seconds: float = 0.0
    unrouted: dict[str, int] = field(default_factory=dict)
    """Mentions per type that no route names (matched against all concepts)."""
    routing_warnings: list[str] = field(default_factory=list)

    @property
    def mentions_per_s(self) -> float:
        return self.mentions / self.seconds if self.seconds else 0.0
