"""VisBrowse-Bench with the JSONL but no images, offline (issue 28, item 9): the run stops at the first
image host it cannot reach, with one error line saying so and how many downloads were not tried —
not after one time-out per image."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from clikit import assert_one_error_line, ts


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port  # closed again: connections are refused at once, as on a machine without network


def test_unreachable_image_host_stops_after_the_first_download(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{_closed_port()}"
    asked: list[str] = []

    class Counting(BaseHTTPRequestHandler):  # where the other images live: any request to it is counted
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *a: object) -> None:
            return

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    other = f"http://127.0.0.1:{srv.server_address[1]}"
    data = tmp_path / "vb"
    data.mkdir()
    rows = [{"id": i, "question": f"Which city is in picture {i}?", "answer": ["Paris"], "domain": "Geography",
             "sub_domain": "City", "image": [f"{base if i == 1 else other}/img_{i}.jpg"]} for i in range(1, 5)]
    (data / "VisBrowse-Bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = ts("run", "visbrowse-bench", "--data", str(data), "-m", "reference", "--limit", "2",
           "--out", str(tmp_path / "run"), TOOLSIGHT_CACHE=str(tmp_path / "cache"))
    # --limit 2 first: only the two selected tasks' images are looked for
    line = assert_one_error_line(r, 2, "2 image(s) not found", f"downloading stopped at the first: {base[7:]} unreachable",
                                 "so 1 were not tried", "pass its folder with --data")
    assert "img_1.jpg" in line
    assert asked == []  # nothing was tried after the unreachable host
    assert not (tmp_path / "run").exists()
    srv.shutdown()
    srv.server_close()
