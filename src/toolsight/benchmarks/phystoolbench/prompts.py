"""PhysToolBench's prompt suffixes, as stored in its data (cot_prompt / no_cot_prompt = question + suffix).

Shared by the PhysToolBench loader (`toolsight.benchmarks.phystoolbench.benchmark`) and the PhysToolBench-style
generator, so the generator never imports a benchmark module.
"""

COT_SUFFIX = (
    "\nNoted that the objects in the image are the only available things to do the task. If there is/are "
    "objects you can use, answer the number of the object. If not, answer \"None\". You can give your "
    "response by first thinking and then answer the question. The response should be in the following "
    "format:\n```\n### Thinking Process\nPut the thinking process in here.\n### Answer\n1, 2, 3, 4, 5, 6, "
    "... or \"None\"\n```"
)
NO_COT_SUFFIX = (
    "\nNoted that the objects in the image are the only available things to do the task. If there is/are "
    "objects you can use, directly answer the number of the object(e.g. 1, 2, 3, 4, 5, 6, ...). If not, "
    "answer \"None\". Your answer should either be a single number, or a list of numbers separated by "
    "commas, or 'None'."
)
