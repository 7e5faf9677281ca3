package shimbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvC runs the checks of the POPMON_* variables' values
// (shim/base/env.c) on a table of good and hostile values: a good value is
// taken silently; a bad one (negative, huge, not a number, trailing
// characters, empty, an unknown word) gives exactly one
// "popmon: POPMON_X=value: why; using fallback" line and the fallback,
// however often it is read.
func TestEnvC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C code")
	}
	shim := filepath.Join("..", "..", "shim")
	cc := cCompilers(t)[0]
	bin := filepath.Join(t.TempDir(), "env_test")
	args := []string{"-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-I", shim}
	args = append(args, baseSources(t, shim)...)
	args = append(args, filepath.Join(shim, "test", "env_test.c"), "-ldl", "-lpthread", "-o", bin)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	const unset = "\x00unset"
	buf := []string{"int", "POPMON_GPU_BUFFER_MB", "256", "8", "4096"}
	period := []string{"int", "POPMON_GPU_COUNTERS_PERIOD_US", "1000", "10", "1000000"}
	size := []string{"size", "POPMON_TRACE_BUFFER", "67108864", "1024", "1073741824"}
	gpuCounters := []string{"mode", "POPMON_GPU_COUNTERS", "1"}
	timeout := []string{"seconds", "POPMON_QUERY_TIMEOUT", "5000000000", "1000000", "86400000000000"}
	for _, c := range []struct {
		name  string
		args  []string
		value string // the variable's value (unset: not set)
		want  string // printed value
		line  string // the one line ("" none)
	}{
		{"buffer unset", buf, unset, "256", ""},
		{"buffer good", buf, "64", "64", ""},
		{"buffer negative", buf, "-5", "256", "popmon: POPMON_GPU_BUFFER_MB=-5: outside 8-4096; using 256"},
		{"buffer huge", buf, "99999999999999999999", "256", "popmon: POPMON_GPU_BUFFER_MB=99999999999999999999: out of range; using 256"},
		{"buffer above", buf, "100000", "256", "outside 8-4096; using 256"},
		{"buffer not a number", buf, "lots", "256", "POPMON_GPU_BUFFER_MB=lots: not a number; using 256"},
		{"buffer trailing", buf, "64MB", "256", "POPMON_GPU_BUFFER_MB=64MB: trailing characters after the number; using 256"},
		{"buffer empty", buf, "", "256", "POPMON_GPU_BUFFER_MB=: empty, not a number; using 256"},
		{"buffer space", buf, " 64", "256", "not a number"},
		{"period good", period, "500", "500", ""},
		{"period too small", period, "1", "1000", "POPMON_GPU_COUNTERS_PERIOD_US=1: outside 10-1000000; using 1000"},
		{"period garbage", period, "10x", "1000", "trailing characters"},
		{"size good", size, "100m", "104857600", ""},
		{"size KiB", size, "512KiB", "524288", ""},
		{"size bytes", size, "4096", "4096", ""},
		{"size typo", size, "100g", "67108864", "popmon: POPMON_TRACE_BUFFER=100g: more than 1g (the largest popmon takes); using 64m"},
		{"size overflow", size, "99999999999g", "67108864", "more than 1g"},
		{"size small", size, "10", "67108864", "below the smallest, 1k; using 64m"},
		{"size garbage", size, "64q", "67108864", "trailing characters after the size"},
		{"size negative", size, "-1m", "67108864", "not a size"},
		{"size empty", size, "", "67108864", "empty, not a size; using 64m"},
		{"seconds unset", timeout, unset, "5000000000", ""},
		{"seconds whole", timeout, "2", "2000000000", ""},
		{"seconds fraction", timeout, "0.25", "250000000", ""},
		{"seconds too small", timeout, "0.0001", "5000000000", "popmon: POPMON_QUERY_TIMEOUT=0.0001: outside 0.001-86400 seconds; using 5"},
		{"seconds too large", timeout, "1e9", "5000000000", "POPMON_QUERY_TIMEOUT=1e9: not a number of seconds; using 5"},
		{"seconds negative", timeout, "-1", "5000000000", "not a number of seconds"},
		{"seconds nan", timeout, "nan", "5000000000", "not a number of seconds"},
		{"seconds unit", timeout, "5s", "5000000000", "trailing characters after the number of seconds"},
		{"seconds empty", timeout, "", "5000000000", "empty, not a number of seconds; using 5"},
		{"seconds above", timeout, "100000", "5000000000", "outside 0.001-86400 seconds"},
		{"mode off", gpuCounters, "off", "0", ""},
		{"mode yes", gpuCounters, "yes", "2", ""},
		{"mode auto", gpuCounters, "auto", "1", ""},
		{"mode garbage", gpuCounters, "sometimes", "1", "popmon: POPMON_GPU_COUNTERS=sometimes: not one of auto, on, off, 1, 0, yes, no, true, false; using auto"},
		{"mode empty", gpuCounters, "", "1", "POPMON_GPU_COUNTERS=: empty, not one of auto"},
		{"mode control", gpuCounters, "a\nb", "1", "POPMON_GPU_COUNTERS=a?b: not one of"},
		{"switch on", []string{"switch", "POPMON_BYTES", "1", "1"}, "0", "0", ""},
		{"switch garbage", []string{"switch", "POPMON_BYTES", "1", "1"}, "nope", "1", "popmon: POPMON_BYTES=nope: not one of 1, 0, on, off, yes, no, true, false; using 1"},
		{"true garbage", []string{"true", "POPMON_DISABLE", "rank"}, "please", "1", "POPMON_DISABLE=please: not one of"},
		// A launcher (no rank) is as disabled, silently: the ranks say it.
		{"true garbage launcher", []string{"true", "POPMON_DISABLE"}, "please", "1", ""},
		{"true false", []string{"true", "POPMON_DISABLE", "rank"}, "false", "0", ""},
		{"true empty", []string{"true", "POPMON_DISABLE"}, "", "0", ""},
		{"true 0", []string{"true", "POPMON_DISABLE"}, "0", "0", ""},
		// Which node barriers' waits lend (DLB's parse_lewi_barrier):
		// DLB_Barrier's own by --lewi-barrier until --lewi-barrier-select
		// names barriers; a named one by its flags (OFF 0, ON 1), RUNTIME
		// (2) by the selection.
		{"barrier default", []string{"barrier", "DLB_ARGS", "default", "0"}, "--lewi", "1", ""},
		{"barrier default off", []string{"barrier", "DLB_ARGS", "default", "0"}, "--lewi --lewi-barrier=no", "0", ""},
		{"barrier default not selected", []string{"barrier", "DLB_ARGS", "default", "0"}, "--lewi --lewi-barrier-select=b1", "0", ""},
		{"barrier default selected", []string{"barrier", "DLB_ARGS", "default", "0"}, "--lewi --lewi-barrier=no --lewi-barrier-select=b1,default", "1", ""},
		{"barrier named on", []string{"barrier", "DLB_ARGS", "b1", "1"}, "--lewi --lewi-barrier-select=b2", "1", ""},
		{"barrier named off", []string{"barrier", "DLB_ARGS", "b1", "0"}, "--lewi --lewi-barrier-select=b1", "0", ""},
		{"barrier runtime selected", []string{"barrier", "DLB_ARGS", "b1", "2"}, "--lewi --lewi-barrier-select=default,b1", "1", ""},
		{"barrier runtime prefix", []string{"barrier", "DLB_ARGS", "b1", "2"}, "--lewi --lewi-barrier-select=b10,b", "0", ""},
		{"barrier runtime unselected", []string{"barrier", "DLB_ARGS", "b1", "2"}, "--lewi", "0", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			rank := args[len(args)-1] == "rank"
			if rank {
				args = args[:len(args)-1]
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = []string{}
			for _, e := range os.Environ() {
				if !strings.HasPrefix(e, "POPMON_") && !strings.Contains(e, "RANK=") {
					cmd.Env = append(cmd.Env, e)
				}
			}
			if rank {
				cmd.Env = append(cmd.Env, "PMI_RANK=0")
			}
			if c.value != unset {
				cmd.Env = append(cmd.Env, c.args[1]+"="+c.value)
			}
			var so, se strings.Builder
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s%s", err, so.String(), se.String())
			}
			if got := strings.TrimSpace(so.String()); got != "value "+c.want {
				t.Errorf("%s=%q: %q, want value %s", c.args[1], c.value, got, c.want)
			}
			lines := strings.Split(strings.TrimSpace(se.String()), "\n")
			switch {
			case c.line == "" && se.Len() != 0:
				t.Errorf("%s=%q: said %q, want nothing", c.args[1], c.value, se.String())
			case c.line != "" && (len(lines) != 1 || !strings.Contains(lines[0], c.line) || !strings.HasPrefix(lines[0], "popmon: "+c.args[1]+"=")):
				t.Errorf("%s=%q: said %q, want one line with %q", c.args[1], c.value, se.String(), c.line)
			}
		})
	}
}

// TestWerrorEnv: POPMON_WERROR, the one POPMON_* switch popmon itself reads,
// takes the library's words; another value is off.
func TestWerrorEnv(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "yes": true, "true": true, "on": true, "0": false, "": false, "off": false, "2": false, "maybe": false} {
		t.Setenv("POPMON_WERROR", v)
		if got := werrorEnv(); got != want {
			t.Errorf("POPMON_WERROR=%q: %v, want %v", v, got, want)
		}
	}
}
