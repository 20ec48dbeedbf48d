"""Line-forwarding tee for stdio MCP traffic (debugging aid).

    py_client.py ... -- python wire_tee.py LOG -- SERVER_CMD [ARGS...]

Runs SERVER_CMD, copies every stdin line to it and every stdout line back, and
appends both to LOG as `>> ` (client -> server) and `<< ` (server -> client)
lines, the format of /work/shared/reference/transcripts. Server stderr is
inherited. Closing stdin closes the server's stdin; the tee exits with the
server's exit status.
"""

import subprocess
import sys
import threading


def main() -> int:
    log_path, cmd = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    log = open(log_path, "a", buffering=1, encoding="utf-8")
    lock = threading.Lock()
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def record(prefix: str, line: bytes) -> None:
        with lock:
            log.write(prefix + line.decode("utf-8", "replace").rstrip("\n") + "\n")

    def pump_in() -> None:
        assert child.stdin
        for line in sys.stdin.buffer:
            record(">> ", line)
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except BrokenPipeError:
                break
        record("## ", b"client closed stdin")
        child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    assert child.stdout
    for line in child.stdout:
        record("<< ", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    rc = child.wait()
    record("## ", f"server exited {rc}".encode())
    return rc


if __name__ == "__main__":
    sys.exit(main())
