"""Shared by the firmware suite's conftest and tests: the build settings it uses
and the figures it reports at the end (flash, RAM, frames, stack, answers)."""
NAME = "FwBall"
SEED = 42
FIGURES = {}
