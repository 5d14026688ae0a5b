"""A warm start for flow runs: a process that imported everything once forks each flow run.

A Prefect process worker starts every flow run as ``python -m prefect.engine``: a new interpreter
that imports Prefect and the flow's code (PyAV, OpenCV, onnxruntime, pyarrow, SQLAlchemy...)
before the run can begin, seconds of every short video's wait. Prefect lets a deployment name the
command the worker runs (the ``command`` job variable), so ``ves serve`` names this module's
launcher, and starts, beside the worker, a starter that has imported all of that once:

- the **starter** (``serve``) listens on a Unix socket in the data folder. For each launcher that
  connects it forks: the child takes the launcher's standard streams, environment and folder,
  refreshes Prefect's settings from that environment, and runs ``prefect.engine`` as its
  ``__main__``, exactly what the worker's own command would have run, minus the imports.
  The starter forks from one thread only (it reaps its children in the same loop), so no lock of
  another thread is inherited.
- the **launcher** (``python -m flows.warm_start``) is what the worker runs and watches: it passes
  its streams and environment to the starter, forwards the signals it gets (a cancel, a stop) to
  the forked run, and exits with the run's exit code. When no starter answers (a worker on
  another machine, a starter not yet up, ``VES_WARM_START=false``) it becomes
  ``python -m prefect.engine`` itself: a warm start is only ever faster, never required.
- a forked run whose launcher dies (the worker was killed) gets SIGTERM: it sees the launcher's
  connection close.

The launcher imports nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
from pathlib import Path
from typing import Any

from ves.telemetry import flush as flush_spans

SOCKET_ENV = "VES_WARM_SOCKET"  # "@name": a Linux abstract socket (no file, no path length limit)
_HEADER = struct.Struct("!I")
READY_LINE = "warm start on"  # the starter's first line: it has imported and listens
_PRELOAD = (
    "prefect.engine",
    "prefect.flow_engine",
    "flows.process_video",
    "flows.retention",
    "flows.webhooks",
)


# --- the launcher (what the worker runs) --------------------------------------------------------


def launch(argv: list[str]) -> int:
    """Run the flow run in a fork of the starter, or in this process when there is none."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    request = json.dumps({"argv": argv, "cwd": str(Path.cwd()), "env": dict(os.environ)}).encode()
    try:
        conn.connect(address(os.environ.get(SOCKET_ENV, "")))
        socket.send_fds(conn, [_HEADER.pack(len(request)) + request], [0, 1, 2])
        reader = conn.makefile("r")
        child = int(reader.readline())  # "" (ValueError) when the starter refused us
    except (OSError, ValueError):
        conn.close()
        cold = [sys.executable, "-m", "prefect.engine", *argv]
        os.execv(sys.executable, cold)  # noqa: S606 - the worker's own command, same arguments

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # the run has just ended
            os.kill(child, signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    line = reader.readline()  # "exit <code>" once the run's process ended
    code = int(line.split()[1]) if line.startswith("exit ") else 1
    if code < 0:  # killed by a signal: so is the launcher, for the worker to report it alike
        with contextlib.suppress(OSError):  # SIGKILL's handler cannot be set (nor need be)
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def address(name: str) -> str:
    """The socket address of ``VES_WARM_SOCKET``: ``@name`` is abstract, anything else a path."""
    if not name:
        raise ValueError("no warm start socket configured")
    return "\0" + name[1:] if name.startswith("@") else name


# --- the starter (beside the worker) -----------------------------------------------------------


def serve(name: str, preload: tuple[str, ...] = _PRELOAD) -> None:
    """Import ``preload``, then fork a flow run for every launcher that connects, until killed."""
    import importlib

    for module in preload:
        importlib.import_module(module)
    if not name.startswith("@"):
        Path(name).unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address(name))
    listener.listen(16)
    threads = threading.active_count()
    print(f"{READY_LINE} {name}: {len(sys.modules)} modules, {threads} thread(s)", flush=True)
    children: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([listener], [], [], 0.2)
        if ready:
            conn, _ = listener.accept()
            pid = _fork_run(listener, conn)
            if pid:
                children[pid] = conn
        _reap(children)


def _fork_run(listener: socket.socket, conn: socket.socket) -> int:
    """Fork the connected launcher's flow run; the child never returns. 0: a bad request.

    Only a launcher of this user is served (the abstract socket has no file permissions to
    keep others out), and it has 5 s to send its request.
    """
    try:
        _check_peer(conn)
        conn.settimeout(5.0)
        request, fds = _receive(conn)
        conn.settimeout(None)
    except (OSError, ValueError) as exc:
        print(f"warm start: a launcher was turned away: {exc}", flush=True)
        conn.close()
        return 0
    pid = os.fork()
    if pid == 0:
        listener.close()
        _run_child(conn, request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _check_peer(conn: socket.socket) -> None:
    """Raise ``PermissionError`` unless the connected process runs as this user."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    if uid != os.getuid():
        raise PermissionError(f"a launcher of user {uid} is not served")


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
    if len(head) != _HEADER.size or len(fds) != 3:
        raise ValueError("a launcher sends a header and its three standard streams")
    (size,) = _HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("the launcher hung up")
        body += chunk
    request: dict[str, Any] = json.loads(body)
    return request, fds


def _reap(children: dict[int, socket.socket]) -> None:
    """Tell each ended run's launcher its exit code."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):  # a launcher gone has nobody to tell
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def _run_child(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """In the fork: become the launcher's ``python -m prefect.engine``, then exit."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        _die_with_starter()
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        threading.Thread(target=_stop_when_orphaned, args=(conn,), daemon=True).start()
        code = _run_engine(request["argv"])
    finally:
        flush_spans()  # os._exit skips the exit hooks that would export the last spans
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _die_with_starter() -> None:
    """SIGKILL this run when the starter dies (as a worker's flow process dies with its machine)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # not Linux: the launcher's hang-up will
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _run_engine(argv: list[str]) -> int:
    import runpy

    import prefect.context

    prefect.context.refresh_global_settings_context()  # the run's environment, not the starter's
    sys.argv = ["prefect.engine", *argv]
    try:
        runpy.run_module("prefect.engine", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


def _stop_when_orphaned(conn: socket.socket) -> None:
    """SIGTERM this run when its launcher's connection closes (the worker was killed)."""
    try:
        while conn.recv(64):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(os.environ[SOCKET_ENV])
    sys.exit(launch(sys.argv[1:]))
