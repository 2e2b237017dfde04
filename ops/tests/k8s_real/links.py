"""Throughput between two nodes of the local cluster, measured on their own addresses: a bounded
TCP transfer from the sender node's namespace to a receiver in the other node's namespace (the
path crosses the sender's uplink and the receiver's downlink, both shaped by `up`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

PORT = 5201
# Receiver: accept one connection, read to EOF, report bytes and seconds after the first tenth
# (TCP's slow start and the token bucket's burst are spent by then).
RECEIVER = """
import json, socket, sys, time
srv = socket.create_server((sys.argv[1], int(sys.argv[2])))
srv.settimeout(30)
conn, _ = srv.accept()
total, marks = 0, []
while chunk := conn.recv(1 << 20):
    total += len(chunk)
    marks.append((time.monotonic(), total))
skip = [m for m in marks if m[1] >= total / 10]
(t0, b0), (t1, b1) = skip[0], marks[-1]
print(json.dumps({"bytes": b1 - b0, "seconds": t1 - t0}))
"""
SENDER = """
import socket, sys
sock = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
block, left = bytes(1 << 16), int(sys.argv[3])
while left > 0:
    sock.sendall(block[: min(left, len(block))])
    left -= len(block)
sock.close()
"""


def in_netns(netns: str, code: str, *args: str) -> list[str]:
    return ["nsenter", f"--net=/run/netns/{netns}", sys.executable, "-c", code, *args]


def transfer_mbit(sender: str, receiver: str, receiver_ip: str, size_bytes: int) -> float:
    """Mbit/s of a `size_bytes` transfer from node `sender` to node `receiver` at `receiver_ip`."""
    server = subprocess.Popen(
        in_netns(receiver, RECEIVER, receiver_ip, str(PORT)), stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 10
        while True:  # until the receiver listens
            client = subprocess.run(
                in_netns(sender, SENDER, receiver_ip, str(PORT), str(size_bytes)),
                capture_output=True,
                text=True,
                timeout=120,
            )
            if client.returncode == 0:
                break
            assert time.monotonic() < deadline, client.stderr
            time.sleep(0.2)
        out, _ = server.communicate(timeout=60)
    finally:
        server.kill()
    result = json.loads(out)
    return float(result["bytes"] * 8 / result["seconds"] / 1e6)
