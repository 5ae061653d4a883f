"""What one question costs on the air, counted from a BTSnoop capture of the
peripheral (`--btsnoop`): the ATT PDUs each way, the HCI ACL packets as the
capture holds them, the LL data packets those PDUs take on a real link (27
octets a packet without the Data Length Extension, 251 with it), the ATT round
trips, and the connection events they take (docs/PERFORMANCE.md, "On the air":
the central sends its next request in the event after the response it waits
for, and the controller sends a response in the event after its request, so
each round trip is two events; the answer's notification goes with the last
response).

The question's cycle runs from the central's first write that carries the
question (a Write Request whose value ends in "?", or a Prepare Write) to our
answer's notification.

    .venv/bin/python Tests/PythonSupport/air_figures.py FILE.btsnoop   # prints the figures"""
import math
import sys

from harness import btsnoop_records

ATT_CID = 4
REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20}
NAMES = {0x12: "Write Request", 0x13: "Write Response", 0x16: "Prepare Write Request",
         0x17: "Prepare Write Response", 0x18: "Execute Write Request", 0x19: "Execute Write Response",
         0x1B: "Handle Value Notification", 0x02: "Exchange MTU Request", 0x03: "Exchange MTU Response"}


def att_pdus(path):
    """Every ATT PDU of the capture, reassembled from its ACL packets, in order:
    dicts of direction ("in": from the central, "out": ours), the ATT bytes and
    the HCI ACL packets it took in the capture."""
    gathering = {}
    pdus = []
    for flags, packet in btsnoop_records(path):
        if packet[:1] != b"\x02" or len(packet) < 5:
            continue
        direction = "in" if flags & 1 else "out"
        header = packet[1] | packet[2] << 8
        handle, boundary = header & 0x0FFF, (header >> 12) & 0x3
        data = packet[5:]
        key = (handle, direction)
        if boundary in (0b00, 0b10):
            gathering[key] = [bytearray(data), 1]
        elif key in gathering:
            gathering[key][0] += data
            gathering[key][1] += 1
        else:
            continue
        buffer, count = gathering[key]
        if len(buffer) >= 4 and len(buffer) == 4 + (buffer[0] | buffer[1] << 8):
            del gathering[key]
            if (buffer[2] | buffer[3] << 8) == ATT_CID:
                pdus.append({"direction": direction, "handle": handle, "att": bytes(buffer[4:]), "acl": count})
    return pdus


def exchanged_mtu(pdus, before=None):
    """(the central's Exchange MTU Request, our response) of the last exchange
    before index `before` (the first exchange when None), or None."""
    if before is not None:
        pdus = pdus[:before][::-1]
    request = next((p["att"] for p in pdus if p["direction"] == "in" and p["att"][:1] == b"\x02"), None)
    response = next((p["att"] for p in pdus if p["direction"] == "out" and p["att"][:1] == b"\x03"), None)
    if request is None or response is None:
        return None
    return int.from_bytes(request[1:3], "little"), int.from_bytes(response[1:3], "little")


def question_cycle(pdus, start=0):
    """The PDUs of the first question's cycle at or after index `start`, and the index after it."""
    first = next((i for i in range(start, len(pdus)) if pdus[i]["direction"] == "in" and (
        pdus[i]["att"][:1] == b"\x16" or (pdus[i]["att"][:1] == b"\x12" and pdus[i]["att"].endswith(b"?")))), None)
    assert first is not None, "no question in the capture"
    end = next((i for i in range(first, len(pdus)) if pdus[i]["direction"] == "out" and pdus[i]["att"][:1] == b"\x1b"),
               None)
    assert end is not None, "no answer after the question"
    return pdus[first:end + 1], end + 1


def ll_packets(att_length, octets):
    """LL data packets one ATT PDU takes on the air: its L2CAP PDU (4 + ATT) in `octets` payloads."""
    return math.ceil((4 + att_length) / octets)


def figures(cycle):
    incoming = [p for p in cycle if p["direction"] == "in"]
    outgoing = [p for p in cycle if p["direction"] == "out"]
    round_trips = sum(1 for p in incoming if p["att"][0] in REQUESTS)
    return {
        "att_in": [NAMES.get(p["att"][0], hex(p["att"][0])) + f" ({len(p['att'])} B)" for p in incoming],
        "att_out": [NAMES.get(p["att"][0], hex(p["att"][0])) + f" ({len(p['att'])} B)" for p in outgoing],
        "write_requests": sum(1 for p in incoming if p["att"][0] == 0x12),
        "prepare_writes": sum(1 for p in incoming if p["att"][0] == 0x16),
        "execute_writes": sum(1 for p in incoming if p["att"][0] == 0x18),
        "acl_in": sum(p["acl"] for p in incoming),
        "acl_out": sum(p["acl"] for p in outgoing),
        "ll_27": (sum(ll_packets(len(p["att"]), 27) for p in incoming),
                  sum(ll_packets(len(p["att"]), 27) for p in outgoing)),
        "ll_251": (sum(ll_packets(len(p["att"]), 251) for p in incoming),
                   sum(ll_packets(len(p["att"]), 251) for p in outgoing)),
        "round_trips": round_trips,
        "connection_events": 2 * round_trips,
    }


def describe(f, mtu=None):
    return (f"{'MTU ' + str(mtu) + ': ' if mtu else ''}central → us {len(f['att_in'])} ATT PDUs "
            f"({', '.join(f['att_in'])}), us → central {len(f['att_out'])} ({', '.join(f['att_out'])}); "
            f"HCI ACL packets in the capture {f['acl_in']} / {f['acl_out']}; "
            f"LL packets {f['ll_27'][0]} / {f['ll_27'][1]} at 27 octets, {f['ll_251'][0]} / {f['ll_251'][1]} at 251; "
            f"{f['round_trips']} round trips, {f['connection_events']} connection events")


def main(paths):
    for path in paths:
        pdus = att_pdus(path)
        start = 0
        while True:
            try:
                cycle, end = question_cycle(pdus, start)
            except AssertionError:
                break
            mtu = exchanged_mtu(pdus, before=end - len(cycle))
            print(f"{path}: {describe(figures(cycle), mtu and min(mtu))}")
            start = end


if __name__ == "__main__":
    main(sys.argv[1:])
