"""toolsight-shapes: an example third-party toolsight benchmark (count coloured shapes with its own tool).

toolsight finds it through the `toolsight.benchmarks` entry point in this package's pyproject.toml
(`shapes = "toolsight_shapes.benchmark:ShapesBenchmark"`); nothing in toolsight names it.
"""
