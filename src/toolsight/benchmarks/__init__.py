"""Layer 4: one package per benchmark (loader, settings, prompts, loop, scorer, tools, generated set), the
generic `Benchmark` base and the registry that is the one list of built-ins."""
