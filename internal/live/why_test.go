package live

import (
	"syscall"
	"testing"

	"github.com/popmon/popmon/measure"
)

// TestWhy: the sentence that says how a job that did not finish ended, from
// the processes' recorded ends, the moments popmon run found the others gone
// and what popmon run saw of the command. Ticks are nanoseconds here (no
// TSC).
func TestWhy(t *testing.T) {
	sig := func(rank, s int, at uint64) Proc {
		f := &Snapshot{Rank: rank, State: Signaled, StateArg: s, StateTick: at}
		return Proc{Final: f, Snap: f, End: signalName(s)}
	}
	killed := func(rank int, gone int64) Proc {
		f := &Snapshot{Rank: rank, State: Running}
		return Proc{Final: f, Snap: f, End: "killed", goneSeen: gone}
	}
	running := func(rank int) Proc {
		f := &Snapshot{Rank: rank, State: Running}
		return Proc{Final: f, Snap: f, End: "running"}
	}
	term, segv := int(syscall.SIGTERM), int(syscall.SIGSEGV)
	mpirunKilled := JobEnd{Name: "mpirun", Signal: int(syscall.SIGKILL), PID: 99}
	for _, tc := range []struct {
		name          string
		ps            []Proc
		end           JobEnd
		reason, sayes string
	}{
		{"a SIGKILLed rank found gone before the launcher's SIGTERMs (was: rank 2 was ended by SIGTERM first)",
			[]Proc{killed(0, 800_000_000), sig(1, term, 1_050_000_000), sig(2, term, 1_040_000_000), sig(3, term, 1_060_000_000)},
			JobEnd{Name: "mpirun", Code: 137},
			measure.PartialKilled, "rank 0 was killed first (SIGKILL, or it vanished without a trace: found gone 0.24 s before rank 2 was ended by signal 15 (SIGTERM))"},
		{"of two killed ranks the one found gone first",
			[]Proc{killed(0, 900_000_000), killed(1, 700_000_000), sig(2, term, 1_040_000_000)},
			JobEnd{},
			measure.PartialKilled, "rank 1 was killed first (SIGKILL, or it vanished without a trace: found gone 0.34 s before rank 2 was ended by signal 15 (SIGTERM))"},
		{"a rank found gone only after the first SIGTERM (a SIGKILL among the launcher's SIGTERMs) is not the cause",
			[]Proc{killed(0, 1_100_000_000), sig(1, term, 1_050_000_000)},
			JobEnd{},
			measure.PartialTerminated, "rank 1 was ended by signal 15 (SIGTERM) first"},
		{"recover never found a rank gone",
			[]Proc{killed(0, 0), sig(1, term, 1_050_000_000)},
			JobEnd{},
			measure.PartialTerminated, "rank 1 was ended by signal 15 (SIGTERM) first"},
		{"a crash before a rank was found gone stays the cause",
			[]Proc{killed(0, 1_100_000_000), sig(1, segv, 1_050_000_000)},
			JobEnd{},
			measure.PartialCrashed, "rank 1 died of signal 11 (SIGSEGV) first"},
		{"a rank found gone before another crashed",
			[]Proc{killed(0, 1_000_000_000), sig(1, segv, 1_050_000_000)},
			JobEnd{},
			measure.PartialKilled, "rank 0 was killed first (SIGKILL, or it vanished without a trace: found gone 0.05 s before rank 1 died of signal 11 (SIGSEGV))"},
		{"SIGKILL to mpirun, ranks still running (was: 0 of 4 processes were killed)",
			[]Proc{running(0), running(1), running(2), running(3)},
			mpirunKilled,
			measure.PartialTerminated, "the job was ended by signal 9 (SIGKILL) to mpirun while its 4 processes still ran"},
		{"timeout inside the command",
			[]Proc{running(0), running(1)},
			JobEnd{Name: "timeout", Code: 124},
			measure.PartialTerminated, "the job was ended by timeout's exit with code 124 while its 2 processes still ran"},
		{"all killed with the command",
			[]Proc{killed(0, 5), killed(1, 5)},
			JobEnd{Name: "timeout", Signal: int(syscall.SIGKILL)},
			measure.PartialKilled, "2 of 2 processes were killed (SIGKILL, or they vanished without a trace); the job was ended by signal 9 (SIGKILL) to timeout"},
		{"a signal passed on by popmon run",
			[]Proc{killed(0, 5)},
			JobEnd{Forwarded: "SIGTERM sent to popmon run"},
			measure.PartialTerminated, "the job was ended by SIGTERM sent to popmon run"},
		{"recover knows nothing of the command",
			[]Proc{killed(0, 5), killed(1, 6)},
			JobEnd{},
			measure.PartialKilled, "2 of 2 processes were killed (SIGKILL, or they vanished without a trace)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, detail := why(tc.ps, tc.end)
			if reason != tc.reason || detail != tc.sayes {
				t.Errorf("why = %q, %q\nwant  %q, %q", reason, detail, tc.reason, tc.sayes)
			}
		})
	}
}

// TestWhySignalSeenByRun: a program without MPI (no signal handler of
// popmon's) that died of SIGSEGV was reported as killed (SIGKILL); popmon
// run saw the command's signal, and the command is the process.
func TestWhySignalSeenByRun(t *testing.T) {
	f := &Snapshot{Rank: -1, PID: 4242, State: Running}
	p := Proc{Final: f, Snap: f, End: endOf(f, false)}
	if p.End != "killed" {
		t.Fatalf("end %q, want killed before popmon run's view", p.End)
	}
	p.End, p.endSignal = signalName(int(syscall.SIGSEGV)), int(syscall.SIGSEGV)
	reason, detail := why([]Proc{p}, JobEnd{PID: 4242, Signal: int(syscall.SIGSEGV), Name: "app"})
	if reason != measure.PartialCrashed || detail != "the process died of signal 11 (SIGSEGV)" {
		t.Errorf("why = %q, %q", reason, detail)
	}
}
