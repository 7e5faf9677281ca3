package measure

// Counter collection modes ([Counters.Mode]): POPMON_COUNTERS or
// popmon run --counters.
const (
	CountersAuto = "auto"
	CountersOn   = "on"
	CountersOff  = "off"
)

// Counters says whether hardware counters (instructions and cycles during
// useful time) were measured (docs/measurement-format.md, "counters").
type Counters struct {
	// Mode is the requested mode: CountersAuto, CountersOn or CountersOff.
	Mode string `json:"mode"`
	// Available reports whether counters were measured; it equals
	// [Resources.HardwareCounters].
	Available bool `json:"available"`
	// Method is how counters were read when available: "rdpmc" (user-space
	// reads of the mmapped perf page) or "read" (the read system call).
	Method string `json:"method,omitempty"`
	// Reason says, when Available is false, why: "counters unavailable:
	// <reason>", or "counters off (POPMON_COUNTERS=off)".
	Reason string `json:"reason,omitempty"`
}

// CountersNotMeasured returns why a measurement has no counter data: "" when it has
// counters; c's Reason when the file gives one; otherwise a generic reason.
func (m *Measurement) CountersNotMeasured() string {
	if m == nil || m.Resources.HardwareCounters {
		return ""
	}
	if c := m.Counters; c != nil && c.Reason != "" {
		return c.Reason
	}
	return "hardware counters were not measured"
}

// Source kinds ([Source.Kind]).
const (
	SourceParaver = "paraver"
	SourceTALP    = "talp-json"
)

// Source says where an imported measurement came from.
type Source struct {
	// Kind is SourceParaver or SourceTALP.
	Kind string `json:"kind"`
	// Path is the imported file as given to popmon.
	Path string `json:"path"`
	// Tool names the program that wrote the imported file, e.g. the
	// Paraver header's date line or "DLB 3.6.0".
	Tool string `json:"tool,omitempty"`
	// Notes are the facts a reader of metrics computed from this
	// measurement should know (what the source could not tell, conventions
	// applied).
	Notes []string `json:"notes,omitempty"`
}
