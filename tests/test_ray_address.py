"""An address where something answers, but no Ray head, is refused at once and before anything is built
(issue 24 item 10: it built the name index and the output folder, then failed in ray.init after 35 s)."""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from app.cli import main
from app.resources import demo_dir
from core.batch.ray_engine import check_reachable
from core.errors import CuralinkError


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no lines in the test output
        pass


@pytest.fixture
def web_server():
    """A real HTTP/1 server on the loopback: it answers TCP, as the probe's proxy did."""
    server = HTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_service_that_is_not_ray_is_named_as_such(web_server) -> None:
    with pytest.raises(CuralinkError, match="not a Ray head"):
        check_reachable(web_server, timeout=5)


def test_link_batch_builds_nothing_before_it_refuses_the_address(
    web_server, demo_template: Path, tmp_path: Path, capsys
) -> None:
    pytest.importorskip("ray", reason="Ray is the `cluster` extra: pip install -e '.[cluster]'")
    project = Path(shutil.copytree(demo_template, tmp_path / "project"))
    indexes_before = sorted(p.name for p in (project / "index").iterdir())
    out = tmp_path / "linked"
    code = main(
        [
            "-p",
            str(project),
            "link-batch",
            str(demo_dir() / "abstracts.pubtator"),
            "--out",
            str(out),
            "--engine",
            "ray",
            "--address",
            web_server,
        ]
    )
    assert code != 0
    assert "not a Ray head" in capsys.readouterr().err
    assert not out.exists()
    assert sorted(p.name for p in (project / "index").iterdir()) == indexes_before
