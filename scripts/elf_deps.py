#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the loader reads of an ELF file's dynamic section, for the GPU bundle's check on a
machine without binutils: one line per item,

  SONAME  libfoo.so.1
  NEEDED  libbar.so.2
  RUNPATH /opt/lib:$ORIGIN/lib          (RPATH where the file has that instead)
  VERDEF  FOO_1.2                       the versions the file defines (not its base entry)
  VERNEED libbar.so.2 BAR_2.0           the versions it needs, with the library named for each

  elf_deps.py FILE...

It reads the program headers (PT_LOAD, PT_DYNAMIC) as the loader does, so stripped files and
files without section headers read the same, and never the symbol tables (cuBLAS has hundreds
of thousands of symbols). 64- and 32-bit, either byte order. Exit 1 naming the file and what is
wrong where a file is not such an ELF file, 2 for bad usage.
"""
import mmap
import os
import struct
import sys

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
VER_FLG_BASE = 1


class BadElf(Exception):
    pass


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:  # mapped, not read: cuBLAS's libraries are 100s of MB
            self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(
                f.fileno()).st_size else b""
        d = self.data
        if len(d) < 0x34 or d[:4] != b"\x7fELF":
            raise BadElf("not an ELF file (no \\x7fELF magic)")
        if d[4] not in (1, 2) or d[5] not in (1, 2):
            raise BadElf(f"unknown ELF class {d[4]} or byte order {d[5]}")
        self.wide = d[4] == 2
        self.end = "<" if d[5] == 1 else ">"
        if self.wide:
            phoff, = self.unpack("Q", 0x20)
            phentsize, phnum = self.unpack("HH", 0x36)
        else:
            phoff, = self.unpack("I", 0x1C)
            phentsize, phnum = self.unpack("HH", 0x2A)
        self.loads, self.dynamic = [], None
        for i in range(phnum):
            at = phoff + i * phentsize
            if self.wide:
                ptype, _, offset, vaddr, _, filesz, _, _ = self.unpack("IIQQQQQQ", at)
            else:
                ptype, offset, vaddr, _, filesz, _, _, _ = self.unpack("IIIIIIII", at)
            if ptype == PT_LOAD:
                self.loads.append((vaddr, offset, filesz))
            elif ptype == PT_DYNAMIC:
                self.dynamic = (offset, filesz)

    def unpack(self, fmt, at):
        fmt = self.end + fmt
        if at < 0 or at + struct.calcsize(fmt) > len(self.data):
            raise BadElf(f"truncated: a structure at byte {at} runs past the end of the file")
        return struct.unpack_from(fmt, self.data, at)

    def offset(self, vaddr):
        """The file offset of a virtual address, through the PT_LOAD segment that maps it."""
        for base, off, size in self.loads:
            if base <= vaddr < base + size:
                return off + vaddr - base
        raise BadElf(f"address {vaddr:#x} is in no loaded segment")

    def entries(self):
        if not self.dynamic:
            return []
        offset, size = self.dynamic
        step = 16 if self.wide else 8
        out = []
        for at in range(offset, offset + size - step + 1, step):
            tag, value = self.unpack("qQ" if self.wide else "iI", at)
            if tag == DT_NULL:
                break
            out.append((tag & 0xFFFFFFFF if tag < 0 else tag, value))
        return out

    def lines(self):
        dyn = self.entries()
        first = {}
        for tag, value in dyn:
            first.setdefault(tag, value)
        if not dyn:
            return []  # a static program: no libraries, no versions
        if DT_STRTAB not in first:
            raise BadElf("the dynamic section has no string table")
        strtab = self.offset(first[DT_STRTAB])
        strsz = first.get(DT_STRSZ, len(self.data) - strtab)

        def string(i):
            if i >= strsz:
                raise BadElf(f"a name at {i} lies beyond the string table's {strsz} bytes")
            at = strtab + i
            stop = self.data.find(b"\0", at)
            return self.data[at:stop if stop >= 0 else len(self.data)].decode(errors="replace")

        out = []
        for tag, value in dyn:
            if tag == DT_SONAME:
                out.append(("SONAME", string(value)))
            elif tag == DT_NEEDED:
                out.append(("NEEDED", string(value)))
            elif tag in (DT_RUNPATH, DT_RPATH):
                out.append(("RUNPATH" if tag == DT_RUNPATH else "RPATH", string(value)))
        if DT_VERDEF in first:
            at = self.offset(first[DT_VERDEF])
            for _ in range(first.get(DT_VERDEFNUM, 0)):
                _, flags, _, cnt, _, aux, nxt = self.unpack("HHHHIII", at)
                if cnt and not flags & VER_FLG_BASE:
                    name, _ = self.unpack("II", at + aux)
                    out.append(("VERDEF", string(name)))
                if not nxt:
                    break
                at += nxt
        if DT_VERNEED in first:
            at = self.offset(first[DT_VERNEED])
            for _ in range(first.get(DT_VERNEEDNUM, 0)):
                _, cnt, file, aux, nxt = self.unpack("HHIII", at)
                lib = string(file)
                a = at + aux
                for _ in range(cnt):
                    _, _, _, name, anext = self.unpack("IHHII", a)
                    out.append(("VERNEED", lib + " " + string(name)))
                    if not anext:
                        break
                    a += anext
                if not nxt:
                    break
                at += nxt
        return out


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    status = 0
    for path in argv:
        try:
            for key, value in Elf(path).lines():
                print(f"{key} {value}")
        except (OSError, BadElf) as e:
            sys.stderr.write(f"elf_deps.py: {path}: {e}\n")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
