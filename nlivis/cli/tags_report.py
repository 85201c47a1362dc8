"""The automatic annotation tagger against the MultiNLI dev gold tags (RepEval 2017): precision, recall
and F1 per tag.

    python -m nlivis tags-report --data-dir ../shared/data --markdown
"""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", required=True,
                        help="data root holding mnli_dev/ and mnli_annotations/ (e.g. ../shared/data)")
    parser.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    parser.add_argument("--markdown", action="store_true", help="print the README's markdown table")
    parser.add_argument("--show-errors", default=None, metavar="TAG",
                        help="also list the pairs the tagger misses or wrongly tags with TAG (default: none)")


def run(args: argparse.Namespace) -> int:
    from nlivis.analysis.tag_report import tags_report_command

    return tags_report_command(args)
