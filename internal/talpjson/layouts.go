package talpjson

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/popmon/popmon/internal/ojson"
	"github.com/popmon/popmon/pop"
)

// WriteCSV writes the regions of [Write] in DLB's CSV layout
// (--talp-output-file=*.csv): a header "name,<keys>" unless header is
// false (DLB appends rows to an existing file), then one row per region,
// its name quoted, the values in [Write]'s key order. Every row has the
// first region's keys (a key another region lacks is empty).
func WriteCSV(w io.Writer, m *pop.Run, regions []pop.RegionReport, header bool) error {
	doc, err := document(m, regions)
	if err != nil {
		return err
	}
	app := application(doc)
	if len(app) == 0 {
		return nil
	}
	keys := memberKeys(app[0].Value.(ojson.Object))
	bw := bufio.NewWriter(w)
	if header {
		fmt.Fprintf(bw, "name,%s\n", strings.Join(keys, ","))
	}
	for _, r := range app {
		vals := make(map[string]string)
		for _, v := range r.Value.(ojson.Object) {
			b, err := json.Marshal(v.Value)
			if err != nil {
				return err
			}
			vals[v.Key] = string(b)
		}
		row := make([]string, len(keys))
		for i, k := range keys {
			row[i] = vals[k]
		}
		fmt.Fprintf(bw, "%q,%s\n", strings.ReplaceAll(r.Key, `"`, `'`), strings.Join(row, ","))
	}
	return bw.Flush()
}

// textLabels are DLB's labels of its plain-text report, by key.
var textLabels = []struct{ key, label string }{
	{"numCpus", "Number of CPUs"},
	{"numOmpThreads", "Number of OpenMP threads"},
	{"numMpiRanks", "Number of MPI processes"},
	{"numNodes", "Number of nodes"},
	{"numGpus", "Number of GPUs"},
	{"cycles", "Cycles"},
	{"instructions", "Instructions"},
	{"numMeasurements", "Number of measurements"},
	{"numMpiCalls", "Number of MPI calls"},
	{"numOmpParallels", "Number of OpenMP parallel regions"},
	{"numOmpTasks", "Number of OpenMP explicit tasks"},
	{"numGpuRuntimeCalls", "Number of GPU runtime calls"},
	{"elapsedTime", "Elapsed Time (ns)"},
	{"usefulTime", "Useful Time (ns)"},
	{"mpiTime", "MPI Time (ns)"},
	{"ompLoadImbalanceTime", "OpenMP Load Imbalance Time (ns)"},
	{"ompSchedulingTime", "OpenMP Scheduling Time (ns)"},
	{"ompSerializationTime", "OpenMP Serialization Time (ns)"},
	{"gpuRuntimeTime", "GPU Runtime Time (ns)"},
	{"parallelEfficiency", "Parallel efficiency"},
	{"mpiParallelEfficiency", "MPI Parallel efficiency"},
	{"mpiCommunicationEfficiency", "  - MPI Communication efficiency"},
	{"mpiLoadBalance", "  - MPI Load Balance"},
	{"mpiLoadBalanceIn", "      - MPI Load Balance in"},
	{"mpiLoadBalanceOut", "      - MPI Load Balance out"},
	{"ompParallelEfficiency", "OpenMP Parallel efficiency"},
	{"ompLoadBalance", "  - OpenMP Load Balance"},
	{"ompSchedulingEfficiency", "  - OpenMP Scheduling efficiency"},
	{"ompSerializationEfficiency", "  - OpenMP Serialization efficiency"},
	{"deviceOffloadEfficiency", "Device Offload efficiency"},
	{"gpuParallelEfficiency", "Device Parallel efficiency"},
	{"gpuLoadBalance", "  - Device Load Balance"},
	{"gpuCommunicationEfficiency", "  - Device Communication efficiency"},
	{"gpuOrchestrationEfficiency", "  - Device Orchestration efficiency"},
}

// WriteText writes the regions of [Write] in DLB's plain-text layout: the
// layout of --talp-output-file with another extension than .json or .csv
// and, with prefix "DLB[host:pid]: ", of DLB's end-of-run summary on stderr.
// Efficiencies have two decimals, as DLB prints them.
func WriteText(w io.Writer, m *pop.Run, regions []pop.RegionReport, prefix string) error {
	doc, err := document(m, regions)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, r := range application(doc) {
		vals := make(map[string]any)
		for _, v := range r.Value.(ojson.Object) {
			vals[v.Key] = v.Value
		}
		fmt.Fprintf(bw, "%s######### Monitoring Region POP Metrics #########\n", prefix)
		fmt.Fprintf(bw, "%s### Name:%*s%s\n", prefix, 48-len("### Name:"), "", r.Key)
		for _, l := range textLabels {
			v, ok := vals[l.key]
			if !ok {
				continue
			}
			var s string
			switch x := v.(type) {
			case ojson.Float:
				if strings.HasSuffix(l.key, "Efficiency") || strings.Contains(l.key, "LoadBalance") {
					s = fmt.Sprintf("%.2f", float64(x))
				} else {
					s = fmt.Sprintf("%.1f", float64(x))
				}
			default:
				s = fmt.Sprint(x)
			}
			lab := "### " + l.label + ":"
			fmt.Fprintf(bw, "%s%-48s%s\n", prefix, lab, s)
		}
	}
	return bw.Flush()
}

// application is the "Application" member of a [document].
func application(doc ojson.Object) ojson.Object {
	for _, m := range doc {
		if m.Key == "Application" {
			return m.Value.(ojson.Object)
		}
	}
	return nil
}

func memberKeys(o ojson.Object) []string {
	out := make([]string, len(o))
	for i, m := range o {
		out[i] = m.Key
	}
	return out
}
