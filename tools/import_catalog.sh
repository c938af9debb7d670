#!/bin/sh
# tools/import_catalog.sh GRADSIM: (re)write the transformer model files of
# models/ from the Hugging Face configs in models/configs/ (their sources:
# models/configs/README.md), with `gradsim model import`. Run from the
# repository root after ./dev.sh build:
#   tools/import_catalog.sh build/gradsim
# The CLI tests import them again and compare byte for byte.
set -eu
g=${1:-build/gradsim}
for c in models/configs/*.json; do
  name=$(basename "$c" .json)
  "$g" model import --config "$c" --out "models/$name.model"
done
