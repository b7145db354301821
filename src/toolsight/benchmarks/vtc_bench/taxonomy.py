"""VTC-Bench's task catalogue: categories (paper Table 4 order, tiers) and how a question carries its options.

Shared by the VTC-Bench loader (`toolsight.benchmarks.vtc_bench.benchmark`) and the VTC-style generators, so
the generators never import a benchmark module.
"""

from __future__ import annotations

# TSV category -> (the paper's task name, tier number, tier name); dict order = Table 4 column order
CATEGORIES: dict[str, tuple[str, int, str]] = {
    "ocr": ("Robust OCR", 1, "Visual Perception Enhancement"),
    "attention": ("Attention Focusing", 1, "Visual Perception Enhancement"),
    "perceptual": ("Perceptual Restoration", 1, "Visual Perception Enhancement"),
    "chart": ("Chart", 3, "Compositional Visual Reasoning"),
    "measure": ("Measurement", 2, "Quantitative Visual Estimation"),
    "counting": ("Counting", 2, "Quantitative Visual Estimation"),
    "math": ("Math", 3, "Compositional Visual Reasoning"),
    "spatial": ("Spatial Reasoning", 3, "Compositional Visual Reasoning"),
    "color": ("Color", 2, "Quantitative Visual Estimation"),
}
CATEGORY_ORDER: tuple[str, ...] = tuple(CATEGORIES)
CATEGORY_SHORT = {
    "ocr": "OCR", "attention": "Attn.", "perceptual": "Rest.", "chart": "Chart", "measure": "Meas.",
    "counting": "Count.", "math": "Math", "spatial": "Spat.", "color": "Color",
}


def question_with_options(question: str, options: dict[str, str]) -> str:
    """The question as the reference sends it: options appended as "\\n\\nOptions:\\n" + "A. x\\n" joined by "\\n"."""
    if not options:
        return question
    return question + "\n\nOptions:\n" + "\n".join(f"{k}. {v}\n" for k, v in options.items())
