#!/usr/bin/env bash
# The one entry point on the GPU machine: install the carried wheels, show the GPU, then run
# the stages named as arguments, each one's output teed to $OUT/<stage>.log.
# The wheels: bench/device_wheels.sh, once, on this machine.
#   tests    pytest -m gpu (the GPU test files)
#   sppark   the sppark reference binary ($SPPARK_BIN, default .sppark/bench; README in
#            shared/anchors/sppark), so that the bench stage after it shares its GPU and clocks
#   bench    bench/gpu_bench.py (JSON result to $OUT; sppark's JSON line inside when the
#            sppark stage ran first)
#   overlap  bench/worker_overlap.py
#   scale    bench/scale.py: real celery workers on 1 then 2 GPUs, one Redis (JSON to $OUT);
#            SCALE_ARGS="--type filecoin --sector-size 32GiB --gpus 1 -c 2 --idle-jobs 2" for
#            Filecoin sectors (a sparse test sector's C1 under a development key);
#            --kill-keeper N: N sectors more with the key keeper killed under them
#   filecoin bench/filecoin_gpu.py: a development-key partition proof, a 32 GiB partition's
#            GPU time (FILECOIN_ARGS, e.g. "--prove 512MiB --time 32GiB,snap:32GiB,window:32GiB")
#   chaos    bench/chaos.py's GPU faults: kill -9 of a worker mid-compute and of the key
#            keeper, workers --gpu 0 -c 2 (CHAOS_ARGS, default 8 MiB demo sectors)
#   grpc     bench/grpc_gateway.py: a sector through proofq grpc beside a direct submit
#            (GRPC_ARGS, e.g. "--case 32GiB --repeat 5")
#   post     bench/post_latency.py: WinningPoSt / WindowPoSt request → verified proof on GPU 0
#            while its worker proves PoRep (POST_ARGS, e.g. "--post-size 32GiB --post-key
#            official --porep-type filecoin --c1 c1.json --params DIR --via grpc")
# Extra arguments for a stage go in BENCH_ARGS / PYTEST_ARGS / OVERLAP_ARGS / SCALE_ARGS /
# FILECOIN_ARGS / CHAOS_ARGS / GRPC_ARGS / POST_ARGS. The copy of the tree on the device has
# no .git: pass PROOFQ_COMMIT=<hash> so
# the JSON records the commit.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench/results}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

if compgen -G ".whl/*.whl" >/dev/null; then
    [ -f /tmp/site/.proofq-installed ] || {  # once per machine: device.sh may run again
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site .whl/*.whl && touch /tmp/site/.proofq-installed; } || exit 1
fi
# proofq's proof types are entry points of its metadata (snark.registry): this copy of the
# tree is not installed, so its metadata is written beside the wheels'.
python3 bench/dist_info.py /tmp/site >/dev/null || exit 1
export PYTHONPATH="/tmp/site:$PWD"
nvidia-smi -L

status=0
for stage in "$@"; do
    echo "=== $stage ($(date -u +%H:%M:%S))"
    case "$stage" in
        tests)   python3 -m pytest -m gpu -q -p no:cacheprovider ${PYTEST_ARGS:-tests} ;;
        sppark)  "${SPPARK_BIN:-.sppark/bench}" ${SPPARK_ARGS:---check-logs 16} ;;
        bench)   python3 bench/gpu_bench.py --out "$OUT" ${BENCH_ARGS:-} \
                     $( [ -s "$OUT/sppark.log" ] && echo --sppark "$OUT/sppark.log" ) ;;
        overlap) python3 bench/worker_overlap.py ${OVERLAP_ARGS:-} ;;
        scale)   python3 bench/scale.py --out "$OUT" ${SCALE_ARGS:-} ;;
        filecoin) python3 bench/filecoin_gpu.py --out "$OUT" ${FILECOIN_ARGS:-} ;;
        chaos)   python3 bench/chaos.py --gpu 0 --out "$OUT/chaos-gpu.json" \
                     ${CHAOS_ARGS:---sector 8388608 --only gpu-kill-worker gpu-kill-keeper} ;;
        grpc)    python3 bench/grpc_gateway.py --out "$OUT" ${GRPC_ARGS:-} ;;
        post)    python3 bench/post_latency.py --gpu 0 --out "$OUT" ${POST_ARGS:-} ;;
        *)       echo "unknown stage: $stage (tests, sppark, bench, overlap, scale, filecoin," \
                      "chaos, grpc, post)"
                 false ;;
    esac 2>&1 | tee "$OUT/$stage.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || { echo "=== $stage failed (exit $rc)"; status=$rc; }
done
exit $status
