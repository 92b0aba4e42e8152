#!/usr/bin/env python3
"""Measure tessera-server under the hostile clients of docs/limits.md (figures, not tests).

Usage: scripts/server-abuse.py SERVER_BINARY {flood|claims|stall} [--seconds S]
  flood   send 100,000 MEM_READ requests of 65,536 bytes and never read: peak server RSS
  claims  send back-to-back 24-byte headers that each claim a 64 KiB payload for S seconds
          (reading the error replies; --rate B caps the bytes/s): server CPU seconds used and
          bytes it took in
  stall   one client sends a header claiming 64 KiB and then stalls: seconds until a second
          client is served (gives up after S seconds)
The server is started on 127.0.0.1 with --device model and killed at the end.
"""
import argparse
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import json
import zlib

# The protocol's version and magic from the one source, rtl/params.json ("link"), so that the
# frames are current ones and the server measures the abuse, not a BadVersion refusal.
_LINK = {e["name"]: e["value"] for e in json.load(
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "rtl", "params.json")))["link"]}
VERSION = int(_LINK["VERSION"])
MAGIC = struct.pack("<I", int(str(_LINK["MAGIC"]), 0))


def frame(opcode, payload=b"", seq=1, tile=0, addr=0):
    head = MAGIC + struct.pack("<BBHIIII", VERSION, opcode, 0, seq, tile, addr, len(payload))
    body = head + payload
    return body + struct.pack("<I", zlib.crc32(body))


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(server):
    p = subprocess.Popen([server, "--device", "model", "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    port = int(line.strip().rsplit(":", 1)[1])
    return p, port


def served(port, timeout=1.0):
    """True if a new client's CTRL_READ of the chip ID is answered Ok (a client refused while
    another holds the server gets INFO answered, but Busy for everything else)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(frame(0x04, seq=7))
            reply = b""
            while len(reply) < 8:
                chunk = s.recv(64)
                if not chunk:
                    return False
                reply += chunk
            return struct.unpack_from("<H", reply, 6)[0] == 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("mode", choices=["flood", "claims", "stall"])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=0, help="claims: bytes/s to send (0 = as fast as possible)")
    a = ap.parse_args()
    p, port = start(a.server)
    try:
        base = rss_bytes(p.pid)
        s = socket.create_connection(("127.0.0.1", port))
        if a.mode == "flood":
            req = b"".join(frame(0x02, struct.pack("<I", 65536), seq=i) for i in range(1000))
            peak, sent, t0 = base, 0, time.time()
            s.setblocking(False)
            while time.time() - t0 < a.seconds:
                if sent < 100:
                    try:
                        s.send(req)
                        sent += 1
                    except BlockingIOError:
                        time.sleep(0.01)
                    except OSError:
                        sent = 100  # the server closed the connection
                else:
                    time.sleep(0.1)
                peak = max(peak, rss_bytes(p.pid))
            print(f"flood: requests sent {sent * 1000}, server RSS at start {base / 2**20:.1f} MiB, "
                  f"peak {peak / 2**20:.1f} MiB over {a.seconds:.0f} s")
        elif a.mode == "claims":
            claim = frame(0x03, bytes(65536))[:24]
            burst = claim * 1000

            def drain():  # read the BadCrc replies, so only the decoder's work is measured
                while True:
                    try:
                        if not s.recv(1 << 16):
                            return
                    except socket.timeout:
                        continue
                    except OSError:
                        return
            threading.Thread(target=drain, daemon=True).start()
            c0, t0, sent = cpu_seconds(p.pid), time.time(), 0
            s.settimeout(0.5)
            while time.time() - t0 < a.seconds:
                if a.rate and sent > a.rate * (time.time() - t0):
                    time.sleep(0.005)
                    continue
                try:
                    sent += s.send(burst)
                except socket.timeout:
                    pass
                except OSError:
                    break
            used = cpu_seconds(p.pid) - c0
            took = time.time() - t0
            print(f"claims: {sent} bytes taken in {took:.1f} s ({sent / took / 1e3:.0f} kB/s); "
                  f"server CPU {used:.2f} s ({100 * used / took:.0f}% of one core)")
        else:
            s.sendall(frame(0x03, bytes(65536))[:24])
            t0 = time.time()
            while time.time() - t0 < a.seconds and not served(port):
                time.sleep(0.1)
            t = time.time() - t0
            ok = t < a.seconds
            print(f"stall: a second client was {'served after' if ok else 'still refused after'} "
                  f"{t:.1f} s")
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()


if __name__ == "__main__":
    sys.exit(main())
