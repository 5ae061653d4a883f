"""--metrics-file: the Prometheus text file, scraped by
Debian's real node_exporter (textfile collector only, on a free loopback port)
and checked by Debian's promtool, after questions from a Bumble central over
Bumble virtual controllers (the info series, up, the gauges, the answer-latency
histograms; `up 0` once stopped); the central's own file; the systemd status
line with the same counts; bad values (exit 2) and a directory that is missing
(warned, served on); the shipped alert rules and dashboard (monitoring/),
checked and unit-tested by promtool."""
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

import pytest
from bumble_client import EightBall, central
from harness import BINARY, REPO, SLUGS, Dongle, NotifyListener, stop_process

NODE_EXPORTER = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
PERIOD = 15  # MetricsFile.period, s
MONITORING = os.path.join(REPO, "monitoring")
VERSION = open(os.path.join(REPO, "VERSION"), encoding="utf-8").read().strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def node_exporter(workdir):
    """Debian's node_exporter with only the textfile collector, reading workdir/textfile."""
    for tool in (NODE_EXPORTER, PROMTOOL):
        assert os.access(tool, os.X_OK), f"{tool} missing: scripts/setup.sh installs prometheus-node-exporter and prometheus"
    directory = os.path.join(workdir, "textfile")
    os.mkdir(directory)
    port = free_port()
    process = subprocess.Popen([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                                "--collector.textfile", f"--collector.textfile.directory={directory}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.time() + 20
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            break
        except OSError:
            assert process.poll() is None and time.time() < deadline, f"node_exporter did not start: {process.stderr.read() if process.poll() is not None else 'no answer'}"
            time.sleep(0.2)
    try:
        yield directory, url
    finally:
        stop_process(process)


def parse(text):
    """{(name, frozenset(labels)): value} of every sample in a text exposition."""
    samples = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        match = re.fullmatch(r'(\w+)(?:\{(.*)\})? (\S+)', line)
        assert match, line
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        samples[(match.group(1), labels)] = float(match.group(3))
    return samples


def scrape(url):
    """Every sample node_exporter serves."""
    return parse(urllib.request.urlopen(url, timeout=5).read().decode())


def value(samples, name, **labels):
    found = [v for (n, l), v in samples.items() if n == name and set(labels.items()) <= set(l)]
    assert len(found) == 1, f"{name} {labels}: {found}"
    return found[0]


def read_file(path):
    """The same, from a metrics file itself."""
    return parse(open(path, encoding="utf-8").read())


def info(samples):
    found = [dict(labels) for (name, labels), _ in samples.items() if name == "itcb_dongle_info"]
    assert len(found) == 1, found
    return found[0]


def histogram(samples, name, **labels):
    """{le: cumulative count}, with the _count and _sum."""
    buckets = {dict(l)["le"]: v for (n, l), v in samples.items()
               if n == name + "_bucket" and set(labels.items()) <= set(l)}
    return buckets, value(samples, name + "_count", **labels), value(samples, name + "_sum", **labels)


def wait_answered(url, n, timeout):
    deadline = time.time() + timeout
    while True:
        samples = scrape(url)
        found = [v for (name, _), v in samples.items() if name == "itcb_dongle_questions_answered_total"]
        if found == [n] or time.time() > deadline:
            return samples
        time.sleep(0.5)


def test_node_exporter_scrape_shows_exactly_the_questions_answered(controllers, node_exporter, workdir):
    directory, url = node_exporter
    # As the unit does: the file in a directory of the program's own, a link to it in the textfile directory.
    own = os.path.join(workdir, "state")
    os.mkdir(own)
    path = os.path.join(own, "1-1.prom")
    os.symlink(path, os.path.join(directory, "itcb-dongle-1-1.prom"))
    transport = f"tcp:127.0.0.1:{controllers.ports[0]}"
    listener = NotifyListener(workdir)
    dongle = Dongle("--role", "peripheral", "--transport", transport, "--name", "Metered", "--metrics-file", path,
                    env={"NOTIFY_SOCKET": listener.path})
    n = 7
    try:
        dongle.wait_for("itcb-dongle: info: advertising")
        deadline = time.time() + 5
        while not os.path.exists(path) and time.time() < deadline:
            time.sleep(0.1)
        started = time.time()
        samples = scrape(url)
        assert value(samples, "itcb_dongle_questions_answered_total", transport=transport) == 0
        assert abs(value(samples, "itcb_dongle_start_time_seconds") - started) < 30
        assert abs(value(samples, "itcb_dongle_written_time_seconds") - time.time()) < 30
        assert value(samples, "itcb_dongle_up") == 1

        async def run():
            async with central(controllers.ports[1]) as device:
                ball = await EightBall.connect(device, "Metered")
                answers = [await ball.ask(f"Question {i}?") for i in range(n)]
                with pytest.raises(Exception):
                    await ball.write("not a question")
                assert all(a.decode() in SLUGS for a in answers), answers
                # The next periodic write, with the central still connected.
                samples = await asyncio.to_thread(wait_answered, url, n, PERIOD + 5)
                await ball.disconnect()
                return samples

        samples = asyncio.run(asyncio.wait_for(run(), 120))
        assert value(samples, "itcb_dongle_questions_answered_total", transport=transport) == n, dongle.log
        assert value(samples, "itcb_dongle_questions_rejected_total") == 1
        assert value(samples, "itcb_dongle_centrals_connected") == 1
        assert value(samples, "itcb_dongle_connections_total") == 1
        assert value(samples, "node_textfile_scrape_error") == 0
        # Every kind and reason is a series from the start, at 0 here.
        assert value(samples, "itcb_dongle_controller_recoveries_total", kind="command_timeout") == 0
        assert value(samples, "itcb_dongle_dropped_packets_total", direction="out", reason="transmit_queue_full") == 0
        assert value(samples, "itcb_dongle_firmware_loaded", vendor="none") == 0
        # The instance named, with its controller (written once the controller was ready).
        facts = info(samples)
        assert {k: facts[k] for k in ("transport", "name", "role", "version")} == \
            {"transport": transport, "name": "Metered", "role": "peripheral", "version": VERSION}, facts
        assert re.fullmatch(r"([0-9A-F]{2}:){5}[0-9A-F]{2}", facts["address"]) and facts["address"] in dongle.log, facts
        assert re.fullmatch(r"0x[0-9a-f]{4}", facts["firmware"]) and facts["chipset"], facts
        # Live: advertising (a second central may come: 1 of 4), the controller answering the probes.
        assert value(samples, "itcb_dongle_up") == 1
        assert value(samples, "itcb_dongle_advertising") == 1
        assert value(samples, "itcb_dongle_controller_answering") == 1
        # Every answer timed as queued at once; as sent once its Number of Completed Packets
        # came (the last one's may come after this write, or never: below).
        assert histogram(samples, "itcb_dongle_answer_latency_seconds", stage="queued")[1] == n
        assert histogram(samples, "itcb_dongle_answer_latency_seconds", stage="sent")[1] >= n - 1
        assert not any(name.startswith("itcb_dongle_central_") for name, _ in samples), "a peripheral's file"
        # systemctl status: the same counts in one line, with the periodic write and when a central comes or goes.
        line = f"STATUS=1 central(s) connected (1 in all), {n} question(s) answered, 1 rejected, 0 controller recoveries, 0 packet(s) dropped"
        assert listener.wait_first(line) is not None, listener.messages

        # At exit: written once more, with the link gone.
        dongle.process.send_signal(signal.SIGTERM)
        assert dongle.wait_exit(5) == 0, dongle.log
        samples = scrape(url)
        assert value(samples, "itcb_dongle_questions_answered_total", transport=transport) == n
        assert value(samples, "itcb_dongle_centrals_connected") == 0
        # A stopped instance says so: up 0, nothing advertised or answering; its counts and info stay.
        assert value(samples, "itcb_dongle_up") == 0
        assert value(samples, "itcb_dongle_advertising") == 0
        assert value(samples, "itcb_dongle_controller_answering") == 0
        assert info(samples)["name"] == "Metered"
        for stage in ("queued", "sent"):
            buckets, count, total = histogram(samples, "itcb_dongle_answer_latency_seconds", stage=stage)
            # The last answer's Number of Completed Packets may never come: a link that
            # drops frees its packets without one (Core Vol 4 Part E §7.7.5), and the
            # central hangs up right after its last answer.
            timed = (n,) if stage == "queued" else (n - 1, n)
            assert count in timed and buckets["+Inf"] == count, (stage, buckets, count)
            bounds = ["0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "+Inf"]
            assert list(buckets) == bounds, buckets
            assert all(buckets[a] <= buckets[b] for a, b in zip(bounds, bounds[1:])), buckets
            assert 0 <= total < n, (stage, total)
        assert value(samples, "node_textfile_scrape_error") == 0
        assert "warning" not in dongle.log, dongle.log
        # Sent just before the exit: the listener's thread may still be reading it.
        final = line.replace("STATUS=1", "STATUS=0")
        assert listener.wait_first(final) is not None, listener.messages
        status = [text for _, text in listener.messages if text.startswith("STATUS=")]
        assert status[-1] == final, status

        # Readable by node_exporter's user whatever the umask (the unit's is 0077).
        assert os.stat(path).st_mode & 0o777 == 0o644
        assert sorted(os.listdir(own)) == ["1-1.prom"], "a temporary file was left"
        check = subprocess.run([PROMTOOL, "check", "metrics"], stdin=open(path), capture_output=True, text=True, timeout=30)
        assert check.returncode == 0 and check.stdout + check.stderr == "", check.stdout + check.stderr
    finally:
        dongle.stop()
        listener.close()


def test_missing_directory_is_warned_once_and_the_8_ball_serves_on(controllers, workdir):
    path = os.path.join(workdir, "absent", "itcb-dongle.prom")
    dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{controllers.ports[0]}", "--name", "Unmetered",
                    "--metrics-file", path)
    try:
        dongle.wait_for("itcb-dongle: info: advertising")

        async def one():
            async with central(controllers.ports[1]) as device:
                ball = await EightBall.connect(device, "Unmetered")
                return await ball.ask("Still serving?")

        assert asyncio.run(asyncio.wait_for(one(), 60)).decode() in SLUGS
        dongle.process.send_signal(signal.SIGTERM)
        assert dongle.wait_exit(5) == 0, dongle.log
        warnings = [line for _, line in dongle.lines if "metrics:" in line]
        assert len(warnings) == 1 and "No such file or directory" in warnings[0] and "serving on" in warnings[0], dongle.log
    finally:
        dongle.stop()


def test_a_fifo_at_the_temporary_name_does_not_hold_the_stop(controllers, workdir):
    # The last write at exit opens the temporary file: blocking, a FIFO there held
    # the process in open(2) after SIGTERM. Now it fails at once (warned) and the stop goes on.
    path = os.path.join(workdir, "itcb-dongle.prom")
    os.mkfifo(os.path.join(workdir, ".itcb-dongle.prom.tmp"))
    dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{controllers.ports[0]}", "--name", "Piped",
                    "--metrics-file", path)
    try:
        dongle.wait_for("itcb-dongle: info: advertising")
        stopping = time.time()
        dongle.process.send_signal(signal.SIGTERM)
        assert dongle.wait_exit(5) == 0, dongle.log
        assert time.time() - stopping < 2.5, dongle.log
        assert dongle.count(f"metrics: cannot create {workdir}/.itcb-dongle.prom.tmp: No such device or address") == 1, \
            dongle.log
    finally:
        dongle.stop()


@pytest.mark.parametrize("args, message", [
    (["--metrics-file", "metrics.txt"], "--metrics-file must name a file ending in .prom"),
    (["--metrics-file", ""], "--metrics-file must name a file ending in .prom"),
    (["--metrics-file", "/tmp/.prom/"], "--metrics-file must name a file ending in .prom"),
    (["--metrics-file", "DIR.prom"], "--metrics-file must name a file, not a directory"),
    (["--metrics-file"], "--metrics-file needs a value"),
])
def test_bad_metrics_file_is_one_line_and_exit_2(workdir, args, message):
    os.mkdir(os.path.join(workdir, "DIR.prom"))
    args = [a.replace("DIR.prom", os.path.join(workdir, "DIR.prom")) for a in args]
    out = subprocess.run([BINARY, "--role", "peripheral", "--transport", "tcp:127.0.0.1:1", *args],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr


def test_a_central_counts_its_questions_and_searches_that_found_nothing(controllers, workdir):
    path = os.path.join(workdir, "central.prom")
    transport = f"tcp:127.0.0.1:{controllers.ports[1]}"
    ask = [BINARY, "--role", "central", "--transport", transport, "--timeout", "3", "--metrics-file", path]
    # No 8-Ball yet: exit 6, counted; up 0 once it ended.
    out = subprocess.run([*ask, "--question", "Anyone there?"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 6, out.stderr
    samples = read_file(path)
    assert value(samples, "itcb_dongle_central_not_found_total") == 1
    assert value(samples, "itcb_dongle_central_questions_answered_total") == 0
    assert value(samples, "itcb_dongle_up") == 0
    facts = info(samples)
    assert facts["role"] == "central" and facts["transport"] == transport and facts["version"] == VERSION, facts
    # Our 8-Ball: three questions answered, each timed.
    dongle = Dongle("--role", "peripheral", "--transport", f"tcp:127.0.0.1:{controllers.ports[0]}", "--name", "Asked")
    try:
        dongle.wait_for("itcb-dongle: info: advertising")
        out = subprocess.run([*ask, "--question", "Will it rain?", "--count", "3"], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0 and out.stdout.count(" -> ") == 3, out.stdout + out.stderr
    finally:
        dongle.stop()
    samples = read_file(path)
    assert value(samples, "itcb_dongle_central_questions_asked_total") == 3
    assert value(samples, "itcb_dongle_central_questions_answered_total") == 3
    assert value(samples, "itcb_dongle_central_questions_rejected_total") == 0
    assert value(samples, "itcb_dongle_central_questions_timed_out_total") == 0
    assert value(samples, "itcb_dongle_central_not_found_total") == 0, "a new process counts from 0"
    buckets, count, _ = histogram(samples, "itcb_dongle_central_answer_latency_seconds")
    assert count == 3 and buckets["+Inf"] == 3 and buckets["1"] == 3, buckets
    assert value(samples, "itcb_dongle_up") == 0
    assert not any(name.startswith("itcb_dongle_questions_") for name, _ in samples), "a central's file"
    check = subprocess.run([PROMTOOL, "check", "metrics"], stdin=open(path), capture_output=True, text=True, timeout=30)
    assert check.returncode == 0 and check.stdout + check.stderr == "", check.stdout + check.stderr


def test_metrics_file_does_not_apply_without_a_role(workdir):
    out = subprocess.run([BINARY, "--controller-info", "--metrics-file", os.path.join(workdir, "x.prom")],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "--metrics-file does not apply with --controller-info" in out.stderr, out.stderr


def test_environment_gives_either_role_its_metrics_file(workdir):
    # ITCB_METRICS_FILE (the unit's) for both roles; a bad one is exit 2 under its own name.
    env = {**os.environ, "ITCB_METRICS_FILE": os.path.join(workdir, "metrics.txt")}
    for role in (["peripheral"], ["central", "--question", "Q?"]):
        out = subprocess.run([BINARY, "--role", *role, "--transport", "tcp:127.0.0.1:1"], capture_output=True,
                             text=True, timeout=10, env=env)
        assert out.returncode == 2 and "ITCB_METRICS_FILE must name a file ending in .prom" in out.stderr, out.stderr
    # --controller-info runs no role: the unit's variable is not its business.
    out = subprocess.run([BINARY, "--controller-info", "--transport", "tcp:127.0.0.1:1"], capture_output=True,
                         text=True, timeout=10, env=env)
    assert out.returncode == 3 and "ITCB_METRICS_FILE" not in out.stderr, out.stderr
    # The command line wins.
    out = subprocess.run([BINARY, "--role", "peripheral", "--transport", "tcp:127.0.0.1:1", "--metrics-file",
                          os.path.join(workdir, "m.prom")], capture_output=True, text=True, timeout=10, env=env)
    assert out.returncode == 3, out.stderr


def test_unit_links_the_file_only_where_node_exporter_reads(workdir):
    # The unit's ExecStartPre, run by sh with its two directories moved under workdir.
    unit = open(os.path.join(REPO, "udev", "itcb-dongle@.service"), encoding="utf-8").read()
    line = re.search(r"^ExecStartPre=\+-/bin/sh -c '(.*)'$", unit, re.M)
    assert line, "no ExecStartPre=+- sh line in the unit"
    assert "Environment=ITCB_METRICS_FILE=/var/lib/itcb-dongle/%i.prom" in unit and "StateDirectory=itcb-dongle" in unit
    textfile = os.path.join(workdir, "node-exporter")
    script = (line.group(1).replace("/var/lib/prometheus/node-exporter", textfile)
              .replace("/var/lib/itcb-dongle", os.path.join(workdir, "state")).replace("%i", "1-1.2"))
    assert subprocess.run(["sh", "-c", script], timeout=10).returncode == 0  # no directory: nothing, no failure
    assert not os.path.exists(textfile)
    os.mkdir(textfile)
    for _ in range(2):  # and again at the next start
        assert subprocess.run(["sh", "-c", script], timeout=10).returncode == 0
    assert os.listdir(textfile) == ["itcb-dongle-1-1.2.prom"]
    assert os.readlink(os.path.join(textfile, "itcb-dongle-1-1.2.prom")) == os.path.join(workdir, "state", "1-1.2.prom")


# --- The shipped alert rules and dashboard (monitoring/, installed in /usr/share/itcb-dongle) ---

def written_families():
    """Every metric family the program writes (MetricsFile.swift's `families`: a line each, its name first)."""
    source = open(os.path.join(REPO, "Sources", "ITCBDongle", "Service", "MetricsFile.swift"), encoding="utf-8").read()
    families = set(re.findall(r'^ +(itcb_dongle_\w+) (?:gauge|counter|histogram) ', source, re.MULTILINE))
    assert "itcb_dongle_up" in families and "itcb_dongle_answer_latency_seconds" in families, families
    return families


def used_families(expr):
    """The itcb_dongle_ families an expression reads (a histogram's _bucket/_sum/_count as the family)."""
    names = set(re.findall(r"\bitcb_dongle_\w+", expr))
    return {re.sub(r"_(bucket|sum|count)$", "", n) if re.search(r"_seconds_(bucket|sum|count)$", n) else n for n in names}


def promtool(*args):
    out = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=60, cwd=MONITORING)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_alert_rules_pass_promtool_check_and_their_unit_tests():
    assert os.access(PROMTOOL, os.X_OK), f"{PROMTOOL} missing: scripts/setup.sh installs prometheus"
    assert "SUCCESS: 4 rules found" in promtool("check", "rules", "itcb-dongle-rules.yml")
    assert "SUCCESS" in promtool("test", "rules", "itcb-dongle-rules.test.yml")
    rules = open(os.path.join(MONITORING, "itcb-dongle-rules.yml"), encoding="utf-8").read()
    for alert in ("ITCB8BallDown", "ITCBControllerSilent", "ITCBRecoveriesClimbing", "ITCBPacketsDropped"):
        assert f"alert: {alert}" in rules
    unknown = used_families(rules) - written_families()
    assert not unknown, f"the rules read families the program never writes: {unknown}"


def test_every_dashboard_expression_parses_and_reads_what_the_program_writes(workdir):
    dashboard = json.load(open(os.path.join(MONITORING, "itcb-dongle-dashboard.json"), encoding="utf-8"))
    exprs = [(panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert len(exprs) >= 10 and all(expr.strip() for _, expr in exprs), exprs
    # promtool parses PromQL in rule files: each expression as a recording rule.
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"dashboard:panel_{i}", "expr": expr}
                                                        for i, (_, expr) in enumerate(exprs)]}]}
    path = os.path.join(workdir, "dashboard-rules.yml")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rules, f)  # JSON is YAML
    out = subprocess.run([PROMTOOL, "check", "rules", path], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and f"SUCCESS: {len(exprs)} rules found" in out.stdout, out.stdout + out.stderr
    written = written_families()
    for title, expr in exprs:
        unknown = used_families(expr) - written
        assert not unknown, f"panel {title!r} reads families the program never writes: {unknown}"
    # The variable that picks 8-Balls by name is the info series'.
    names = [v for v in dashboard["templating"]["list"] if v["name"] == "name"]
    assert names and "itcb_dongle_info" in json.dumps(names[0]["query"]), names
