"""Policies that play Yacht: baselines, the exact DP optimum and trained agents, plus their evaluation."""
