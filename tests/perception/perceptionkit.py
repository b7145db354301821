"""Helpers for the perception tests: a tiny YOLO-style ONNX graph and generated scenes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def tiny_yolo(path: Path, side: int = 64, grid: int = 8, names: str | None = "{0: 'red thing'}",
              box_cells: int = 1) -> Path:
    """A YOLOv8-layout graph ([1, 4 + 1, grid²]): class score of a cell = mean red (channel 0) in it.

    Box of each anchor: centred on its cell, `box_cells` cells wide and high (in network pixels).
    Built with onnx.helper; no weights are downloaded.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    cell = side // grid
    centres = np.arange(grid) * cell + cell / 2
    gx, gy = np.meshgrid(centres, centres)
    size = np.full(grid * grid, cell * box_cells)
    boxes = np.stack([gx.ravel(), gy.ravel(), size, size])[None].astype(np.float32)
    nodes = [
        helper.make_node("Slice", ["images", "st", "en", "ax"], ["red"]),
        helper.make_node("AveragePool", ["red"], ["pooled"], kernel_shape=[cell, cell], strides=[cell, cell]),
        helper.make_node("Reshape", ["pooled", "shape"], ["score"]),
        helper.make_node("Concat", ["boxes", "score"], ["output0"], axis=1),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "st"),
        numpy_helper.from_array(np.array([1], np.int64), "en"),
        numpy_helper.from_array(np.array([1], np.int64), "ax"),
        numpy_helper.from_array(np.array([1, 1, grid * grid], np.int64), "shape"),
        numpy_helper.from_array(boxes, "boxes"),
    ]
    graph = helper.make_graph(
        nodes, "tiny-yolo", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, side, side])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 5, grid * grid])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if names is not None:
        helper.set_model_props(model, {"names": names})
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def scene_tasks(root: Path) -> list[dict[str, object]]:
    """The task records of a generated scenes folder."""
    return [json.loads(line) for line in (root / "tasks.jsonl").read_text().splitlines()]
