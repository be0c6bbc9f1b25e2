"""Fingerprints that tie a checkpoint to its run: the inputs' contents, the model, the prompt."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class RunFingerprint:
    """Digests of everything that decides a question's verdict, kept apart to say what changed."""

    questions_sha256: str
    ground_truth_sha256: str
    answers_sha256: str
    model_id: str
    prompt_sha256: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> RunFingerprint:
        values = {name: data[name] for name in cls.__dataclass_fields__}
        if not all(isinstance(value, str) for value in values.values()):
            raise ValueError("fingerprint fields must be strings")
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class InputNames:
    """How to name the three input files in a message."""

    questions: str
    ground_truth: str
    answers: str


def fingerprint_run(
    questions: bytes,
    ground_truth: bytes,
    answers: bytes,
    model_id: str,
    system_prompt: str,
) -> RunFingerprint:
    """Fingerprint the raw bytes of the three inputs, the model id and the system prompt."""
    return RunFingerprint(
        questions_sha256=sha256_hex(questions),
        ground_truth_sha256=sha256_hex(ground_truth),
        answers_sha256=sha256_hex(answers),
        model_id=model_id,
        prompt_sha256=sha256_hex(system_prompt.encode("utf-8")),
    )


def fingerprint_differences(
    saved: RunFingerprint, current: RunFingerprint, names: InputNames
) -> list[str]:
    """What differs between a checkpoint's fingerprint and this run's, in words."""
    differences = []
    if saved.questions_sha256 != current.questions_sha256:
        differences.append(f"the content of {names.questions}")
    if saved.ground_truth_sha256 != current.ground_truth_sha256:
        differences.append(f"the content of {names.ground_truth}")
    if saved.answers_sha256 != current.answers_sha256:
        differences.append(f"the content of {names.answers}")
    if saved.model_id != current.model_id:
        differences.append(f"the model (was {saved.model_id}, now {current.model_id})")
    if saved.prompt_sha256 != current.prompt_sha256:
        differences.append("the system prompt")
    return differences


def checkpoint_key(input_paths: Sequence[str]) -> str:
    """A file-name-safe key for the checkpoint of a run over these (absolute) input paths.

    The key names the files, not their contents, so that a later run of the same files
    finds the checkpoint even after one of them changed, and can say what changed.
    """
    return sha256_hex("\n".join(input_paths).encode("utf-8"))[:24]
