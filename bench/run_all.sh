#!/usr/bin/env bash
# Every measurement in bench/RESULTS.md, in order; writes bench/results/*.md (about 80 minutes on the
# 2-core development machine). Run it with the machine otherwise idle: each output's header warns
# when an `nlivis train` process ran during the measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
BASELINE=197deb5      # models before the speed changes (benchmark code of the working tree)
ESAN_LSTM=8ea9295     # after the joint BiLSTM call, before the token-convolution change

/usr/bin/time -f "quick run wall time: %e s" python -m nlivis bench --quick --out bench/results/quick.md
python -m nlivis bench --out bench/results/full.md
python bench/at_commit.py "$BASELINE" --out bench/results/baseline-full.md
python bench/at_commit.py "$ESAN_LSTM" --models esan --skip-app --out bench/results/esan-after-lstm.md
# Side by side (alternating rounds), the figures the before/after section of RESULTS.md relies on
python bench/ab.py "$BASELINE" worktree --models gcnn,diin,attentive_conv,esan,amn --sizes shipped --rounds 5 \
    --out bench/results/ab-baseline-shipped.md
python bench/ab.py 197deb5 7a4791e --models amn --sizes shipped,paper --out bench/results/ab-amn.md
python bench/ab.py 7a4791e 8ea9295 --models esan --sizes shipped,paper --out bench/results/ab-esan-lstm.md
python bench/ab.py 8ea9295 678cef5 --models gcnn,attentive_conv,esan,diin --sizes shipped --out bench/results/ab-conv.md
# The unpacked MaskedLSTM against the packed one (14f9727, main before it), evaluation batch sizes, FLOP corrections
python bench/ab.py 14f9727 1ed5a05 --models esan,esim --sizes shipped --rounds 5 --threads 1 --out bench/results/ab-unpacked-lstm.md
python bench/eval_batch.py --sizes shipped --rounds 3 --out bench/results/eval-batch-shipped.md
python bench/eval_batch.py --sizes paper --pairs 256 --rounds 3 --out bench/results/eval-batch-paper.md
python bench/flops_check.py --out bench/results/flops-check.md
# The peer comparison needs MatchZoo-py in a scratch environment (see bench/peer_esim.py); skipped without it
if [ -x /tmp/peer/bin/python ]; then
  /tmp/peer/bin/python bench/peer_esim.py --rounds 5 --threads 1 --sizes shipped,paper --out bench/results/peer-esim.md
fi
# MiniLM against the same encoder in Hugging Face transformers needs transformers in a bench environment of its own
# (bench/RESULTS.md, "MiniLM against Hugging Face transformers"); without it the rows say it is not installed
if [ -x /work/benchvenv/bin/python ]; then
  OMP_NUM_THREADS=1 /work/benchvenv/bin/python -m nlivis bench --quick --models gcnn --threads 1 \
      --out bench/results/minilm-transformers.md
fi
# The Pair explorer drawing MiniLM's attention, before the layer × head grid (0625f75) and now
if [ -f checkpoints/minilm-snli-small/COMPLETE ]; then
  OMP_NUM_THREADS=1 python bench/head_grid_draw.py --before 0625f75 --warm 2 --out bench/results/head-grid-draw.md
fi
# Attribution: integrated gradients (50 steps) for one pair on the five shipped models
OMP_NUM_THREADS=1 python bench/attribution_speed.py --threads 1 --out bench/results/attribution-speed.md
# Faithfulness over a split: the code before issue 20 and now, 40 pairs, one process; and the 500-pair target
OMP_NUM_THREADS=1 python bench/faithfulness_speed.py --data-dir ../shared/data/snli/esnli_tokenized --sample 40 \
    --workers 1 --commit fc2cdb0 --out bench/results/faithfulness-speed-40-before.md
OMP_NUM_THREADS=1 python bench/faithfulness_speed.py --data-dir ../shared/data/snli/esnli_tokenized --sample 40 \
    --workers 1 --out bench/results/faithfulness-speed-40.md
OMP_NUM_THREADS=1 python bench/faithfulness_speed.py --data-dir ../shared/data/snli/esnli_tokenized --sample 500 \
    --out bench/results/faithfulness-speed-500.md
# How much of a pair's evidence the word vectors carry, against the whole token representation
OMP_NUM_THREADS=1 python bench/attribution_inputs.py --data-dir ../shared/data/snli/esnli_tokenized --sample 200 \
    --out bench/results/attribution-inputs.md
# Where the time goes: top operators of a training step at the shipped size
for model in gcnn diin attentive_conv esan amn; do
  echo "== $model"
  python bench/profile_model.py "$model" shipped --steps 5 --rows 5 2>&1 | grep -E "aten::|Self CPU time total|operator calls" \
      | awk '{ if ($1 ~ /aten/) print $1, $2, $3; else print }'
done > bench/results/profile-shipped.txt
# Issue 22: edits of new pairs through the five shipped snli-small models; the NLI probe suite, first and cached run
OMP_NUM_THREADS=1 python bench/edits_speed.py --threads 1 --out bench/results/edits-speed.md
OMP_NUM_THREADS=1 python bench/probe_speed.py --data-dir ../shared/data --threads 1 --out bench/results/probe-speed.md
# Issue 22 in the browser: the Edits tab, warm, new and seen pairs (needs Debian's chromium)
OMP_NUM_THREADS=1 python bench/browser_edits_speed.py --pairs 8 --out bench/results/browser_edits_speed.md
# Issue 30: what plotly, Vega-Lite and ECharts cost a Streamlit page opened in a new tab (needs Debian's chromium)
OMP_NUM_THREADS=1 python bench/chart_libraries.py --rounds 5 --out bench/results/chart_libraries.md
# Training dynamics: what recording them costs per training step (issue 23)
python bench/dynamics_overhead.py --steps 30 --rounds 3 --out bench/results/dynamics-overhead.md
# The Data map's WebGL scatter in headless Chromium: the draw alone, and the page on a warm server
OMP_NUM_THREADS=1 python bench/datamap_draw.py --repeat 10 --warm 3 --out bench/results/datamap_draw.md
# Targeted augmentation: candidate generation (uncached, 300 training pairs), cached reuse, training overhead (issue 23)
OMP_NUM_THREADS=1 python bench/augment_cost.py --pairs 300 --steps 10 --rounds 1 --threads 1 --out bench/results/augment-cost.md
