#!/usr/bin/env bash
# Builds the libFuzzer target of the PDF reader and runs it from a seed corpus made of small files
# of ../shared/pdf-corpus (copied to a temporary directory, never into the repository).
# Usage: Fuzz/run.sh [seconds]   (default 600); findings go to Fuzz/findings/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
swift build -c release --sanitize fuzzer -Xswiftc -DFUZZING --product instant-pdf-fuzz --scratch-path .build-fuzz
binary="$(swift build -c release --sanitize fuzzer -Xswiftc -DFUZZING --scratch-path .build-fuzz --show-bin-path)/instant-pdf-fuzz"

seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
# Every file of the corpus under 64 KB: plain, damaged, encrypted, with xref and object streams.
find ../shared/pdf-corpus -name '*.pdf' -size -64k -exec cp {} "$seeds/" \;
mkdir -p Fuzz/findings Fuzz/corpus
# Swift's own backtracer would take the crash signal before libFuzzer saves the crashing input.
SWIFT_BACKTRACE=enable=no "$binary" Fuzz/corpus "$seeds" -dict=Fuzz/pdf.dict -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time="$seconds" -artifact_prefix=Fuzz/findings/ -print_final_stats=1
