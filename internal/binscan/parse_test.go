package binscan

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
)

// parseWords runs the command-line parser with launchers identified by
// name and only the words in programs existing.
func parseWords(argv []string, programs ...string) []target {
	exists := func(w string, _ map[string]string, _ string) bool {
		for _, p := range programs {
			if p == w {
				return true
			}
		}
		return false
	}
	p := &parser{
		cwd: "/cwd",
		launcher: func(word string, _ map[string]string, _ string) *Launcher {
			m, slurm := launcherNameFamily(word)
			if m == NoMPI && !slurm {
				m = UnknownMPI
			}
			return &Launcher{Arg: word, MPI: m, Slurm: slurm}
		},
		exists: exists,
	}
	p.command(argv, map[string]string{"PATH": "/usr/bin"}, "/cwd", nil, 0)
	return p.targets
}

func TestParseCommandLine(t *testing.T) {
	cases := []struct {
		name string
		argv string
		want []string // program words, or "!opaque note part"
		env  map[string]string
		dir  string
	}{
		{"plain", "./app -x 1", []string{"./app"}, nil, ""},
		{"ompi options", "mpirun.openmpi -np 4 --mca btl self,vader -mca pml ob1 --oversubscribe -x OMP_NUM_THREADS=2 -x LD_LIBRARY_PATH --map-by ppr:2:node:pe=2 --bind-to core -H a,b --hostfile hf --report-bindings app -n 5", []string{"app"}, map[string]string{"OMP_NUM_THREADS": "2"}, ""},
		{"ompi equals", "mpirun.openmpi --np=2 --map-by=node app", []string{"app"}, nil, ""},
		{"ompi wdir", "mpirun.openmpi -wdir /run -np 1 app", []string{"app"}, nil, "/run"},
		{"ompi prterun mca", "prterun --prtemca a b --pmixmca c d -n 1 app", []string{"app"}, nil, ""},
		{"hydra", "mpiexec.hydra -n 2 -genv OMP_NUM_THREADS 3 -env A B -ppn 1 -f hosts -l -bind-to core app", []string{"app"}, map[string]string{"OMP_NUM_THREADS": "3", "A": "B"}, ""},
		{"hydra wdir", "mpirun.mpich -wdir sub -n 2 app", []string{"app"}, nil, "/cwd/sub"},
		{"srun", "srun -n 2 -c 4 --ntasks-per-node 2 --cpu-bind=cores -l --export=ALL,OMP_NUM_THREADS=4 app arg", []string{"app"}, map[string]string{"OMP_NUM_THREADS": "4"}, ""},
		{"srun cluster", "srun -ln2 -N1 -D /w -K1 app", []string{"app"}, nil, "/w"},
		{"srun long value", "srun --ntasks 2 --job-name x app", []string{"app"}, nil, ""},
		{"mpmd", "mpirun.openmpi -np 1 a x : -np 2 b : -n 1 c", []string{"a", "b", "c"}, nil, ""},
		{"mpmd hydra", "mpiexec.hydra -n 1 a : -n 1 b", []string{"a", "b"}, nil, ""},
		{"srun het", "srun -n1 a : -n2 b", []string{"a", "b"}, nil, ""},
		{"double dash", "mpirun.openmpi -np 2 -- -weird", []string{"-weird"}, nil, ""},
		{"unknown option with value", "mpirun.openmpi --frobnicate 7 app", []string{"app"}, nil, ""},
		{"unknown flag before program", "mpirun.openmpi --frobnicate app x", []string{"app"}, nil, ""},
		{"unknown launcher family", "mpirun -np 2 -genv A 1 app", []string{"app"}, map[string]string{"A": "1"}, ""},
		{"env", "env -i -u X A=1 B=2 app", []string{"app"}, map[string]string{"A": "1", "B": "2"}, ""},
		{"env chdir", "env --chdir=/d app", []string{"app"}, nil, "/d"},
		{"time", "time -f %e -o out app", []string{"app"}, nil, ""},
		{"nice numeric", "nice -10 app", []string{"app"}, nil, ""},
		{"nice attached", "nice -n5 app", []string{"app"}, nil, ""},
		{"numactl", "numactl --cpunodebind=0 -m 0 -C0-3 --localalloc app", []string{"app"}, nil, ""},
		{"taskset", "taskset -c 0-3 app", []string{"app"}, nil, ""},
		{"taskset mask", "taskset 0x3 app", []string{"app"}, nil, ""},
		{"timeout", "timeout -k 5 --signal=INT 10m app", []string{"app"}, nil, ""},
		{"stdbuf nohup", "stdbuf -oL -e 0 nohup app", []string{"app"}, nil, ""},
		{"nested", "time mpirun.openmpi -np 2 env A=1 numactl -l app", []string{"app"}, map[string]string{"A": "1"}, ""},
		{"appfile", "mpirun.openmpi --app file", []string{"!appfile"}, nil, ""},
		{"nothing", "mpirun.openmpi -np 2", []string{"!no program after mpirun.openmpi"}, nil, ""},
		{"nothing after wrapper", "timeout", []string{"!no program"}, nil, ""},
		{"truncated option", "mpirun.openmpi --mca btl", []string{"!no program"}, nil, ""},
		{"shell", "bash -c 'mpirun app'", []string{"!a shell (bash)"}, nil, ""},
		{"popmon exec", "mpirun.openmpi -np 2 /opt/bin/popmon exec -o m.json --force --mpicc=mpicc.openmpi -no-mpi --counters off -- app x", []string{"app"}, nil, ""},
		{"popmon exec without --", "mpirun.mpich -np 2 popmon exec --openmp native app -o x", []string{"app"}, nil, ""},
		{"popmon exec of a shell", "mpirun.mpich -np 2 popmon exec -- sh -c true", []string{"!a shell (sh)"}, nil, ""},
		{"popmon exec nothing", "mpirun.mpich -np 2 popmon exec -o", []string{"!no program after mpirun.mpich"}, nil, ""},
		{"popmon other", "popmon report m.json", []string{"popmon"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			targets := parseWords(strings.Fields(tc.argv), "app", "a", "b", "c")
			var got []string
			for _, tg := range targets {
				if tg.opaque != "" {
					got = append(got, "!"+tg.opaque)
				} else {
					got = append(got, tg.arg)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("programs %q, want %q", got, tc.want)
			}
			for i := range got {
				if strings.HasPrefix(tc.want[i], "!") && !strings.Contains(got[i], tc.want[i][1:]) || !strings.HasPrefix(tc.want[i], "!") && got[i] != tc.want[i] {
					t.Fatalf("programs %q, want %q", got, tc.want)
				}
			}
			for k, v := range tc.env {
				if targets[0].env[k] != v {
					t.Errorf("env %s = %q, want %q", k, targets[0].env[k], v)
				}
			}
			if tc.dir != "" && targets[0].dir != tc.dir {
				t.Errorf("dir %q, want %q", targets[0].dir, tc.dir)
			}
		})
	}
}

// TestParsePopmonExecOutput: the file popmon exec -o names, from the
// program's working directory.
func TestParsePopmonExecOutput(t *testing.T) {
	for _, c := range []struct{ argv, want string }{
		{"mpirun.openmpi -np 2 popmon exec -o m.json --force -- app", "/cwd/m.json"},
		{"mpirun.mpich -np 2 -wdir /w popmon exec --openmp native --o=/o/m.json app -o x", "/o/m.json"},
		{"mpirun.mpich -wdir w -np 2 /usr/bin/popmon exec -o m.json app", "/cwd/w/m.json"},
		{"mpirun.mpich -np 2 popmon exec -- app -o m.json", ""},
		{"mpirun.mpich -np 2 app -o m.json", ""},
	} {
		targets := parseWords(strings.Fields(c.argv), "app")
		if len(targets) != 1 || targets[0].arg != "app" || targets[0].output != c.want {
			t.Errorf("%s: targets %+v, want app with output %q", c.argv, targets, c.want)
		}
	}
}

func TestParseEnvClears(t *testing.T) {
	targets := parseWords([]string{"env", "-S", "A=1 app", "arg"}, "app")
	if len(targets) != 1 || targets[0].arg != "app" || targets[0].env["A"] != "1" {
		t.Errorf("env -S: %+v, want app with A=1", targets)
	}
	targets = parseWords(strings.Fields("env -i A=1 app"), "app")
	if want := map[string]string{"A": "1"}; !reflect.DeepEqual(targets[0].env, want) {
		t.Errorf("env -i: %v, want %v", targets[0].env, want)
	}
	targets = parseWords(strings.Fields("env -u PATH app"), "app")
	if _, ok := targets[0].env["PATH"]; ok {
		t.Errorf("env -u PATH: PATH still set")
	}
}

// buildCache builds a new-format ld.so cache with the given entries.
func buildCache(entries [][2]string, oldPrefix bool) []byte {
	var strs bytes.Buffer
	const header, entry = 48, 24
	base := header + entry*len(entries)
	var table bytes.Buffer
	for _, e := range entries {
		k := base + strs.Len()
		strs.WriteString(e[0] + "\x00")
		v := base + strs.Len()
		strs.WriteString(e[1] + "\x00")
		var b [entry]byte
		binary.LittleEndian.PutUint32(b[0:], 0x0303)
		binary.LittleEndian.PutUint32(b[4:], uint32(k))
		binary.LittleEndian.PutUint32(b[8:], uint32(v))
		table.Write(b[:])
	}
	var h [header]byte
	copy(h[:], cacheMagicNew)
	binary.LittleEndian.PutUint32(h[20:], uint32(len(entries)))
	binary.LittleEndian.PutUint32(h[24:], uint32(strs.Len()))
	h[28] = 2
	out := append(h[:], table.Bytes()...)
	out = append(out, strs.Bytes()...)
	if oldPrefix {
		old := make([]byte, 16+12) // one old entry, then aligned to 8
		copy(old, cacheMagicOld)
		binary.LittleEndian.PutUint32(old[12:], 1)
		old = append(old, make([]byte, 4)...)
		out = append(old, out...)
	}
	return out
}

func TestParseLDCache(t *testing.T) {
	entries := [][2]string{{"libgomp.so.1", "/usr/lib/x86_64-linux-gnu/libgomp.so.1"}, {"libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"}, {"libc.so.6", "/lib32/libc.so.6"}}
	want := ldCache{"libgomp.so.1": {"/usr/lib/x86_64-linux-gnu/libgomp.so.1"}, "libc.so.6": {"/lib/x86_64-linux-gnu/libc.so.6", "/lib32/libc.so.6"}}
	for _, old := range []bool{false, true} {
		c, err := parseLDCache(buildCache(entries, old))
		if err != nil {
			t.Fatalf("old prefix %v: %v", old, err)
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("old prefix %v: %v, want %v", old, c, want)
		}
	}

	good := buildCache(entries, false)
	hostile := map[string][]byte{
		"empty":           nil,
		"magic only":      []byte(cacheMagicNew),
		"truncated table": good[:60],
		"huge count": func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[20:], 0xffffffff)
			return b
		}(),
		"offset outside": func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[48+4:], 0x7fffffff)
			return b
		}(),
		"unterminated": func() []byte {
			b := append([]byte(nil), good...)
			return b[:len(b)-1]
		}(),
		"old format lies": append([]byte(cacheMagicOld+"\x00\xff\xff\xff\x7f"), good...),
		"wrong magic":     append([]byte("glibc-ld.so.cache9.9"), good[20:]...),
	}
	for name, data := range hostile {
		if _, err := parseLDCache(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}

	// The real cache of this machine, where there is one.
	if _, err := os.Stat(hostSystem.cachePath); err == nil {
		c, err := readLDCache(hostSystem.cachePath)
		if err != nil {
			t.Fatalf("this machine's ld.so.cache: %v", err)
		}
		if len(c["libc.so.6"]) == 0 {
			t.Errorf("this machine's ld.so.cache has no libc.so.6: %d names", len(c))
		}
	}
}

func TestLDConfFallback(t *testing.T) {
	dir := t.TempDir()
	write(t, dir+"/ld.so.conf", "include conf.d/*.conf\n/opt/a # comment\n", 0o644)
	write(t, dir+"/conf.d/1.conf", "/opt/b:/opt/c\nrelative\ninclude ../ld.so.conf\n", 0o644)
	if got, want := readLDConf(dir+"/ld.so.conf"), []string{"/opt/b", "/opt/c", "/opt/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dirs %q, want %q", got, want)
	}
	// With an unusable cache, libraries are found through ld.so.conf.
	needTool(t, "gcc")
	libdir := dir + "/opt/lib"
	write(t, dir+"/q.c", "int q(void){return 0;}\n", 0o644)
	write(t, dir+"/m.c", "int q(void);\nint main(void){return q();}\n", 0o644)
	write(t, dir+"/conf", libdir+"\n", 0o644)
	write(t, dir+"/badcache", "garbage", 0o644)
	if err := os.MkdirAll(libdir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "gcc", "-shared", "-fPIC", "-Wl,-soname,libq.so", "-o", libdir+"/libq.so", dir+"/q.c")
	run(t, "gcc", "-o", dir+"/m", dir+"/m.c", "-L"+libdir, "-lq")
	sys := system{cachePath: dir + "/badcache", confPath: dir + "/conf"}
	res, err := scan(sys, dir, []string{"./m"}, env("/usr/bin"))
	if err != nil {
		t.Fatal(err)
	}
	p := res.Programs[0]
	if len(p.Missing) != 0 || len(p.Libs) < 2 || p.Libs[0].Path != libdir+"/libq.so" {
		t.Errorf("libs %+v missing %+v, want libq.so from ld.so.conf and libc from the default dirs", p.Libs, p.Missing)
	}
}

// realELF returns the bytes of an ELF file of this machine.
func realELF(t testing.TB) []byte {
	for _, p := range []string{"/bin/true", "/usr/bin/true", os.Args[0]} {
		if b, err := os.ReadFile(p); err == nil && bytes.HasPrefix(b, magicELF) {
			return b
		}
	}
	t.Skip("no ELF file to start from")
	return nil
}

func TestMalformedELF(t *testing.T) {
	good := realELF(t)
	if _, err := parseObject(bytes.NewReader(good), int64(len(good)), newBudget()); err != nil {
		t.Fatalf("a real ELF file: %v", err)
	}
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 4096)
	rng.Read(random)
	patch := func(off int, v uint64, size int) []byte {
		b := append([]byte(nil), good...)
		switch size {
		case 2:
			binary.LittleEndian.PutUint16(b[off:], uint16(v))
		case 8:
			binary.LittleEndian.PutUint64(b[off:], v)
		}
		return b
	}
	cases := map[string][]byte{
		"empty":              nil,
		"magic only":         magicELF,
		"truncated header":   good[:40],
		"truncated sections": good[:len(good)/3],
		"random":             random,
		"random after magic": append(append([]byte(nil), magicELF...), random...),
		"huge shnum":         patch(60, 0xffff, 2),
		"huge phnum":         patch(56, 0xffff, 2),
		"shoff outside":      patch(40, 1<<62, 8),
		"phoff outside":      patch(32, 1<<62, 8),
		"shstrndx outside":   patch(62, 0xfffe, 2),
	}
	for name, data := range cases {
		obj, err := parseObject(bytes.NewReader(data), int64(len(data)), newBudget())
		if err == nil && name != "truncated sections" {
			t.Errorf("%s: no error (%+v)", name, obj)
		}
	}

	// Every dynamic section and symbol table entry corrupted in turn must
	// still give an answer, never a panic.
	f, err := elf.NewFile(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_DYNAMIC && s.Type != elf.SHT_DYNSYM && s.Type != elf.SHT_STRTAB {
			continue
		}
		for i := 0; i < 64 && uint64(i) < s.Size; i++ {
			b := append([]byte(nil), good...)
			b[s.Offset+uint64(i)*7%s.Size] ^= 0xff
			_, _ = parseObject(bytes.NewReader(b), int64(len(b)), newBudget())
		}
	}
}

func TestReadBudget(t *testing.T) {
	good := realELF(t)
	b := &budget{left: 100}
	if _, err := parseObject(bytes.NewReader(good), int64(len(good)), b); err == nil || !strings.Contains(err.Error(), "read limit") {
		t.Errorf("a 100-byte budget: %v, want a read-limit error", err)
	}
}

func TestReadObjectRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	if _, err := readObject(dir, newBudget()); err == nil {
		t.Error("a directory: no error")
	}
	if _, err := readObject("/dev/zero", newBudget()); err == nil {
		t.Error("/dev/zero: no error")
	}
}

func FuzzParseObject(f *testing.F) {
	f.Add(tinyELF())
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := parseObject(bytes.NewReader(data), int64(len(data)), newBudget())
		if err == nil && obj == nil {
			t.Fatal("no object and no error")
		}
		if err == nil && len(obj.needed) > maxNeeded {
			t.Fatalf("%d DT_NEEDED entries kept", len(obj.needed))
		}
	})
}

func FuzzParseLDCache(f *testing.F) {
	f.Add(buildCache([][2]string{{"a", "/b"}}, false))
	f.Add(buildCache([][2]string{{"a", "/b"}}, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseLDCache(data)
		if err == nil && len(c) > len(data) {
			t.Fatalf("%d names from %d bytes", len(c), len(data))
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	f.Add("mpirun -np 2 --mca a b -x A=1 app : -n 1 b")
	f.Add("srun -ln2 --export=A=1 env -S 'x y' app")
	f.Fuzz(func(t *testing.T, line string) {
		words := strings.Fields(line)
		if len(words) > 64 {
			return
		}
		targets := parseWords(words, "app", "b")
		if len(targets) > len(words)+1 {
			t.Fatalf("%d programs from %d words", len(targets), len(words))
		}
	})
}
