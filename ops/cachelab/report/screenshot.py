"""A PNG of a whole report page from headless Chromium (`make report-shot`).

Chromium's `--screenshot` takes a fixed window, so a long report was cut. Here Chromium is
driven over its DevTools pipe (`--remote-debugging-pipe`: JSON messages ended by a NUL byte on
file descriptors 3 and 4): the page is loaded, its full height measured
(`Page.getLayoutMetrics`) and captured beyond the viewport in one image. Called from the CLI's
thread: `python -m cachelab.report.screenshot PAGE.html OUT.png`.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WIDTH_PX = 1400
TIMEOUT_S = 60.0


class ScreenshotError(RuntimeError):
    """Chromium could not be started or did not answer."""


class _Pipe:
    """The DevTools protocol over the two pipes of one Chromium process."""

    def __init__(self, browser: str) -> None:
        to_chrome_r, self._write = os.pipe()
        self._read, from_chrome_w = os.pipe()
        argv = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            f"--window-size={WIDTH_PX},1000",
            "about:blank",
        ]

        def as_fds_3_and_4() -> None:  # in the child: commands on fd 3, replies on fd 4
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_chrome_r, from_chrome_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        try:
            self.process = subprocess.Popen(
                argv,
                pass_fds=(3, 4),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=as_fds_3_and_4,
            )
        except OSError as error:
            raise ScreenshotError(f"cannot start {browser} ({error.strerror})") from None
        finally:
            os.close(to_chrome_r)
            os.close(from_chrome_w)
        self._buffer = b""
        self._next = 0

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            reply = self._message()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise ScreenshotError(f"{method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result
        raise ScreenshotError(f"{method}: no answer in {TIMEOUT_S:.0f} s")

    def wait_for(self, event: str) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            if self._message().get("method") == event:
                return
        raise ScreenshotError(f"no {event} in {TIMEOUT_S:.0f} s")

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise ScreenshotError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        data: dict[str, Any] = json.loads(raw)
        return data

    def close(self) -> None:
        with contextlib.suppress(ScreenshotError, OSError):
            self.call("Browser.close")
        for fd in (self._write, self._read):
            os.close(fd)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def capture(page: Path, out: Path, browser: str = "chromium") -> Path:
    """Save the whole of `page` (every pixel of its height, WIDTH_PX wide) as `out`."""
    pipe = _Pipe(browser)
    try:
        target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
        session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        pipe.call("Page.enable", session)
        pipe.call("Page.navigate", session, url=page.resolve().as_uri())
        pipe.wait_for("Page.loadEventFired")
        metrics = pipe.call("Page.getLayoutMetrics", session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = int(size["height"]) + 1
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=WIDTH_PX,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = pipe.call(
            "Page.captureScreenshot",
            session,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": WIDTH_PX, "height": height, "scale": 1},
        )
    finally:
        pipe.close()
    out.write_bytes(base64.b64decode(shot["data"]))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m cachelab.report.screenshot PAGE.html OUT.png", file=sys.stderr)
        return 2
    try:
        path = capture(Path(argv[0]), Path(argv[1]))
    except ScreenshotError as error:
        print(f"error: screenshot: {error}", file=sys.stderr)
        return 1
    print(f"screenshot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
