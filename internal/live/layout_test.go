package live

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// cFields are struct popmon_live_header's fields in the order of header's.
var cFields = []string{"magic", "version", "header_size", "nstates", "nextra", "nfn", "nctr",
	"detail_threads", "name_max", "thread_off", "thread_size", "max_threads", "region_off",
	"region_size", "max_regions", "names_off", "names_size", "th_seq", "th_last", "th_state",
	"th_accounted", "th_rate", "th_slot", "th_kind", "th_acc", "th_extra", "th_mpi_calls",
	"th_fn_calls", "th_fn_ticks", "th_ctr_acc", "rg_name", "rg_open", "rg_anon", "rg_start",
	"rg_elapsed", "rg_visits", "rg_snap", "rg_tot", "rg_thr", "ac_size", "ac_t", "ac_mpi_calls",
	"ac_omp_parallels", "ac_omp_tasks", "ac_gpu_calls", "ac_x", "ac_prim_useful", "ac_prim_mpi",
	"ac_thr_useful_max", "ac_ctr", "pid", "rank", "size", "clock_tsc", "state", "state_arg",
	"state_tick", "last_signal", "nthreads", "last_signal_tick", "t0_tick", "t0_ns", "epoch_ns",
	"cal_tick", "cal_ns", "init_tick", "fin_tick", "regions_seq", "nregions", "cpus",
	"start_time_ticks", "hostname", "exe", "session", "cmdline", "cmdline_len",
	"omp_off", "omp_size", "omp_max", "om_codeptr", "om_executions", "om_threads", "om_wall",
	"om_useful", "om_imbalance", "om_sync", "om_limited", "om_mgmt", "om_address", "om_module",
	"om_module_max", "omp_used", "omp_index_off", "ctr_available", "ctr_mode", "ctr_method", "ctr_reason",
	"th_gpu_calls", "ac_gpu_k", "ac_gpu_a", "gpu_devices", "gpu_seq", "gpu_now_ns", "gpu_k_now", "gpu_a_now",
	"gpu_used", "gpu_active", "gpu_mode", "gpu_uuid", "ndfn", "size_bins", "th_d_bytes", "th_d_hist", "dfn_fn",
	"lewi_on", "affinity_cpus", "lewi_lent_ticks", "lewi_borrowed_ticks", "lewi_lent_caller_ticks", "lewi_own_delta_ticks", "lewi_own_cpus", "lewi_own_now",
	"lewi_own_since", "drom_own_delta_ticks", "drom_own_since", "drom_on", "drom_own_cpus", "drom_own_now", "cpus_accounted"}

// TestHeaderLayout compiles shim/live.h and checks that Go's header has
// every field at the offset the C compiler gives it.
func TestHeaderLayout(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	typ := reflect.TypeOf(header{})
	if typ.NumField() != len(cFields) {
		t.Fatalf("header has %d fields, the test knows %d", typ.NumField(), len(cFields))
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"live.h\"\nint main(void) {\n")
	for _, f := range cFields {
		src.WriteString("\tprintf(\"%zu\\n\", offsetof(struct popmon_live_header, " + f + "));\n")
	}
	src.WriteString("\tprintf(\"%zu\\n\", sizeof(struct popmon_live_header));\n\treturn 0;\n}\n")
	dir := t.TempDir()
	c := filepath.Join(dir, "layout.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(cc, "-std=c11", "-I", "../../shim", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	for i, f := range cFields {
		want, _ := strconv.Atoi(lines[i])
		if got := int(typ.Field(i).Offset); got != want {
			t.Errorf("%s (Go %s): offset %d in Go, %d in C", f, typ.Field(i).Name, got, want)
		}
	}
	if size, _ := strconv.Atoi(lines[len(cFields)]); int(typ.Size()) != size {
		t.Errorf("size %d in Go, %d in C", typ.Size(), size)
	}
}
