package shimbuild

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFindMPICCMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("POPMON_MPICC", "")
	_, err := FindMPICC("")
	if !errors.Is(err, ErrNoMPICC) {
		t.Fatalf("err = %v, want ErrNoMPICC", err)
	}
	if !strings.Contains(err.Error(), "install libopenmpi-dev or mpich, or pass --mpicc") {
		t.Errorf("error does not say how to fix: %v", err)
	}
	_, err = FindMPICC("mpicc.nonexistent")
	if err == nil || !strings.Contains(err.Error(), "mpicc.nonexistent") {
		t.Errorf("explicit missing compiler: err = %v, want it named", err)
	}
}

// TestChooseMPICC checks the one choice of the MPI compiler wrappers
// against a PATH of fake wrappers.
func TestChooseMPICC(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"mpicc.mpich", "mpicc"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	for _, c := range []struct {
		name, explicit, env, family string
		noMPI                       bool
		want                        MPICCChoice
	}{
		{name: "unknown family", want: MPICCChoice{Try: []string{""}}},
		{name: "MPICH installed", family: "MPICH",
			want: MPICCChoice{Try: []string{"mpicc.mpich", "mpicc"}, Family: []string{"mpicc.mpich", "mpicc"}}},
		{name: "Open MPI's own missing", family: "Open MPI",
			want: MPICCChoice{Try: []string{"mpicc"}, Family: []string{"mpicc.openmpi", "mpicc"}}},
		{name: "named", explicit: "mpicc.x", family: "MPICH",
			want: MPICCChoice{Explicit: true, Try: []string{"mpicc.x"}, Family: []string{"mpicc.mpich", "mpicc"}}},
		{name: "from the environment", env: "mpicc.y", family: "MPICH",
			want: MPICCChoice{Explicit: true, Try: []string{""}, Family: []string{"mpicc.mpich", "mpicc"}}},
		{name: "no MPI", noMPI: true, family: "MPICH",
			want: MPICCChoice{Try: []string{""}, Family: []string{"mpicc.mpich", "mpicc"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("POPMON_MPICC", c.env)
			if got := ChooseMPICC(c.explicit, c.family, c.noMPI); !reflect.DeepEqual(got, c.want) {
				t.Errorf("ChooseMPICC(%q, %q, %v) = %+v, want %+v", c.explicit, c.family, c.noMPI, got, c.want)
			}
		})
	}
	t.Setenv("PATH", t.TempDir())
	if got := ChooseMPICC("", "MPICH", false); len(got.Try) != 0 {
		t.Errorf("no wrapper of the family installed: Try = %q, want none (the cache must serve)", got.Try)
	}
}

func TestLibraryFamily(t *testing.T) {
	for desc, want := range map[string]string{
		"Open MPI 4.1.4": "Open MPI", "MPICH 4.0.2": "MPICH", "": "", "Intel MPI": "",
	} {
		if got := LibraryFamily(desc); got != want {
			t.Errorf("LibraryFamily(%q) = %q, want %q", desc, got, want)
		}
	}
}
