"""The 8-Ball as Cortex-M4 firmware: the core built with Embedded
Swift runs in QEMU mps2-an386 with its H4 UART on a Bumble virtual controller,
and a Bumble central on the same link plays the ITCB app against it. The
firmware's budgets are checked on the ELF (build) and on its log (stack)."""
import asyncio
import os
import subprocess

import pytest
from bumble.att import ATT_Error
from bumble_client import EightBall, central, find
from conftest import Firmware
from firmware_figures import FIGURES, NAME, SEED, TINY_RING_NAME
from harness import BINARY, Controllers
from harness import SLUGS

FLASH_BUDGET = 64 * 1024
RAM_BUDGET = 24 * 1024
FRAME_BUDGET = 2 * 1024
STACK_BUDGET = 8 * 1024
LONG_QUESTION = "y" * 299 + "?"


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 100))


def test_budgets_of_the_elf(budget):
    FIGURES["flash"] = f"{budget['flash']} B (budget {FLASH_BUDGET} B)"
    FIGURES["static RAM (data+bss)"] = f"{budget['static_ram']} B (budget {RAM_BUDGET} B)"
    biggest = budget["frames"][0]
    FIGURES["biggest stack frame"] = f"{biggest['bytes']} B, {biggest['function']} (budget {FRAME_BUDGET} B)"
    assert budget["flash"] <= FLASH_BUDGET
    assert budget["static_ram"] <= RAM_BUDGET
    assert all(frame["bytes"] <= FRAME_BUDGET for frame in budget["frames"]), budget["frames"]
    assert budget["problems"] == []


def test_boots_and_advertises(link, firmware):
    assert "on mps2-an386" in firmware.log
    assert f'name "{NAME}"' in firmware.log and f"seed {SEED}" in firmware.log  # the build's settings
    assert "FAULT" not in firmware.log

    async def scenario():
        async with central(link.ports[1]) as device:
            advertisement = await find(device, NAME)
            assert advertisement.is_connectable
            assert advertisement.address.address_type == 1  # static random
            assert int(str(advertisement.address).split(":")[0], 16) >= 0xC0

    run(scenario())


@pytest.mark.parametrize("mtu", [23, 247])
def test_questions_long_write_non_question_and_reconnect(link, firmware, mtu):
    answered_before = firmware.count("8ball: answer ")
    connections_before = firmware.count("host: connected")

    async def scenario():
        async with central(link.ports[1]) as device:
            ball = await EightBall.connect(device, NAME, mtu=mtu if mtu != 23 else None)
            assert ball.connection.att_mtu == mtu
            answers = [await ball.ask(f"Firmware at MTU {mtu}, question {i}?") for i in range(20)]
            # 300 bytes: more than MTU - 3, so Bumble writes it with Prepare/Execute Write.
            answers.append(await ball.ask(LONG_QUESTION))
            with pytest.raises(ATT_Error) as error:
                await ball.write("Not a question")
            assert error.value.error_code == 0x0E
            with pytest.raises(asyncio.TimeoutError):
                await ball.next_answer(timeout=1.0)
            await ball.disconnect()
            # Advertising resumes: the same central connects again and asks.
            ball = await EightBall.connect(device, NAME, mtu=mtu if mtu != 23 else None)
            answers.append(await ball.ask("And after reconnecting?"))
            await ball.disconnect()
            return answers

    answers = run(scenario())
    assert len(answers) == 22 and all(a.decode() in SLUGS for a in answers), answers
    firmware.wait_for("8ball: answer ", count=answered_before + 22, timeout=5)
    firmware.wait_for("host: disconnected", count=connections_before + 2, timeout=10)
    assert firmware.count("host: connected") == connections_before + 2
    assert f'"{LONG_QUESTION[:64]}"... (300 bytes)' in firmware.log
    assert "8ball: not a question (ATT error 0x0E), bytes 14" in firmware.log
    if mtu == 247:
        assert "host: MTU 247" in firmware.log
    FIGURES[f"questions answered at MTU {mtu}"] = f"{len(answers)}/22 (20 short, 1 of 300 bytes, 1 after reconnecting)"


def test_our_linux_central_asks_the_firmware(link, firmware):
    """Both ends ours: the Linux binary's central role against the firmware
    (the binary of the debug build, or $ITCB_DONGLE_BIN). The central asks for
    ATT MTU 517 (Linux's capacity); the firmware keeps its 247."""
    if not os.access(BINARY, os.X_OK):
        pytest.skip(f"no itcb-dongle binary at {BINARY} (swift build first)")
    answered_before = firmware.count("8ball: answer ")
    result = subprocess.run([BINARY, "--role", "central", "--transport", f"tcp:127.0.0.1:{link.ports[1]}",
                             "--peer", NAME, "--question", "Is it running on a Cortex-M4?", "--question", "Really?",
                             "--log-level", "info"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "8-Ball ready (MTU 247)" in result.stderr and "host: MTU 247" in firmware.log
    lines = result.stdout.splitlines()
    assert [line.split(" -> ")[0] for line in lines] == ["Is it running on a Cortex-M4?", "Really?"], result.stdout
    # The central shows the answer as the ITCB apps do: the slug's English phrase.
    assert all(line.split(" -> ")[1].strip() for line in lines), result.stdout
    firmware.wait_for("8ball: answer ", count=answered_before + 2, timeout=5)


def test_stack_high_water_mark(firmware):
    firmware.wait_for("status: stack peak")
    peaks = firmware.stack_peaks()
    peak = max(peaks)
    boot = int(next(line for _, line in firmware.lines if "fw: boot stack peak" in line).split()[-1])
    FIGURES["stack high-water mark"] = f"{peak} B in the main loop, {boot} B at boot (budget {STACK_BUDGET} B)"
    assert "OVERFLOWED" not in firmware.log and "FAULT" not in firmware.log
    assert 0 < peak <= STACK_BUDGET, f"main-loop stack peak {peak} B is over the {STACK_BUDGET} B budget"
    assert boot <= STACK_BUDGET


def test_flow_control_holds_the_uart_when_the_ring_is_full(tiny_ring_elf):
    """With a 16-byte receive ring and a main loop that leaves bytes in the ring until
    the UART has been held back (or the line is quiet for 5 ms: a slow MCU, on demand,
    whatever the emulator's pace), 251-byte ACL packets overrun the ring: the RX
    interrupt is masked (QEMU stops reading the socket) until the main loop frees
    space, and nothing is lost."""
    link = Controllers(2)
    firmware = Firmware(tiny_ring_elf, link.ports[0])
    try:
        firmware.wait_for("host: advertising", timeout=30)

        async def scenario():
            async with central(link.ports[1]) as device:
                ball = await EightBall.connect(device, TINY_RING_NAME, mtu=247)
                answers = [await ball.ask(LONG_QUESTION) for _ in range(8)]
                answers += [await ball.ask(f"Short {i}?") for i in range(3)]
                await ball.disconnect()
                return answers

        answers = run(scenario())
        assert all(a.decode() in SLUGS for a in answers), answers
        firmware.wait_for("status: ", timeout=10)
        held = max(firmware.status_values("rx held"))
        FIGURES["flow control (16-byte ring)"] = f"UART held back {held} times, {len(answers)}/11 answered"
        assert held > 0, firmware.log
        assert "FAULT" not in firmware.log and "framing lost" not in firmware.log
    finally:
        firmware.stop()
        link.stop()
