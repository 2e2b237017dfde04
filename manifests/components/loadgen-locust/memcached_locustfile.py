"""A memcached text-protocol user for locust, on the standard library only (the locust image has
no memcached client). Each user keeps one connection and runs the SET:GET ratio of the
benchmark-config ConfigMap over uniformly drawn keys."""

import os
import random
import socket
import time

from locust import User, task

HOST = os.environ["CACHELAB_TARGET_HOST"]
PORT = int(os.environ["CACHELAB_TARGET_PORT"])
SETS, GETS = (int(x) for x in os.environ.get("CACHELAB_RATIO", "1:10").split(":"))
VALUE = b"x" * int(os.environ.get("CACHELAB_VALUE_BYTES", "1024"))
KEY_MAXIMUM = int(os.environ.get("CACHELAB_KEY_MAXIMUM", "10000"))


class MemcachedUser(User):
    def on_start(self) -> None:
        self.sock = socket.create_connection((HOST, PORT), timeout=10)
        self.reader = self.sock.makefile("rb")

    def on_stop(self) -> None:
        self.sock.close()

    def _request(self, name: str, payload: bytes, done: bytes) -> None:
        start = time.perf_counter()
        error = None
        try:
            self.sock.sendall(payload)
            while True:
                line = self.reader.readline()
                if not line or line.startswith((b"ERROR", b"CLIENT_ERROR", b"SERVER_ERROR")):
                    error = RuntimeError(line.decode(errors="replace").strip() or "closed")
                    break
                if line == done:
                    break
        except OSError as e:
            error = e
        self.environment.events.request.fire(
            request_type="memcache", name=name, response_time=(time.perf_counter() - start) * 1000,
            response_length=0, exception=error, context={},
        )

    @task
    def cycle(self) -> None:
        for _ in range(SETS):
            key = f"memtier-{random.randint(0, KEY_MAXIMUM)}".encode()
            self._request("set", b"set %s 0 0 %d\r\n%s\r\n" % (key, len(VALUE), VALUE), b"STORED\r\n")
        for _ in range(GETS):
            key = f"memtier-{random.randint(0, KEY_MAXIMUM)}".encode()
            self._request("get", b"get %s\r\n" % key, b"END\r\n")
