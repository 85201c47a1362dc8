"""Disk cache of spaCy analyses, so a dataset is tagged once per pipeline version.

Files are gzipped JSON lines (never pickle) under `cache_root()`: ~/.cache/nlivis by default, the
`NLIVIS_CACHE_DIR` environment variable, or an explicit folder. A file's name carries a digest of
its key (the caller's key — for dataset splits the source files' content hash — plus
`pipeline_version()` and `FEATURE_FORMAT_VERSION`), so a changed source, spaCy model or format reads
a different file. The first line is a header that also holds a digest of the pairs' ids and texts,
checked on every read; the remaining lines hold one pair each. Files are written to a temporary name
and renamed, so a crash never leaves half a file under the real name. A file that fails to parse is
reported with a warning and rebuilt.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import warnings
import zlib
from pathlib import Path
from typing import Iterable, Sequence

from nlivis.features.sentences import SentenceAnalysis
from nlivis.store.files import atomic_write_bytes, cache_root, file_digest
from nlivis.features.spacy_pipeline import installed_pipeline_version

FEATURE_FORMAT_VERSION = 1
"""Bump when SentenceAnalysis or the tag mapping changes, so old cache files stop matching."""

CACHE_FORMAT = "nlivis-analysis-cache"


def texts_digest(records: Iterable[tuple[str, str, str]]) -> str:
    """sha256 over (id, premise, hypothesis) triples: what the cached analyses must belong to."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()


def _encode(analysis: SentenceAnalysis) -> list[list[str]]:
    return [list(analysis.tokens), list(analysis.tags), list(analysis.lemmas)]


def _decode(value: object) -> SentenceAnalysis:
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, list) for v in value)):
        raise ValueError("each sentence must be [tokens, tags, lemmas]")
    return SentenceAnalysis(tuple(value[0]), tuple(value[1]), tuple(value[2]))


class AnalysisCache:
    """One folder of cache files; `read`/`write` by key."""

    def __init__(self, cache_dir: str | Path | None = None, pipeline: str | None = None):
        self.root = cache_root(cache_dir)
        self._pipeline = pipeline

    @property
    def pipeline(self) -> str:
        if self._pipeline is None:
            self._pipeline = installed_pipeline_version()
        return self._pipeline

    def path_for(self, key: str) -> Path:
        full = json.dumps([key, self.pipeline, FEATURE_FORMAT_VERSION])
        digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:24]
        readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)[:48].strip("_") or "pairs"
        return self.root / f"analysis-{readable}-{digest}.jsonl.gz"

    def read(
        self, key: str, content_digest: str, count: int
    ) -> list[tuple[SentenceAnalysis, SentenceAnalysis]] | None:
        """The cached analyses for `key`, or None when absent, stale or corrupt (with a warning)."""
        path = self.path_for(key)
        if not path.is_file():
            return None
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                header = json.loads(handle.readline())
                if not (isinstance(header, dict) and header.get("format") == CACHE_FORMAT
                        and isinstance(header.get("content"), str)
                        and isinstance(header.get("count"), int)):
                    raise ValueError("missing or wrong header line")
                if header.get("content") != content_digest or header.get("count") != count:
                    return None  # same key, different pairs: stale, rebuilt silently
                rows = []
                for line in handle:
                    premise, hypothesis = json.loads(line)
                    rows.append((_decode(premise), _decode(hypothesis)))
            if len(rows) != count:
                raise ValueError(f"header promises {count} pairs, file holds {len(rows)}")
        except (OSError, EOFError, zlib.error, ValueError, TypeError) as error:
            warnings.warn(f"feature cache {path} is corrupt ({error}); rebuilding it", stacklevel=3)
            return None
        return rows

    def write(
        self, key: str, content_digest: str, rows: Sequence[tuple[SentenceAnalysis, SentenceAnalysis]]
    ) -> Path:
        """Write atomically (temporary file in the same folder, then rename)."""
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {"format": CACHE_FORMAT, "feature_format": FEATURE_FORMAT_VERSION,
                  "pipeline": self.pipeline, "key": key, "content": content_digest,
                  "count": len(rows)}
        lines = [json.dumps(header) + "\n"]
        lines.extend(json.dumps([_encode(premise), _encode(hypothesis)], ensure_ascii=False) + "\n"
                     for premise, hypothesis in rows)
        atomic_write_bytes(path, gzip.compress("".join(lines).encode("utf-8"), compresslevel=5))
        return path
