"""The central of the process benchmark (scripts/bench-process.sh): a Bumble
central on the virtual controller at --port finds the 8-Ball called --name,
connects once, discovers its service, characteristics and the Answer CCCD, and
then runs --count full ITCB question cycles over that one connection:

    enable notifications  (Write Request 0x0001 to the Answer CCCD)
    write the question    (Write Request to Question)
    wait for the answer   (Handle Value Notification)
    disable notifications (Write Request 0x0000 to the Answer CCCD)

With --bumble-subscribe the CCCD is written through Bumble's subscribe() and
unsubscribe(), which re-discover the descriptors (a Find Information Request)
before each write: the cycle the issue first measured, 5 ATT round trips.
It disconnects, waits for the disconnection to complete and prints
"DONE <count> <seconds>" (the seconds cover the cycles only). Every step has a
time limit (--step, generous because the peripheral may run under valgrind);
any failure exits 1 with one line on stderr."""
import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bumble_client import EightBall, central  # noqa: E402

import bumble_client  # noqa: E402

from bumble.gatt import GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR as CCCD  # noqa: E402


async def run(args):
    bumble_client.STEP = args.step
    async with central(args.port) as device:
        ball = await EightBall.connect(device, args.name)
        answers = ball.answers

        def on_answer(value):
            answers.put_nowait(bytes(value))

        # Set-up, outside the cycles: find the Answer CCCD and register the
        # notification handler once. (Bumble's subscribe()/unsubscribe() would
        # re-discover the descriptors with a Find Information Request every
        # time: two extra ATT round trips per cycle.)
        await asyncio.wait_for(ball.answer.subscribe(on_answer), args.step)
        cccd = ball.answer.get_descriptor(CCCD)
        if cccd is None:
            raise RuntimeError("the Answer characteristic has no CCCD")
        await asyncio.wait_for(cccd.write_value(b"\x00\x00", with_response=True), args.step)
        question = args.question.encode()
        start = time.monotonic()
        if args.bumble_subscribe:  # the first measurement: Bumble's own (un)subscribe
            await asyncio.wait_for(ball.answer.unsubscribe(on_answer), args.step)

            async def enable():
                await ball.answer.subscribe(on_answer)

            async def disable():
                await ball.answer.unsubscribe(on_answer)
        else:
            async def enable():
                await cccd.write_value(b"\x01\x00", with_response=True)

            async def disable():
                await cccd.write_value(b"\x00\x00", with_response=True)
        async def step(awaitable):
            return await asyncio.wait_for(awaitable, args.step)

        for index in range(args.count):
            await step(enable())
            await step(ball.question.write_value(question, with_response=True))
            answer = await step(answers.get())
            if not answer.startswith(b"SLUG-ANSWER-"):
                raise RuntimeError(f"cycle {index}: unexpected answer {answer!r}")
            await step(disable())
        elapsed = time.monotonic() - start
        if not answers.empty():
            raise RuntimeError(f"{answers.qsize()} answers more than questions")
        await ball.disconnect()
        print(f"DONE {args.count} {elapsed:.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True, help="the central's Bumble controller (H4 TCP port)")
    parser.add_argument("--name", default="Bench", help="the 8-Ball's advertised name")
    parser.add_argument("--count", type=int, default=100, help="question cycles over one connection")
    parser.add_argument("--question", default="Is it fast now?")
    parser.add_argument("--step", type=float, default=60.0, help="time limit of each step, seconds")
    parser.add_argument("--bumble-subscribe", action="store_true",
                        help="enable/disable with Bumble's subscribe()/unsubscribe(), which send a Find "
                             "Information Request before each CCCD write (5 ATT round trips per cycle, not 3)")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except Exception as error:  # one line, no traceback: the script prints the peripheral's log
        print(f"bench_central: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
