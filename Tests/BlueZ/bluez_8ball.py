"""An 8-Ball served by BlueZ over D-Bus (GattManager1.RegisterApplication and
LEAdvertisingManager1.RegisterAdvertisement, python3-dbus + GLib), run in the
USB fixture's guest: Question (write with response) and Answer (read, notify),
advertised with the 8-Ball UUID and the name NAME. A question not ending in "?"
is refused: a D-Bus server can only raise an error name, which bluetoothd turns
into an ATT error: org.bluez.Error.Failed → 0x80 (the default here); BlueZ 5.66
turns a name it does not know (--refuse-with org.itcb.Error.NotAQuestion) into
0x0E, Unlikely Error. Prints READY once registered (and advertising), then one
line per question.

--mgmt-advertising leaves advertising to `btmgmt add-adv` with raw data: over
D-Bus, bluetoothd puts LocalName into the scan response (the kernel manages it
there), and Bumble's virtual controller never transmits scan responses, so a
scanner on the Bumble link would see no name.
Usage: bluez_8ball.py NAME [SEED] [--mgmt-advertising] [--refuse-with ERROR_NAME]"""
import random
import sys

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

SERVICE = "8e38140a-27be-4090-8955-4fc4b5698d1e"
QUESTION = "bdd37d7a-f66a-47b9-a49c-fe29fd235a77"
ANSWER = "349a0d7b-6215-4e2c-a095-af078d737445"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"
PROPERTIES = "org.freedesktop.DBus.Properties"
BASE = "/org/itcb/eightball"


class Refused(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.Failed"  # --refuse-with replaces it


class Service(dbus.service.Object):
    def __init__(self, bus):
        self.path = BASE + "/service0"
        super().__init__(bus, self.path)

    def properties(self):
        return {GATT_SERVICE: {"UUID": SERVICE, "Primary": dbus.Boolean(True)}}


class Characteristic(dbus.service.Object):
    def __init__(self, bus, index, uuid, flags, service):
        self.path = f"{service.path}/char{index}"
        self.uuid, self.flags, self.service = uuid, flags, service
        self.value = b""
        self.notifying = False
        super().__init__(bus, self.path)

    def properties(self):
        return {GATT_CHARACTERISTIC: {"Service": dbus.ObjectPath(self.service.path), "UUID": self.uuid,
                                      "Flags": dbus.Array(self.flags, signature="s")}}

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.ByteArray(self.value)

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        self.on_write(bytes(value))

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StartNotify(self):
        self.notifying = True
        print(f"notify on {self.uuid}", flush=True)

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StopNotify(self):
        self.notifying = False
        print(f"notify off {self.uuid}", flush=True)

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[interface][name]

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[interface]

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def notify(self, value):
        self.value = value
        if self.notifying:
            self.PropertiesChanged(GATT_CHARACTERISTIC, {"Value": dbus.ByteArray(value)}, [])


class Application(dbus.service.Object):
    def __init__(self, bus, seed):
        super().__init__(bus, BASE)
        self.service = Service(bus)
        self.answer = Characteristic(bus, 1, ANSWER, ["read", "notify"], self.service)
        self.question = Characteristic(bus, 0, QUESTION, ["write"], self.service)
        self.question.on_write = self.asked
        self.rng = random.Random(seed)

    def asked(self, data):
        try:
            ok = data.decode("utf-8").endswith("?")
        except UnicodeDecodeError:
            ok = False
        if not ok:
            print(f"refused {data!r}", flush=True)
            raise Refused("please rephrase as a question")
        slug = f"SLUG-ANSWER-{self.rng.randrange(20):02d}".encode()
        print(f"question {data.decode()!r} -> {slug.decode()}", flush=True)
        # After the Write Response (peripheral rule 2 in docs/ARCHITECTURE.md, "The 8-Ball
        # on the air"): notify once this method has returned.
        GLib.idle_add(lambda: self.answer.notify(slug) and False)

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(o.path): o.properties() for o in (self.service, self.question, self.answer)}


class Advertisement(dbus.service.Object):
    def __init__(self, bus, name):
        self.path = BASE + "/advertisement0"
        self.name = name
        super().__init__(bus, self.path)

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
                "LocalName": self.name, "Discoverable": dbus.Boolean(True)}

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


def main(name, seed, dbus_advertising):
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    adapter_path = "/org/bluez/hci0"
    dbus.Interface(bus.get_object("org.bluez", adapter_path), PROPERTIES).Set(
        "org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    app = Application(bus, seed)
    advertisement = Advertisement(bus, name)
    loop = GLib.MainLoop()
    pending = {"gatt": None, "adv": None} if dbus_advertising else {"gatt": None}

    def done(what):
        def ok():
            pending[what] = "ok"
            if all(v == "ok" for v in pending.values()):
                print("READY", flush=True)

        def failed(error):
            print(f"FAILED {what}: {error}", flush=True)
            loop.quit()

        return ok, failed

    gatt = dbus.Interface(bus.get_object("org.bluez", adapter_path), "org.bluez.GattManager1")
    ok, failed = done("gatt")
    gatt.RegisterApplication(dbus.ObjectPath(BASE), {}, reply_handler=ok, error_handler=failed)
    if dbus_advertising:
        advertising = dbus.Interface(bus.get_object("org.bluez", adapter_path), "org.bluez.LEAdvertisingManager1")
        ok, failed = done("adv")
        advertising.RegisterAdvertisement(dbus.ObjectPath(advertisement.path), {}, reply_handler=ok,
                                          error_handler=failed)
    loop.run()
    sys.exit(1)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--refuse-with" in argv:
        index = argv.index("--refuse-with")
        Refused._dbus_error_name = argv[index + 1]
        del argv[index:index + 2]
    arguments = [a for a in argv if not a.startswith("--")]
    main(arguments[0], int(arguments[1]) if len(arguments) > 1 else 7, "--mgmt-advertising" not in sys.argv)
