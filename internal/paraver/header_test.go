package paraver

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseHeader(t *testing.T) {
	cases := []struct {
		name, line string
		want       Header
	}{
		{"EPOCH 2 ranks, ns, communicators",
			"#Paraver (09/10/2019 at 16:09):11528373565_ns:1(2):1:2(1:1,1:1),3",
			Header{Date: "09/10/2019 at 16:09", End: 11528373565, Unit: "ns", NodeCPUs: []int{2},
				Apps: []App{{Tasks: []Task{{1, 1}, {1, 1}}}}, Communicators: 3}},
		{"OpenMP, 2 threads, no communicators",
			"#Paraver (04/11/2019 at 16:35):10380609993_ns:1(2):1:1(2:1),0",
			Header{Date: "04/11/2019 at 16:35", End: 10380609993, Unit: "ns", NodeCPUs: []int{2},
				Apps: []App{{Tasks: []Task{{2, 1}}}}}},
		{"no unit means microseconds",
			"#Paraver (01/02/2003 at 04:05):1500:2(4,4):1:2(2:1,2:2)",
			Header{Date: "01/02/2003 at 04:05", End: 1500_000, Unit: "us", NodeCPUs: []int{4, 4},
				Apps: []App{{Tasks: []Task{{2, 1}, {2, 2}}}}}},
		{"no resource model, two applications",
			"#Paraver (01/02/2003 at 04:05):7_us:0:2:1(1:0):2(3:0,1:0),2",
			Header{Date: "01/02/2003 at 04:05", End: 7000, Unit: "us",
				Apps: []App{{Tasks: []Task{{1, 0}}}, {Tasks: []Task{{3, 0}, {1, 0}}}}, Communicators: 2}},
		{"CRLF and no date",
			"#Paraver :42_ms:1(1):1:1(1:1)\r\n",
			Header{End: 42_000_000, Unit: "ms", NodeCPUs: []int{1}, Apps: []App{{Tasks: []Task{{1, 1}}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := ParseHeader(c.line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*h, c.want) {
				t.Errorf("got  %+v\nwant %+v", *h, c.want)
			}
		})
	}
}

func TestParseHeaderErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{"Paraver 1:2", "not a Paraver trace"},
		{"#Paraver (01/02/2003 at 04:05", "unclosed date"},
		{"#Paraver (d):10_ps:1(1):1:1(1:1)", `unknown time unit "ps"`},
		{"#Paraver (d):x_ns:1(1):1:1(1:1)", "end time"},
		{"#Paraver (d):10_ns:2(1):1:1(1:1)", "2 nodes announced, 1 described"},
		{"#Paraver (d):10_ns:1(1):2:1(1:1)", "2 applications announced, 1 described"},
		{"#Paraver (d):10_ns:1(1):1:2(1:1)", "2 tasks announced, 1 described"},
		{"#Paraver (d):10_ns:1(1):1:1(0:1)", "thread count"},
		{"#Paraver (d):10_ns:1(1):1:1(1:1),x", "communicator count"},
		{"#Paraver (d):10_ns", "want END:NODES:NAPPL:APPS"},
	}
	for _, c := range cases {
		_, err := ParseHeader(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.line, err, c.want)
		}
	}
}

func TestHeaderThreads(t *testing.T) {
	h, err := ParseHeader("#Paraver (d):7_us:0:2:1(1:0):2(3:0,1:0)")
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{h.Threads(1), h.Threads(2), h.Threads(3)}; !reflect.DeepEqual(got, []int{1, 4, 0}) {
		t.Errorf("threads per application = %v, want [1 4 0]", got)
	}
}
