package e2e

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPollsLookNothingUp runs testdata/pollcount.c (1 rank, 4 receives
// pending in the thread's request table) under popmon and reads the
// request-table lookups of each polling function's 1,000 calls that complete
// nothing, through the library's seam popmon_dreq_lookups (mpidata.h): the
// wrappers save the handles before the call and look up only the requests a
// call completed (issue 31: a poll that completes nothing costs what the
// cheapest wrapped call costs), so every count must be 0, for both MPIs.
// The same program then completes its 4 receives with MPI_Test, MPI_Testany
// and MPI_Testall, which must look requests up (at least one lookup per
// completing call): the seam counts what it should.
func TestPollsLookNothingUp(t *testing.T) {
	polls := []string{"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Request_get_status",
		"MPI_Iprobe", "MPI_Improbe"}
	for _, impl := range impls(t) {
		t.Run(impl.name, func(t *testing.T) {
			prog := buildMPI(t, impl, "pollcount")
			_, so, se, code := runPopmonWithin(t, 60*time.Second, append(launch(impl, 1), prog, "1000")...)
			if code != 0 || !strings.HasSuffix(strings.TrimSpace(so), "ok") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
			}
			if strings.Contains(so, "no-seam") {
				t.Fatalf("the program did not find popmon_dreq_lookups in the measurement library\n%s", so)
			}
			got := map[string]int64{}
			sc := bufio.NewScanner(strings.NewReader(so))
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 3 && f[0] == "lookups" {
					v, err := strconv.ParseInt(f[2], 10, 64)
					if err != nil {
						t.Fatalf("program output %q: %v", sc.Text(), err)
					}
					got[f[1]] = v
				}
			}
			for _, name := range polls {
				if v, ok := got[name]; !ok || v != 0 {
					t.Errorf("%s: %d request lookups in 1,000 calls that completed nothing (reported: %v); want 0", name, v, ok)
				}
			}
			if got["done"] < 3 {
				t.Errorf("the 3 polls that completed requests looked %d up; want at least one each\n%s", got["done"], so)
			}
		})
	}
}
