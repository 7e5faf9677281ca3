package binscan

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"reflect"
	"testing"
)

// tinyELF builds a small 64-bit x86-64 shared object by hand: PT_INTERP and
// PT_DYNAMIC, DT_NEEDED libgomp.so.1, DT_SONAME libtiny.so.1, DT_RUNPATH
// $ORIGIN/../lib, and a .dynsym defining MPI_Init, PMPI_Init and ompi_comm
// while MPI_Send is only used. A small seed keeps fuzzing fast.
func tinyELF() []byte {
	le := binary.LittleEndian
	var b bytes.Buffer
	pad := func(n int) {
		for b.Len()%n != 0 {
			b.WriteByte(0)
		}
	}
	b.Write(make([]byte, 64+2*56)) // header and program headers, filled in below

	interpOff := b.Len()
	b.WriteString("/lib64/ld-linux-x86-64.so.2\x00")
	interpSize := b.Len() - interpOff

	pad(8)
	strOff := b.Len()
	strs := "\x00libgomp.so.1\x00libtiny.so.1\x00$ORIGIN/../lib\x00MPI_Init\x00PMPI_Init\x00ompi_comm\x00MPI_Send\x00"
	at := func(s string) uint32 { return uint32(bytes.Index([]byte(strs), []byte("\x00"+s+"\x00")) + 1) }
	b.WriteString(strs)
	strSize := b.Len() - strOff

	pad(8)
	symOff := b.Len()
	sym := func(name string, info byte, shndx uint16) {
		var e [24]byte
		if name != "" {
			le.PutUint32(e[0:], at(name))
		}
		e[4] = info
		le.PutUint16(e[6:], shndx)
		b.Write(e[:])
	}
	sym("", 0, 0)
	sym("MPI_Init", 0x22, 1)  // weak func
	sym("PMPI_Init", 0x12, 1) // global func
	sym("ompi_comm", 0x11, 1) // global object
	sym("MPI_Send", 0x12, 0)  // undefined
	symSize := b.Len() - symOff

	dynOff := b.Len()
	dyn := func(tag elf.DynTag, val uint64) {
		var e [16]byte
		le.PutUint64(e[0:], uint64(tag))
		le.PutUint64(e[8:], val)
		b.Write(e[:])
	}
	dyn(elf.DT_NEEDED, uint64(at("libgomp.so.1")))
	dyn(elf.DT_SONAME, uint64(at("libtiny.so.1")))
	dyn(elf.DT_RUNPATH, uint64(at("$ORIGIN/../lib")))
	dyn(elf.DT_NULL, 0)
	dynSize := b.Len() - dynOff

	shstrOff := b.Len()
	shstrs := "\x00.interp\x00.dynstr\x00.dynsym\x00.dynamic\x00.shstrtab\x00"
	sat := func(s string) uint32 { return uint32(bytes.Index([]byte(shstrs), []byte("\x00"+s+"\x00")) + 1) }
	b.WriteString(shstrs)
	shstrSize := b.Len() - shstrOff

	pad(8)
	shOff := b.Len()
	sh := func(name string, typ elf.SectionType, off, size int, link uint32, entsize uint64) {
		var e [64]byte
		if name != "" {
			le.PutUint32(e[0:], sat(name))
		}
		le.PutUint32(e[4:], uint32(typ))
		le.PutUint64(e[16:], uint64(off)) // addr = offset
		le.PutUint64(e[24:], uint64(off))
		le.PutUint64(e[32:], uint64(size))
		le.PutUint32(e[40:], link)
		le.PutUint64(e[56:], entsize)
		b.Write(e[:])
	}
	sh("", elf.SHT_NULL, 0, 0, 0, 0)
	sh(".interp", elf.SHT_PROGBITS, interpOff, interpSize, 0, 0)
	sh(".dynstr", elf.SHT_STRTAB, strOff, strSize, 0, 0)
	sh(".dynsym", elf.SHT_DYNSYM, symOff, symSize, 2, 24)
	sh(".dynamic", elf.SHT_DYNAMIC, dynOff, dynSize, 2, 16)
	sh(".shstrtab", elf.SHT_STRTAB, shstrOff, shstrSize, 0, 0)

	out := b.Bytes()
	copy(out, "\x7fELF\x02\x01\x01")
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], 1)
	le.PutUint64(out[32:], 64)            // phoff
	le.PutUint64(out[40:], uint64(shOff)) // shoff
	le.PutUint16(out[52:], 64)            // ehsize
	le.PutUint16(out[54:], 56)            // phentsize
	le.PutUint16(out[56:], 2)             // phnum
	le.PutUint16(out[58:], 64)            // shentsize
	le.PutUint16(out[60:], 6)             // shnum
	le.PutUint16(out[62:], 5)             // shstrndx
	ph := func(i int, typ elf.ProgType, off, size int) {
		p := out[64+56*i:]
		le.PutUint32(p[0:], uint32(typ))
		le.PutUint64(p[8:], uint64(off))
		le.PutUint64(p[16:], uint64(off))
		le.PutUint64(p[24:], uint64(off))
		le.PutUint64(p[32:], uint64(size))
		le.PutUint64(p[40:], uint64(size))
	}
	ph(0, elf.PT_INTERP, interpOff, interpSize)
	ph(1, elf.PT_DYNAMIC, dynOff, dynSize)
	return out
}

func TestParseObjectFacts(t *testing.T) {
	data := tinyELF()
	obj, err := parseObject(bytes.NewReader(data), int64(len(data)), newBudget())
	if err != nil {
		t.Fatal(err)
	}
	if obj.class != elf.ELFCLASS64 || obj.machine != elf.EM_X86_64 || !obj.interp || !obj.dynamic {
		t.Errorf("class %v machine %v interp %v dynamic %v", obj.class, obj.machine, obj.interp, obj.dynamic)
	}
	if !reflect.DeepEqual(obj.needed, []string{"libgomp.so.1"}) || obj.soname != "libtiny.so.1" ||
		!obj.hasRunpath || !reflect.DeepEqual(obj.runpath, []string{"$ORIGIN/../lib"}) || obj.rpath != nil {
		t.Errorf("needed %q soname %q runpath %v %q rpath %q", obj.needed, obj.soname, obj.hasRunpath, obj.runpath, obj.rpath)
	}
	s := obj.syms
	if !s.mpiInit || !s.pmpiInit || s.ompiSyms != 1 || s.mpichSyms != 0 {
		t.Errorf("symbols %+v", s)
	}
	if names, n := s.mpiNames(5); !reflect.DeepEqual(names, []string{"MPI_Init"}) || n != 1 {
		t.Errorf("MPI names %q (%d), want MPI_Init only: MPI_Send is undefined, PMPI_ names are not counted", names, n)
	}
	if obj.incomplete != "" {
		t.Errorf("incomplete: %s", obj.incomplete)
	}
}
