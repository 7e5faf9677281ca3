package cli

import (
	"errors"
	"strings"
	"testing"
)

func TestGPUEnv(t *testing.T) {
	const lib = "/cache/libpopmon.so"
	tests := []struct {
		name      string
		mode      string
		env       map[string]string
		wantInj   string // "" = not set by popmon
		wantMode  string
		wantUsage bool
	}{
		{name: "default auto", wantInj: lib},
		{name: "flag on", mode: "on", wantInj: lib, wantMode: "on"},
		{name: "flag off", mode: "off", wantMode: "off"},
		{name: "env off", env: map[string]string{"POPMON_GPU": "off"}},
		{name: "flag auto over env off", mode: "auto", env: map[string]string{"POPMON_GPU": "off"}, wantInj: lib, wantMode: "auto"},
		{name: "another tool", env: map[string]string{"CUDA_INJECTION64_PATH": "/opt/nsys/libToolsInjection64.so"}},
		{name: "another tool, on", mode: "on", env: map[string]string{"CUDA_INJECTION64_PATH": "/opt/nsys/libToolsInjection64.so"},
			wantMode: "on"},
		{name: "an older popmon library", env: map[string]string{"CUDA_INJECTION64_PATH": "/old/libpopmon.so"}, wantInj: lib},
		{name: "bad mode", mode: "always", wantUsage: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]string{}
			err := gpuEnv(tc.mode, lib, set, func(k string) string { return tc.env[k] })
			if tc.wantUsage {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != ExitUsage {
					t.Fatalf("err = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := set["CUDA_INJECTION64_PATH"]; got != tc.wantInj {
				t.Errorf("CUDA_INJECTION64_PATH = %q, want %q", got, tc.wantInj)
			}
			if got := set["POPMON_GPU"]; got != tc.wantMode {
				t.Errorf("POPMON_GPU = %q, want %q", got, tc.wantMode)
			}
		})
	}
}

func TestGPUCheck(t *testing.T) {
	tests := []struct {
		name, probe string
		warn        bool
		want        []string
	}{
		{name: "no driver", probe: "libcuda=\ncupti=\ncupti_tried=libcupti.so\ninjection=\n",
			want: []string{"no CUDA driver (libcuda.so.1 not found)"}},
		{name: "no cupti", probe: "libcuda=/usr/lib/libcuda.so.1\ndriver_version=12040\ncupti=\ncupti_tried=libcupti.so\ncupti_tried=libcupti.so.13\ninjection=\n",
			warn: true, want: []string{"CUDA 12.4", "no CUPTI library found (tried libcupti.so, libcupti.so.13)"}},
		{name: "measured", probe: "libcuda=/usr/lib/libcuda.so.1\ndriver_version=13000\ncupti=/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13\ncupti_version=130001\ninjection=\n",
			want: []string{"CUDA 13.0", "CUPTI /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 (API version 130001)", "GPU metrics are measured"}},
		{name: "taken", probe: "libcuda=/usr/lib/libcuda.so.1\ncupti=/x/libcupti.so\ninjection=/opt/nsys/libToolsInjection64.so\n",
			warn: true, want: []string{"CUDA_INJECTION64_PATH is already set to /opt/nsys/libToolsInjection64.so"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := gpuCheck(parseGPUProbe(tc.probe))
			if !c.ok || c.warn != tc.warn {
				t.Errorf("ok=%v warn=%v, want ok, warn=%v", c.ok, c.warn, tc.warn)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.detail, w) {
					t.Errorf("detail %q lacks %q", c.detail, w)
				}
			}
		})
	}
}
