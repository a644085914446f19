"""Memcached multi-gets on the testbed, each request one task through the runtime (Baraat 5.1, Table 3).

Unmodified Memcached servers (Debian's ``memcached``) run in the servers' namespaces; one front-end
client per client host (``python -m coflowkit.testbed.memcached client``, in its namespace) gets
requests as a Poisson process, and each request fetches one value from each of three servers drawn at
random (the multi-get: three parallel ``get``s, one per server, each on a connection of its own). Under
the runtime each request is one task: the client registers a coflow at its own host's agent and names
the three response flows at the **servers'** agents by their address (``AgentClient.watch``: server
port 11211 to the client's address and the connection's local port), which enforce the schedule in
the kernel (``coflowkit-runtime agent --transparent-dev eth0``: an HTB class and a u32 filter per
flow) and count the flows' bytes there; the servers are never touched. A request's completion time is
from its arrival (its Poisson instant) to the last byte of its third response.

Without the runtime (``scheduler=None``) the same client sends the same requests over plain TCP.

:func:`run` runs one scheduler and returns the per-request records; :func:`workload_rows` is the same
workload as a coflow trace for the simulators.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import net as tb

#: Memcached's port on every server.
MEMCACHED_PORT = 11211
#: The key every server holds (one value per server; a request gets it from three of them).
KEY = b"v"


@dataclass(frozen=True)
class Layout:
    """Who is what on the fabric: the front-end clients and the Memcached servers (host numbers)."""

    clients: tuple[int, ...]
    servers: tuple[int, ...]


def paper_layout(p: tb.Plan, hosts_per_rack: int = 4) -> Layout:
    """Baraat 5.1: the first rack's hosts are the front-end clients, every other host a server."""
    return Layout(tuple(range(hosts_per_rack)), tuple(range(hosts_per_rack, p.n_hosts)))


def requests(
    layout: Layout, n_requests: int, task_bytes: int, load: float, rate_bps: float, seed: int, fanout: int = 3
) -> list[dict[str, Any]]:
    """The requests: per client a Poisson process at ``load`` of its link (``rate_bps``) for tasks of
    ``task_bytes``, ``fanout`` distinct servers each drawn at random, task ids from per-client counters
    that start apart (the client's index) and step by the number of clients (Baraat 4.1, 5.1).
    Requests are dealt to the clients in turn until ``n_requests``; sorted by arrival."""
    rng = random.Random(seed)
    n = len(layout.clients)
    per_client = [n_requests // n + (1 if k < n_requests % n else 0) for k in range(n)]
    mean_gap = task_bytes * 8 / (load * rate_bps)
    out = []
    for k, c in enumerate(layout.clients):
        t = 0.0
        for j in range(per_client[k]):
            t += rng.expovariate(1 / mean_gap)
            servers = rng.sample(list(layout.servers), fanout)
            out.append({"client": c, "task": k + n * j, "arrival_s": t, "servers": servers})
    out.sort(key=lambda r: (r["arrival_s"], r["task"]))
    return out


def value_bytes(task_bytes: int, fanout: int = 3) -> int:
    """Each server's share of a task (its one value)."""
    return task_bytes // fanout


def workload_rows(reqs: Sequence[dict[str, Any]], task_bytes: int, n_hosts: int, fanout: int = 3) -> list[str]:
    """The requests as a native coflow trace (CSV, docs/workloads.md): each task one coflow of
    ``fanout`` flows, server to client, arriving at its request's instant; coflow id = task id."""
    v = value_bytes(task_bytes, fanout)
    rows = [f"# n_hosts={n_hosts}", "coflow_id,arrival_ns,src,dst,bytes"]
    for r in reqs:
        for s in r["servers"]:
            rows.append(f"{r['task']},{round(r['arrival_s'] * 1e9)},{s},{r['client']},{v}")
    return rows


# --- the client (runs in a client host's namespace) ------------------------------------


def _get(sock: socket.socket) -> int:
    """Sends ``get v`` and reads the reply (``VALUE v FLAGS N``, N bytes, ``END``); returns N."""
    sock.sendall(b"get " + KEY + b"\r\n")
    buf = bytearray()
    need = None
    while need is None or len(buf) < need:
        chunk = sock.recv(1 << 18)
        if not chunk:
            raise ConnectionError(f"the server closed after {len(buf)} bytes")
        buf += chunk
        if need is None and b"\r\n" in buf:
            head = bytes(buf[: buf.index(b"\r\n")]).split()
            if len(head) < 4 or head[0] != b"VALUE":
                raise ValueError(f"unexpected reply {bytes(buf[:60])!r}")
            n = int(head[3])
            need = buf.index(b"\r\n") + 2 + n + 2 + len(b"END\r\n")
    if not buf.endswith(b"END\r\n"):
        raise ValueError(f"the reply does not end with END: {bytes(buf[-20:])!r}")
    return n


def _client(plan: dict[str, Any]) -> dict[str, Any]:
    me = plan["host"]
    my_ip = plan["host_ip"][me]
    runtime = plan["scheduler"] is not None
    agents: dict[int, Any] = {}
    if runtime:
        from .. import _core

        for h, sock in plan["agent_sockets"].items():
            # Heartbeats only (no writer): every 100 ms is plenty, and 17 clients per process.
            agents[int(h)] = _core.AgentClient(sock, 100)
    expect = plan["value_bytes"]
    results: list[dict[str, Any]] = []
    errors: list[str] = []
    lock = threading.Lock()

    # "before": the task is registered and its flows named before they connect (the request waits for
    # the agents' replies); "alongside": the requests go out at once and a thread of their own names
    # them meanwhile (the schedule applies from when the agents learn of them).
    before = plan.get("naming", "alongside") == "before"

    def one(r: dict[str, Any], t0: float) -> None:
        arrival = t0 + r["arrival_s"]
        servers = r["servers"]
        got: dict[int, int] = {}
        failed: list[str] = []
        connecting: list[float] = []
        ports: queue.Queue[tuple[int, int]] = queue.Queue()
        flows: dict[int, int] = {}
        task: list[int] = []
        named = threading.Event()

        def name_task() -> None:
            try:
                task.append(agents[me].register())
                for _ in servers:
                    srv, port = ports.get(timeout=60)
                    flows[srv] = agents[srv].watch(task[0], me, MEMCACHED_PORT, my_ip, port, size_hint=expect)
            except Exception as e:  # noqa: BLE001 - reported with the request
                failed.append(f"naming the task: {type(e).__name__}: {e}")
            finally:
                named.set()

        def fetch(srv: int) -> None:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, plan["tcp_cc"].encode())
                s.bind((my_ip, 0))
                ports.put((srv, s.getsockname()[1]))
                if before:
                    named.wait()
                connecting.append(time.time())
                s.connect((plan["host_ip"][srv], MEMCACHED_PORT))
                got[srv] = _get(s)
            except Exception as e:  # noqa: BLE001 - reported with the request
                failed.append(f"server host {srv}: {type(e).__name__}: {e}")
            finally:
                s.close()

        try:
            namer = threading.Thread(target=name_task) if runtime else None
            if namer is not None:
                namer.start()
            threads = [threading.Thread(target=fetch, args=(srv,)) for srv in servers]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            done = time.time()
            if namer is not None:
                namer.join()
                named_at = time.time()
                for srv, flow in flows.items():
                    agents[srv].close_watched(flow, got.get(srv, 0))
                if task:
                    agents[me].unregister(task[0])
            if failed:
                raise ValueError("; ".join(failed))
            if len(got) != len(servers) or any(n != expect for n in got.values()):
                raise ValueError(f"got values of {list(got.values())} bytes, expected {expect} from each server")
            with lock:
                # setup_s: from the arrival to the last connect; named_after_s: how long after the
                # last byte the naming was still going (0 when it was done first).
                results.append({**r, "cct_s": done - arrival, "setup_s": max(connecting) - arrival,
                                "named_after_s": max(0.0, named_at - done) if namer is not None else 0.0})  # fmt: skip
        except Exception as e:  # noqa: BLE001 - reported with the request it failed
            with lock:
                errors.append(f"task {r['task']}: {type(e).__name__}: {e}")

    mine = [r for r in plan["requests"] if r["client"] == me]
    # Ready (imports done, agents reached): the driver answers with the common start instant.
    print("ready", flush=True)
    t0 = float(sys.stdin.readline())
    workers = []
    for r in mine:
        wait = t0 + r["arrival_s"] - time.time()
        if wait > 0:
            time.sleep(wait)
        th = threading.Thread(target=one, args=(r, t0))
        th.start()
        workers.append(th)
    for th in workers:
        th.join()
    return {"host": me, "results": results, "errors": errors}


# --- the driver (root namespace) ---------------------------------------------------------


@contextlib.contextmanager
def runtime_on_testbed(
    p: tb.Plan,
    scheduler: str,
    work: Path,
    delta_ms: int = 10,
    transparent_dev: str | None = "eth0",
    host_rate: float | None = None,
    ceiling: str = "rate",
    dscp: bool = True,
    cpu: dict[str, float] | None = None,
    policy: str = "coordinator",
) -> Iterator[dict[int, str]]:
    """A coordinator (``scheduler``, each host's NIC at ``host_rate`` bits/s, by default its shaped
    port's) on the management network and one agent per host in its namespace, enforcing
    address-named flows on ``transparent_dev`` (``ceiling``: ``rate``, each held to its scheduled
    rate, or ``line``, work-conserving; ``dscp``: their class carried to the switches as DSCP;
    ``policy``: ``coordinator``, their rates and classes from the coordinator every delta, or ``host``,
    their class from the scheduler's host policy run by each agent at once);
    yields each host's agent socket. Everything is stopped on exit; ``cpu``, when given, gets
    ``runtime_cpu_s``: the CPU time the coordinator and the agents used, their ``tc`` children
    included."""
    from ..runtime import runtime_command
    from .replay.driver import host_rate_bps
    from .replay.supervise import stop_all, wait_until

    runtime = runtime_command()
    work.mkdir(parents=True, exist_ok=True)
    token = work / "token"
    token.write_text(os.urandom(24).hex() + "\n")
    token.chmod(0o600)
    with socket.socket() as s:
        s.bind((p.mgmt_root_ip, 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    procs: list[subprocess.Popen[bytes]] = []
    socks = Path(tempfile.mkdtemp(prefix=f"ck-{p.name}-"))

    def start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
        with open(log, "wb") as f:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env)
        procs.append(proc)
        return proc

    def listening() -> bool:
        with socket.socket() as s:
            return s.connect_ex((p.mgmt_root_ip, port)) == 0

    try:
        log = work / "coordinator.log"
        coord = start(
            [*runtime, "coordinator", "--hosts", str(p.n_hosts), "--host-rate", f"{host_rate or host_rate_bps(p):.0f}",
             "--scheduler", scheduler, "--listen", f"{p.mgmt_root_ip}:{port}", "--token-file", str(token),
             "--delta-ms", str(delta_ms)],
            log,
        )  # fmt: skip
        coordinator = (f"the coordinator ({scheduler})", coord, log)
        wait_until(coordinator[0], listening, coord, log, 30)
        out: dict[int, str] = {}
        for h in range(p.n_hosts):
            sock = socks / f"agent{h}.sock"
            extra = ["--transparent-dev", transparent_dev] if transparent_dev else []
            if transparent_dev and ceiling != "rate":
                extra += ["--transparent-ceil", ceiling]
            if transparent_dev and not dscp:
                extra += ["--transparent-dscp", "off"]
            if transparent_dev and policy != "coordinator":
                extra += ["--transparent-policy", policy]
            start(
                tb.ns_cmd(p, h, [*runtime, "agent", "--host", str(h), "--coordinator",
                                 f"http://{p.mgmt_root_ip}:{port}", "--socket", str(sock), "--socket-mode", "600",
                                 "--token-file", str(token), "--hello-retry-ms", "20000", *extra]),
                work / f"agent{h}.log",
            )  # fmt: skip
            out[h] = str(sock)
        for h, path in out.items():
            wait_until(
                f"the agent of host {h}", Path(path).exists, procs[1 + h], work / f"agent{h}.log", 30,
                needs=coordinator,
            )  # fmt: skip
        yield out
        if cpu is not None:
            cpu["runtime_cpu_s"] = sum(_cpu_s(proc.pid) for proc in procs)
    finally:
        stop_all(procs)
        shutil.rmtree(socks, ignore_errors=True)


def _cpu_s(pid: int) -> float:
    """The CPU time of process ``pid`` and its waited-for children (utime, stime, cutime, cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def memcached_servers(p: tb.Plan, servers: Sequence[int], value: int, work: Path) -> Iterator[None]:
    """Debian's ``memcached``, unmodified, on each server host's data address, each holding one value of
    ``value`` bytes under :data:`KEY` (stored with a plain ``set`` from the server's own namespace)."""
    exe = shutil.which("memcached")
    if exe is None:
        raise tb.TestbedError("memcached is not installed (Debian: apt-get install memcached)")
    procs = []
    try:
        for h in servers:
            log = open(work / f"memcached{h}.log", "wb")
            procs.append(
                subprocess.Popen(
                    tb.ns_cmd(p, h, [exe, "-u", "root", "-U", "0", "-l", p.host_ip[h], "-p", str(MEMCACHED_PORT),
                                     "-m", "64", "-t", "1", "-I", "2m"]),
                    stdout=log, stderr=subprocess.STDOUT,
                )  # fmt: skip
            )
        payload = os.urandom(value)
        for h in servers:
            setter = (
                "import socket,sys,time\n"
                "v=sys.stdin.buffer.read()\n"
                "for _ in range(200):\n"
                "  try:\n"
                f"    s=socket.create_connection(({p.host_ip[h]!r},{MEMCACHED_PORT}));break\n"
                "  except OSError: time.sleep(0.05)\n"
                f"s.sendall(b'set {KEY.decode()} 0 0 %d\\r\\n' % len(v) + v + b'\\r\\n')\n"
                "r=s.recv(100)\n"
                "sys.exit(0 if r.startswith(b'STORED') else f'set failed: {r!r}')\n"
            )
            subprocess.run(tb.ns_cmd(p, h, [sys.executable, "-c", setter]), input=payload, check=True, timeout=60)
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


#: The kernel's TCP counters summed over the hosts for each run (/proc/net/snmp, netstat):
#: segments retransmitted, retransmission timeouts (a flow that sat out a timeout), and SYNs or
#: SYN-ACKs sent again (each after TCP's initial timeout, 1 s).
TCP_COUNTERS = {"Tcp": ("RetransSegs",), "TcpExt": ("TCPTimeouts", "TCPSynRetrans")}


def tcp_counters(p: tb.Plan, hosts: Sequence[int]) -> dict[str, int]:
    """:data:`TCP_COUNTERS` summed over ``hosts`` (read inside each host's namespace)."""
    out = {name: 0 for names in TCP_COUNTERS.values() for name in names}
    for h in hosts:
        text = subprocess.run(
            tb.ns_cmd(p, h, ["cat", "/proc/net/snmp", "/proc/net/netstat"]),
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        lines = text.splitlines()
        for head, vals in zip(lines, lines[1:]):
            group, _, names = head.partition(":")
            vgroup, _, values = vals.partition(":")
            if group != vgroup or group not in TCP_COUNTERS or not names.split()[0].isalpha():
                continue
            row = dict(zip(names.split(), values.split()))
            for name in TCP_COUNTERS[group]:
                if name in row and row[name].lstrip("-").isdigit():
                    out[name] += int(row[name])
    return out


def run(
    p: tb.Plan,
    scheduler: str | None,
    reqs: Sequence[dict[str, Any]],
    layout: Layout,
    task_bytes: int,
    work: Path,
    delta_ms: int = 10,
    deadline_s: float = 600.0,
    ceiling: str = "rate",
    dscp: bool = True,
    naming: str = "alongside",
    policy: str = "coordinator",
) -> dict[str, Any]:
    """One run: the servers up with their values, the runtime (``scheduler``; None: plain TCP;
    ``ceiling``, ``dscp`` and ``policy`` as :func:`runtime_on_testbed`; ``naming``: a request's task registered and
    its flows named ``alongside`` its three gets, or ``before`` they connect), the clients in their namespaces;
    returns ``{"results": [...], "errors": [...], "tcp": {...}, "tcp_servers": {...}}`` (a record per
    request with its ``cct_s``; the hosts' TCP counters over the run, :func:`tcp_counters`, all and
    the servers' alone: the servers send the responses, so theirs are the scheduled flows') and, through the
    runtime, ``runtime_cpu_s`` (:func:`runtime_on_testbed`)."""
    work.mkdir(parents=True, exist_ok=True)
    value = value_bytes(task_bytes)
    cpu: dict[str, float] = {}
    with memcached_servers(p, layout.servers, value, work):
        with contextlib.ExitStack() as stack:
            sockets: dict[int, str] = {}
            if scheduler is not None:
                sockets = stack.enter_context(
                    runtime_on_testbed(
                        p, scheduler, work / "runtime", delta_ms, ceiling=ceiling, dscp=dscp, cpu=cpu, policy=policy
                    )
                )
            plan = {
                "scheduler": scheduler,
                "host_ip": p.host_ip,
                "agent_sockets": {str(h): s for h, s in sockets.items()},
                "delta_ms": delta_ms,
                "value_bytes": value,
                "tcp_cc": p.tcp_cc,
                "naming": naming,
                "requests": list(reqs),
            }
            procs = []
            for c in layout.clients:
                plan_c = {**plan, "host": c}
                path = work / f"client{c}.plan.json"
                path.write_text(json.dumps(plan_c))
                log = open(work / f"client{c}.log", "wb")
                procs.append(
                    subprocess.Popen(
                        tb.ns_cmd(p, c, [sys.executable, "-m", "coflowkit.testbed.memcached", "client", str(path)]),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                    )  # fmt: skip
                )
            for c, proc in zip(layout.clients, procs):
                assert proc.stdout is not None
                line = proc.stdout.readline()
                if line.strip() != b"ready":
                    raise tb.TestbedError(
                        f"memcached client on host {c}: said {line[:80]!r} instead of ready "
                        f"(log {work / f'client{c}.log'})"
                    )
            hosts = [*layout.clients, *layout.servers]
            tcp_before = tcp_counters(p, hosts)
            servers_before = tcp_counters(p, layout.servers)
            t0 = time.time() + 0.5
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(f"{t0!r}\n".encode())
                proc.stdin.flush()
            results: list[dict[str, Any]] = []
            errors: list[str] = []
            for c, proc in zip(layout.clients, procs):
                try:
                    out, _ = proc.communicate(timeout=deadline_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise tb.TestbedError(f"memcached client on host {c}: not done after {deadline_s:.0f} s")
                if proc.returncode != 0:
                    raise tb.TestbedError(
                        f"memcached client on host {c}: exit {proc.returncode} (log {work / f'client{c}.log'})"
                    )
                r = json.loads(out)
                results += r["results"]
                errors += [f"client on host {c}: {e}" for e in r["errors"]]
            tcp_after = tcp_counters(p, hosts)
            servers_after = tcp_counters(p, layout.servers)
    tcp = {k: tcp_after[k] - tcp_before[k] for k in tcp_after}
    servers = {k: servers_after[k] - servers_before[k] for k in servers_after}
    return {"results": sorted(results, key=lambda r: r["task"]), "errors": errors, "tcp": tcp,
            "tcp_servers": servers, **cpu}  # fmt: skip


def summary_ms(ccts_s: Sequence[float]) -> dict[str, float]:
    """Average, p95 and p99 of completion times, ms (the percentiles by nearest rank)."""
    xs = sorted(ccts_s)
    if not xs:
        raise ValueError("no completion times")

    def pct(q: int) -> float:
        rank = -(-len(xs) * q // 100)  # nearest rank: ceil(n q / 100)
        return xs[min(len(xs) - 1, max(0, rank - 1))]

    return {"avg": 1e3 * sum(xs) / len(xs), "p95": 1e3 * pct(95), "p99": 1e3 * pct(99), "n": len(xs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="coflowkit.testbed.memcached")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("client", help="one front-end client (run inside its host's namespace)")
    c.add_argument("plan", type=Path)
    args = ap.parse_args(argv)
    out = _client(json.loads(args.plan.read_text()))
    json.dump(out, sys.stdout)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
