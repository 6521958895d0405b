#!/usr/bin/env bash
# Builds minigen's training corpus from Debian packages into OUT_DIR (default /work/minigen-data/corpus):
# pretrain_{train,heldout}.jsonl, sft_{train,heldout}.jsonl, tokenizer_corpus.txt and SOURCES.md.
#
#   bash tools/corpus/build_corpus.sh [OUT_DIR]
#
# Installs the packages it reads if they are missing (needs root for apt-get). dict-gcide is not installed: its
# copyright file is read from the downloaded .deb, for SOURCES.md, and it is left out (GPL; see SOURCES.md).
# The parsing is in build_corpus.py, run with Debian's Python (/usr/bin/python3). Deterministic: the same packages
# give byte-identical outputs.
set -euo pipefail

OUT_DIR="${1:-/work/minigen-data/corpus}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PACKAGES=(bible-kjv bible-kjv-text dict-wn dict-devil dict-jargon fortune-mod fortunes fortunes-min fortunes-zh)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "error: run as root (apt-get install ${missing[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "$WORK_DIR"' EXIT

# The whole King James Bible, one verse a line: "Ge1:1 In the beginning God created the heaven and the earth."
bible -f -l 1000000 Gen1:1-Rev22:21 >"$WORK_DIR/kjv.txt"

# dict-gcide's license, without installing it.
gcide_copyright=""
if (cd "$WORK_DIR" && apt-get download -qq dict-gcide >/dev/null 2>&1); then
  dpkg-deb --fsys-tarfile "$WORK_DIR"/dict-gcide_*.deb |
    tar -xO ./usr/share/doc/dict-gcide/copyright >"$WORK_DIR/gcide-copyright" || true
  [[ -s "$WORK_DIR/gcide-copyright" ]] && gcide_copyright="$WORK_DIR/gcide-copyright"
else
  echo "note: could not download dict-gcide to re-read its license; SOURCES.md keeps the recorded one" >&2
fi

/usr/bin/python3 "$HERE/build_corpus.py" --out "$OUT_DIR" --bible-text "$WORK_DIR/kjv.txt" \
  --gcide-copyright "$gcide_copyright"
