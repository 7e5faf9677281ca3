package live

// regionSpan returns the part of a region record read for every region:
// every field but the per-thread table (thr), which only an open region's
// visit needs (RegionAt) and which is most of the record (4 KiB of about
// 5 with libpopmon's 256 detail threads). The whole record when the thread
// table lies inside that part.
func (h *header) regionSpan() (lo, hi uint32) {
	lo, hi = h.RgName, h.RgName+h.NameMax
	for _, f := range [][2]uint32{{h.RgOpen, 4}, {h.RgAnon, 4}, {h.RgStart, 8}, {h.RgElapsed, 8}, {h.RgVisits, 8},
		{h.RgSnap, h.AcSize}, {h.RgTot, h.AcSize}} {
		lo, hi = min(lo, f[0]), max(hi, f[0]+f[1])
	}
	if tlo, thi := h.RgThr, h.RgThr+16*h.DetailThreads; tlo < hi && thi > lo {
		return 0, h.RegionSize
	}
	return lo, hi
}

// regionTable copies the first nr regions consistently (the header's
// regions_seq even and unchanged across the copy, as consistent does):
// each one's span (regionSpan) into table, nr × (hi − lo) bytes, and the
// thread table of each open one, in order, into thr (nothing when the span
// holds it).
func (f *File) regionTable(nr int) (table, thr []byte, lo, hi uint32) {
	h := &f.h
	lo, hi = h.regionSpan()
	rs, size := uintptr(hi-lo), uintptr(h.RegionSize)
	whole := hi-lo == h.RegionSize
	nthr := uintptr(16 * h.DetailThreads)
	table = make([]byte, uintptr(nr)*rs)
	read := func() {
		base := uintptr(h.RegionOff)
		for i := range uintptr(nr) {
			off := base + i*size
			copy(table[i*rs:(i+1)*rs], f.data[off+uintptr(lo):off+uintptr(hi)])
		}
		if whole {
			return
		}
		thr = thr[:0]
		for i := range uintptr(nr) {
			if le32(table[i*rs:], h.RgOpen-lo) != 0 {
				off := base + i*size + uintptr(h.RgThr)
				thr = append(thr, f.data[off:off+nthr]...)
			}
		}
	}
	for try := 0; try < maxRetries; try++ {
		s1 := f.load64(offRegionsSeq)
		if s1&1 != 0 {
			continue
		}
		read()
		if f.load64(offRegionsSeq) == s1 {
			return table, thr, lo, hi
		}
	}
	read()
	return table, thr, lo, hi
}
