"""How often the twins' hand-written neutrals are right: the hand audit's judgements of the two self-pair neutral
strata (`nlivis/data/audit/counterparts.jsonl`), kept where today's rules still make the judged pair and make it as a
twin (`self_pairs.hand_written_twin`: a hypernym or hyponym of `lexicons.CAPTION_IS_A_BY_HAND`).

    python scripts/twin_audit.py --data-dir ../shared/data

The judgements come from the audit's draw of the whole strata (`python -m nlivis audit --section counterparts`),
which WordNet's hypernyms fail (95.8% and 94.4%); this reads the subset augmentation draws as twins.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nlivis.analysis.audit import COUNTERPART_KINDS, COUNTERPART_STRATA, fingerprint  # noqa: E402
from nlivis.analysis.self_pairs import hand_written_twin, self_pair_edits  # noqa: E402
from nlivis.analysis.significance import wilson_interval  # noqa: E402
from nlivis.data.audit_set import read_audit_file  # noqa: E402
from nlivis.workflows.audit import read_snli_dev  # noqa: E402

NEUTRAL_STRATA = {COUNTERPART_STRATA[group] for group in (("hypothesis", "neutral"), ("premise", "neutral"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, help="data root holding SNLI dev (e.g. ../shared/data)")
    parser.add_argument("--judgements", default=str(ROOT / "nlivis/data/audit/counterparts.jsonl"),
                        help="the counterparts' judgements (default: the audit's)")
    args = parser.parse_args()
    dev = {f"{split}:{pair.id}": pair for split, pair in read_snli_dev(args.data_dir)}  # the audit's source ids
    items = [item for item in read_audit_file(args.judgements)
             if item.stratum in NEUTRAL_STRATA and item.source in dev]
    made = twins = right = 0
    for item in items:
        premise = dev[item.source].premise
        for edit, label in self_pair_edits(premise, "nli", COUNTERPART_KINDS):
            if label == "neutral" and fingerprint(edit.premise, edit.hypothesis, item.expects) == item.fingerprint:
                made += 1
                if hand_written_twin(edit, label, premise):
                    twins += 1
                    right += bool(item.judgement.label_right)
                    if not item.judgement.label_right:
                        print(f"wrong: {item.source} {item.change}: {item.judgement.note}")
    low, high = wilson_interval(right, twins) if twins else (0.0, 0.0)
    print(f"judged {len(items)} neutral self-pairs; {made} are still made; {twins} of them are twins, "
          f"{right} right ({100 * right / max(1, twins):.1f}%, Wilson 95% {100 * low:.1f}–{100 * high:.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
