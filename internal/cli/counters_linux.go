package cli

import (
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// perfEventAttr is struct perf_event_attr up to config1
// (PERF_ATTR_SIZE_VER0, 64 bytes), which every kernel with perf_event
// accepts.
type perfEventAttr struct {
	Type         uint32
	Size         uint32
	Config       uint64
	SamplePeriod uint64
	SampleType   uint64
	ReadFormat   uint64
	Flags        uint64 // the bit fields: disabled, inherit, ..., exclude_kernel, exclude_hv, ...
	WakeupEvents uint32
	BpType       uint32
	Config1      uint64
}

// perf_event ABI constants (linux/perf_event.h).
const (
	perfTypeHardware         = 0
	perfCountHWCPUCycles     = 0
	perfCountHWInstructions  = 1
	perfFormatTotalEnabled   = 1 << 0
	perfFormatTotalRunning   = 1 << 1
	perfFormatGroup          = 1 << 3
	perfFlagFDCloexec        = 1 << 3
	perfAttrBitExcludeKernel = 5
	perfAttrBitExcludeHV     = 6
	perfPageCapabilities     = 40 // offset of capabilities in perf_event_mmap_page
	perfCapUserRDPMC         = 2  // bit of cap_user_rdpmc
)

// attrBit returns the mask of C bit field number bit in the u64 that holds
// perf_event_attr's flags: bit fields fill a word from its low end on
// little-endian machines and from its high end on big-endian ones.
func attrBit(bit uint) uint64 {
	var probe [2]byte
	binary.NativeEndian.PutUint16(probe[:], 1)
	if probe[0] == 1 {
		return 1 << bit
	}
	return 1 << (63 - bit)
}

// perfEventOpen is the system call; tests replace it.
var perfEventOpen = func(attr *perfEventAttr, group int) (int, syscall.Errno) {
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(attr)),
		0, ^uintptr(0), uintptr(group), perfFlagFDCloexec, 0) // this thread, any CPU
	if errno != 0 {
		return -1, errno
	}
	return int(fd), 0
}

// probeCounters opens the counter group libpopmon opens (user-space cycles
// leading, instructions), then checks whether rdpmc is allowed on it, and
// describes failures in the library's words.
func probeCounters() counterProbe {
	p := counterProbe{paranoid: readParanoid(), seccomp: seccompFiltered()}
	var fds []int
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	for _, config := range []uint64{perfCountHWCPUCycles, perfCountHWInstructions} {
		attr := perfEventAttr{
			Type:       perfTypeHardware,
			Config:     config,
			ReadFormat: perfFormatGroup | perfFormatTotalEnabled | perfFormatTotalRunning,
			Flags:      attrBit(perfAttrBitExcludeKernel) | attrBit(perfAttrBitExcludeHV),
		}
		attr.Size = uint32(unsafe.Sizeof(attr))
		group := -1
		if len(fds) > 0 {
			group = fds[0]
		}
		fd, errno := perfEventOpen(&attr, group)
		if errno != 0 {
			p.errno = errno
			p.reason = countersReason(errno, p.paranoid, p.seccomp)
			return p
		}
		fds = append(fds, fd)
	}
	p.available = true
	p.method = "read"
	if rdpmcAllowed(fds[0]) {
		p.method = "rdpmc"
	}
	return p
}

// rdpmcAllowed reports whether this process may read the event behind fd
// with rdpmc: x86 only; the mmapped page says so, or the PMU's sysfs knob
// allows it (as libpopmon decides).
func rdpmcAllowed(fd int) bool {
	if fd < 0 || (runtime.GOARCH != "amd64" && runtime.GOARCH != "386") {
		return false
	}
	page, err := syscall.Mmap(fd, 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return false
	}
	defer syscall.Munmap(page)
	if binary.NativeEndian.Uint64(page[perfPageCapabilities:])&attrBit(perfCapUserRDPMC) != 0 {
		return true
	}
	for _, knob := range []string{"/sys/bus/event_source/devices/cpu/rdpmc", "/sys/bus/event_source/devices/cpu_core/rdpmc"} {
		if b, err := os.ReadFile(knob); err == nil {
			v, err := strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil && v >= 1
		}
	}
	return false
}
