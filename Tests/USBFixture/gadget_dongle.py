"""A USB Bluetooth dongle in the guest, made with GadgetFS on dummy_hcd, bridged
to a Bumble virtual controller over H4 on a virtio serial port.

The device looks like a CSR-class dongle: device class E0/01/01, one interface
E0/01/01 with interrupt IN 0x81 (events), bulk IN 0x82 and bulk OUT 0x02 (ACL).
HCI commands arrive as class requests on EP0 (bmRequestType 0x20) and go to the
controller as H4 commands; bulk OUT becomes H4 ACL; H4 events go to 0x81 and
H4 ACL to 0x82. SIGUSR1 unplugs the device (the process serving the plug-in is
killed, its GadgetFS files close, the host sees a disconnect), SIGUSR2 plugs it
back.

Usage: python3 gadget_dongle.py GADGETFS_DIR SERIAL_DEVICE [VID:PID]
"""
import errno
import glob
import os
import select
import signal
import struct
import sys
import threading
import time

GADGET, SERIAL = sys.argv[1], sys.argv[2]
VID, PID = (int(x, 16) for x in (sys.argv[3] if len(sys.argv) > 3 else "0a12:0001").split(":"))


def log(*args):
    print("gadget:", *args, flush=True)


def endpoint(address, attributes, max_packet, interval):
    return struct.pack("<BBBBHB", 7, 5, address, attributes, max_packet, interval)


def configuration(bulk_max_packet, interrupt_interval):
    interface = struct.pack("<9B", 9, 4, 0, 0, 3, 0xE0, 0x01, 0x01, 0)
    body = (interface + endpoint(0x81, 3, 16, interrupt_interval) + endpoint(0x82, 2, bulk_max_packet, 0)
            + endpoint(0x02, 2, bulk_max_packet, 0))
    return struct.pack("<BBHBBBBB", 9, 2, 9 + len(body), 1, 1, 0, 0xC0, 50) + body


DEVICE = struct.pack("<BBHBBBBHHHBBBB", 18, 1, 0x0200, 0xE0, 0x01, 0x01, 64, VID, PID, 0x0100, 0, 0, 0, 1)
# dummy_udc endpoint files: ep1in-bulk serves as the interrupt endpoint 0x81.
ENDPOINTS = {0x81: ("ep1in-bulk", endpoint(0x81, 3, 16, 1), endpoint(0x81, 3, 16, 4)),
             0x82: ("ep2in-bulk", endpoint(0x82, 2, 64, 0), endpoint(0x82, 2, 512, 0)),
             0x02: ("ep2out-bulk", endpoint(0x02, 2, 64, 0), endpoint(0x02, 2, 512, 0))}

serial = -1  # opened by each plug-in's process
serial_lock = threading.Lock()
state = {"control": None, "endpoints": {}, "generation": 0}
plugged = threading.Event()


def to_controller(data):
    with serial_lock:
        os.write(serial, data)


def controller_reader():
    """H4 from the controller → interrupt IN (events) / bulk IN (ACL); dropped while unplugged."""
    buffer = b""
    while True:
        data = os.read(serial, 4096)
        if not data:
            time.sleep(0.05)
            continue
        buffer += data
        while buffer:
            kind = buffer[0]
            if kind not in (0x02, 0x04):
                buffer = buffer[1:]
                continue
            header = 2 if kind == 0x04 else 4
            if len(buffer) < 1 + header:
                break
            length = buffer[2] if kind == 0x04 else struct.unpack_from("<H", buffer, 3)[0]
            if len(buffer) < 1 + header + length:
                break
            packet, buffer = buffer[1:1 + header + length], buffer[1 + header + length:]
            fd = state["endpoints"].get(0x81 if kind == 0x04 else 0x82)
            if fd is None:
                continue  # unplugged or not configured: the controller's output is lost, as on a real bus
            try:
                os.write(fd, packet)
            except OSError as error:
                log("write to endpoint failed:", error)


def bulk_out_reader(fd, generation):
    """Bulk OUT → H4 ACL. Polls, so an unplug releases the file within 0.2 s
    (GadgetFS keeps the device busy while a read is pending)."""
    while state["generation"] == generation:
        try:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            data = os.read(fd, 4096)
        except (OSError, ValueError):
            return
        if data:
            to_controller(b"\x02" + data)


def enable_endpoints():
    generation = state["generation"]
    for address, (name, full, high) in ENDPOINTS.items():
        fd = os.open(os.path.join(GADGET, name), os.O_RDWR)
        os.write(fd, struct.pack("<I", 1) + full + high)
        state["endpoints"][address] = fd
    threading.Thread(target=bulk_out_reader, args=(state["endpoints"][0x02], generation), daemon=True).start()
    log("endpoints enabled")


def close_endpoints():
    state["generation"] += 1
    for fd in state["endpoints"].values():
        try:
            os.close(fd)
        except OSError:
            pass
    state["endpoints"] = {}


def plug():
    path = glob.glob(os.path.join(GADGET, "dummy_udc"))[0]
    for _ in range(50):  # the previous plug-in may take a moment to be released
        try:
            control = os.open(path, os.O_RDWR)
            break
        except OSError as error:
            if error.errno != errno.EBUSY:
                raise
            time.sleep(0.1)
    else:
        log("dummy_udc stays busy")
        return
    os.write(control, struct.pack("<I", 0) + configuration(64, 1) + configuration(512, 4) + DEVICE)
    state["control"] = control
    plugged.set()
    log("plugged in as %04x:%04x" % (VID, PID))


def ep0_loop():
    """EP0 events of the current plug-in; polls so that an unplug (fd closed by
    the main thread) is noticed instead of blocking forever on a dead file."""
    while True:
        plugged.wait()
        control = state["control"]
        try:
            ready, _, _ = select.select([control], [], [], 0.2)
            if not ready:
                continue
            event = os.read(control, 12)
        except (OSError, ValueError):
            time.sleep(0.05)  # unplugged under us
            continue
        if len(event) < 12:
            continue
        request_type, request, value, index, length, kind = struct.unpack("<BBHHHI", event)
        if kind == 2:  # DISCONNECT
            close_endpoints()
            continue
        if kind != 3:  # CONNECT, SUSPEND, ...
            continue
        try:
            if request_type == 0x00 and request == 9:  # SET_CONFIGURATION
                if value and not state["endpoints"]:
                    enable_endpoints()
                os.read(control, 0)
            elif request_type & 0x80:
                try:
                    os.read(control, 0)  # an IN request we do not serve: stall
                except OSError:
                    pass
            else:
                data = os.read(control, length) if length else os.read(control, 0)
                if request_type & 0x60 == 0x20 and request == 0 and data:
                    to_controller(b"\x01" + data)
        except OSError as error:
            log("ep0:", error)


def run_gadget():
    """One plug-in, in its own process: killing it unplugs the device even while
    a thread is blocked in endpoint I/O (which would keep GadgetFS busy)."""
    global serial
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    serial = os.open(SERIAL, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:  # what the controller sent while unplugged is gone, as on a real bus
        while os.read(serial, 4096):
            pass
    except BlockingIOError:
        pass
    os.set_blocking(serial, True)
    threading.Thread(target=controller_reader, daemon=True).start()
    plug()
    ep0_loop()


def spawn():
    pid = os.fork()
    if pid == 0:
        try:
            run_gadget()
        finally:
            os._exit(1)
    return pid


# The supervisor: SIGUSR1 unplugs (kills the plug-in process), SIGUSR2 plugs back in.
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})
child = spawn()
while True:
    number = signal.sigwait({signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM})
    if number in (signal.SIGUSR1, signal.SIGTERM) and child:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        child = 0
        log("unplugged")
    if number == signal.SIGTERM:
        break
    if number == signal.SIGUSR2 and not child:
        child = spawn()
