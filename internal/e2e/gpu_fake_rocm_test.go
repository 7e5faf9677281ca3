package e2e

// The fake ROCm stack itself (examples/gpu/fake_rocm), without popmon:
// libpopmon's rocprofiler-sdk declarations against the fake's (abi_check),
// and the smoke tool, which uses the fake SDK as a measuring tool would and
// checks every callback and record, found both ways a tool is found
// (preloaded, ROCP_TOOL_LIBRARIES), for the record layouts of
// rocprofiler-sdk 0.4.0 (ROCm 6.2), 0.6.0 (ROCm 6.4) and 1.0.0 (ROCm 7.0),
// with shifted operation ids; and the registration's two other paths: no
// tool (the SDK is never loaded) and a tool without an SDK (the process
// aborts, as real ROCm's rocprofiler-register makes it).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGPUFakeROCmStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds C libraries")
	}
	compilers := []string{}
	for _, cc := range []string{"cc", "clang"} { // -Werror clean with both
		if _, err := exec.LookPath(cc); err == nil {
			compilers = append(compilers, cc)
		}
	}
	if len(compilers) == 0 {
		t.Skip("no C compiler")
	}
	script := filepath.Join(repoRoot, "examples", "gpu", "fake_rocm", "build.sh")
	for _, cc := range compilers {
		dir := filepath.Join(t.TempDir(), cc)
		build := exec.Command("sh", script, dir)
		build.Env = append(os.Environ(), "CC="+cc)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the fake ROCm stack with %s: %v\n%s", cc, err, out)
		}
		if out, err := exec.Command(filepath.Join(dir, "abi_check")).CombinedOutput(); err != nil ||
			strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("abi_check (%s): %v\n%s", cc, err, out)
		}
		tool := filepath.Join(dir, "libsmoke_rocm.so")
		run := func(env ...string) (string, error) {
			cmd := exec.Command(filepath.Join(dir, "smoke_rocm"))
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		for _, found := range []string{"LD_PRELOAD=" + tool, "ROCP_TOOL_LIBRARIES=" + tool} {
			for _, version := range []string{"0.4.0", "0.6.0", "1.0.0"} {
				for _, extra := range [][]string{{"FAKEHIP_DEVICES=1"}, {"FAKEHIP_DEVICES=2", "FAKEROCM_OP_SHIFT=5"}} {
					env := append([]string{found, "FAKEROCM_VERSION=" + version}, extra...)
					out, err := run(env...)
					if err != nil || !strings.Contains(out, "smoke_rocm: workload done") ||
						!strings.Contains(out, "\nok (rocprofiler-sdk ") {
						t.Errorf("smoke test (%s, %s): %v\n%s", cc, strings.Join(env, " "), err, out)
					}
				}
			}
		}
		// No tool: the SDK is never loaded, nothing is checked or said.
		if out, err := run(); err != nil || strings.TrimSpace(out) != "smoke_rocm: workload done" {
			t.Errorf("without a tool (%s): %v\n%s", cc, err, out)
		}
		// A tool but no SDK: rocprofiler-register's fatal error.
		out, err := run("LD_PRELOAD="+tool, "FAKEHIP_NO_SDK=1")
		if err == nil || !strings.Contains(out, "rocprofiler_set_api_table not found") ||
			strings.Contains(out, "workload done") {
			t.Errorf("a tool without an SDK (%s) should abort at the first HIP call: %v\n%s", cc, err, out)
		}
	}
}
