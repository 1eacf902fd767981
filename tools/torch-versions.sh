# The PyTorch versions the project is tested on, and where each one lives; sourced by the tools.
#   2.11  the GPU machine's, the primary platform: tools/requirements-torch.txt, .venv/, preset ci
#   2.15  PyPI's newest: tools/requirements-torch-2.15.txt, .venv-2.15/, preset ci-2.15
# aitune_torch_version VERSION sets requirements, venv and preset for VERSION (empty: the value of
# AITUNE_TORCH, else 2.11), or says which versions there are and returns 2.
aitune_tested_torch_versions="2.11 2.15"
aitune_torch_version() {
  torch_version="${1:-${AITUNE_TORCH:-2.11}}"
  case "$torch_version" in
    2.11) requirements=tools/requirements-torch.txt venv=.venv preset=ci ;;
    2.15) requirements=tools/requirements-torch-2.15.txt venv=.venv-2.15 preset=ci-2.15 ;;
    *) echo "aitune: PyTorch '$torch_version' is not a tested version (one of:" \
            "$aitune_tested_torch_versions)" >&2
       return 2 ;;
  esac
}
# aitune_models_dir VENV prints the folder for the models VENV's torch makes: models/<version>/
# (AOTInductor archives compiled by one version are refused by another's loader).
aitune_models_dir() {
  echo "models/$("$1/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])')"
}
