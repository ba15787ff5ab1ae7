#!/usr/bin/env bash
# Installs what IBM NESTful's scorer needs to produce reference outputs for
# toolenv's tests (eval/metrics/testdata/nestful_parsers/reference.py):
# Debian's scikit-learn 1.2.1 for the system python3. The scorer's other
# imports (pandas, tqdm, jsonlines) do not touch the figures; the generator
# stubs them when they are missing. Needs root and Debian's package mirror.
set -euo pipefail
apt-get update -qq
apt-get install -y -qq python3-sklearn
/usr/bin/python3 -c 'import sklearn; print("scikit-learn", sklearn.__version__)'
