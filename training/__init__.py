"""Training and evaluation of learning agents (stable-baselines3 / sb3-contrib)."""
