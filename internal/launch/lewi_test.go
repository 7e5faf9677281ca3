package launch

import (
	"testing"

	"github.com/popmon/popmon/internal/fault"
)

func TestLewiEnv(t *testing.T) {
	on := Lewi{On: true, MPICalls: "all", RespectCpuset: true, Barrier: true}
	for _, c := range []struct {
		name string
		l    Lewi
		user map[string]string
		want map[string]string
		err  bool
	}{
		{name: "off", l: Lewi{MPICalls: "all", RespectCpuset: true, Barrier: true}, want: map[string]string{}},
		{name: "on", l: on, want: map[string]string{
			"POPMON_LEWI":      "1",
			"POPMON_LEWI_ARGS": "--lewi-mpi-calls=all --lewi-keep-one-cpu=no --lewi-respect-cpuset=yes --lewi-barrier=yes",
			"OMP_WAIT_POLICY":  "passive",
		}},
		{name: "options", l: Lewi{On: true, KeepOneCPU: true, MPICalls: "barrier", Barrier: false, RespectCpuset: true},
			user: map[string]string{"KMP_BLOCKTIME": "0"}, want: map[string]string{
				"POPMON_LEWI":      "1",
				"POPMON_LEWI_ARGS": "--lewi-mpi-calls=barrier --lewi-keep-one-cpu=yes --lewi-respect-cpuset=yes --lewi-barrier=no",
			}},
		{name: "user wait policy", l: on, user: map[string]string{"OMP_WAIT_POLICY": "active"}, want: map[string]string{
			"POPMON_LEWI":      "1",
			"POPMON_LEWI_ARGS": "--lewi-mpi-calls=all --lewi-keep-one-cpu=no --lewi-respect-cpuset=yes --lewi-barrier=yes",
		}},
		{name: "bad calls", l: Lewi{On: true, MPICalls: "p2p", RespectCpuset: true, Barrier: true}, err: true},
		{name: "option without lewi", l: Lewi{KeepOneCPU: true, MPICalls: "all", RespectCpuset: true, Barrier: true}, err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := map[string]string{}
			err := c.l.lewiEnv(set, func(k string) string { return c.user[k] })
			if c.err {
				if k, ok := fault.KindOf(err); !ok || k != fault.Usage {
					t.Fatalf("err %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(set) != len(c.want) {
				t.Errorf("set %v, want %v", set, c.want)
			}
			for k, v := range c.want {
				if set[k] != v {
					t.Errorf("%s=%q, want %q", k, set[k], v)
				}
			}
		})
	}
}
