#!/usr/bin/env bash
# GRPO with the PaperGym rubric reward on verl; written by `papergym train verl-prepare`.
#
#   [NNODES=1] [GPUS_PER_NODE=8] [VERL_REWARD_KEYS=current|legacy] [TRAIN_BATCH_SIZE=N] \
#   [PAPERGYM_REWARD_JUDGE=offline|llm ...] [DRY_RUN=1] bash run_grpo.sh [Hydra overrides...]
#
# The settings live in grpo.yaml beside this script; extra `key=value` arguments are passed
# to verl after them and win. On a Ray cluster, run it on the head node after `ray start`.
# README.md explains every variable. Needs bash >= 4.4 and papergym installed in $PYTHON.
set -euo pipefail

BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
export NNODES="${NNODES:-1}"
export GPUS_PER_NODE="${GPUS_PER_NODE:-8}"
export VERL_REWARD_KEYS="${VERL_REWARD_KEYS:-current}"

# grpo.yaml + this shell's variables -> verl's overrides, NUL-separated (paths may hold spaces).
ARGS_FILE="$(mktemp)"
trap 'rm -f "$ARGS_FILE"' EXIT
"$PYTHON" -m papergym.train.verl_prepare hydra-args "$BUNDLE" >"$ARGS_FILE"
mapfile -d '' -t ARGS <"$ARGS_FILE"

CMD=("$PYTHON" -m verl.trainer.main_ppo "${ARGS[@]}" "$@")
if [[ "${DRY_RUN:-0}" == 1 ]]; then
  printf '%s\n' "${CMD[@]}"
  exit 0
fi
rm -f "$ARGS_FILE"
trap - EXIT
exec "${CMD[@]}"
