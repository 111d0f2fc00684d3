"""frogtui: a terminal coding assistant around FrogNano-4B in the Leaf harness."""
__version__ = "0.1.0"
