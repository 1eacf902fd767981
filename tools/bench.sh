#!/usr/bin/env bash
# Runs a benchmark program on demand; each prints a table and writes JSON to build/ci/bench/.
#   tools/bench.sh selection  selection quality: thousands of simulated tunings (ours vs aitune),
#                             then decision stability on a real model (MobileNetV3-Small)
#   tools/bench.sh ties       ties on real models: three candidates identical to the baseline,
#                             ours vs aitune's schedule and rule (SqueezeNet 1.1, ResNet-18)
#   tools/bench.sh models     tune the five CPU models: TorchScript variants, the native runtime and
#                             AOTInductor variants side by side (made first: about 30 min on 2 cores)
#   tools/bench.sh overhead   TunedModule::forward vs calling the selected backend directly
#   tools/bench.sh trace      real per-call latencies: noise, drift and the first call after a switch
#   tools/bench.sh memory     resident memory over repeated tunings of one model (SqueezeNet 1.1),
#                             and after a failed and a cancelled tuning; fails over its bound
#   tools/bench.sh real       real architectures from torchvision, transformers and timm, exported
#                             (tools/export_model.py) and tuned; outputs compared with eager
#                             PyTorch's; one table with each failure's cause (about 35 min)
#   tools/bench.sh peers      the tuner's selection against what a user could run instead, in one
#                             process in shuffled interleaved rounds (tools/bench_peers.py): eager
#                             PyTorch, torch.compile (default, max-autotune), each AOTInductor
#                             variant, ONNX Runtime and OpenVINO, on the five CPU models; the
#                             ratio selected / best peer with its 95 % interval, and each
#                             runtime alone against interleaved (models made first, as for models);
#                             with --accuracy cosine=C,top1=P%, the tuner's int8 variants and the
#                             peers that quantise (ONNX Runtime, NNCF) too, each judged by it,
#                             and BERT-base (cosine only: no class scores)
#   tools/bench.sh int8-cost  what the int8 variants cost a tuning under --accuracy: the default
#                             pool against it without them, alternated, on the five as peers
#                             --accuracy makes them (tools/bench_int8_tuning_time.py; about 12 min
#                             once the models are made)
#   tools/bench.sh serving    requests from 1, 2 and 4 threads through one tuned .pt2 module
#                             (MobileNetV3-Small, ResNet-18): the selection and each family's
#                             winner, p50/p99 and requests/s
#   tools/bench.sh callers    the pick tuned at 4 callers (--callers 4) against the 1-caller pick,
#                             both served at 4 callers (MobileNetV3-Small, ResNet-18, Transformer)
#   tools/bench.sh load       8 callers x 2000 requests on each family's winner (MobileNetV3-Small):
#                             no error, outputs checked against the baseline, memory flat
#   tools/bench.sh shapes     the price of a range: BERT and GPT-2 exported with a dynamic sequence
#                             length (8..256) against static exports at 32, 128 and 256 and against
#                             padding to 256, per runtime (ONNX Runtime, OpenVINO, AOTInductor;
#                             eager PyTorch for reference), in shuffled interleaved rounds
#                             (tools/bench_shapes.py; no C++ target; about 35 min on 2 cores, exports included)
#   tools/bench.sh fleet      1, 4 and 8 aitune-tune processes started at once (each a machine),
#                             on one Redis against each with its own file, cold and warm:
#                             time until each has its pick and CPU-seconds in all (ResNet-18,
#                             MobileNetV3-Small; tools/bench_fleet.py; about 15 min)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-}"
case "$which" in
  selection) targets=(aitune-bench-selection aitune-bench-selection-real) ;;
  ties) targets=(aitune-bench-ties) ;;
  models) targets=(aitune-bench-models) ;;
  overhead) targets=(aitune-bench-overhead) ;;
  trace) targets=(aitune-bench-latency-trace) ;;
  memory) targets=(aitune-bench-memory) ;;
  serving) targets=(aitune-bench-serving) ;;
  load) targets=(inference-server) ;;
  callers) targets=(aitune-bench-serving) ;;
  real) targets=(aitune-tune) ;;
  peers) targets=(aitune-tune aitune-bench-alone) ;;
  int8-cost) targets=(aitune-tune) ;;
  shapes) targets=() ;;
  fleet) targets=(aitune-tune) ;;
  *) echo "usage: tools/bench.sh selection|ties|models|overhead|trace|memory|serving|load|callers|real|peers|int8-cost|shapes|fleet" >&2
     exit 2 ;;
esac
tools/install-deps.sh
tools/setup-venv.sh
# The benchmarks that make int8 variants or quantising peers need the quantisers (NNCF, torchao).
case "$which" in peers|int8-cost) tools/setup-venv.sh --quantize ;; esac
# The ci preset leaves the benchmarks out of CI's build: they are built here, on demand (a mode
# that runs no C++ program builds nothing).
if [ ${#targets[@]} -gt 0 ]; then
  cmake --preset ci -DAITUNE_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build --preset ci --target "${targets[@]}"
fi
out=build/ci/bench
mkdir -p "$out"
. tools/torch-versions.sh
models="$(aitune_models_dir .venv)"
make_models() { .venv/bin/python tools/make_models.py --out "$models" "$@"; }
five=(resnet18 mobilenet_v3_small squeezenet1_1 efficientnet_b0 transformer_encoder)
case "$which" in
  selection)
    "$out/aitune-bench-selection" --tunings 2000 --json "$out/selection.json"
    make_models mobilenet_v3_small
    "$out/aitune-bench-selection-real" "$models/mobilenet_v3_small.pt" 1x3x224x224 --runs 10 \
      --budget-s 20 --json "$out/selection_real.json" ;;
  ties)
    make_models squeezenet1_1 resnet18
    "$out/aitune-bench-ties" --models-dir "$models" --runs 10 --json "$out/ties.json" ;;
  models)
    make_models "${five[@]}"
    make_models --format pt2 --variants default,freezing,max_autotune,bf16 "${five[@]}"
    "$out/aitune-bench-models" --models-dir "$models" --json "$out/models.json" ;;
  peers)
    shift
    variants=default,freezing,max_autotune,bf16,onnx,openvino
    # Under an accuracy budget the tuner's int8 variants race too: archives of their own, with
    # them (NNCF and torchao: setup-venv.sh --quantize, above). The image models are trained on the
    # synthetic task first (tools/synthetic_task.py), calibrated and judged on its inputs: with
    # random weights their class scores are near ties that any rounding reorders, so top-1
    # agreement could judge no reduced precision. The transformers keep random weights and
    # calibration (a benchmark's, not a model's), and are judged without top-1.
    task=()
    if [[ " $* " == *" --accuracy"* ]]; then
      models="$models/int8-task" variants="$variants,onnx_int8,openvino_int8,aoti_int8"
      task=(--task synthetic)
      # And a config-built BERT-base (128 tokens), without max-autotune, as it was measured
      # (docs/benchmarks.md): its AOTInductor max-autotune compilation was never timed here.
      make_models --format pt2 --variants "${variants/max_autotune,/}" bert_base
    fi
    make_models --format pt2 --variants "$variants" "${task[@]}" "${five[@]}"
    .venv/bin/python tools/bench_peers.py --tune build/ci/examples/aitune-tune \
      --alone-bench "$out/aitune-bench-alone" --models-dir "$models" --report-dir "$out/peers" --json "$out/peers.json" "$@" ;;
  int8-cost)
    shift
    models="$models/int8-task"
    make_models --format pt2 --variants default,freezing,max_autotune,bf16,onnx,openvino,onnx_int8,openvino_int8,aoti_int8 \
      --task synthetic "${five[@]}"
    .venv/bin/python tools/bench_int8_tuning_time.py --tune build/ci/examples/aitune-tune \
      --models-dir "$models" --json "$out/int8_tuning_time.json" "$@" ;;
  shapes)
    shift
    .venv/bin/python tools/bench_shapes.py --work-dir "$out/shapes-models" \
      --json "$out/shapes.json" "$@" ;;
  overhead)
    "$out/aitune-bench-overhead" "$out/overhead.json" ;;
  memory)
    make_models squeezenet1_1
    "$out/aitune-bench-memory" --models-dir "$models" --runs 4 --json "$out/memory.json" ;;
  real)
    shift
    .venv/bin/python tools/bench_real.py --tune build/ci/examples/aitune-tune --out "$models/real" \
      --variants default,freezing,onnx,openvino --json "$out/real.json" "$@" ;;
  serving)
    # Every variant but max-autotune (what a user exports), in a folder of their own.
    make_models --out "$models/serving" --format pt2 --variants default,freezing,bf16,onnx,openvino \
      mobilenet_v3_small resnet18
    for name in mobilenet_v3_small resnet18; do
      "$out/aitune-bench-serving" "$models/serving/$name.pt2" --input 1x3x224x224 \
        --clients 1,2,4 --requests 2000 --json "$out/serving_$name.json"
    done ;;
  callers)
    # The pick tuned at 4 callers against the pick tuned at one, both served at 4 callers.
    make_models --out "$models/serving" --format pt2 --variants default,freezing,bf16,onnx,openvino \
      mobilenet_v3_small resnet18 transformer_encoder
    for name in mobilenet_v3_small resnet18 transformer_encoder; do
      "$out/aitune-bench-serving" "$models/serving/$name.pt2" \
        --input "$(cat "$models/serving/$name.shape")" --compare-callers 4 --rounds 15 \
        --requests 400 --json "$out/callers_$name.json"
    done ;;
  load)
    # 8 callers x 2000 requests on each family's winner (tests/support/check_load.sh; CI runs
    # it on a small model).
    make_models --out "$models/serving" --format pt2 --variants default,freezing,bf16,onnx,openvino \
      mobilenet_v3_small
    bash tests/support/check_load.sh build/ci/examples/inference-server \
      "$models/serving/mobilenet_v3_small.pt2" "$out/load" 8 2000 --input 1x3x224x224 ;;
  fleet)
    make_models resnet18 mobilenet_v3_small
    .venv/bin/python tools/bench_fleet.py --tune "$out/../examples/aitune-tune" \
      --model "resnet18=$models/resnet18.pt:1x3x224x224" \
      --model "mobilenet_v3_small=$models/mobilenet_v3_small.pt:1x3x224x224" \
      --processes 1,4,8 --json "$out/fleet.json" ;;
  trace)
    make_models mobilenet_v3_small squeezenet1_1 resnet18 efficientnet_b0
    for spec in "mobilenet_v3_small eager bf16" "squeezenet1_1 eager optimized" \
                "resnet18 frozen optimized" "efficientnet_b0 optimized bf16"; do
      set -- $spec
      "$out/aitune-bench-latency-trace" "$models/$1.pt" 1x3x224x224 "$2" "$3" 400 \
        "$out/trace_$1.json"
    done ;;
esac
