package live

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/popmon/popmon/measure"
)

// A synthetic job for the time series: ranks live files of regions regions
// each (Global first), written in place through a shared mapping as
// libpopmon writes them, and sampled by a real Sampler, one interval end
// per Sample (the sampler's interval is the series' 1 s: the instants are
// the test's, not a clock's). Every region is closed (its accounts do not
// depend on when the file is read), with libpopmon's 256 detail threads.
const (
	sjThreadSize = 200
	sjAcSize     = 176
	sjDetail     = 256
	sjRgThr      = 416
	sjRegionSize = sjRgThr + 16*sjDetail
	sjNameMax    = 32
	sjThreadOff  = 4096
	sjRegionOff  = sjThreadOff + sjThreadSize
)

const sjFnNames = "MPI_Allreduce\x00MPI_Barrier\x00"

type seriesJob struct {
	dir     string
	s       *Sampler
	maps    [][]byte
	paths   []string
	regions int
}

// newSeriesJob writes the files; with tsc, the odd ranks' clocks are the
// TSC (their ticks converted with each snapshot's own calibration).
func newSeriesJob(tb testing.TB, ranks, regions int, tsc bool) *seriesJob {
	tb.Helper()
	j := &seriesJob{dir: tb.TempDir(), regions: regions}
	size := sjRegionOff + sjRegionSize*regions + 4096
	for r := range ranks {
		h := header{Version: LayoutVersion, HeaderSize: 4096, NStates: nStates, NExtra: nExtra, NFn: 2, NCtr: 2,
			DetailThreads: sjDetail, NameMax: sjNameMax, ThreadOff: sjThreadOff, ThreadSize: sjThreadSize, MaxThreads: 1,
			RegionOff: sjRegionOff, RegionSize: sjRegionSize, MaxRegions: uint32(regions),
			NamesOff: uint32(size - 4096), NamesSize: uint32(len(sjFnNames)),
			ThSeq: 0, ThLast: 8, ThState: 16, ThAccounted: 20, ThRate: 24, ThSlot: 28, ThKind: 32, ThAcc: 40,
			ThExtra: 104, ThMPICalls: 144, ThFnCalls: 152, ThFnTicks: 168, ThCtrAcc: 184,
			RgName: 0, RgOpen: 32, RgAnon: 36, RgStart: 40, RgElapsed: 48, RgVisits: 56, RgSnap: 64, RgTot: 240, RgThr: sjRgThr,
			AcSize: sjAcSize, AcT: 0, AcMPICalls: 64, AcOMPParallels: 72, AcOMPTasks: 80, AcGPUCalls: 88, AcX: 96,
			AcPrimUseful: 136, AcPrimMPI: 144, AcThrUsefulMax: 152, AcCtr: 160,
			PID: int32(os.Getpid()), Rank: int32(r), Size: int32(ranks), State: uint32(Running),
			NThreads: 1, T0Tick: 1000, T0NS: 1000, InitTick: 1000, NRegions: uint32(regions), CPUs: 1}
		if tsc && r%2 == 1 {
			h.ClockTSC = 1
		}
		copy(h.Magic[:], Magic)
		b := make([]byte, size)
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h)))
		binary.LittleEndian.PutUint32(b[sjThreadOff+20:], 1) // accounted
		binary.LittleEndian.PutUint32(b[sjThreadOff+16:], stUseful)
		for i := range regions {
			name := "Global"
			if i > 0 {
				name = fmt.Sprintf("region %04d", i)
			}
			copy(b[sjRegionOff+i*sjRegionSize:], name)
		}
		copy(b[size-4096:], sjFnNames)
		p := filepath.Join(j.dir, fmt.Sprintf("node1.%d.live", 1000+r))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			tb.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			tb.Fatal(err)
		}
		m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
		j.maps = append(j.maps, m)
		j.paths = append(j.paths, p)
	}
	j.s = NewSampler(j.dir, time.Second)
	tb.Cleanup(func() {
		j.s.Close()
		for _, m := range j.maps {
			syscall.Munmap(m)
		}
	})
	return j
}

// add adds to region i of rank r one visit of elapsed ns, of which useful
// useful and the rest MPI (one call); Global (i 0) gets the same.
func (j *seriesJob) add(r, i int, elapsed, useful uint64) {
	m := j.maps[r]
	for _, g := range []int{0, i} {
		o := sjRegionOff + g*sjRegionSize
		bump := func(off int, v uint64) {
			binary.LittleEndian.PutUint64(m[o+off:], binary.LittleEndian.Uint64(m[o+off:])+v)
		}
		bump(48, elapsed)
		bump(56, 1)
		bump(240+8*stUseful, useful)
		bump(240+8*stMPI, elapsed-useful)
		bump(240+64, 1)
		bump(240+136, useful) // the primary thread's
		bump(240+144, elapsed-useful)
		if g == i {
			break
		}
	}
}

// sample is one instant of the sampler: every file read, an interval end.
func (j *seriesJob) sample() { j.s.Sample() }

// final returns every rank's accounts per region as the files hold them
// now, and the regions' order: the measurement that ends the series.
func (j *seriesJob) final(tb testing.TB) (map[int]map[string]measure.ProcessAccounts, []string) {
	tb.Helper()
	out := map[int]map[string]measure.ProcessAccounts{}
	var order []string
	for _, p := range j.s.Latest() {
		out[p.Rank] = map[string]measure.ProcessAccounts{}
		for i := range p.Regions {
			out[p.Rank][p.Regions[i].Name] = accountsOf(p, p.Regions[i])
			if p.Rank == 0 {
				order = append(order, p.Regions[i].Name)
			}
		}
	}
	return out, order
}
