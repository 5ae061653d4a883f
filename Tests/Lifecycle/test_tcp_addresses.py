"""The TCP transport's addresses: a numeric one (127.0.0.1, [::1]) is connected
to as it is, without getaddrinfo(3), whose resolver code made the resident set
about 200 kB larger (docs/PERFORMANCE.md); a name still goes through it."""
import os
import socket
import subprocess

from harness import BINARY, Dongle

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "PythonSupport")


def resolved(tmp_path, transport, wait_for, exits=False):
    """Our peripheral on `transport` with getaddrinfo watched (resolver_watch.c),
    until `wait_for` (and its exit, with `exits`); the hosts it asked for."""
    shim, log = tmp_path / "resolver_watch.so", tmp_path / "resolver.log"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(shim), os.path.join(HERE, "resolver_watch.c"), "-ldl"],
                   check=True)
    log.write_text("")
    dongle = Dongle("--role", "peripheral", "--transport", transport, "--name", "Addr8",
                    env={"LD_PRELOAD": str(shim), "RESOLVER_LOG": str(log)})
    try:
        dongle.wait_for(wait_for)
        if exits:
            assert dongle.wait_exit(10) == 3, dongle.log  # README "Exit codes": the transport
    finally:
        dongle.stop()
    return log.read_text().split()


def test_numeric_ipv4_address_is_connected_to_without_the_resolver(controllers, tmp_path):
    assert resolved(tmp_path, f"tcp:127.0.0.1:{controllers.ports[0]}", "advertising") == []


def test_numeric_ipv6_address_is_connected_to_without_the_resolver(tmp_path):
    # A closed port on ::1: refused (unreachable where IPv6 is off), with no getaddrinfo.
    port = 9
    if socket.has_ipv6:
        try:
            with socket.socket(socket.AF_INET6) as s:
                s.bind(("::1", 0))
                port = s.getsockname()[1]
        except OSError:
            pass
    assert resolved(tmp_path, f"tcp:[::1]:{port}", "cannot connect to controller at ::1:", exits=True) == []


def test_a_name_still_goes_through_the_resolver(controllers, tmp_path):
    # The watch itself works (the numeric tests could not pass by a shim that saw nothing).
    assert resolved(tmp_path, f"tcp:localhost:{controllers.ports[0]}", "advertising") == ["localhost"]
