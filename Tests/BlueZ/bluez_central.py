"""A BlueZ central over D-Bus (org.bluez, python3-dbus + GLib), run in the USB
fixture's guest: scans for the 8-Ball called NAME, connects, waits for BlueZ to
resolve its services, StartNotify on Answer, asks QUESTIONS (WriteValue with
response), each answered by a notification; then writes BAD (a non-question,
which must fail with ATT error 0x0E), ReadValue on Answer, StopNotify,
Disconnect. Prints one JSON object with what happened; exit 0 when all passed.
Usage: /usr/bin/python3 bluez_central.py NAME COUNT BAD"""
import json
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SERVICE = "8e38140a-27be-4090-8955-4fc4b5698d1e"
QUESTION = "bdd37d7a-f66a-47b9-a49c-fe29fd235a77"
ANSWER = "349a0d7b-6215-4e2c-a095-af078d737445"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
context = GLib.MainContext.default()


def objects():
    manager = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    return manager.GetManagedObjects()


def wait(condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        while context.pending():
            context.iteration(False)
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


def interface(path, name):
    return dbus.Interface(bus.get_object("org.bluez", path), name)


def main(name, count, bad):
    result = {"name": name, "answers": [], "steps": []}
    adapter_path = next(p for p, i in objects().items() if "org.bluez.Adapter1" in i)
    adapter_props = interface(adapter_path, "org.freedesktop.DBus.Properties")
    adapter_props.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    adapter = interface(adapter_path, "org.bluez.Adapter1")
    adapter.SetDiscoveryFilter({"Transport": "le", "UUIDs": [SERVICE], "DuplicateData": dbus.Boolean(False)})
    adapter.StartDiscovery()
    result["steps"].append("discovering")

    def found():
        for path, interfaces in objects().items():
            device = interfaces.get("org.bluez.Device1")
            if device and str(device.get("Name", "")) == name:
                return path
        return None

    device_path = wait(found, 30, f"an advertiser named {name}")
    adapter.StopDiscovery()
    device_props = interface(device_path, "org.freedesktop.DBus.Properties")
    result["address"] = str(device_props.Get("org.bluez.Device1", "Address"))
    result["steps"].append("found")
    interface(device_path, "org.bluez.Device1").Connect(timeout=30)
    result["steps"].append("connected")
    wait(lambda: bool(device_props.Get("org.bluez.Device1", "ServicesResolved")), 30, "ServicesResolved")
    result["steps"].append("services resolved")

    characteristics = {}
    services = []
    for path, interfaces in objects().items():
        if not path.startswith(device_path + "/"):
            continue
        if "org.bluez.GattService1" in interfaces:
            services.append(str(interfaces["org.bluez.GattService1"]["UUID"]))
        if "org.bluez.GattCharacteristic1" in interfaces:
            c = interfaces["org.bluez.GattCharacteristic1"]
            characteristics[str(c["UUID"])] = (path, [str(f) for f in c["Flags"]])
    result["services"] = sorted(services)
    question_path, question_flags = characteristics[QUESTION]
    answer_path, answer_flags = characteristics[ANSWER]
    result["flags"] = {"question": question_flags, "answer": answer_flags}

    notifications = []

    def changed(iface, changed_props, invalidated, path=None):
        if iface == "org.bluez.GattCharacteristic1" and "Value" in changed_props:
            notifications.append(bytes(changed_props["Value"]).decode(errors="replace"))

    bus.add_signal_receiver(changed, dbus_interface="org.freedesktop.DBus.Properties", signal_name="PropertiesChanged",
                            path=answer_path, path_keyword="path")
    question = interface(question_path, "org.bluez.GattCharacteristic1")
    answer = interface(answer_path, "org.bluez.GattCharacteristic1")
    answer.StartNotify()
    wait(lambda: bool(interface(answer_path, "org.freedesktop.DBus.Properties")
                      .Get("org.bluez.GattCharacteristic1", "Notifying")), 10, "Notifying")
    result["steps"].append("notifying")

    for i in range(count):
        before = len(notifications)
        question.WriteValue(dbus.ByteArray(f"BlueZ question {i}?".encode()), {"type": "request"})
        wait(lambda: len(notifications) > before, 10, f"the answer to question {i}")
        result["answers"].append(notifications[before])
    result["steps"].append(f"{count} answered")

    before = len(notifications)
    try:
        question.WriteValue(dbus.ByteArray(bad.encode()), {"type": "request"})
        result["bad_write"] = "accepted"
    except dbus.exceptions.DBusException as error:
        result["bad_write"] = f"{error.get_dbus_name()}: {error.get_dbus_message()}"
    time.sleep(1.0)
    while context.pending():
        context.iteration(False)
    result["notifications_after_bad"] = len(notifications) - before
    result["read"] = bytes(answer.ReadValue({})).decode(errors="replace")
    answer.StopNotify()
    interface(device_path, "org.bluez.Device1").Disconnect()
    result["steps"].append("disconnected")
    return result


if __name__ == "__main__":
    try:
        outcome = main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
        print(json.dumps(outcome))
    except Exception as error:  # the test prints this with bluetoothd's log
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
