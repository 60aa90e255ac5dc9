#!/usr/bin/env python3
"""A DNS server for tests/dns.sh: answers A and SRV queries over UDP from a
zone file it reads again at every query, so the test can add records as it
learns its workers' ports. Standard library only.

    dns_server.py ZONE READY [ADDR [PORT]]

ZONE has one record per line:

    NAME A 127.0.0.1
    NAME SRV PRIORITY WEIGHT PORT TARGET
    NAME DROP          (never answered: a resolver that does not answer)

A name the zone does not hold gets NXDOMAIN; a name it holds, asked for a
type it has none of (AAAA), an empty answer. Every query is appended to
ZONE.log as "NAME TYPE". READY is written once the socket listens.
"""
import socket
import struct
import sys

TYPES = {1: "A", 28: "AAAA", 33: "SRV"}


def read_zone(path):
    zone = {}
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if len(fields) >= 2:
                zone.setdefault(fields[0].lower().rstrip("."), []).append(fields[1:])
    return zone


def parse_question(packet):
    labels, at = [], 12
    while True:
        length = packet[at]
        at += 1
        if length == 0:
            break
        labels.append(packet[at:at + length].decode("ascii", "replace"))
        at += length
    qtype, _ = struct.unpack("!HH", packet[at:at + 4])
    return ".".join(labels).lower(), qtype, packet[12:at + 4]


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


def record(qtype, fields):
    if qtype == 1 and fields[0] == "A":
        return socket.inet_aton(fields[1])
    if qtype == 33 and fields[0] == "SRV":
        priority, weight, port = (int(x) for x in fields[1:4])
        return struct.pack("!HHH", priority, weight, port) + encode_name(fields[4])
    return None


def answer(packet, zone):
    ident, flags = struct.unpack("!HH", packet[:4])
    name, qtype, question = parse_question(packet)
    records = zone.get(name)
    if records is not None and any(r[0] == "DROP" for r in records):
        return None
    rcode = 3 if records is None else 0
    rdatas = [d for d in (record(qtype, r) for r in records or []) if d is not None]
    header = struct.pack("!HHHHHH", ident, 0x8180 | (flags & 0x0100) | rcode, 1, len(rdatas), 0, 0)
    body = b"".join(struct.pack("!HHHIH", 0xC00C, qtype, 1, 5, len(d)) + d for d in rdatas)
    return header + question + body


def main():
    zone_path, ready = sys.argv[1], sys.argv[2]
    address = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"
    port = int(sys.argv[4]) if len(sys.argv) > 4 else 53
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind((address, port))
    with open(ready, "w") as out:
        out.write("listening\n")
    while True:
        packet, client = server.recvfrom(4096)
        try:
            name, qtype, _ = parse_question(packet)
            with open(zone_path + ".log", "a") as log:
                log.write("%s %s\n" % (name, TYPES.get(qtype, qtype)))
            reply = answer(packet, read_zone(zone_path))
        except (IndexError, struct.error, OSError, ValueError):
            continue
        if reply is not None:
            server.sendto(reply, client)


if __name__ == "__main__":
    main()
