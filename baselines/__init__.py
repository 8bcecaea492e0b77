"""Scripted CPU opponents. Each decides from a ``PlayerView`` (its own hand and public
information) and nothing else; ``make_cpu(name, seed)`` builds one by name."""

from gofish_env.cpus import CPU, CPU_LEVELS, RandomCPU, make_cpu

__all__ = ["CPU", "CPU_LEVELS", "RandomCPU", "make_cpu"]
