"""The VisualToolBench judge prompt as the official script renders it, typed from the reference.

Source: `xi1ngang/VisualToolBench` @ d4f200a0, `scripts/run_judge_single_turn.py`,
`LLM_Judge.LLMasJudge` (the f-string `prompt = f\"\"\"…\"\"\"`, identical in
`run_judge_multi_turn.py`). Kept apart from `toolsight.scoring.rubric` on purpose: the tests
compare toolsight's prompt with this text, so a typo in either one fails them. Trailing double
spaces are part of the original (Markdown line breaks).
"""

from __future__ import annotations

_LINES = [
    "",
    "        You are an expert evaluator tasked with judging whether a model's answer meets a specific rubric criterion.  ",
    "        You will be provided with:  ",
    "        - a question  ",
    "        - a golden (reference) answer  ",
    "        - a rubric criterion  ",
    "        - the model's answer  ",
    "",
    "        Your task is to decide if the model's answer **meets** or **does not meet** the given rubric criterion,"
    " referencing the golden answer only as needed.",
    "",
    "        ### Inputs:",
    "        **Question:** <QUESTION>  ",
    "",
    "        **Golden Answer:** <GOLDEN>  ",
    "",
    "        **Rubric Criterion:** <RUBRIC>  ",
    "",
    "        **Model Answer:** <MODEL>  ",
    "",
    "        ### Important Notes:",
    "        - The model's answer does not need to be correct to meet the criterion if correctness is not required.  ",
    '        *Example:* If the rubric is "The model should show its reasoning process to answer the question," the'
    " answer can be incorrect but still meet the rubric if model's reasoning process is present.  ",
    "        - For writing style or presentation rubrics, apply leniency.  ",
    "        *Example:* If the rubric asks for conciseness, answers that are slightly longer than the golden answer"
    " but still reasonably length should be considered as meeting the rubric.",
    "        - The model's answer may satisfy the rubric implicitly without explicitly mentioning the exact term."
    " This should still be considered as meeting the criterion if model's answer is reasonable and makes sense.  ",
    '        *Example:* If the rubric is "The model should demonstrate understanding of photosynthesis," and the'
    ' model states "Plants make their own food using sunlight," without explicitly mentioning the term'
    ' "photosynthesis," it still meets the criterion.',
    "",
    "        ### Output Format:",
    "        Return your judgement in the following JSON format:",
    "        {",
    '            "explanation": "Brief explanation of your judgement",',
    '            "judge_result": "Met" or "Not Met"',
    "        }",
    "        ",
]


def official_judge_prompt(question: str, golden_answer: str, rubric: str, model_answer: str) -> str:
    """The prompt `LLMasJudge(question, golden_answer, model_answer, rubric_criteria)` sends."""
    text = "\n".join(_LINES)
    for mark, value in (("<QUESTION>", question), ("<GOLDEN>", golden_answer), ("<RUBRIC>", rubric),
                        ("<MODEL>", model_answer)):
        text = text.replace(mark, value, 1)
    return text
