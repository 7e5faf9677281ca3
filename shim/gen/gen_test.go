package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The committed shim/mpi_calls.h and shim/mpi_wrappers.c must be what the
// generator writes from the committed call list.
func TestGeneratedFilesUpToDate(t *testing.T) {
	files, err := Generate("mpi_calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{headerFile, wrappersFile, goKindsFile} {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatalf("%v: run go generate ./shim/gen", err)
		}
		if !bytes.Equal(got, files[name]) {
			t.Errorf("shim/%s is not what shim/gen writes from mpi_calls.txt: run go generate ./shim/gen", name)
		}
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		line    string
		want    *Call // compared on the fields set here; nil: want an error
		wantErr string
	}{
		{
			line: "1.0 | p2p | int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)",
			want: &Call{Version: Version{1, 0}, Kind: KindP2P, Return: "int", Name: "MPI_Send", Params: []Param{
				{"const void *buf", "const void *", "buf"},
				{"int count", "int", "count"},
				{"MPI_Datatype datatype", "MPI_Datatype", "datatype"},
				{"int dest", "int", "dest"},
				{"int tag", "int", "tag"},
				{"MPI_Comm comm", "MPI_Comm", "comm"},
			}},
		},
		{
			line: "1.0|other|int MPI_Finalize(void)|hook=finalize",
			want: &Call{Version: Version{1, 0}, Kind: KindOther, Return: "int", Name: "MPI_Finalize", Hook: HookFinalize},
		},
		{
			line: "1.0 | other | int   MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)",
			want: &Call{Version: Version{1, 0}, Kind: KindOther, Return: "int", Name: "MPI_Group_range_incl", Params: []Param{
				{"MPI_Group group", "MPI_Group", "group"},
				{"int n", "int", "n"},
				{"int ranges[][3]", "int [][3]", "ranges"},
				{"MPI_Group *newgroup", "MPI_Group *", "newgroup"},
			}},
		},
		{
			line: "1.0 | other | int MPI_Pcontrol(const int level, ...) | fortran=none",
			want: &Call{Version: Version{1, 0}, Kind: KindOther, Return: "int", Name: "MPI_Pcontrol", Variadic: true, NoFortran: true,
				Params: []Param{{"const int level", "const int", "level"}}},
		},
		{
			line: "2.0 | other | int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) | fchar=key,value",
			want: &Call{Version: Version{2, 0}, Kind: KindOther, Return: "int", Name: "MPI_Info_get", FChar: []string{"key", "value"}},
		},
		{
			line: "2.0 | other | int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) | hook=init; fargs=required,provided",
			want: &Call{Version: Version{2, 0}, Kind: KindOther, Return: "int", Name: "MPI_Init_thread", Hook: HookInit,
				FArgs: []string{"required", "provided"}, HasFArgs: true},
		},
		{
			line: "4.0 | other | int MPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) | fortran=none; cond=!defined(X) || X >= 4",
			want: &Call{Version: Version{4, 0}, Kind: KindOther, Return: "int", Name: "MPI_Status_set_elements_c", NoFortran: true,
				Cond: "!defined(X) || X >= 4"},
		},
		{line: "1.0 | p2p", wantErr: "want VERSION | KIND | PROTOTYPE"},
		{line: "1 | p2p | int MPI_Barrier(MPI_Comm comm)", wantErr: "bad MPI version"},
		{line: "1.0 | pt2pt | int MPI_Barrier(MPI_Comm comm)", wantErr: "unknown kind"},
		{line: "1.0 | p2p | int PMPI_Barrier(MPI_Comm comm)", wantErr: "not a C prototype"},
		{line: "1.0 | p2p | int MPI_Barrier()", wantErr: "write (void)"},
		{line: "1.0 | p2p | int MPI_Barrier(MPI_Comm)", wantErr: "has no name"},
		{line: "1.0 | p2p | int MPI_X(int a, int a)", wantErr: "duplicate parameter"},
		{line: "1.0 | p2p | int MPI_X(int popmon_r)", wantErr: "reserved"},
		{line: "1.0 | p2p | int MPI_X(int ierror)", wantErr: "reserved"},
		{line: "1.0 | p2p | int MPI_X(..., int a) | fortran=none", wantErr: "'...'"},
		{line: "1.0 | p2p | int MPI_X(int (*fn)(int)) | fortran=none", wantErr: "function pointer"},
		{line: "1.0 | other | int MPI_X(int a, ...)", wantErr: "needs fortran=none"},
		{line: "1.0 | other | int MPI_X(const char *s)", wantErr: "list it in fchar"},
		{line: "1.0 | other | int MPI_X(const char *s, int n) | fchar=n", wantErr: "not a char parameter"},
		{line: "1.0 | other | int MPI_X(const char *s) | fchar=t", wantErr: "not a Fortran argument"},
		{line: "1.0 | other | int MPI_X(const char *s, int n) | fargs=n; fchar=s", wantErr: "not a Fortran argument"},
		{line: "1.0 | other | int MPI_X(int n) | fargs=m", wantErr: "not a parameter"},
		{line: "1.0 | other | int MPI_X(const char *s) | fortran=none; fchar=s", wantErr: "fortran=none with"},
		{line: "1.0 | other | int MPI_X(int n) | hook=start", wantErr: "want init, finalize or abort"},
		{line: "1.0 | other | int MPI_X(int n) | colour=red", wantErr: "unknown option"},
		{line: "1.0 | other | int MPI_X(int n) | fortran=none; fortran=none", wantErr: "given twice"},
		{line: "1.0 | other | double MPI_X(int n) | hook=init", wantErr: "int return"},
	}
	for _, tt := range tests {
		got, err := parseLine(tt.line)
		if tt.want == nil {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseLine(%q): error %v, want one containing %q", tt.line, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseLine(%q): %v", tt.line, err)
			continue
		}
		w := tt.want
		if w.Params == nil && len(got.Params) > 0 {
			w.Params = got.Params // not under test in this case
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("parseLine(%q)\n got %+v\nwant %+v", tt.line, got, w)
		}
	}
}

func TestParseCalls(t *testing.T) {
	list := `# comment

1.0 | p2p   | int MPI_Barrier(MPI_Comm comm)
  # indented comment
2.0 | other | int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name) | fchar=comm_name
`
	calls, err := ParseCalls(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].Name != "MPI_Barrier" || calls[1].Line != 5 {
		t.Fatalf("got %d calls: %+v", len(calls), calls)
	}
	for _, bad := range []struct{ list, err string }{
		{"", "empty"},
		{"1.0 | p2p | int MPI_Barrier(MPI_Comm comm)\n1.0 | p2p | int MPI_Barrier(MPI_Comm c)\n", "line 2: MPI_Barrier already listed on line 1"},
		{"# x\n1.0 | p2p | int MPI_Barrier(MPI_Comm)\n", "line 2:"},
	} {
		if _, err := ParseCalls(strings.NewReader(bad.list)); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("ParseCalls(%q): error %v, want one containing %q", bad.list, err, bad.err)
		}
	}
}

func TestFortranSignature(t *testing.T) {
	tests := []struct {
		line string
		want FortranSig
		ok   bool
	}{
		{"1.0 | p2p | int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)",
			FortranSig{Args: []string{"buf", "count", "datatype", "dest", "tag", "comm", "ierror"}}, true},
		{"1.0 | other | int MPI_Finalize(void) | hook=finalize",
			FortranSig{Args: []string{"ierror"}}, true},
		// MPI_INIT(IERROR): no argc/argv in Fortran.
		{"1.0 | other | int MPI_Init(int *argc, char ***argv) | hook=init; fargs=",
			FortranSig{Args: []string{"ierror"}}, true},
		{"2.0 | other | int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) | hook=init; fargs=required,provided",
			FortranSig{Args: []string{"required", "provided", "ierror"}}, true},
		{"4.0 | other | int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info) | fargs=info",
			FortranSig{Args: []string{"info", "ierror"}}, true},
		// Hidden lengths come after IERROR, in argument order (not fchar order).
		{"2.0 | other | int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) | fchar=value,key",
			FortranSig{Args: []string{"info", "key", "valuelen", "value", "flag", "ierror"}, Lens: []string{"key_len", "value_len"}}, true},
		{"1.0 | other | int MPI_Get_processor_name(char *name, int *resultlen) | fchar=name",
			FortranSig{Args: []string{"name", "resultlen", "ierror"}, Lens: []string{"name_len"}}, true},
		{"2.0 | other | int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]) | fchar=array_of_commands,array_of_argv",
			FortranSig{Args: []string{"count", "array_of_commands", "array_of_argv", "array_of_maxprocs", "array_of_info", "root", "comm", "intercomm", "array_of_errcodes", "ierror"},
				Lens: []string{"array_of_commands_len", "array_of_argv_len"}}, true},
		{"4.0 | p2p | int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | fortran=none",
			FortranSig{}, false},
		{"1.0 | other | int MPI_Pcontrol(const int level, ...) | fortran=none", FortranSig{}, false},
	}
	for _, tt := range tests {
		c, err := parseLine(tt.line)
		if err != nil {
			t.Fatalf("parseLine(%q): %v", tt.line, err)
		}
		got, ok := c.FortranSignature()
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: FortranSignature() = %+v, %v; want %+v, %v", c.Name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFortranLookup(t *testing.T) {
	tests := []struct {
		dec  string
		want []string
	}{
		{"_", []string{"mpi_send_", "pmpi_send_", "pmpi_send__", "pmpi_send"}},
		{"__", []string{"mpi_send__", "pmpi_send__", "pmpi_send_", "pmpi_send"}},
		{"", []string{"mpi_send", "pmpi_send", "pmpi_send_", "pmpi_send__"}},
	}
	for _, tt := range tests {
		if got := fortranLookup("mpi_send", tt.dec); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("fortranLookup(mpi_send, %q) = %v, want %v", tt.dec, got, tt.want)
		}
	}
}

func TestVersionGuard(t *testing.T) {
	tests := []struct {
		v    Version
		want string
	}{
		{Version{1, 0}, ""},
		{Version{1, 2}, "MPI_VERSION > 1 || (MPI_VERSION == 1 && MPI_SUBVERSION >= 2)"},
		{Version{3, 0}, "MPI_VERSION >= 3"},
		{Version{4, 0}, "MPI_VERSION >= 4"},
		{Version{4, 1}, "MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)"},
	}
	for _, tt := range tests {
		if got := tt.v.Guard(); got != tt.want {
			t.Errorf("Version %v: Guard() = %q, want %q", tt.v, got, tt.want)
		}
	}
	c := &Call{Version: Version{4, 0}, Cond: "!defined(A) || A > 1"}
	if got, want := c.Guard(), "(MPI_VERSION >= 4) && (!defined(A) || A > 1)"; got != want {
		t.Errorf("Guard() = %q, want %q", got, want)
	}
}

// Properties of the committed call list that the rest of popmon relies on.
func TestCallList(t *testing.T) {
	f, err := os.Open("mpi_calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, err := ParseCalls(f)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Call{}
	for _, c := range calls {
		byName[c.Name] = c
		if strings.HasSuffix(c.Name, "_c") && !c.NoFortran {
			t.Errorf("%s: large-count functions have no mpif.h binding: want fortran=none", c.Name)
		}
		if c.Version.Less(Version{1, 0}) || (Version{4, 1}).Less(c.Version) {
			t.Errorf("%s: version %v outside MPI-1.0 to MPI-4.1", c.Name, c.Version)
		}
		// Not intercepted: no PMPI_ version required, deleted, or MPI_T.
		switch {
		case strings.HasSuffix(c.Name, "_c2f"), strings.HasSuffix(c.Name, "_f2c"),
			strings.HasPrefix(c.Name, "MPI_T_"), strings.Contains(c.Name, "f08"):
			t.Errorf("%s must not be wrapped", c.Name)
		}
	}
	for _, name := range []string{"MPI_Wtime", "MPI_Wtick", "MPI_Aint_add", "MPI_Aint_diff",
		"MPI_Address", "MPI_Type_extent", "MPI_Type_struct", "MPI_Errhandler_set", "MPI_Type_lb", "MPI_Type_ub"} {
		if byName[name] != nil {
			t.Errorf("%s must not be wrapped", name)
		}
	}
	for name, hook := range map[string]Hook{"MPI_Init": HookInit, "MPI_Init_thread": HookInit,
		"MPI_Finalize": HookFinalize, "MPI_Session_init": HookNone, "MPI_Session_finalize": HookNone} {
		if c := byName[name]; c == nil || c.Hook != hook {
			t.Errorf("%s: want hook %q, got %+v", name, hook, c)
		}
	}
	for name, kind := range map[string]Kind{"MPI_Send": KindP2P, "MPI_Waitall": KindP2P, "MPI_Allreduce": KindCollective,
		"MPI_Ineighbor_alltoallw": KindCollective, "MPI_Bcast_init": KindCollective, "MPI_Put": KindOneSided,
		"MPI_Win_fence": KindOneSided, "MPI_File_write_all": KindIO, "MPI_Comm_split": KindOther} {
		if c := byName[name]; c == nil || c.Kind != kind {
			t.Errorf("%s: want kind %v, got %+v", name, kind, c)
		}
	}
	// Every CHARACTER argument of the MPI standard's Fortran bindings.
	wantChar := map[string][]string{
		"MPI_Get_processor_name":           {"name"},
		"MPI_Comm_set_name":                {"comm_name"},
		"MPI_Comm_get_name":                {"comm_name"},
		"MPI_Type_set_name":                {"type_name"},
		"MPI_Type_get_name":                {"type_name"},
		"MPI_Win_set_name":                 {"win_name"},
		"MPI_Win_get_name":                 {"win_name"},
		"MPI_Info_set":                     {"key", "value"},
		"MPI_Info_get":                     {"key", "value"},
		"MPI_Info_delete":                  {"key"},
		"MPI_Info_get_nthkey":              {"key"},
		"MPI_Info_get_valuelen":            {"key"},
		"MPI_Info_get_string":              {"key", "value"},
		"MPI_Open_port":                    {"port_name"},
		"MPI_Close_port":                   {"port_name"},
		"MPI_Comm_accept":                  {"port_name"},
		"MPI_Comm_connect":                 {"port_name"},
		"MPI_Publish_name":                 {"service_name", "port_name"},
		"MPI_Unpublish_name":               {"service_name", "port_name"},
		"MPI_Lookup_name":                  {"service_name", "port_name"},
		"MPI_Comm_spawn":                   {"command", "argv"},
		"MPI_Comm_spawn_multiple":          {"array_of_commands", "array_of_argv"},
		"MPI_File_open":                    {"filename"},
		"MPI_File_delete":                  {"filename"},
		"MPI_File_set_view":                {"datarep"},
		"MPI_File_get_view":                {"datarep"},
		"MPI_Error_string":                 {"string"},
		"MPI_Add_error_string":             {"string"},
		"MPI_Get_library_version":          {"version"},
		"MPI_Register_datarep":             {"datarep"},
		"MPI_Pack_external":                {"datarep"},
		"MPI_Unpack_external":              {"datarep"},
		"MPI_Pack_external_size":           {"datarep"},
		"MPI_Session_get_nth_pset":         {"pset_name"},
		"MPI_Session_get_pset_info":        {"pset_name"},
		"MPI_Group_from_session_pset":      {"pset_name"},
		"MPI_Comm_create_from_group":       {"stringtag"},
		"MPI_Intercomm_create_from_groups": {"stringtag"},
	}
	for _, c := range calls {
		sig, ok := c.FortranSignature()
		if !ok {
			continue
		}
		var got []string
		for _, l := range sig.Lens {
			got = append(got, strings.TrimSuffix(l, "_len"))
		}
		if !reflect.DeepEqual(got, wantChar[c.Name]) {
			t.Errorf("%s: CHARACTER arguments %v, want %v", c.Name, got, wantChar[c.Name])
		}
	}
}

// The generated C compiles warning-free with every MPI compiler wrapper
// installed here (skipped where none is, and with -short).
func TestWrappersCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles C: skipped with -short")
	}
	files, err := Generate("mpi_calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{headerFile, wrappersFile} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The headers the generated file includes, directly or not (shim/ and
	// its folders).
	var headers []string
	for _, pattern := range []string{"*.h", "*/*.h"} {
		hs, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		headers = append(headers, hs...)
	}
	for _, h := range headers {
		rel, err := filepath.Rel("..", h)
		if err != nil {
			t.Fatal(err)
		}
		if _, generated := files[filepath.ToSlash(rel)]; generated {
			continue
		}
		b, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tried := map[string]bool{}
	for _, cc := range []string{"mpicc.openmpi", "mpicc.mpich", "mpicc"} {
		path, err := exec.LookPath(cc)
		if err != nil {
			continue
		}
		// mpicc is usually a link to one of the others.
		if real, err := filepath.EvalSymlinks(path); err == nil {
			if tried[real] {
				continue
			}
			tried[real] = true
		}
		t.Run(cc, func(t *testing.T) {
			cmd := exec.Command(path, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fPIC", "-O1",
				"-I.", "-c", wrappersFile, "-o", cc+".o")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cc, err, out)
			}
		})
	}
	if len(tried) == 0 {
		t.Skip("no MPI compiler wrapper installed")
	}
}

func TestF08Wrappers(t *testing.T) {
	const list = `1.0 | p2p | int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
4.0 | p2p | int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | fortran=none
1.0 | other | int MPI_Comm_rank(MPI_Comm comm, int *rank)
2.0 | other | int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name) | fchar=comm_name
1.0 | other | int MPI_Pcontrol(const int level, ...) | fortran=none
`
	calls, err := ParseCalls(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*Call{}
	for _, c := range calls {
		by[c.Name] = c
	}
	tests := []struct {
		name, base string
		want       []string // symbol: lookup...
		arity      [2]int
	}{
		{"MPI_Send", "", []string{
			"mpi_send_f08_: mpi_send_f08_ pmpi_send_f08_ pmpir_send_f08_",
			"mpi_send_f08ts_: mpi_send_f08ts_ pmpi_send_f08ts_ pmpir_send_f08ts_"}, [2]int{7, 0}},
		{"MPI_Send_c", "MPI_Send", []string{
			"mpi_send_f08_large_: mpi_send_f08_large_ pmpi_send_f08_large_ pmpir_send_f08_large_",
			"mpi_send_f08ts_large_: mpi_send_f08ts_large_ pmpi_send_f08ts_large_ pmpir_send_f08ts_large_"}, [2]int{7, 0}},
		{"MPI_Comm_rank", "", []string{"mpi_comm_rank_f08_: mpi_comm_rank_f08_ pmpi_comm_rank_f08_ pmpir_comm_rank_f08_"}, [2]int{3, 0}},
		{"MPI_Comm_set_name", "", []string{"mpi_comm_set_name_f08_: mpi_comm_set_name_f08_ pmpi_comm_set_name_f08_ pmpir_comm_set_name_f08_"}, [2]int{3, 1}},
		{"MPI_Pcontrol", "", nil, [2]int{}},
	}
	for _, tt := range tests {
		ws := by[tt.name].F08Wrappers(by[tt.base])
		var got []string
		for _, w := range ws {
			got = append(got, w.Symbol+": "+strings.Join(w.Lookup, " "))
			if p, l := w.Sig.Arity(); p != tt.arity[0] || l != tt.arity[1] {
				t.Errorf("%s: arity %d+%d, want %d+%d", w.Symbol, p, l, tt.arity[0], tt.arity[1])
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: F08Wrappers = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestParsePassthrough(t *testing.T) {
	calls, err := ParseCalls(strings.NewReader("1.0 | p2p | int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePassthrough(strings.NewReader("# comment\n\nMPI_Wtime\nMPIX_Query_cuda_support\n"), calls)
	if err != nil || !reflect.DeepEqual(got, []string{"MPI_Wtime", "MPIX_Query_cuda_support"}) {
		t.Errorf("ParsePassthrough = %q, %v", got, err)
	}
	for _, bad := range []struct{ list, err string }{
		{"MPI_Send\n", "MPI_Send is in the call list"},
		{"MPI_Wtime\nMPI_Wtime\n", "MPI_Wtime repeated"},
		{"mpi_wtime_\n", "not an MPI_ or MPIX_ function name"},
		{"MPI_Wtime(void)\n", "not an MPI_ or MPIX_ function name"},
	} {
		if _, err := ParsePassthrough(strings.NewReader(bad.list), calls); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%q: error %v, want %q", bad.list, err, bad.err)
		}
	}
}

// Every exported C name is a stub through a table: MPI_X to its wrapper,
// PMPI_X and the pass-through names to the program's MPI library.
func TestGeneratedStubs(t *testing.T) {
	files, err := Generate("mpi_calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[wrappersFile])
	for _, want := range []string{
		"POPMON_STUB(MPI_Send, ", "POPMON_RSTUB(PMPI_Send, ",
		"POPMON_RSTUB(MPI_Wtime, ", "POPMON_RSTUB(PMPI_Wtime, ",
		"[POPMON_FN_MPI_Send] = (void *)POPMON_W(MPI_Send),",
		"[0 ... POPMON_REAL_COUNT - 1] = (void *)popmon_lazy_real,",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("mpi_wrappers.c lacks %q", want)
		}
	}
	// The hooks of PMPI_Init, PMPI_Init_thread and PMPI_Finalize are in
	// mpi.c, not stubs.
	for _, no := range []string{"POPMON_RSTUB(PMPI_Init,", "POPMON_RSTUB(PMPI_Init_thread,", "POPMON_RSTUB(PMPI_Finalize,"} {
		if strings.Contains(src, no) {
			t.Errorf("mpi_wrappers.c has %q", no)
		}
	}
}

// The polling calls' wrappers look nothing up before the MPI call (no
// popmon_dpre_ hook: only the handles are saved) and run the byte
// accounting only when the call completed something, so that a poll that
// completes nothing costs what a call without data costs.
func TestPollWrappers(t *testing.T) {
	files, err := Generate("mpi_calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[wrappersFile])
	for _, tc := range []struct{ name, save, after string }{
		{"MPI_Test", "MPI_Request popmon_q = request != NULL ? *request : MPI_REQUEST_NULL;",
			"if (flag != NULL && *flag && popmon_q != MPI_REQUEST_NULL)\n\t\tpopmon_d_test(popmon_r, popmon_q, popmon_sp);"},
		{"MPI_Testany", "popmon_dpoll_save(&popmon_p, popmon_t, count, array_of_requests, MPI_STATUSES_IGNORE);",
			"if (popmon_p.n > 0 && flag != NULL && *flag)\n\t\tpopmon_d_testany(popmon_r, &popmon_p, indx, popmon_sp);"},
		{"MPI_Testall", "MPI_Status *popmon_sa = popmon_dpoll_save(&popmon_p, popmon_t, count, array_of_requests, array_of_statuses);",
			"if (popmon_p.n > 0 && flag != NULL && *flag)\n\t\tpopmon_d_testall(popmon_r, &popmon_p, popmon_sa);"},
		{"MPI_Testsome", "MPI_Status *popmon_sa = popmon_dpoll_save(&popmon_p, popmon_t, incount, array_of_requests, array_of_statuses);",
			"if (popmon_p.n > 0 && outcount != NULL && *outcount > 0)\n\t\tpopmon_d_testsome(popmon_r, &popmon_p, outcount, array_of_indices, popmon_sa);"},
	} {
		start := strings.Index(src, "POPMON_WRAPPER_DECL int POPMON_W("+tc.name+")(")
		if start < 0 {
			t.Errorf("%s: no C wrapper", tc.name)
			continue
		}
		body := src[start:]
		body = body[:strings.Index(body, "\n}\n")]
		call := strings.Index(body, "int popmon_r = ")
		save, after := strings.Index(body, tc.save), strings.Index(body, tc.after)
		if strings.Contains(body, "popmon_dpre_") || call < 0 || save < 0 || save > call || after < call {
			t.Errorf("%s: want the handles saved before the call (%q) and the accounting after it only when something completed (%q), nothing else; got\n%s",
				tc.name, tc.save, tc.after, body)
		}
	}
}

// TestLewiTable: every blocking call of LeWI's table is in the call list
// and its nonblocking form takes its parameters (but status) and a
// request; a table naming a missing form fails.
func TestLewiTable(t *testing.T) {
	f, err := os.Open("mpi_calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, err := ParseCalls(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkLewi(calls); err != nil {
		t.Fatal(err)
	}
	saved := lewiCalls["MPI_Recv"]
	defer func() { lewiCalls["MPI_Recv"] = saved }()
	lewiCalls["MPI_Recv"] = lewiCall{lewiP2P, "MPI_Isend"}
	if err := checkLewi(calls); err == nil {
		t.Error("MPI_Recv through MPI_Isend passed the check")
	}
}
