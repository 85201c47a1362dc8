"""NLTK's WordNet reader, working offline from Debian's WordNet 3.0 files.

Why this exists: the ANTO tag needs WordNet antonyms, and nothing here may download at run time.
Debian's `wordnet-base` + `wordnet-sense-index` packages put the Princeton database files in
/usr/share/wordnet. NLTK 3.10 will not open a corpus root outside its data paths (symlinks are
resolved and refused), so the files are COPIED into an NLTK data folder owned by nlivis
(default ~/.cache/nlivis/nltk_data/corpora/wordnet, added to `nltk.data.path`). Debian's files lack
`lexnames`, the list of the 45 lexicographer files that NLTK reads; it is written from the fixed
WordNet 3.0 list below. An NLTK WordNet that is already installed (`nltk.download("wordnet")`) is used
as it is.
"""
from __future__ import annotations

import os
import shutil
import warnings
from functools import lru_cache
from pathlib import Path

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
"""Where Debian's wordnet-base / wordnet-sense-index packages install the database."""

INSTALL_HINT = "apt-get install wordnet-base wordnet-sense-index"

WORDNET_FILES: tuple[str, ...] = tuple(
    [f"data.{pos}" for pos in ("noun", "verb", "adj", "adv")]
    + [f"index.{pos}" for pos in ("noun", "verb", "adj", "adv")]
    + [f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")]
    + ["index.sense"]
)
"""The database files NLTK's reader opens (index.sense is needed for lemma keys and antonym lookups)."""

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
    """WordNet cannot be opened; the message says how to install it."""


def default_nltk_data_dir() -> Path:
    """nlivis's own NLTK data folder; NLIVIS_NLTK_DATA overrides it."""
    override = os.environ.get("NLIVIS_NLTK_DATA")
    if override:
        return Path(override)
    return Path.home() / ".cache" / "nlivis" / "nltk_data"


def lexnames_text() -> str:
    """The `lexnames` file: `NN<TAB>name<TAB>category` per line."""
    return "".join(f"{number:02d}\t{name}\t{category}\n"
                   for number, (name, category) in enumerate(LEXICOGRAPHER_FILES))


def install_from_debian(source_dir: Path = DEBIAN_WORDNET_DIR,
                        nltk_data_dir: Path | None = None) -> Path:
    """Copy Debian's WordNet files into `<nltk_data_dir>/corpora/wordnet` and write `lexnames`.

    Idempotent: a complete copy whose file sizes match the source is left alone. The copy is built in
    a temporary folder and renamed into place, so a concurrent reader never sees half a database.
    Returns the corpus folder.
    """
    nltk_data_dir = Path(nltk_data_dir) if nltk_data_dir is not None else default_nltk_data_dir()
    source_dir = Path(source_dir)
    target = nltk_data_dir / "corpora" / "wordnet"
    missing = [name for name in WORDNET_FILES if not (source_dir / name).is_file()]
    if missing and _has_all_files(target):
        return target  # an earlier copy outlives the Debian packages
    if missing:
        raise WordNetUnavailable(
            f"WordNet files not found in {source_dir} (missing: {', '.join(missing)}); "
            f"install them with `{INSTALL_HINT}`"
        )
    if _is_complete_copy(source_dir, target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".wordnet-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    for name in WORDNET_FILES:
        shutil.copyfile(source_dir / name, staging / name)
    (staging / "lexnames").write_text(lexnames_text(), encoding="utf-8")
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    return target


def _has_all_files(target: Path) -> bool:
    return all((target / name).is_file() for name in (*WORDNET_FILES, "lexnames"))


def _is_complete_copy(source_dir: Path, target: Path) -> bool:
    return _has_all_files(target) and all(
        (target / name).stat().st_size == (source_dir / name).stat().st_size for name in WORDNET_FILES
    )


def _installed_nltk_wordnet():
    """The reader of an NLTK WordNet already on NLTK's data path, or None."""
    import nltk

    for resource in ("corpora/wordnet", "corpora/wordnet.zip/wordnet/"):
        try:
            root = nltk.data.find(resource)
        except LookupError:
            continue
        try:
            return _open_reader(root)
        except (OSError, LookupError):
            continue
    return None


def _open_reader(root):
    """NLTK's reader, without its warning that the Open Multilingual WordNet is absent (not used here)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions")
        return WordNetCorpusReader(root, None)


@lru_cache(maxsize=1)
def load_wordnet():
    """An NLTK `WordNetCorpusReader`; raises WordNetUnavailable with the install command if none.

    Order: an NLTK WordNet already installed, else a copy of Debian's files (made on first use).
    """
    import nltk

    installed = _installed_nltk_wordnet()
    if installed is not None:
        return installed
    data_dir = default_nltk_data_dir()
    corpus_root = install_from_debian(DEBIAN_WORDNET_DIR, data_dir)
    if str(data_dir) not in nltk.data.path:
        nltk.data.path.insert(0, str(data_dir))
    try:
        return _open_reader(nltk.data.find("corpora/wordnet"))
    except (OSError, LookupError) as error:
        raise WordNetUnavailable(f"NLTK could not open WordNet at {corpus_root}: {error}") from error


def wordnet_status() -> tuple[bool, str]:
    """(available, message) — for views and the ANTO tag's 'unavailable' note."""
    try:
        load_wordnet()
    except WordNetUnavailable as error:
        return False, str(error)
    return True, "WordNet 3.0 available"
