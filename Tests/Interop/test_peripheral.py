"""Our peripheral asked by Bumble GATT clients over Bumble virtual controllers:
the 8-Ball contract (docs/ARCHITECTURE.md, "The 8-Ball on the air"), ATT
behaviour, and the CLI.

ITCB_PERIPHERAL=bumble runs the contract tests against the Bumble 8-Ball
instead (see conftest.py); checks of our binary's own log lines are then left out."""
import asyncio
import os
import shutil
import subprocess

import pytest
from bumble.att import ATT_Error
from bumble.core import ProtocolError
from bumble_client import ANSWER, QUESTION, SERVICE, EightBall, central, find
from harness import BINARY, SLUGS

import air_figures

PHRASES = {
    "It is certain.", "It is decidedly so.", "Without a doubt.", "Yes – definitely.", "You may rely on it.",
    "As I see it, yes.", "Most likely.", "Outlook good.", "Yes.", "Signs point to yes.", "Reply hazy, try again.",
    "Ask again later.", "Better not tell you now.", "Cannot predict now.", "Concentrate and ask again.",
    "Don’t count on it.", "My reply is no.", "My sources say no.", "Outlook not so good.", "Very doubtful.",
}


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 120))


def test_advertising_data(link, peripheral):
    peripheral("Adv8")

    async def scenario():
        async with central(link.ports[1]) as device:
            advertisement = await find(device, "Adv8")
            structures = dict(advertisement.data.ad_structures)
            assert structures[0x01] == bytes([0x06])  # LE General Discoverable, no BR/EDR
            assert structures[0x07] == bytes.fromhex(SERVICE.replace("-", ""))[::-1]
            assert structures[0x09] == b"Adv8"  # complete name: it fits
            assert advertisement.is_connectable
            # A static random address: the virtual controller has no public one.
            assert advertisement.address.address_type == 1
            assert int(str(advertisement.address).split(":")[0], 16) >= 0xC0

    run(scenario())


def test_discovers_whole_gatt_table(link, peripheral):
    peripheral("Table8")

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Table8")
            found = {}
            for service in ball.peer.services:
                await service.discover_characteristics()
                for characteristic in service.characteristics:
                    await characteristic.discover_descriptors()
                    found[(str(service.uuid), str(characteristic.uuid))] = (
                        int(characteristic.properties), [str(d.type) for d in characteristic.descriptors])
            by_uuid = {c: v for (_, c), v in found.items()}
            gap = [c for (s, c) in found if s.startswith("UUID-16:1800")]
            gatt = [c for (s, c) in found if s.startswith("UUID-16:1801")]
            assert any("2A00" in c for c in gap) and any("2A01" in c for c in gap)
            service_changed = next(v for c, v in by_uuid.items() if "2A05" in c)
            assert service_changed[0] == 0x20 and any("2902" in d for d in service_changed[1])
            assert any("2A05" in c for c in gatt)
            assert by_uuid[QUESTION][0] == 0x08 and by_uuid[QUESTION][1] == []
            assert by_uuid[ANSWER][0] == 0x12 and any("2902" in d for d in by_uuid[ANSWER][1])
            name = next(ch for s in ball.peer.services for ch in s.characteristics if "2A00" in str(ch.uuid))
            assert bytes(await name.read_value()) == b"Table8"
            await ball.disconnect()

    run(scenario())


def test_twenty_questions_on_one_connection(link, peripheral):
    dongle = peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8")
            answers = [await ball.ask(f"Question number {i}?") for i in range(20)]
            await ball.disconnect()
            return answers

    answers = run(scenario())
    assert len(answers) == 20 and all(a.decode() in SLUGS for a in answers)
    if dongle.ours:
        assert dongle.count("info: connected:") == 1


def test_non_question_gets_unlikely_error_and_no_answer(link, peripheral):
    peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8")
            await ball.subscribe()
            for bad in (b"Not a question", b"", b"\xff\xfe?", b"Trailing space? "):
                with pytest.raises(ATT_Error) as error:
                    await ball.write(bad)
                assert error.value.error_code == 0x0E
            with pytest.raises(asyncio.TimeoutError):
                await ball.next_answer(timeout=1.0)
            assert (await ball.ask("And now?")).decode() in SLUGS

    run(scenario())


@pytest.mark.parametrize("mtu", [None, 247])
def test_long_question_with_prepared_writes(link, peripheral, mtu):
    dongle = peripheral()
    question = "y" * 299 + "?"

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8", mtu=mtu)
            return await ball.ask(question)

    assert run(scenario()).decode() in SLUGS
    if dongle.ours:
        assert dongle.wait_count(question, 1) == 1


def test_question_of_512_bytes_and_too_long(link, peripheral):
    peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8", mtu=247)
            assert (await ball.ask("z" * 511 + "?")).decode() in SLUGS
            with pytest.raises(ATT_Error) as error:
                await ball.write("z" * 512 + "?")
            assert error.value.error_code == 0x0D  # Invalid Attribute Value Length

    run(scenario())


def test_question_of_512_bytes_in_one_write_at_mtu_517(link, peripheral):
    # A central that asks for ATT MTU 517, as Android does (Bumble too), writes
    # the longest question (512 bytes, the ATT maximum) in one Write Request and
    # gets its answer: no Prepare Write. Counted on both sides: the ATT PDUs
    # Bumble's central sent, and (ours) the peripheral's btsnoop. Then the same
    # question at MTU 247 (an iPhone's), which takes Prepare Writes, for the
    # figures of docs/PERFORMANCE.md ("On the air").
    dongle = peripheral()
    question = "z" * 511 + "?"
    sent = {}

    async def scenario():
        for mtu in (517, 247):
            async with central(link.ports[1 if mtu == 517 else 2],
                               address="F1:F2:F3:F4:F5:C6" if mtu == 517 else "F1:F2:F3:F4:F5:C7") as device:
                opcodes = sent.setdefault(mtu, [])
                send = device.send_l2cap_pdu

                def recording(handle, cid, pdu, send=send, opcodes=opcodes):
                    if cid == 4:
                        opcodes.append((pdu[0], len(pdu)))
                    send(handle, cid, pdu)

                device.send_l2cap_pdu = recording
                ball = await EightBall.connect(device, "Ball8", mtu=mtu)
                assert ball.connection.att_mtu == mtu
                await ball.subscribe()
                del opcodes[:]
                await ball.write(question)
                answer = await ball.next_answer()
                assert answer.decode() in SLUGS
                await ball.disconnect()

    run(scenario())
    # Bumble's central: one Write Request of 3 + 512 bytes at 517; three
    # Prepare Writes and an Execute Write at 247.
    assert sent[517] == [(0x12, 515)], sent[517]
    assert [op for op, _ in sent[247]] == [0x16, 0x16, 0x16, 0x18], sent[247]
    if not dongle.ours:
        return
    assert dongle.wait_count(question, 2) == 2
    dongle.process.terminate()
    assert dongle.process.wait(5) == 0
    pdus = air_figures.att_pdus(dongle.btsnoop)
    one, after = air_figures.question_cycle(pdus)
    prepared, _ = air_figures.question_cycle(pdus, after)
    # Our capture: Exchange MTU 517 both ways, then the question in one Write
    # Request (gathered from the ACL packets it came in), answered by its Write
    # Response and the notification: one round trip, two connection events.
    assert air_figures.exchanged_mtu(pdus) == (517, 517)
    figures = air_figures.figures(one)
    assert figures["write_requests"] == 1 and figures["prepare_writes"] == 0 and figures["execute_writes"] == 0
    assert [p["att"] for p in one if p["direction"] == "in"] == [bytes([0x12]) + one[0]["att"][1:3] + question.encode()]
    assert [p["att"][0] for p in one if p["direction"] == "out"] == [0x13, 0x1B]
    assert figures["round_trips"] == 1 and figures["connection_events"] == 2
    # At 247: 3 Prepare Writes (242 + 242 + 28 bytes) and an Execute Write, four round trips.
    long_way = air_figures.figures(prepared)
    assert long_way["prepare_writes"] == 3 and long_way["execute_writes"] == 1 and long_way["write_requests"] == 0
    assert long_way["round_trips"] == 4 and long_way["connection_events"] == 8
    print("\n" + air_figures.describe(figures, 517) + "\n" + air_figures.describe(long_way, 247))


def test_subscribe_after_writing_still_answers(link, peripheral):
    peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8")
            await ball.write("Late subscriber?")
            await asyncio.sleep(0.3)
            assert ball.answers.empty()
            await ball.subscribe()
            return await ball.next_answer()

    assert run(scenario()).decode() in SLUGS


def test_read_answer_returns_last_answer(link, peripheral):
    peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8")
            assert await ball.read_answer() == b""  # nothing asked yet
            first = await ball.ask("One?")
            assert await ball.read_answer() == first
            second = await ball.ask("Two?")
            assert await ball.read_answer() == second

    run(scenario())


@pytest.mark.parametrize("mtu", [23, 247])
def test_mtu(link, peripheral, mtu):
    dongle = peripheral("Mtu8", "--answers", "text")

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Mtu8", mtu=mtu if mtu != 23 else None)
            assert ball.connection.att_mtu == mtu
            answers = [await ball.ask(f"MTU {mtu}, question {i}?") for i in range(10)]
            full = await ball.read_answer()  # Read / Read Blob give the whole phrase
            return answers, full

    answers, full = run(scenario())
    for answer in answers:
        text = answer.decode()
        # ATT_MTU - 3 bytes fit in a notification (Vol 3 Part F §3.4.7.1).
        assert len(answer) <= mtu - 3
        assert text in PHRASES or any(p.encode().startswith(answer) for p in PHRASES)
    assert full.decode() in PHRASES
    if mtu == 247:
        assert all(a.decode() in PHRASES for a in answers)
        if dongle.ours:
            assert "MTU 247" in dongle.log


@pytest.mark.ours_only
def test_exchange_mtu_again_changes_nothing(link, peripheral):
    # The ATT MTU is set once per connection (Core Vol 3 Part F 3.4.2): a second
    # Exchange MTU Request from the same link changes nothing (our log says so).
    dongle = peripheral("OnceMTU")

    async def exchange_again():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "OnceMTU", mtu=100)
            for mtu in range(101, 106):
                ball.connection.send_l2cap_pdu(4, bytes([0x02, mtu, 0x00]))  # raw Exchange MTU Request
                await asyncio.sleep(0.05)
            answer = await ball.ask("Same MTU?")
            await ball.disconnect()
            return answer

    assert run(exchange_again()).decode() in SLUGS
    mtus = [line for _, line in dongle.lines if "info: MTU " in line]
    assert len(mtus) == 1 and "MTU 100 " in mtus[0], dongle.log


# Ours only: the Bumble 8-Ball stops advertising once connected; ours keeps
# advertising below --max-centrals (README, command line).
@pytest.mark.ours_only
def test_two_centrals_at_once(link, peripheral):
    dongle = peripheral("Duo8")

    async def scenario():
        async with central(link.ports[1], "F1:00:00:00:00:C1") as first, \
                central(link.ports[2], "F2:00:00:00:00:C2") as second:
            ball_1 = await EightBall.connect(first, "Duo8")
            # Still advertising below --max-centrals: the second central finds it too.
            ball_2 = await EightBall.connect(second, "Duo8")
            await ball_1.write("First asks?")
            await ball_2.write("Second asks?")
            await ball_1.subscribe()
            await ball_2.subscribe()
            answers = await asyncio.gather(ball_1.next_answer(), ball_2.next_answer())
            # Each central has its own state: reading gives each its own answer.
            assert await ball_1.read_answer() == answers[0]
            assert await ball_2.read_answer() == answers[1]
            return answers

    answers = run(scenario())
    assert all(a.decode() in SLUGS for a in answers)
    if dongle.ours:
        assert dongle.wait_count("info: connected:", 2) == 2


@pytest.mark.ours_only
def test_max_centrals_stops_advertising(link, peripheral):
    dongle = peripheral("Solo8", "--max-centrals", "1")

    async def scenario():
        async with central(link.ports[1], "F1:00:00:00:00:C1") as first, \
                central(link.ports[2], "F2:00:00:00:00:C2") as second:
            ball = await EightBall.connect(first, "Solo8")
            with pytest.raises(asyncio.TimeoutError):
                await find(second, "Solo8", timeout=2.0)
            await ball.disconnect()
            # Advertising resumes after the disconnection.
            ball = await EightBall.connect(second, "Solo8")
            return await ball.ask("My turn?")

    assert run(scenario()).decode() in SLUGS
    assert "advertising stopped" in dongle.log


def test_disconnect_and_reconnect(link, peripheral):
    dongle = peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            for round_ in range(3):
                ball = await EightBall.connect(device, "Ball8")
                assert (await ball.ask(f"Round {round_}?")).decode() in SLUGS
                await ball.disconnect()

    run(scenario())
    if dongle.ours:
        assert dongle.wait_count("info: disconnected:", 3) == 3


def test_answers_text(link, peripheral):
    peripheral("Text8", "--answers", "text")

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Text8", mtu=247)
            return [await ball.ask(f"Text {i}?") for i in range(20)]

    assert all(a.decode("utf-8") in PHRASES for a in run(scenario()))


def test_seed_makes_answers_reproducible(link, peripheral):
    def answers_with(seed):
        dongle = peripheral("Seed8", "--seed", str(seed))

        async def scenario():
            async with central(link.ports[1]) as device:
                ball = await EightBall.connect(device, "Seed8")
                result = [await ball.ask(f"Seeded {i}?") for i in range(8)]
                await ball.disconnect()
                return result

        try:
            return run(scenario())
        finally:
            dongle.stop_cleanly()

    first, again, other = answers_with(42), answers_with(42), answers_with(43)
    assert first == again
    assert first != other


@pytest.mark.ours_only
def test_pairing_is_refused_and_link_keeps_working(link, peripheral):
    dongle = peripheral()

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Ball8")
            # Bumble's SMP turns the peer's Pairing Failed into ProtocolError(reason, "smp").
            with pytest.raises(ProtocolError) as failure:
                await asyncio.wait_for(ball.connection.pair(), 15)
            assert failure.value.error_namespace == "smp"
            assert failure.value.error_code == 0x05, failure.value  # Pairing Not Supported
            assert ball.connection.is_encrypted is False
            return await ball.ask("Still fine?")

    assert run(scenario()).decode() in SLUGS
    assert "pairing refused" in dongle.log


@pytest.mark.ours_only
def test_btsnoop_decodes_in_tshark(link, peripheral, workdir):
    tshark = shutil.which("tshark")
    assert tshark, "tshark is missing: scripts/setup.sh installs it"
    snoop = os.path.join(workdir, "run.btsnoop")
    dongle = peripheral("Snoop8", "--btsnoop", snoop)

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, "Snoop8", mtu=247)
            await ball.ask("Logged?")
            await ball.ask("w" * 299 + "?")
            await ball.disconnect()

    run(scenario())
    dongle.process.terminate()
    assert dongle.process.wait(5) == 0

    def tshark_count(display_filter):
        result = subprocess.run([tshark, "-r", snoop, "-Y", display_filter], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stderr
        return len([l for l in result.stdout.splitlines() if l.strip()])

    # Bumble's controller answers LE Set Data Length with Unknown HCI Command and
    # the status alone, which Wireshark's dissector calls malformed (it expects
    # the handle too); every other packet, ours above all, must decode cleanly.
    assert tshark_count("bthci_evt.status == 0x01") <= 1
    assert tshark_count("(_ws.malformed || _ws.expert.severity >= error) && !(bthci_evt.status == 0x01)") == 0
    assert tshark_count("btatt.opcode == 0x12") >= 1      # Write Request
    assert tshark_count("btatt.opcode == 0x16") >= 2      # Prepare Write Requests
    assert tshark_count("btatt.opcode == 0x1b") >= 2      # notifications
    assert tshark_count("bthci_cmd.opcode == 0x0c03") >= 2  # reset at start and at stop


@pytest.mark.ours_only
def test_cli_errors_are_one_line_with_exit_codes():
    cases = [
        (["--role", "peripheral", "--bogus"], 2),
        (["--role", "wizard"], 2),
        (["--role", "peripheral", "--transport", "tcp:nohost"], 2),
        (["--role", "peripheral", "--max-centrals", "0"], 2),
        (["--role", "peripheral", "--name", ""], 2),
        (["--role", "peripheral", "--address", "00:11:22:33:44:55"], 2),
        # No arguments at all prints a usage (several lines): Tests/CLI checks it.
        (["--role", "peripheral", "--transport", "tcp:127.0.0.1:1"], 3),
        (["--role", "peripheral", "--transport", "serial:/nonexistent/tty"], 3),
    ]
    for args, code in cases:
        result = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=30)
        assert result.returncode == code, (args, result.stderr)
        lines = [l for l in result.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and "error" in lines[0], (args, result.stderr)
        assert "Fatal" not in result.stderr and "Stack" not in result.stderr


@pytest.mark.ours_only
def test_help_documents_every_flag():
    result = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    for flag in ("--role", "--transport", "--name", "--answers", "--max-centrals", "--seed", "--question",
                 "--rssi-min", "--rssi-max", "--timeout", "--json", "--count", "--peer", "--scan", "--btsnoop",
                 "--log-level", "--list-controllers", "--controller-info", "--address", "--usb-reset",
                 "--exit-on-unplug", "--health-check", "Exit codes"):
        assert flag in result.stdout, flag


@pytest.mark.ours_only
def test_controller_info(link):
    result = subprocess.run([BINARY, "--controller-info", "--transport", f"tcp:127.0.0.1:{link.ports[0]}"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "HCI version:" in result.stdout and "Public address: 00:00:00:00:00:00 (none)" in result.stdout
    assert "ACL buffers:    27 bytes x 64 (LE)" in result.stdout


@pytest.mark.ours_only
def test_serial_transport_over_a_pty(workdir):
    """H4 over a UART (serial:PATH@BAUD), with a Bumble controller on a pseudo-terminal."""
    from harness import Controllers, Dongle

    tty = os.path.join(workdir, "hci-uart")
    link = Controllers(1, extra=[f"pty:{tty}"])
    dongle = None
    try:
        for _ in range(50):
            if os.path.exists(tty):
                break
            asyncio.run(asyncio.sleep(0.1))
        dongle = Dongle("--role", "peripheral", "--transport", f"serial:{tty}@1000000", "--name", "Uart8")
        dongle.wait_for("info: advertising")

        async def scenario():
            async with central(link.ports[0]) as device:
                ball = await EightBall.connect(device, "Uart8", mtu=247)
                return [await ball.ask(f"Over the UART {i}?") for i in range(5)]

        assert all(a.decode() in SLUGS for a in run(scenario()))
        dongle.process.terminate()
        assert dongle.process.wait(5) == 0
    finally:
        if dongle:
            dongle.stop()
        link.stop()
