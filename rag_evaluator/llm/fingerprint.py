"""Fingerprints that tie a checkpoint to its run: the inputs' contents, the model, the prompt."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rag_evaluator.families.grading.factual_accuracy import RENAMED_FAMILIES


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class RunFingerprint:
    """Digests of everything that decides a question's verdict, kept apart to say what changed.

    ``families`` are the model-judged families of the run and ``settings_sha256`` the digest
    of everything else that changes their verdicts (the judge's hedge phrases, the families'
    prompts and options, ``--score-missing``). Checkpoints of format 1 have neither
    (``None``): they ran the judge alone with settings that are no longer known.
    """

    questions_sha256: str
    ground_truth_sha256: str
    answers_sha256: str
    model_id: str
    prompt_sha256: str
    families: tuple[str, ...] | None = None
    settings_sha256: str | None = None

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["families"] = None if self.families is None else list(self.families)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> RunFingerprint:
        required = ("questions_sha256", "ground_truth_sha256", "answers_sha256", "model_id")
        values = {name: data[name] for name in (*required, "prompt_sha256")}
        if not all(isinstance(value, str) for value in values.values()):
            raise ValueError("fingerprint fields must be strings")
        families = data.get("families")
        settings = data.get("settings_sha256")
        if families is not None and not (
            isinstance(families, list) and all(isinstance(name, str) for name in families)
        ):
            raise ValueError("fingerprint families must be a list of names")
        if settings is not None and not isinstance(settings, str):
            raise ValueError("fingerprint settings must be a digest")
        return cls(
            **values,  # type: ignore[arg-type]
            families=None if families is None else tuple(families),
            settings_sha256=settings,
        )


def settings_digest(settings: object) -> str:
    """The digest of a JSON-able description of the verdict-changing settings."""
    text = json.dumps(settings, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256_hex(text.encode("utf-8"))


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
    families: Sequence[str] = ("judge",),
    settings: object = None,
) -> RunFingerprint:
    """Fingerprint the raw bytes of the three inputs, the model id, the system prompt, the
    judged families and their verdict-changing settings."""
    return fingerprint_digests(
        (sha256_hex(questions), sha256_hex(ground_truth), sha256_hex(answers)),
        model_id,
        system_prompt,
        families,
        settings,
    )


def fingerprint_digests(
    input_digests: tuple[str, str, str],
    model_id: str,
    system_prompt: str,
    families: Sequence[str] = ("judge",),
    settings: object = None,
) -> RunFingerprint:
    """``fingerprint_run`` of inputs given by the hex SHA-256 of their bytes."""
    questions, ground_truth, answers = input_digests
    return RunFingerprint(
        questions_sha256=questions,
        ground_truth_sha256=ground_truth,
        answers_sha256=answers,
        model_id=model_id,
        prompt_sha256=sha256_hex(system_prompt.encode("utf-8")),
        families=tuple(families),
        settings_sha256=settings_digest(settings),
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
    # With --dataset the three inputs are one file: name it once.
    differences = list(dict.fromkeys(differences))
    if saved.model_id != current.model_id:
        differences.append(f"the model (was {saved.model_id}, now {current.model_id})")
    if saved.prompt_sha256 != current.prompt_sha256:
        differences.append("the system prompt")
    # A family renamed since changed its version with its name: never resumed.
    renamed = [name for name in saved.families or () if name in RENAMED_FAMILIES]
    today = tuple(RENAMED_FAMILIES.get(name, name) for name in saved.families or ())
    if renamed and today == current.families:
        differences.append(
            " and ".join(
                f"the name and version of the {RENAMED_FAMILIES[name]} family ({name} then)"
                for name in renamed
            )
        )
    elif saved.families is not None and saved.families != current.families:
        differences.append(
            f"the judged metric families (was {', '.join(saved.families)}, "
            f"now {', '.join(current.families or ())})"
        )
    elif saved.settings_sha256 is not None and saved.settings_sha256 != current.settings_sha256:
        differences.append(
            "the judging settings (--hedge-phrases, --score-missing or a family's options)"
        )
    return differences


def checkpoint_key(input_paths: Sequence[str]) -> str:
    """A file-name-safe key for the checkpoint of a run over these (absolute) input paths.

    The key names the files, not their contents, so that a later run of the same files
    finds the checkpoint even after one of them changed, and can say what changed.
    """
    return sha256_hex("\n".join(input_paths).encode("utf-8"))[:24]
