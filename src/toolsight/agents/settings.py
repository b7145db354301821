"""Agent settings: the prompt, tools, caps and image handling a setting gives the agent loop."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolsight.models.base import GenerateConfig

AnswerFormat = Literal["raw", "answer_tag", "boxed"]


class QuestionView(BaseModel):
    """How an agent that brings its own prompt template (`pyvision`, `deepeyes`) reads a turn.

    Such an agent does not send the setting's `user_template` (it holds the benchmark's own driver
    texts); it asks for the question itself. The templates take what `user_template` takes
    (`{prompt}`, `{options}` as "A. text" lines, the turn's scalar `meta` fields) and
    `{prompt_without_options}`: the prompt with the lines that list its options removed. The options
    an agent lists apart are the turn's own (`Turn.options`). A benchmark declares its view on its
    class (`Benchmark.question_view`); docs/agents.md has the table.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(default="{prompt}", description="the question as one text, its options written in where "
                      "the benchmark lists them (what PyVision gets as --question)")
    question: str = Field(default="{prompt_without_options}", description="the question without its options, "
                          "for templates that list the turn's options apart (DeepEyes' 'Question:')")


class AgentSettings(BaseModel):
    """Everything the loop needs to know about a setting. Benchmarks build these."""

    model_config = ConfigDict(extra="forbid")

    name: str = "default"
    agent: str = Field(default="default", description="agent that runs the task (toolsight.agents.registry)")
    loop: Literal["official", "toolsight"] = Field(
        default="toolsight",
        description="official: reproduce the benchmark's reference driver's requests; toolsight: the improved loop",
    )
    system_prompt: str | None = None
    user_template: str = "{prompt}"
    answer_format: AnswerFormat = "raw"
    tools: list[str] = Field(default_factory=list, description="tool-set names from toolsight.tools.registry")
    max_tool_calls: int = Field(default=20, ge=0)
    max_rounds: int = Field(default=20, ge=1)
    max_total_tokens: int | None = Field(default=None, ge=1)
    time_limit_s: float | None = Field(default=900.0, gt=0)
    task_timeout_s: float | None = Field(
        default=None, gt=0, description="the runner's --task-timeout when the run gives none (None: the runner's 1200 s)",
    )
    image_feedback: Literal["auto", "tool", "user"] = "auto"
    tool_image_note: str = "Here are the images produced by tool call {call_id}."
    max_images_in_context: int | None = Field(default=12, ge=1)
    max_image_pixels: int | None = Field(default=2_000_000, ge=1)
    send_images: Literal["all", "first"] = "all"
    history: Literal["model", "gold"] = "model"
    history_images: bool = False
    text_protocol: bool | None = None
    no_tools_on_last_round: bool = False
    remaining_note: str | None = None
    remaining_note_from: int = Field(default=5, ge=0)
    last_round_note: str | None = Field(default=None, description="replaces remaining_note when one round is left; {question}")
    nudge: str | None = None
    final_nudge: str | None = None
    max_nudges: int = Field(default=0, ge=0)
    cap_answer: str = ""
    question_view: QuestionView | None = Field(
        default=None, description="how agents with their own prompt template (pyvision, deepeyes) read a turn; "
                                  "None: the benchmark's own (Benchmark.question_view)")
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
