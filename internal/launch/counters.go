package launch

import (
	"github.com/popmon/popmon/measure"

	"github.com/popmon/popmon/internal/fault"
)

// CheckCountersMode validates a --counters value ("" leaves the library's
// default: $POPMON_COUNTERS, else auto).
func CheckCountersMode(mode string) error {
	switch mode {
	case "", measure.CountersAuto, measure.CountersOn, measure.CountersOff:
		return nil
	}
	return fault.Usagef("unknown --counters mode %q: use auto, on or off", mode)
}

// countersEnv adds POPMON_COUNTERS for a --counters value to set.
func countersEnv(mode string, set map[string]string) error {
	if err := CheckCountersMode(mode); err != nil {
		return err
	}
	if mode != "" {
		set["POPMON_COUNTERS"] = mode
	}
	return nil
}
