"""A Bumble 8-Ball peripheral following the contract in docs/ARCHITECTURE.md
("The 8-Ball on the air") — the opposite role for our
central, written on a stack nobody here wrote. Options make the misbehaving
advertisers the central must ignore or survive:
  --no-uuid   advertise without the 8-Ball service UUID
  --no-name   advertise without a local name
  --silent    accept questions but never answer
  --freeze-at mtu|discovery|answer
              stop answering ATT (as a peripheral under SIGSTOP whose controller
              keeps the link) from the Exchange MTU Request, the first discovery
              request, or the question's Write Request on
and the hostile ones whose text must never reach a terminal raw:
  --name-hex HEX     advertise these bytes as the name (any bytes, invalid UTF-8 too)
  --shortened        advertise the name as shortened (a scan response too), so a
                     central reads the GAP Device Name over GATT
  --device-name TEXT the GAP Device Name (default: the name)
  --answer-hex HEX   notify these bytes as every answer
and --max-mtu N, the ATT MTU its server offers (Bumble's default 517; 247 as an
iPhone, so a long question takes Prepare Writes).
Prints READY once advertising."""
import argparse
import asyncio
import random

from bumble.att import ATT_Error
from bumble.core import AdvertisingData, UUID
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport

SERVICE = UUID("8E38140A-27BE-4090-8955-4FC4B5698D1E")
QUESTION = UUID("BDD37D7A-F66A-47B9-A49C-FE29FD235A77")
ANSWER = UUID("349A0D7B-6215-4E2C-A095-AF078D737445")
UNLIKELY_ERROR = 0x0E


async def main(args):
    async with await open_transport(args.transport) as transport:
        device = Device.with_hci(args.device_name or args.name or "nameless", Address(args.address),
                                 transport.source, transport.sink)
        name = bytes.fromhex(args.name_hex) if args.name_hex else args.name.encode()
        rng = random.Random(args.seed)
        last = {}
        pending = {}
        answer = None

        def send_answer(connection):
            value = pending.pop(connection, None)
            if value is not None and not args.silent:
                asyncio.create_task(device.notify_subscriber(connection, answer, value, force=True))

        def write_question(connection, value):
            text = bytes(value)
            try:
                ok = text.decode("utf-8").endswith("?")
            except UnicodeDecodeError:
                ok = False
            if not ok:
                raise ATT_Error(UNLIKELY_ERROR)
            slug = bytes.fromhex(args.answer_hex) if args.answer_hex else f"SLUG-ANSWER-{rng.randrange(20):02d}".encode()
            last[connection] = slug
            pending[connection] = slug
            if subscribed.get(connection):
                send_answer(connection)

        subscribed = {}

        def read_answer(connection):
            return last.get(connection, b"")

        question = Characteristic(QUESTION, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
                                  CharacteristicValue(write=write_question))
        answer = Characteristic(ANSWER, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
                                Characteristic.READABLE, CharacteristicValue(read=read_answer))

        def on_subscription(connection, notify_enabled, indicate_enabled):
            subscribed[connection] = notify_enabled
            if notify_enabled:
                send_answer(connection)

        answer.on("subscription", on_subscription)
        device.add_service(Service(SERVICE, [question, answer]))
        if args.max_mtu:
            device.gatt_server.max_mtu = args.max_mtu

        if args.freeze_at:
            # Every ATT request from the step on goes unanswered (the link stays up).
            server = device.gatt_server
            serve = server.on_gatt_pdu
            discovery = {0x04, 0x06, 0x08, 0x10}
            frozen = []

            def freezing(connection, pdu):
                step = {"mtu": pdu.op_code == 0x02, "discovery": pdu.op_code in discovery,
                        "answer": pdu.op_code == 0x12 and getattr(pdu, "attribute_handle", None) == question.handle}
                if frozen or step[args.freeze_at]:
                    if not frozen:
                        print(f"FROZEN at {args.freeze_at}", flush=True)
                    frozen.append(pdu.op_code)
                    return
                serve(connection, pdu)

            server.on_gatt_pdu = freezing

        structures = [(AdvertisingData.FLAGS, bytes([0x06]))]
        if not args.no_uuid:
            structures.append((AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, bytes(SERVICE)))
        # As the product advertises: a name past the 31 bytes' room (8 bytes
        # beside flags and the 128-bit UUID) goes shortened, whole in the scan response.
        room = 31 - sum(2 + len(value) for _, value in structures) - 2
        if not args.no_name:
            fits = len(name) <= room and not args.shortened
            structures.append((AdvertisingData.COMPLETE_LOCAL_NAME if fits else AdvertisingData.SHORTENED_LOCAL_NAME,
                               name[:room]))
            if not fits:
                whole = AdvertisingData.SHORTENED_LOCAL_NAME if args.shortened else AdvertisingData.COMPLETE_LOCAL_NAME
                device.scan_response_data = bytes(AdvertisingData([(whole, name[:29])]))
        device.advertising_data = bytes(AdvertisingData(structures))
        await device.power_on()
        await device.start_advertising(auto_restart=True)
        print("READY", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", required=True)
    parser.add_argument("--name", default="Bumble8")
    parser.add_argument("--address", default="C4:B5:A6:97:88:79")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-uuid", action="store_true")
    parser.add_argument("--no-name", action="store_true")
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--freeze-at", choices=["mtu", "discovery", "answer"])
    parser.add_argument("--name-hex")
    parser.add_argument("--shortened", action="store_true")
    parser.add_argument("--device-name")
    parser.add_argument("--answer-hex")
    parser.add_argument("--max-mtu", type=int)
    asyncio.run(main(parser.parse_args()))
