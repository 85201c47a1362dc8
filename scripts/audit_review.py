"""A second judge for the hand audit: a blind sample to judge, then how far the two judges agree.

    python scripts/audit_review.py --data-dir ../shared/data --draw 60 > sample.jsonl
    python scripts/audit_review.py --compare nlivis/data/audit/second_judge.jsonl

`--draw N` prints N judged items the audit draws today (all three sections pooled, a seeded random sample,
`analysis.audit_review.review_sample`) with their texts and without their judgements, one JSON line each, for a
second judge who has not seen the first one's; the judge writes one audit line per item (the format of
`nlivis/data/audit/*.jsonl`: keys, `grammatical`, `label_right`, `correct_label`, `note`; no dev sentence). The
sample's texts are SNLI dev's: keep the sample out of the repository. `--compare FILE` prints how the judgements of
FILE agree with the audit set's (label and grammar, Cohen's kappa) and the items the two disagree on; it reads the
audit set's files only (nothing is drawn, no --data-dir needed).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.audit import drawn_as_json  # noqa: E402
from nlivis.analysis.audit_review import REVIEW_SEED, agreement, review_sample  # noqa: E402
from nlivis.data.audit_set import read_audit_file  # noqa: E402
from nlivis.workflows.audit import SECTIONS, read_judged, run_audit  # noqa: E402


def comparison_table(result: dict) -> list[str]:
    """The agreement of `analysis.audit_review.agreement` as markdown lines."""
    label, grammar = result["label"], result["grammatical"]
    return ["| items | label: both right | both wrong | first only right | second only right | agree | kappa |"
            " grammatical: agree | kappa |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| {result['items']} | {label['both_right']} | {label['both_wrong']} | {label['first_only_right']} | "
            f"{label['second_only_right']} | {label['agree']}/{label['of']} | {label['kappa']} | "
            f"{grammar['agree']}/{grammar['of']} | {grammar['kappa']} |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="the folder holding snli/ (the audit's dev pairs; --draw needs it)")
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--draw", type=int, metavar="N", help="print a blind sample of N judged items")
    task.add_argument("--compare", type=Path, metavar="FILE", help="a second judge's audit lines to compare")
    parser.add_argument("--seed", type=int, default=REVIEW_SEED,
                        help=f"the sample's seed (default {REVIEW_SEED}, the one the shipped review used)")
    args = parser.parse_args()
    if args.draw is not None:
        if args.draw < 1:
            parser.error("--draw takes a positive number of items")
        if args.data_dir is None:
            parser.error("--draw needs --data-dir: the sample is drawn from what the audit draws of SNLI dev")
        audit = run_audit(args.data_dir, tuple(SECTIONS))
        drawn = [item for section in SECTIONS for item in audit.drawn[section]]
        judged = [item for section in SECTIONS for item in audit.judged[section]]
        for item in review_sample(drawn, judged, args.draw, args.seed):
            print(drawn_as_json(item))
        return
    judged = [item for items in read_judged().values() for item in items]
    try:
        second = read_audit_file(args.compare)
    except ValueError as error:
        parser.error(str(error))
    result = agreement(judged, second)
    print("\n".join(comparison_table(result)))
    changes = {item.key: item.change for item in judged}
    for name, keys in (("label", result["label_disagreements"]), ("grammar", result["grammar_disagreements"])):
        for key in keys:
            print(f"- {name} disagreement: {key[0]} · {key[1]} · {changes[tuple(key)]}")
    if result["unknown_to_first"]:
        print(f"{result['unknown_to_first']} item(s) of {args.compare} have no judgement in the audit set")


if __name__ == "__main__":
    main()
