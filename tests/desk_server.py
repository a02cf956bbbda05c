"""The assessment desk as the tests drive it: ``python -m irbench assess CONFIG --pool web`` in a
process of its own (``Server``: started, killed, started again, stopped), people's links added
from the command line, httpx clients signed in with a link (``client``), and pages in
Playwright on Debian's Chromium (``chromium``, the ``browser`` fixture of tests/conftest.py;
``sign_in``, ``open_page``). Playwright is imported only where a page is opened."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from irbench import cli

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian "
                                    "package 'chromium'; .ci/run installs it where it can)")
STARTED = "irbench assess: pool 'web' at"  # the first line, once the store and documents open
DEFAULT_PORT = ":8765/"  # where a link printed while no server runs points
LISTEN_SECONDS = 60
POLL_SECONDS = 0.05


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``irbench assess`` in a process of its own, as an organiser starts it: on ``port`` (a
    free one when not given), with ``--overlap overlap`` and ``extra`` arguments, in ``env``
    (this process's, with this checkout on PYTHONPATH, when not given). ``start`` returns
    once the port is open, the first ``lines`` lines it printed in ``self.lines`` (bytes when
    ``text`` is false); ``stop`` returns what it printed after them."""

    def __init__(self, config: Path, *, extra: tuple[str, ...] = (), overlap: float = 0.0,
                 env: dict[str, str] | None = None, port: int | None = None, lines: int = 1,
                 text: bool = True):
        self.config, self.extra, self.overlap = config, extra, overlap
        self.env = env if env is not None else {**os.environ, "PYTHONPATH": str(ROOT)}
        self.port = port if port is not None else free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.count, self.text = lines, text
        self.links: dict[str, str] = {}
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()  # a killed process's: nothing more is read from it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "irbench", "assess", str(self.config), "--pool", "web",
             "--port", str(self.port), "--overlap", f"{self.overlap:g}", *self.extra],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=self.text)
        assert self.proc.stdout is not None
        self.lines: list[Any] = [self.proc.stdout.readline() for _ in range(self.count)]
        started = STARTED if self.text else STARTED.encode()
        if started not in self.lines[0]:
            raise AssertionError(f"the server did not start: {self.lines!r} {self.stop()!r}")
        self._wait_listening()

    def _wait_listening(self) -> None:
        """Until the port takes a connection (uvicorn binds it after the first line), polled;
        the process ended or the deadline passed: stopped, and what it said raised."""
        assert self.proc is not None
        deadline = time.monotonic() + LISTEN_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the server did not listen: {self.stop()!r}") from None
                time.sleep(POLL_SECONDS)

    def kill(self) -> None:
        """SIGKILL, as a crash or a power cut ends it."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> Any:
        """Ctrl-C, as an organiser stops it (killed if it has not ended within 30 s); what it
        printed after ``self.lines`` (str, or bytes when ``text`` is false)."""
        assert self.proc is not None and self.proc.stdout is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stdout.read()

    def on_port(self, link: str) -> str:
        """A link printed while no server ran (the default port), on this server's port."""
        return link.replace(DEFAULT_PORT, f":{self.port}/")


def add_link(config: Path, name: str, capsys, *extra: str) -> str:
    """``irbench assess --add-assessor NAME EXTRA`` in this process; the link it prints."""
    capsys.readouterr()
    assert cli.main(["assess", str(config), "--pool", "web", "--add-assessor", name,
                     *extra]) == 0
    return capsys.readouterr().out.strip().rsplit(" ", 1)[1]


def client(url: str, link: str) -> httpx.Client:
    """A browser-like client of the server at ``url`` signed in with ``link``, its page's CSRF
    token in its headers (an organiser's: the token of their people section's calls)."""
    signed = httpx.Client(base_url=url, follow_redirects=True, timeout=30)
    assert signed.get("/", params={"token": link.rsplit("token=", 1)[1]}).status_code == 200
    page = signed.get("/")
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" content="([^"]+)"', page.text)
    if found:
        signed.headers["X-CSRF-Token"] = found.group(1)
    else:
        signed.headers["X-CSRF-Token"] = signed.get("/api/people").json()["csrf"]
    return signed


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium launched by Playwright (a sync Browser), closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page, link: str) -> None:
    """Open a personal link: the sign-in page refreshes to the server's root."""
    page.goto(link)
    page.wait_for_url(link.split("?", 1)[0])
    page.wait_for_load_state()


def open_page(browser, link: str, width: int = 1366, height: int = 800, document: bool = True):
    """An assessor's page in a new context of ``width`` x ``height``, signed in with ``link``,
    once its first call is answered (and its document shown, unless ``document`` is false);
    ``page.errors`` collects the console's errors and the page's uncaught exceptions."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    sign_in(page, link)
    expect(page.locator("body")).to_have_attribute("data-answered", "1")
    if document:
        expect(page.locator("#doc-text")).not_to_be_empty()
    page.errors = errors
    return page
