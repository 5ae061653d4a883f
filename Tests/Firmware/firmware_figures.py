"""Shared by the firmware suite's conftest and tests: the build settings it uses
and the figures it reports at the end (flash, RAM, frames, stack, answers)."""
NAME = "FwBall"
SEED = 42
TINY_RING_NAME = "FwRing16"  # 8 bytes: the whole name fits in the advertisement
FIGURES = {}
