#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Extract the conformance material of docs/udp.md into a C header.

Usage: udp-spec-extract.py PAGE OUT.h     write the header
       udp-spec-extract.py --list PAGE    print what the page holds

The specification page is the single source of its byte vectors: the
conformance tests (tests/io/udp/test-udp-spec.c, test-udp-spec-peers.c)
include what this script writes, so a vector, a sequence or the state table
that changes on the page changes what the tests expect. Three things are
read (the format is docs/udp.md section 12):

- fenced blocks tagged "hex": one byte vector each, with its "vector:",
  "fields:", "decode:" and "encode:" lines and the bytes, either in full
  (offsets contiguous from 0) or compact ("length: N", zero but for the
  lines given, ascending and not overlapping);
- fenced blocks tagged "sequence": a name and one line per datagram
  (vector, an optional sender, the outcome);
- the table after the "<!-- state-layout" comment: the STATE layout.

The page is checked as it is read, and the first problem ends the script
with status 1 and "docs/udp.md:LINE: what is wrong", so a broken page fails
the build, not a test. The bytes are not interpreted here: what they mean
is for the tests to check against the codec. Python 3 standard library
only.
"""
import re
import sys

NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
BYTE_LINE = re.compile(r"^([0-9a-fA-F]{4,}):\s*((?:[0-9a-fA-F]{2}\s*)+)$")
ERRORS = {"EMSGSIZE", "EBADMSG", "EPROTONOSUPPORT", "EPROTO", "EDOM"}
ENCODES = {"EINVAL", "none"}
SENDERS = {"client", "second"}
MAX_DATAGRAM = 1371


class PageError(Exception):
    pass


def fail(path, line, msg):
    raise PageError("%s:%d: %s" % (path, line, msg))


def parse_vector(path, start, lines):
    """One hex block: @lines are (line number, text) inside the fence."""
    v = {"line": start, "name": None, "fields": [], "decode": "", "encode": ""}
    length = None
    chunks = []
    for no, raw in lines:
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        key, sep, rest = text.partition(":")
        rest = rest.strip()
        if sep and key in ("vector", "fields", "decode", "encode", "length"):
            if chunks:
                fail(path, no, "'%s:' after the bytes" % key)
            if key == "vector":
                if v["name"] or not NAME.match(rest):
                    fail(path, no, "one 'vector: NAME' per block, NAME of a-z, 0-9, -")
                v["name"] = rest
            elif key == "fields":
                v["fields"].append(rest)
            elif key == "decode":
                if rest not in ERRORS:
                    fail(path, no, "decode: one of %s" % ", ".join(sorted(ERRORS)))
                v["decode"] = rest
            elif key == "encode":
                if rest not in ENCODES:
                    fail(path, no, "encode: one of %s" % ", ".join(sorted(ENCODES)))
                v["encode"] = rest
            else:
                if not rest.isdigit() or not 0 < int(rest) <= MAX_DATAGRAM:
                    fail(path, no, "length: a datagram length, 1 to %d" % MAX_DATAGRAM)
                length = int(rest)
            continue
        m = BYTE_LINE.match(text)
        if not m:
            fail(path, no, "not a byte line ('OFFSET: HEX HEX ...'): %r" % raw.strip())
        chunks.append((no, int(m.group(1), 16), bytes.fromhex(m.group(2))))
    if not v["name"]:
        fail(path, start, "a hex block without 'vector: NAME'")
    if not v["fields"] or not re.search(r"(^|\s)type=\S", " ".join(v["fields"])):
        fail(path, start, "vector %s: no 'fields:' line with type=" % v["name"])
    if not chunks:
        fail(path, start, "vector %s: no bytes" % v["name"])
    if length is None:
        data = b""
        for no, off, b in chunks:
            if off != len(data):
                fail(path, no, "offset %04x, but %04x bytes came before" % (off, len(data)))
            data += b
        if len(data) > MAX_DATAGRAM:
            fail(path, start, "vector %s: %d bytes, more than a datagram" % (v["name"], len(data)))
    else:
        data = bytearray(length)
        end = 0
        for no, off, b in chunks:
            if off < end:
                fail(path, no, "offset %04x: not after the previous line (ends at %04x)" % (off, end))
            if off + len(b) > length:
                fail(path, no, "offset %04x + %d bytes: past the length %d" % (off, len(b), length))
            data[off:off + len(b)] = b
            end = off + len(b)
        data = bytes(data)
    v["bytes"] = data
    return v


def parse_sequence(path, start, lines):
    seq = {"line": start, "name": None, "steps": []}
    for no, raw in lines:
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        if text.startswith("sequence:"):
            name = text[len("sequence:"):].strip()
            if seq["name"] or not NAME.match(name):
                fail(path, no, "one 'sequence: NAME' per block")
            seq["name"] = name
            continue
        if not seq["name"]:
            fail(path, no, "a sequence step before 'sequence: NAME'")
        words = text.split()
        sender = ""
        if len(words) > 1 and words[1] in SENDERS:
            sender = words.pop(1)
        if len(words) < 2:
            fail(path, no, "a step is 'VECTOR [SENDER] OUTCOME...'")
        seq["steps"].append({"line": no, "vector": words[0], "from": sender,
                             "outcome": " ".join(words[1:])})
    if not seq["name"] or not seq["steps"]:
        fail(path, start, "a sequence block without a name or steps")
    return seq


def parse_table(path, lines):
    rows = []
    for no, raw in lines:
        cells = [c.strip() for c in raw.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].isdigit():
            continue  # the head, the rule, the total
        name = cells[1].strip("`")
        if not NAME.match(name.replace("_", "-")) or not cells[3].isdigit():
            fail(path, no, "a state-layout row is '| offset | `name` | type | bytes | ... |'")
        rows.append({"line": no, "offset": int(cells[0]), "name": name, "type": cells[2],
                     "bytes": int(cells[3])})
    return rows


def read_page(path):
    with open(path, encoding="utf-8") as f:
        text = f.read().splitlines()
    vectors, sequences, table = [], [], None
    i = 0
    while i < len(text):
        line = text[i]
        fence = re.match(r"^```(\S*)\s*$", line)
        if fence:
            tag = fence.group(1)
            start = i + 1
            i += 1
            body = []
            while i < len(text) and not text[i].startswith("```"):
                body.append((i + 1, text[i]))
                i += 1
            if i == len(text):
                fail(path, start, "a fence that is never closed")
            if tag == "hex":
                vectors.append(parse_vector(path, start, body))
            elif tag == "sequence":
                sequences.append(parse_sequence(path, start, body))
        elif line.startswith("<!-- state-layout"):
            if table is not None:
                fail(path, i + 1, "a second state-layout table")
            body = []
            i += 1
            while i < len(text) and text[i].startswith("|"):
                body.append((i + 1, text[i]))
                i += 1
            table = parse_table(path, body)
            continue
        i += 1
    names = {}
    for v in vectors:
        if v["name"] in names:
            fail(path, v["line"], "vector %s is also at line %d" % (v["name"], names[v["name"]]))
        names[v["name"]] = v["line"]
    seen = set()
    for s in sequences:
        if s["name"] in seen:
            fail(path, s["line"], "a second sequence %s" % s["name"])
        seen.add(s["name"])
        for st in s["steps"]:
            if st["vector"] not in names:
                fail(path, st["line"], "no vector named %s on the page" % st["vector"])
            for word in st["outcome"].split():
                if word.startswith("reply=") and word[6:] not in names:
                    fail(path, st["line"], "no vector named %s on the page" % word[6:])
    if not vectors:
        fail(path, 1, "no hex blocks")
    if not table:
        fail(path, 1, "no state-layout table")
    return vectors, sequences, table


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_header(path, out, vectors, sequences, table):
    o = []
    o.append("/* Generated from %s by tests/io/udp/udp-spec-extract.py: do not edit. */" % path)
    o.append("#include <stddef.h>")
    o.append("#include <stdint.h>")
    o.append("")
    for k, v in enumerate(vectors):
        o.append("/* %s, line %d */" % (v["name"], v["line"]))
        o.append("static const uint8_t spec_bytes_%d[%d] = {" % (k, len(v["bytes"])))
        for i in range(0, len(v["bytes"]), 12):
            o.append("\t" + ", ".join("0x%02x" % b for b in v["bytes"][i:i + 12]) + ",")
        o.append("};")
    o.append("")
    o.append("static const struct udp_spec_vector spec_vectors[] = {")
    for k, v in enumerate(vectors):
        o.append("\t{ %s, %d, spec_bytes_%d, %d, %s, %s, %s }," % (
            c_string(v["name"]), v["line"], k, len(v["bytes"]), c_string(" ".join(v["fields"])),
            c_string(v["decode"]), c_string(v["encode"])))
    o.append("};")
    o.append("")
    for k, s in enumerate(sequences):
        o.append("static const struct udp_spec_step spec_steps_%d[] = {" % k)
        for st in s["steps"]:
            o.append("\t{ %s, %s, %s, %d }," % (c_string(st["vector"]), c_string(st["from"]),
                                                 c_string(st["outcome"]), st["line"]))
        o.append("};")
    o.append("static const struct udp_spec_sequence spec_sequences[] = {")
    for k, s in enumerate(sequences):
        o.append("\t{ %s, %d, spec_steps_%d, %d }," % (c_string(s["name"]), s["line"], k,
                                                       len(s["steps"])))
    o.append("};")
    o.append("")
    o.append("static const struct udp_spec_row spec_rows[] = {")
    for r in table:
        o.append("\t{ %s, %d, %d, %s, %d }," % (c_string(r["name"]), r["offset"], r["bytes"],
                                                c_string(r["type"]), r["line"]))
    o.append("};")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "--list":
            vectors, sequences, table = read_page(argv[2])
            for v in vectors:
                print("vector %-22s %4d bytes  line %d" % (v["name"], len(v["bytes"]), v["line"]))
            for s in sequences:
                print("sequence %-20s %4d steps  line %d" % (s["name"], len(s["steps"]), s["line"]))
            print("state layout: %d rows" % len(table))
            return 0
        if len(argv) == 3 and not argv[1].startswith("-"):
            vectors, sequences, table = read_page(argv[1])
            write_header(argv[1], argv[2], vectors, sequences, table)
            return 0
    except PageError as e:
        print("udp-spec-extract: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("udp-spec-extract: %s" % e, file=sys.stderr)
        return 1
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
