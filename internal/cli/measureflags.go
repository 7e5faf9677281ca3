package cli

import "github.com/popmon/popmon/internal/launch"

// measureFlags are the options shared by popmon run and popmon exec.
type measureFlags struct {
	output string
	force  bool
	launch.Options
}

func (m *measureFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&m.output, "o", "", "measurement file to write (default popmon-APP-DATE.json); an existing file is an error unless --force")
	fs.BoolVar(&m.force, "force", false, "replace the -o file if it exists")
	fs.StringVar(&m.MPICC, "mpicc", "", "MPI C compiler wrapper to build the library with (default $POPMON_MPICC, else the one of the job's MPI, else mpicc)")
	fs.BoolVar(&m.NoMPI, "no-mpi", false, "measure a program that does not use MPI (builds the library with cc)")
	fs.StringVar(&m.GitCommit, "git-commit", "", "record this commit in the measurement (default: the CI environment of GitLab CI / GitHub Actions)")
	fs.StringVar(&m.GitBranch, "git-branch", "", "record this branch in the measurement (default: the CI environment)")
	fs.StringVar(&m.GitTime, "git-time", "", "record this commit time (RFC 3339) in the measurement (default: the CI environment)")
	fs.StringVar(&m.OpenMP, "openmp", launch.OpenMPAuto, "OpenMP: auto (measure the program's own runtime: OMPT on libomp, GOMP interposition on libgomp), libomp (run GCC programs on LLVM's libomp), native (= auto), off")
	fs.StringVar(&m.GPU, "gpu", "", "GPU metrics: auto (programs that use CUDA, through CUPTI, or HIP, through rocprofiler-sdk), on (warn when they cannot be measured), off (default $POPMON_GPU, else auto)")
	fs.StringVar(&m.GPUCounters, "gpu-counters", "", "GPU device counters (instructions, IPC, SM frequency, occupancy, DRAM bytes per region, NVIDIA through CUPTI PM sampling): auto (where the GPU and permissions allow), on (warn when they cannot be read), off (default $POPMON_GPU_COUNTERS, else auto)")
	fs.StringVar(&m.Records, "max-process-records", "", "per-process records in the measurement up to this many processes; above, a summary form (default $POPMON_MAX_PROCESS_RECORDS, else 4096)")
	fs.BoolVar(&m.DROM, "drom", false, "DROM: the processes register their CPUs, which popmon taskset (or DLB's DROM calls) may change while they run; they adapt at their next OpenMP parallel region (docs/drom.md)")
	fs.BoolVar(&m.Lewi.On, "lewi", false, "LeWI: a rank waiting in a blocking MPI call lends its CPUs to the OpenMP parallel regions of the other processes on its node (docs/lewi.md); bind each rank to its own CPUs")
	fs.BoolVar(&m.Lewi.KeepOneCPU, "lewi-keep-one-cpu", false, "LeWI: a blocking MPI call keeps the process's first CPU")
	fs.StringVar(&m.Lewi.MPICalls, "lewi-mpi-calls", "all", "LeWI: the blocking MPI calls that lend: all, collectives, barrier, none")
	fs.BoolVar(&m.Lewi.RespectCpuset, "lewi-respect-cpuset", true, "LeWI: lend and borrow only CPUs a process registered (false: the node's CPUs no process registered are free for any to borrow)")
	fs.BoolVar(&m.Lewi.Barrier, "lewi-barrier", true, "LeWI: a process waiting in DLB_Barrier lends its CPUs")
	fs.StringVar(&m.Counters, "counters", "", "hardware counters (instructions, cycles: IPC and frequency): auto (when the machine has them), on (warn when it has not), off (default $POPMON_COUNTERS, else auto)")
}
