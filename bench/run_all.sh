#!/usr/bin/env bash
# Every measurement in bench/RESULTS.md, in order; writes bench/results/*.md (about an hour on the
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
