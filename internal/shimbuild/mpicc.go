package shimbuild

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// This file is the one place that chooses the MPI compiler wrapper: `popmon
// run` and `exec` (through internal/launch), `popmon doctor`, `popmon build`
// and `popmon dlb-home` all ask it.

// ErrNoMPICC is returned when no MPI compiler wrapper can be found.
var ErrNoMPICC = errors.New("no mpicc on PATH: install libopenmpi-dev or mpich, or pass --mpicc")

// MPIWrapper is an MPI's compiler wrapper and launcher as Debian and Ubuntu
// install them side by side; Family is how the descriptions of libraries
// built with it start (Library.MPI, Options.MPIFamily).
type MPIWrapper struct {
	Family   string
	MPICC    string
	Launcher string
}

// MPIWrappers are the MPIs whose wrappers have names of their own.
var MPIWrappers = []MPIWrapper{
	{Family: "Open MPI", MPICC: "mpicc.openmpi", Launcher: "mpirun.openmpi"},
	{Family: "MPICH", MPICC: "mpicc.mpich", Launcher: "mpirun.mpich"},
}

// LibraryFamily is the MPI family of a library built against the MPI
// description desc (Library.MPI): a Family of MPIWrappers, "" when it names
// none.
func LibraryFamily(desc string) string {
	for _, w := range MPIWrappers {
		if strings.HasPrefix(desc, w.Family) {
			return w.Family
		}
	}
	return ""
}

// MPICCChoice is which MPI compiler wrappers build the library, in order.
type MPICCChoice struct {
	// Explicit is set when the user named the wrapper (--mpicc,
	// $POPMON_MPICC): only it is tried, and a library for another MPI than
	// the job's is refused rather than another wrapper tried.
	Explicit bool
	// Try are the wrappers to build with, in order ("" is FindMPICC's
	// default: $POPMON_MPICC, then mpicc). Empty when the job's family has
	// wrappers but none is installed: a library the cache holds for the
	// family must serve (FindBuilt).
	Try []string
	// Family are the family's wrapper names, installed or not, for the
	// messages that name them (nil when the family is not known).
	Family []string
}

// ChooseMPICC chooses the MPI compiler wrappers for a job of the MPI family
// ("" when not known): the one the user names (explicit, else
// $POPMON_MPICC); else, for a known family, its installed wrappers (its own
// name, then mpicc); else mpicc. A build without MPI (noMPI) uses no wrapper:
// its one try is explicit, which Build ignores.
func ChooseMPICC(explicit, family string, noMPI bool) MPICCChoice {
	c := MPICCChoice{Explicit: explicit != "" || os.Getenv("POPMON_MPICC") != "", Family: familyMPICCs(family)}
	if c.Explicit || noMPI || c.Family == nil {
		c.Try = []string{explicit}
		return c
	}
	for _, name := range c.Family {
		if _, err := exec.LookPath(name); err == nil {
			c.Try = append(c.Try, name)
		}
	}
	return c
}

// familyMPICCs are the wrappers of the MPI family: its own name, then the
// generic mpicc; nil for a family without wrappers of its own.
func familyMPICCs(family string) []string {
	for _, w := range MPIWrappers {
		if family != "" && w.Family == family {
			return []string{w.MPICC, "mpicc"}
		}
	}
	return nil
}

// FindMPICC returns the path of the MPI compiler wrapper explicit, else
// $POPMON_MPICC, else mpicc; ErrNoMPICC when the user named none and there
// is no mpicc.
func FindMPICC(explicit string) (string, error) {
	name := explicit
	if name == "" {
		name = os.Getenv("POPMON_MPICC")
	}
	if name == "" {
		name = "mpicc"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if explicit != "" || os.Getenv("POPMON_MPICC") != "" {
			return "", fmt.Errorf("MPI compiler %q not found: check --mpicc / POPMON_MPICC", name)
		}
		return "", ErrNoMPICC
	}
	return p, nil
}
