"""Files a user uploads in the app (challenge sets), kept under the cache root by content hash: the same bytes
reuse one file, and a file is written whole (a temporary sibling renamed into place) or not at all."""
from __future__ import annotations

import hashlib
from pathlib import Path

from nlivis.store.files import atomic_write_bytes, cache_root, sanitized_name

UPLOADS_FOLDER = "uploads"
"""Under the cache root: uploaded files, one folder per content hash."""


def keep_upload(name: str, data: bytes, cache_dir: str | Path | None = None) -> Path:
    """Write an uploaded file as `<cache>/uploads/<sha256[:16]>/<name>` (the name's last part only, made safe;
    its suffix tells the reader the format) and return its path; the same bytes reuse the file."""
    base = Path(name).name
    stem, dot, suffix = base.partition(".")
    safe = sanitized_name(stem) + (dot + "".join(c for c in suffix if c.isalnum() or c == ".")[:20] if dot else "")
    folder = cache_root(cache_dir) / UPLOADS_FOLDER / hashlib.sha256(data).hexdigest()[:16]
    path = folder / safe
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
    return path
