#!/usr/bin/env bash
# The leaderboard's baselines: every method on every track, five training seeds each. Each finished run leaves its results file; run the script again to resume where it stopped
# (a finished seed is skipped, a training run cut by a kill is resumed from its last checkpoint).
#   nice -n 19 nohup tools/benchmark_baselines.sh > benchmark.log 2>&1 &
#   TRACKS="yacht-solo-1m" tools/benchmark_baselines.sh      # some tracks only
set -u
OUT=${OUT:-results/benchmark}
RUNS=${RUNS:-runs/benchmark}
TRACKS=${TRACKS:-"yacht-solo-1m yahtzee-solo-1m yatzy-solo-1m yacht-duel-1m yacht-solo-10m yahtzee-solo-10m yatzy-solo-10m yacht-duel-10m"}
for track in $TRACKS; do
  case $track in
    # the planning agent first, then the masked DQN, every seed (minutes each), then the PPO methods seed by seed (an
    # hour or more each)
    *-duel-*) first="plan2:configs/benchmark/plan2.yaml dqn:configs/benchmark/dqn.yaml"; methods="ppo-duel:configs/benchmark/ppo_duel.yaml ppo-plain:configs/benchmark/ppo_plain.yaml" ;;
    *) first="plan:configs/benchmark/plan.yaml dqn:configs/benchmark/dqn.yaml"; methods="ppo-plain:configs/benchmark/ppo_plain.yaml ppo-recipe:configs/benchmark/ppo_recipe.yaml" ;;
  esac
  for entry in $first; do
    for seed in 0 1 2 3 4; do
      python -m agents.benchmark run --track "$track" --config "${entry#*:}" --method "${entry%%:*}" --seeds "$seed" \
        --out "$OUT" --runs-dir "$RUNS" || echo "FAILED: $track ${entry%%:*} seed $seed"
    done
  done
  for seed in 0 1 2 3 4; do
    for entry in $methods; do
      python -m agents.benchmark run --track "$track" --config "${entry#*:}" --method "${entry%%:*}" --seeds "$seed" \
        --out "$OUT" --runs-dir "$RUNS" || echo "FAILED: $track ${entry%%:*} seed $seed"
    done
  done
done
