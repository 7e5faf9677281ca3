package launch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/popmon/popmon/internal/binscan"
	"github.com/popmon/popmon/internal/fault"
)

// fakeLibomp makes FindLibomp's candidates a file of the test's (present
// true) or none, and clears POPMON_LIBOMP.
func fakeLibomp(t *testing.T, present bool) string {
	t.Helper()
	t.Setenv(envLibomp, "")
	old := libompCandidates
	t.Cleanup(func() { libompCandidates = old })
	lib := filepath.Join(t.TempDir(), "libomp.so.5")
	libompCandidates = []string{lib}
	if present {
		if err := os.WriteFile(lib, []byte("fake"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return lib
}

// gompResult is a scanned command line whose application needs libgomp
// through a library of its own.
func gompResult(static bool) *binscan.Result {
	return &binscan.Result{Programs: []*binscan.Program{
		{Arg: "lmp", Path: "/opt/bin/lmp", Kind: binscan.KindELF, Static: static,
			Gomp: binscan.Chain{"lmp", "liblammps.so.0", "libgomp.so.1"}},
		{Arg: "lmp", Path: "/opt/bin/lmp", Kind: binscan.KindELF, Static: static, // MPMD: the same program again
			Gomp: binscan.Chain{"lmp", "liblammps.so.0", "libgomp.so.1"}},
		{Arg: "run.sh", Kind: binscan.KindScript, Note: "a script (#!/bin/sh): cannot see what it runs"},
	}}
}

// The exit codes popmon gives a launch error (cli's launchCode).
const (
	ExitUsage = 2
	ExitEnv   = 4
)

func exitCode(err error) int {
	if kind, ok := fault.KindOf(err); ok {
		if kind == fault.Usage {
			return ExitUsage
		}
		return ExitEnv
	}
	return -1
}

func TestOpenMPFor(t *testing.T) {
	noGomp := &binscan.Result{Programs: []*binscan.Program{{Arg: "app", Path: "/app", Kind: binscan.KindELF,
		LLVMOpenMP: binscan.Chain{"app", "libomp.so.5"}}}}
	cases := []struct {
		name    string
		mode    string
		res     *binscan.Result
		libomp  bool
		preload bool
		env     map[string]string // besides POPMON_LIBOMP
		note    string
		code    int // exit code of the error, 0 for none
	}{
		// libgomp is measured in place (GOMP interposition): never swapped
		// for libomp unless asked (--openmp=libomp), and nothing to say.
		{"auto, libgomp, libomp installed", "auto", gompResult(false), true, false, map[string]string{envOpenMPMode: "auto"}, "", 0},
		{"default mode", "", gompResult(false), true, false, map[string]string{envOpenMPMode: "auto"}, "", 0},
		{"auto, libgomp, no libomp", "auto", gompResult(false), false, false, map[string]string{envOpenMPMode: "auto"}, "", 0},
		{"auto, static program", "auto", gompResult(true), false, false, map[string]string{envOpenMPMode: "auto"}, "", 0},
		{"auto, LLVM runtime already", "auto", noGomp, true, false, map[string]string{envOpenMPMode: "auto"}, "", 0},
		{"auto, nothing scanned", "auto", nil, false, false, map[string]string{envOpenMPMode: "auto"}, "", 0},
		{"native, no libomp: no note", "native", gompResult(false), false, false, map[string]string{envOpenMPMode: "native"}, "", 0},
		{"native, libomp installed", "native", gompResult(false), true, false, map[string]string{envOpenMPMode: "native"}, "", 0},
		{"off: no note", "off", gompResult(false), false, false, map[string]string{envOpenMPMode: "off", "POPMON_NO_OMPT": "1"}, "", 0},
		{"libomp", "libomp", nil, true, true, map[string]string{envOpenMPMode: "libomp"}, "", 0},
		{"libomp missing", "libomp", nil, false, false, nil, "", ExitEnv},
		{"unknown mode", "gnu", nil, true, false, nil, "", ExitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lib := fakeLibomp(t, tc.libomp)
			preload, env, note, err := OpenMPFor(tc.mode, tc.res)
			if tc.code != 0 {
				if exitCode(err) != tc.code {
					t.Fatalf("error %v (exit %d), want exit %d", err, exitCode(err), tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var wantPreload []string
			if tc.preload {
				wantPreload = []string{lib}
			}
			if !reflect.DeepEqual(preload, wantPreload) {
				t.Errorf("preload %q, want %q", preload, wantPreload)
			}
			want := map[string]string{}
			for k, v := range tc.env {
				want[k] = v
			}
			if tc.libomp {
				want[envLibomp] = lib
			}
			if !reflect.DeepEqual(env, want) {
				t.Errorf("env %v, want %v", env, want)
			}
			if note != tc.note {
				t.Errorf("note %q, want %q", note, tc.note)
			}
		})
	}
}

func TestOpenMPUserLibomp(t *testing.T) {
	fakeLibomp(t, false)
	mine := filepath.Join(t.TempDir(), "libomp.so")
	if err := os.WriteFile(mine, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envLibomp, mine)
	preload, env, _, err := OpenMPFor("libomp", gompResult(false))
	if err != nil || !reflect.DeepEqual(preload, []string{mine}) || env[envLibomp] != mine {
		t.Errorf("POPMON_LIBOMP=%s: preload %q env %v err %v", mine, preload, env, err)
	}
	if preload, env, _, err := OpenMPFor("auto", gompResult(false)); err != nil || preload != nil || env[envLibomp] != mine {
		t.Errorf("auto, POPMON_LIBOMP=%s: preload %q env %v err %v, want nothing preloaded", mine, preload, env, err)
	}
	t.Setenv(envLibomp, filepath.Join(t.TempDir(), "absent.so"))
	if _, _, _, err := OpenMPFor("libomp", nil); exitCode(err) != ExitEnv || !strings.Contains(err.Error(), "POPMON_LIBOMP=") {
		t.Errorf("libomp with a wrong POPMON_LIBOMP: %v, want exit %d naming it", err, ExitEnv)
	}
	for _, mode := range []string{"auto", "native", "off"} {
		if _, env, _, err := OpenMPFor(mode, nil); err != nil || env[envLibomp] != "" {
			t.Errorf("%s with a wrong POPMON_LIBOMP: env %v err %v, want it ignored", mode, env, err)
		}
	}
}
