"""A libusb probe of the emulated dongle (python ctypes, no dependencies),
independent of itcb-dongle: it checks the fixture itself, so a failing
itcb-dongle test can be told apart from a broken fixture.

It prints one JSON object: descriptors, speed, the kernel driver, the answers
to HCI_Reset, Read_BD_ADDR and Read_Local_Supported_Commands (a 70-byte event,
so the sizes of its interrupt packets show the 16-byte split and the short last
packet), whether unsupported IN requests stall, the product string; then it
releases the interface so the kernel driver binds again.

With --reset it resets the device after detaching the kernel driver and
claiming the interface (libusb re-claims it after the reset), the order that
keeps btusb from binding again in between.

Usage (in the guest): python3 usbprobe.py [--reset] [VID:PID]"""
import ctypes
import json
import sys

usb = ctypes.CDLL("libusb-1.0.so.0")
usb.libusb_open_device_with_vid_pid.restype = ctypes.c_void_p
usb.libusb_open_device_with_vid_pid.argtypes = [ctypes.c_void_p, ctypes.c_uint16, ctypes.c_uint16]
usb.libusb_get_device.restype = ctypes.c_void_p
usb.libusb_get_device.argtypes = [ctypes.c_void_p]
usb.libusb_error_name.restype = ctypes.c_char_p
for name in ("libusb_kernel_driver_active", "libusb_detach_kernel_driver", "libusb_claim_interface",
             "libusb_release_interface", "libusb_attach_kernel_driver"):
    getattr(usb, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
usb.libusb_close.argtypes = [ctypes.c_void_p]
usb.libusb_reset_device.argtypes = [ctypes.c_void_p]
usb.libusb_control_transfer.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint16,
                                        ctypes.c_uint16, ctypes.c_char_p, ctypes.c_uint16, ctypes.c_uint]
usb.libusb_interrupt_transfer.argtypes = [ctypes.c_void_p, ctypes.c_ubyte, ctypes.c_char_p, ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_int), ctypes.c_uint]
usb.libusb_get_device_speed.argtypes = [ctypes.c_void_p]
usb.libusb_get_bus_number.argtypes = [ctypes.c_void_p]
usb.libusb_get_port_numbers.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
usb.libusb_get_string_descriptor_ascii.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_char_p, ctypes.c_int]


def error(code):
    return usb.libusb_error_name(code).decode()


def event(handle, max_packet=16):
    """One HCI event from the interrupt endpoint, read one max packet at a time;
    returns (event bytes, sizes of the packets it came in)."""
    data, sizes = b"", []
    buffer = ctypes.create_string_buffer(max_packet)
    got = ctypes.c_int()
    while len(data) < 2 or len(data) < 2 + data[1]:
        status = usb.libusb_interrupt_transfer(handle, 0x81, buffer, max_packet, ctypes.byref(got), 3000)
        if status:
            raise RuntimeError(f"interrupt IN: {error(status)} after {data.hex()}")
        sizes.append(got.value)
        data += buffer.raw[:got.value]
    return data, sizes


def command(handle, opcode, parameters=b""):
    packet = bytes([opcode & 0xFF, opcode >> 8, len(parameters)]) + parameters
    sent = usb.libusb_control_transfer(handle, 0x20, 0, 0, 0, packet, len(packet), 1000)
    if sent != len(packet):
        raise RuntimeError(f"command 0x{opcode:04x}: {error(sent) if sent < 0 else sent}")
    while True:
        data, sizes = event(handle)
        if data[0] == 0x0E and int.from_bytes(data[3:5], "little") == opcode:
            return data, sizes


def main():
    arguments = [a for a in sys.argv[1:] if a != "--reset"]
    reset = "--reset" in sys.argv[1:]
    vid, pid = (int(x, 16) for x in (arguments[0] if arguments else "0a12:0001").split(":"))
    context = ctypes.c_void_p()
    assert usb.libusb_init(ctypes.byref(context)) == 0
    handle = usb.libusb_open_device_with_vid_pid(context, vid, pid)
    if not handle:
        print(json.dumps({"error": f"cannot open {vid:04x}:{pid:04x}"}))
        return 1
    device = usb.libusb_get_device(handle)
    ports = ctypes.create_string_buffer(8)
    count = usb.libusb_get_port_numbers(device, ports, 8)
    result = {
        "path": f"{usb.libusb_get_bus_number(device)}-" + ".".join(str(b) for b in ports.raw[:count]),
        "speed": {1: "low", 2: "full", 3: "high", 4: "super"}.get(usb.libusb_get_device_speed(device), "unknown"),
        "kernel_driver_active": usb.libusb_kernel_driver_active(handle, 0),
    }
    text = ctypes.create_string_buffer(128)
    length = usb.libusb_get_string_descriptor_ascii(handle, 2, text, 128)
    result["product"] = text.value.decode() if length > 0 else error(length)
    result["detach"] = error(usb.libusb_detach_kernel_driver(handle, 0))
    result["claim"] = error(usb.libusb_claim_interface(handle, 0))
    if reset:
        result["usb_reset"] = error(usb.libusb_reset_device(handle))
    try:
        buffer = ctypes.create_string_buffer(64)
        result["vendor_in_request"] = error(usb.libusb_control_transfer(handle, 0xC0, 0x01, 0, 0, buffer, 64, 1000))
        result["class_in_request"] = error(usb.libusb_control_transfer(handle, 0xA0, 0x00, 0, 0, buffer, 64, 1000))
        reset, _ = command(handle, 0x0C03)
        result["reset"] = reset.hex()
        address, _ = command(handle, 0x1009)
        result["bd_addr"] = ":".join(f"{b:02X}" for b in reversed(address[6:12]))
        commands, sizes = command(handle, 0x1002)
        result["supported_commands_event_length"] = len(commands)
        result["supported_commands_packets"] = sizes
    except RuntimeError as failure:
        result["error"] = str(failure)
    finally:
        result["release"] = error(usb.libusb_release_interface(handle, 0))
        result["attach"] = error(usb.libusb_attach_kernel_driver(handle, 0))
        usb.libusb_close(handle)
    print(json.dumps(result))
    return 1 if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main())
