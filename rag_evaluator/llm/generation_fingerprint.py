"""What ties a generate checkpoint to its run: the documents, the examples, the options, the
model and the prompt. A run finding a checkpoint whose fingerprint differs says what changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rag_evaluator.llm.fingerprint import settings_digest, sha256_hex

GENERATION_KIND = "generate"


def documents_digest(files: Sequence[tuple[str, bytes]]) -> str:
    """The digest of a documents folder: every file's relative name and bytes, in name order."""
    digest = hashlib.sha256()
    for name, data in sorted(files, key=lambda item: item[0]):
        digest.update(name.encode("utf-8") + b"\0" + sha256_hex(data).encode("ascii") + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class GenerationFingerprint:
    """Digests of everything that decides a generate run's questions."""

    documents_sha256: str
    examples_sha256: str
    options_sha256: str
    model_id: str
    prompt_sha256: str
    kind: str = GENERATION_KIND

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> GenerationFingerprint:
        names = ("documents_sha256", "examples_sha256", "options_sha256", "model_id")
        values = {name: data[name] for name in (*names, "prompt_sha256")}
        if not all(isinstance(value, str) for value in values.values()):
            raise ValueError("fingerprint fields must be strings")
        if data.get("kind") != GENERATION_KIND:
            raise ValueError("not a generate fingerprint")
        return cls(**values)  # type: ignore[arg-type]


def generation_fingerprint(
    documents_sha256: str,
    examples: bytes,
    options: object,
    model_id: str,
    system_prompt: str,
) -> GenerationFingerprint:
    """The fingerprint of a generate run (``options``: a JSON-able description of the options
    that change which questions are asked)."""
    return GenerationFingerprint(
        documents_sha256=documents_sha256,
        examples_sha256=sha256_hex(examples),
        options_sha256=settings_digest(options),
        model_id=model_id,
        prompt_sha256=sha256_hex(system_prompt.encode("utf-8")),
    )


def generation_differences(
    saved: GenerationFingerprint, current: GenerationFingerprint
) -> list[str]:
    """What differs between a checkpoint's fingerprint and this run's, in words."""
    differences = []
    if saved.documents_sha256 != current.documents_sha256:
        differences.append("the documents")
    if saved.examples_sha256 != current.examples_sha256:
        differences.append("the examples (--examples)")
    if saved.options_sha256 != current.options_sha256:
        differences.append("the options (--count, --types, --chunk-chars or --pairing)")
    if saved.model_id != current.model_id:
        differences.append(f"the model (was {saved.model_id}, now {current.model_id})")
    if (
        saved.prompt_sha256 != current.prompt_sha256
        and saved.examples_sha256 == current.examples_sha256
    ):
        # The examples are part of the prompt; otherwise the built-in prompt itself changed.
        differences.append("the generator's prompt (a new version of rag-eval)")
    return differences
