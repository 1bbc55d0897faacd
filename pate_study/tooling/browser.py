"""Headless Chromium driven over the Chrome DevTools Protocol: shared by the JupyterLab check
(:mod:`pate_study.tooling.labcheck`) and the site's browser check (:mod:`pate_study.tooling.site`).

No browser download and no extra Python package: Debian's ``chromium`` and tornado's websocket client (which JupyterLab
and MyST-NB's Jupyter stack already bring). Nothing here needs papermill or torch, so the site's check runs in the
light venv.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def as_root() -> bool:
    """Whether this process runs as root (Chromium and Jupyter then need their no-sandbox / allow-root flags)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def find_browser() -> str | None:
    """Path of a Chromium-family browser, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class DevTools:
    """A minimal Chrome DevTools Protocol client over tornado's websocket."""

    def __init__(self, url: str):
        self.url, self.ws, self.next_id = url, None, 0

    async def __aenter__(self):
        # tornado comes with the lab extra (JupyterLab), needed only by the browser check
        from tornado.websocket import websocket_connect  # the lab extra's tornado, only for the browser check

        self.ws = await websocket_connect(self.url, max_message_size=256 * 1024 * 1024)
        return self

    async def __aexit__(self, *exc):
        self.ws.close()

    async def call(self, method: str, wait: float = 60.0, **params) -> dict:
        self.next_id += 1
        message_id = self.next_id
        self.ws.write_message(json.dumps({"id": message_id, "method": method, "params": params}))

        async def answer():
            while True:
                raw = await self.ws.read_message()
                if raw is None:
                    raise ConnectionError("the browser closed the DevTools connection")
                message = json.loads(raw)
                if message.get("id") == message_id:
                    if "error" in message:
                        raise RuntimeError(f"{method}: {message['error']}")
                    return message.get("result", {})

        return await asyncio.wait_for(answer(), wait)

    async def evaluate(self, expression: str, timeout: float = 60.0):
        """Evaluate JavaScript (awaiting a promise) and return its value; raise on a JavaScript exception."""
        result = await self.call(
            "Runtime.evaluate", wait=timeout, expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise RuntimeError(f"JavaScript failed: {text}")
        return result.get("result", {}).get("value")


def wait_for_http(url: str, timeout: float, process: subprocess.Popen, what: str) -> str:
    """The body of ``url`` once it answers (polled every 0.3 s), while ``process`` runs; raises after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{what} did not answer {url} within {timeout:.0f} s")


def start_headless_browser(browser: str, profile: Path, *extra_args: str) -> tuple[subprocess.Popen, str]:
    """Start headless Chromium with a fresh ``profile`` folder and DevTools on a free port; return the process (stop it
    with :func:`stop_process`) and the DevTools WebSocket URL of its page. Raises if it does not start in 60 s."""
    command = [
        browser,
        "--headless=new",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        *extra_args,
        "about:blank",
    ]
    if as_root():
        command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    chrome = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (profile / "DevToolsActivePort").exists():
            if chrome.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{browser} did not start (exit status {chrome.poll()})")
            time.sleep(0.2)
        port = (profile / "DevToolsActivePort").read_text().split()[0]
        targets = json.loads(wait_for_http(f"http://127.0.0.1:{port}/json/list", 30, chrome, browser))
        return chrome, next(t for t in targets if t.get("type") == "page")["webSocketDebuggerUrl"]
    except BaseException:
        stop_process(chrome)
        raise


def stop_process(process: subprocess.Popen | None) -> None:
    """Stop a process this module started (and its process group, which it leads), by its id."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=5)
