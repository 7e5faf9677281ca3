package live

// pruneSamples drops the samples no cut can need: those before the latest
// instant at which every process of this node was sampled. Procs cuts a
// set of processes at the latest instant all of them were sampled at,
// which is never before that one (node copies have no samples: a set with
// one is cut without them). While every process runs and is read at every
// instant, each keeps one sample (with 4096 regions, 4 MB a process)
// instead of keepSamples; once one stops being sampled (it ended, or its
// file cannot be read) the others keep their last keepSamples as before.
// Under s.mu.
func (s *Sampler) pruneSamples() {
	var least *tracked
	for _, p := range s.procs {
		if !p.copied && (least == nil || len(p.samples) < len(least.samples)) {
			least = p
		}
	}
	if least == nil || len(least.samples) == 0 {
		return
	}
	common := int64(-1)
	for k := range least.samples {
		if k <= common {
			continue
		}
		all := true
		for _, p := range s.procs {
			if _, ok := p.samples[k]; !ok && !p.copied {
				all = false
				break
			}
		}
		if all {
			common = k
		}
	}
	for _, p := range s.procs {
		for k := range p.samples {
			if k < common {
				delete(p.samples, k)
			}
		}
	}
}
