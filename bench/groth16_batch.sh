#!/usr/bin/env bash
# The groth16 type through the whole path (submit -> Celery -> the private cluster's workers ->
# verified proofs) on this machine, once with MSM window tables off and once with 8 GiB of
# them per worker, so the pair shares a GPU and a run. Usage, from the repository root (after
# bench/device.sh has installed the carried wheels on a GPU machine):
#   bash bench/groth16_batch.sh DIR     # DIR holds circuit.zkey and witness.wtns
#                                       # (bench/snarkjs_compare.py's chain-<k> fixtures)
set -uo pipefail
DIR="${1:?fixture directory with circuit.zkey and witness.wtns}"
PQ='import sys; sys.argv[0]="proofq"; from client.cli import main; main()'
export PYTHONPATH="${PYTHONPATH:-/tmp/site:$PWD}"
W="$DIR/witness.wtns"
KEY=$(python3 -W ignore -c "$PQ" keys add "$DIR/circuit.zkey" | tail -1)
echo "key: $KEY"
for budget in 0 8589934592; do
    echo "=== PROOFQ_MSM_TABLE_BYTES=$budget"
    PROOFQ_MSM_TABLE_BYTES=$budget timeout 300 python3 -W ignore -c "$PQ" bench batch \
        --type groth16 --key "$KEY" $(printf -- "--wtns $W %.0s" 1 2 3 4 5 6 7 8) \
        -c 48 -j 6 2>&1 | tail -8
done
